// libFuzzer target: drives the whole C API on the CPU backend with random sizes,
// leading dimensions, enum and option values (valid or not), alpha/beta (NaN and
// infinities too), algorithms, settings and NULL pointers, on a fresh handle per
// input. Each matrix buffer holds exactly the elements the call may touch, so ASan
// reports any read or write past them. Every call must return a documented status
// and keep the header's promises: a failed call changes nothing it was given and
// says why; a successful tmm_sgemm matches a double-precision reference (IEEE
// specials included) within the error bound of float accumulation, never writes C's
// padding and never reads C when beta = 0 (C then holds NaN); getters, options,
// timings, reports, the kernel list and the CUDA-only calls answer as documented.
//
// Input layout (the fields of tests/fuzz/corpus; bytes past the end read as 0):
//   flags (u8)   1, 2, 4: layout, trans_a, trans_b given as any int32 (else one byte
//                picks a valid value); 8: alpha = 1, beta = 0; 16, 32, 64: A, B, C
//                NULL; 128: large sizes allowed (see below)
//   layout, trans_a, trans_b; m, n, k (int8, % 40); lda, ldb, ldc - minimum (int8 % 6);
//                a size or leading dimension byte in -100..-89 picks an extreme value
//                instead (kExtremes: INT32_MAX and INT64_MAX neighbours, -1, INT64_MIN)
//   alpha, beta (float); algorithm (u8 % 7 - 1); tile size (int8)
//   A, B, C elements (int8 / 16); or, with a large size, a u32 seed of a generator
//   and the host_threads option (u8 % 5)
//   then: coarsening (int8); a status value (int32); backend (int8 % 4) and device
//   (int8) for a second handle; a stream (u64); an option (int8 % 6) and its value
//   (int16, or int64 when the option byte is odd); tmm_report's struct_size -
//   sizeof(tmm_report) (int8 % 17); a kernel index (int8)
// Large sizes: with flag 128, on the inputs whose FNV-1a hash is a multiple of 64,
// a size byte below -100 selects 128..143 (all three large reach the CPU's
// multi-threaded path). Such a product takes tens of milliseconds under ASan, so the
// hash keeps them rare: a mutation of a large input is large itself only once in 64.
// Extreme sizes and leading dimensions (issue 24): a matrix too large to exist (more
// than kMaxElements) gets no buffer: NULL where the call needs it (unless its byte
// size overflows), a one-float stand-in otherwise, which the library must never read
// (a needed one with an overflowing byte size must be rejected before any access).
// Kept deterministic: the same input makes the same calls and checks.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <vector>

#include "tiledmm/tiledmm.h"

namespace {

struct Reader {
  const uint8_t* data;
  size_t size;
  template <class T>
  T get() {
    T v{};
    const size_t n = size < sizeof(T) ? size : sizeof(T);
    if (n == 0) return v;  // data may be NULL when the input is empty
    std::memcpy(&v, data, n);
    data += n;
    size -= n;
    return v;
  }
};

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "fuzz_sgemm: %s\n", what);
  std::abort();
}

void expect(bool condition, const char* what) {
  if (!condition) fail(what);
}

bool documented(tmm_status s) { return s >= TMM_SUCCESS && s <= TMM_ERROR_INTERNAL; }

// A documented status other than TMM_ERROR_INTERNAL, and a failure that says why.
tmm_status checked(tmm_handle h, tmm_status s, const char* call) {
  if (!documented(s) || s == TMM_ERROR_INTERNAL) fail(call);
  if (s != TMM_SUCCESS && tmm_get_error_message(h)[0] == '\0') fail(call);
  return s;
}

using i128 = __int128;

// Elements a stored rows x cols matrix with leading dimension ld spans (CBLAS),
// exactly, or 0 when it has none or its ld is invalid (rejected before any access).
i128 footprint(bool row, int64_t rows, int64_t cols, int64_t ld) {
  const int64_t outer = row ? rows : cols, inner = row ? cols : rows;
  if (outer <= 0 || inner <= 0 || ld < inner) return 0;
  return i128(outer - 1) * ld + inner;
}

// Matrices up to this many elements get a buffer; larger ones cannot exist here.
constexpr i128 kMaxElements = i128(1) << 20;

// The extreme sizes and leading dimensions a byte in -100..-89 selects.
constexpr int64_t kExtremes[] = {
    INT32_MAX - 1,     INT32_MAX,     int64_t(INT32_MAX) + 1, UINT32_MAX, INT64_MAX / 4,
    INT64_MAX / 4 + 1, INT64_MAX / 2, INT64_MAX - 1,          INT64_MAX,  -1,
    INT32_MIN,         INT64_MIN};
constexpr int kFirstExtremeByte = -100;

bool is_extreme(int8_t raw) {
  return raw >= kFirstExtremeByte && raw < kFirstExtremeByte + int(std::size(kExtremes));
}
int64_t extreme(int8_t raw) { return kExtremes[raw - kFirstExtremeByte]; }

// A leading dimension: an extreme value, or the minimum plus -5..5 (saturated).
int64_t ld_from(int8_t raw, int64_t minimum) {
  if (is_extreme(raw)) return extreme(raw);
  const i128 ld = i128(minimum) + raw % 6;
  return ld > INT64_MAX ? INT64_MAX : int64_t(ld);
}

// FNV-1a of the whole input.
uint32_t input_hash(const uint8_t* data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  return h;
}

// A size byte: -39..39, an extreme value, or with large sizes allowed and a byte
// below -100, 128..143.
int64_t size_from(int8_t raw, bool large_allowed, bool& large) {
  if (is_extreme(raw)) return extreme(raw);
  if (large_allowed && raw < -100) {
    large = true;
    return 128 + (-int64_t(raw)) % 16;
  }
  return int64_t(raw) % 40;
}

// The values of large matrices, which an input of libFuzzer's length cannot spell:
// like the input's, multiples of 1/16 in [-8, 8), so that every sum of products the
// harness makes (k < 144) is exact in float, in any order.
struct Generator {
  uint32_t state;
  float next() {
    state = state * 1664525u + 1013904223u;
    return int8_t(state >> 24) / 16.0f;
  }
};

// Bitwise equality (NaN included).
bool same_bits(const void* x, const void* y, size_t bytes) {
  return bytes == 0 || std::memcmp(x, y, bytes) == 0;
}

bool same_bits(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && same_bits(x.data(), y.data(), x.size() * sizeof(float));
}

// One tmm_sgemm call as the harness made it.
struct Call {
  bool row, tra, trb;
  int64_t m, n, k, lda, ldb, ldc;
  float alpha, beta;
  size_t c_index(int64_t i, int64_t j) const { return size_t(row ? i * ldc + j : j * ldc + i); }
  // op(X)(i, p) of a stored matrix X.
  static float at(const std::vector<float>& x, bool row, bool trans, int64_t i, int64_t p,
                  int64_t ld) {
    const int64_t r = trans ? p : i, c = trans ? i : p;
    return x[size_t(row ? r * ld + c : c * ld + r)];
  }
};

// C(i, j) against the header's arithmetic, evaluated in double: alpha * (sum of
// products) + beta * C, where alpha = 0 or k = 0 drops the first term and beta = 0
// the second. The sums are exact (see Generator), so IEEE specials must match
// exactly: NaN where the reference is NaN, the same infinity where it is infinite.
// Finite results may differ by float accumulation: every partial sum is bounded by
// `mag`, so by at most about (k + 2) roundings of mag; twice that is allowed, plus an
// absolute floor for subnormals. Where the finite terms near FLT_MAX (alpha or beta
// huge), float may overflow where double does not: not checked.
void check_element(const Call& p, const std::vector<float>& a, const std::vector<float>& b,
                   const std::vector<float>& c0, const std::vector<float>& c, int64_t i,
                   int64_t j) {
  double sum = 0, sum_abs = 0;
  const bool uses_ab = p.k > 0 && p.alpha != 0.0f;  // else A and B may have no buffer
  for (int64_t q = 0; uses_ab && q < p.k; ++q) {
    const double x = double(Call::at(a, p.row, p.tra, i, q, p.lda)) *
                     double(Call::at(b, p.row, p.trb, q, j, p.ldb));
    sum += x;
    sum_abs += std::fabs(x);
  }
  double ref = 0, mag = 0;
  if (uses_ab) {
    ref = double(p.alpha) * sum;
    if (std::isfinite(p.alpha)) mag += std::fabs(double(p.alpha)) * sum_abs;
  }
  if (p.beta != 0.0f) {  // beta = 0 never reads C
    const double bc = double(p.beta) * double(c0[p.c_index(i, j)]);
    ref += bc;
    if (std::isfinite(p.beta)) mag += std::fabs(bc);
  }
  if (mag > 1e37) return;
  const double got = c[p.c_index(i, j)];
  const double tol = 2.0 * (double(p.k) + 2) * FLT_EPSILON * mag + 1e-37;
  const bool ok = std::isnan(ref)   ? std::isnan(got)
                  : std::isinf(ref) ? got == ref
                                    : std::fabs(got - ref) <= tol;
  if (!ok) {
    std::fprintf(stderr, "C(%lld, %lld) = %.9g, reference %.9g, tolerance %.3g\n",
                 static_cast<long long>(i), static_cast<long long>(j), got, ref, tol);
    fail("tmm_sgemm result differs from the double-precision reference");
  }
}

// Every element of C for small products; a fixed sample of 256 for larger ones.
void check_result(const Call& p, const std::vector<float>& a, const std::vector<float>& b,
                  const std::vector<float>& c0, const std::vector<float>& c) {
  if (p.m == 0 || p.n == 0) return;  // m or n may be INT64_MAX with the other 0
  if (i128(p.m) * p.n * (p.alpha != 0.0f ? p.k : 1) <= 65536) {
    for (int64_t i = 0; i < p.m; ++i)
      for (int64_t j = 0; j < p.n; ++j) check_element(p, a, b, c0, c, i, j);
    return;
  }
  for (uint32_t t = 0; t < 256; ++t) {
    const uint32_t h = t * 2654435761u;
    check_element(p, a, b, c0, c, int64_t(h % uint64_t(p.m)), int64_t((h >> 8) % uint64_t(p.n)));
  }
}

// Elements of C's buffer outside its m x n part (between rows or columns).
void check_padding(const Call& p, const std::vector<float>& c0, const std::vector<float>& c) {
  if (p.m == 0 || p.n == 0) return;  // no m x n part; C's buffer is empty
  std::vector<bool> inside(c.size(), false);
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) inside[p.c_index(i, j)] = true;
  for (size_t e = 0; e < c.size(); ++e)
    if (!inside[e] && !same_bits(&c[e], &c0[e], sizeof(float))) fail("tmm_sgemm wrote C's padding");
}

// Calls without a usable handle: each fails with INVALID_VALUE and says why.
void check_null_handle() {
  tmm_backend backend;
  tmm_algorithm algorithm;
  int i;
  int64_t value;
  void* stream;
  double ms;
  tmm_timing timing;
  tmm_report report;
  report.struct_size = sizeof report;
  tmm_device_info info;
  float x = 0;
  const tmm_status all[] = {
      tmm_create(nullptr),
      tmm_create_with_backend(nullptr, TMM_BACKEND_CPU, 0),
      tmm_get_backend(nullptr, &backend),
      tmm_set_algorithm(nullptr, TMM_ALGO_AUTO),
      tmm_get_algorithm(nullptr, &algorithm),
      tmm_set_tile_size(nullptr, 0),
      tmm_get_tile_size(nullptr, &i),
      tmm_set_coarsening(nullptr, 0),
      tmm_get_coarsening(nullptr, &i),
      tmm_set_option(nullptr, TMM_OPTION_HOST_THREADS, 1),
      tmm_get_option(nullptr, TMM_OPTION_HOST_THREADS, &value),
      tmm_sgemm(nullptr, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1, 1, 1, 1.0f, &x, 1, &x, 1,
                0.0f, &x, 1),
      tmm_sgemm_device(nullptr, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1, 1, 1, 1.0f, &x, 1, &x,
                       1, 0.0f, &x, 1),
      tmm_set_stream(nullptr, nullptr),
      tmm_get_stream(nullptr, &stream),
      tmm_synchronize(nullptr),
      tmm_get_last_time(nullptr, &ms),
      tmm_get_last_timing(nullptr, &timing),
      tmm_get_last_report(nullptr, &report),
      tmm_get_device_info(nullptr, &info),
  };
  for (tmm_status s : all) expect(s == TMM_ERROR_INVALID_VALUE, "a NULL handle was accepted");
  expect(tmm_get_error_message(nullptr)[0] != '\0', "no message for a NULL handle");
  tmm_destroy(nullptr);  // a no-op
}

// A getter given NULL for its output fails with INVALID_VALUE.
void check_null_outputs(tmm_handle h) {
  const tmm_status all[] = {
      tmm_get_backend(h, nullptr),
      tmm_get_algorithm(h, nullptr),
      tmm_get_tile_size(h, nullptr),
      tmm_get_coarsening(h, nullptr),
      tmm_get_option(h, TMM_OPTION_ALGORITHM, nullptr),
      tmm_get_stream(h, nullptr),
      tmm_get_last_time(h, nullptr),
      tmm_get_last_timing(h, nullptr),
      tmm_get_last_report(h, nullptr),
      tmm_get_device_info(h, nullptr),
  };
  for (tmm_status s : all) {
    // A CPU handle may also answer that streams and devices are not supported.
    expect(s == TMM_ERROR_INVALID_VALUE || s == TMM_ERROR_NOT_SUPPORTED,
           "a getter accepted a NULL output");
  }
  expect(tmm_get_error_message(h)[0] != '\0', "no message for a NULL output");
}

// The CUDA-only calls on a CPU handle: NOT_SUPPORTED, outputs untouched; synchronize
// is a no-op.
void check_cpu_only(tmm_handle h, void* stream_value) {
  void* stream = &stream;
  expect(checked(h, tmm_set_stream(h, stream_value), "tmm_set_stream") == TMM_ERROR_NOT_SUPPORTED,
         "tmm_set_stream on the CPU");
  expect(checked(h, tmm_get_stream(h, &stream), "tmm_get_stream") == TMM_ERROR_NOT_SUPPORTED,
         "tmm_get_stream on the CPU");
  expect(stream == &stream, "tmm_get_stream wrote its output on failure");
  tmm_device_info info, untouched;
  std::memset(&info, 0x5a, sizeof info);
  untouched = info;
  expect(
      checked(h, tmm_get_device_info(h, &info), "tmm_get_device_info") == TMM_ERROR_NOT_SUPPORTED,
      "tmm_get_device_info on the CPU");
  expect(same_bits(&info, &untouched, sizeof info),
         "tmm_get_device_info wrote its output on failure");
  expect(checked(h, tmm_synchronize(h), "tmm_synchronize") == TMM_SUCCESS,
         "tmm_synchronize on the CPU");
}

// An option number and a value from the input: the option's name, bounds and
// getter agree; a value outside the bounds is refused; a refused value leaves the
// setting as it was, an accepted one reads back.
void check_option(tmm_handle h, int option, int64_t value) {
  int64_t lower = 0, upper = 0, default_value = 0;
  const tmm_status sb =
      tmm_get_option_bounds(static_cast<tmm_option>(option), &lower, &upper, &default_value);
  expect(sb == TMM_SUCCESS || sb == TMM_ERROR_INVALID_VALUE, "tmm_get_option_bounds");
  const bool known = sb == TMM_SUCCESS;
  expect(tmm_get_option_bounds(static_cast<tmm_option>(option), nullptr, nullptr, nullptr) == sb,
         "tmm_get_option_bounds with NULL outputs");
  expect(known ? lower <= default_value && default_value <= upper
               : tmm_get_error_message(nullptr)[0] != '\0',
         "tmm_get_option_bounds: default outside the bounds, or no message");
  const char* name = tmm_option_name(static_cast<tmm_option>(option));
  expect((name != nullptr && name[0] != '\0') == known, "tmm_option_name");

  int64_t before = -12345, after = -12345;
  const tmm_status sg =
      checked(h, tmm_get_option(h, static_cast<tmm_option>(option), &before), "tmm_get_option");
  expect(known ? sg == TMM_SUCCESS : sg == TMM_ERROR_INVALID_VALUE && before == -12345,
         "tmm_get_option of an unknown option");
  const tmm_status s =
      checked(h, tmm_set_option(h, static_cast<tmm_option>(option), value), "tmm_set_option");
  if (!known || value < lower || value > upper)
    expect(s == TMM_ERROR_INVALID_VALUE, "tmm_set_option accepted a value out of bounds");
  if (!known) return;
  expect(tmm_get_option(h, static_cast<tmm_option>(option), &after) == TMM_SUCCESS,
         "tmm_get_option");
  expect(s == TMM_SUCCESS ? after == value : after == before, "tmm_set_option: read back");
}

// A fresh handle: every option the library names holds its default; numbers it
// does not know have no name, no bounds and no value.
void check_option_defaults(tmm_handle h) {
  for (int option = 0; option <= 5; ++option) {
    int64_t default_value = 0, value = 0;
    const tmm_status sb =
        tmm_get_option_bounds(static_cast<tmm_option>(option), nullptr, nullptr, &default_value);
    const tmm_status sg = tmm_get_option(h, static_cast<tmm_option>(option), &value);
    expect(sb == sg, "tmm_get_option and tmm_get_option_bounds disagree on an option");
    if (sb == TMM_SUCCESS) expect(value == default_value, "an option not at its default");
  }
  expect(tmm_option_name(TMM_OPTION_HOST_THREADS) != nullptr, "tmm_option_name");
}

// A setter with a value from the input: a documented status; on success the getter
// (and tmm_get_option) returns the value, on failure the setting is unchanged. Values
// travel as int and become enums only as call arguments (the C boundary reads any
// int; an enum variable holding a value outside its enumerators would be undefined
// in C++).
template <class Set, class Get>
void check_setting(tmm_handle h, int value, Set set, Get get, tmm_option option, const char* name) {
  int before = -1, after = -1;
  expect(get(h, &before) == TMM_SUCCESS, name);
  const tmm_status s = checked(h, set(h, value), name);
  expect(get(h, &after) == TMM_SUCCESS, name);
  expect(s == TMM_SUCCESS ? after == value : after == before, name);
  int64_t as_option = -1;
  expect(tmm_get_option(h, option, &as_option) == TMM_SUCCESS && as_option == after,
         "a setter and tmm_get_option disagree");
}

tmm_status set_algorithm(tmm_handle h, int value) {
  return tmm_set_algorithm(h, static_cast<tmm_algorithm>(value));
}

tmm_status get_algorithm(tmm_handle h, int* out) {
  tmm_algorithm a = TMM_ALGO_AUTO;
  const tmm_status s = tmm_get_algorithm(h, &a);
  *out = a;
  return s;
}

// tmm_get_kernel_info(index): INVALID_VALUE with its output untouched, or a kernel
// described in full. A struct larger than this header's keeps its tail.
bool kernel_info(int index, tmm_kernel_info* out) {
  struct {
    tmm_kernel_info info;
    unsigned char tail[16];
  } buffer;
  std::memset(&buffer, 0xa5, sizeof buffer);
  buffer.info.struct_size = sizeof buffer;
  const auto before = buffer;
  const tmm_status s = tmm_get_kernel_info(index, &buffer.info);
  if (s != TMM_SUCCESS) {
    expect(s == TMM_ERROR_INVALID_VALUE && same_bits(&buffer, &before, sizeof buffer) &&
               tmm_get_error_message(nullptr)[0] != '\0',
           "tmm_get_kernel_info: a failure");
    return false;
  }
  const tmm_kernel_info& k = buffer.info;
  expect(index >= 0, "tmm_get_kernel_info: a negative index");
  expect(k.struct_size == sizeof(tmm_kernel_info) &&
             same_bits(buffer.tail, before.tail, sizeof buffer.tail),
         "tmm_get_kernel_info: struct_size, or written past it");
  expect(k.name != nullptr && k.name[0] != '\0' && k.description != nullptr &&
             k.description[0] != '\0',
         "tmm_get_kernel_info: name or description");
  expect(k.backend == TMM_BACKEND_CPU || k.backend == TMM_BACKEND_CUDA,
         "tmm_get_kernel_info: backend");
  expect(k.algorithm >= TMM_ALGO_NAIVE && k.algorithm <= TMM_ALGO_BLOCKED,
         "tmm_get_kernel_info: algorithm");
  expect((k.is_default == 0 || k.is_default == 1) &&
             k.min_compute_capability <= k.max_compute_capability &&
             (k.backend == TMM_BACKEND_CUDA || k.min_compute_capability == 0),
         "tmm_get_kernel_info: default or compute capabilities");
  *out = k;
  return true;
}

// The kernel list: indices 0, 1, ... until INVALID_VALUE, unique names, the CPU's
// NAIVE and BLOCKED among them; a NULL output or a struct_size too small refused.
void check_kernel_list() {
  expect(tmm_get_kernel_info(0, nullptr) == TMM_ERROR_INVALID_VALUE,
         "tmm_get_kernel_info: a NULL output");
  tmm_kernel_info small;
  std::memset(&small, 0x5a, sizeof small);
  small.struct_size = sizeof(size_t);
  const tmm_kernel_info untouched = small;
  expect(tmm_get_kernel_info(0, &small) == TMM_ERROR_INVALID_VALUE &&
             same_bits(&small, &untouched, sizeof small),
         "tmm_get_kernel_info: a struct_size too small");
  std::vector<const char*> names;
  bool cpu_naive = false, cpu_blocked = false;
  tmm_kernel_info k;
  for (int index = 0; kernel_info(index, &k); ++index) {
    expect(index < 1000, "tmm_get_kernel_info: no end to the list");
    for (const char* name : names)
      expect(std::strcmp(name, k.name) != 0, "tmm_get_kernel_info: a name twice");
    names.push_back(k.name);
    cpu_naive |= k.backend == TMM_BACKEND_CPU && k.algorithm == TMM_ALGO_NAIVE;
    cpu_blocked |= k.backend == TMM_BACKEND_CPU && k.algorithm == TMM_ALGO_BLOCKED;
  }
  expect(cpu_naive && cpu_blocked, "tmm_get_kernel_info: the CPU's kernels");
}

// The kernel a report names: "none" (nothing ran), the scale-only pass, or a kernel
// of the list on the same backend and algorithm.
void check_report_kernel(const tmm_report& r) {
  if (std::strcmp(r.kernel, "none") == 0 || std::strcmp(r.kernel, "cpu_scale") == 0) return;
  // The CPU's AUTO on the system BLAS: named after its library, not a registry row.
  if (std::strncmp(r.kernel, "system BLAS (", 13) == 0) {
    expect(r.backend == TMM_BACKEND_CPU && r.algorithm == TMM_ALGO_BLOCKED,
           "tmm_get_last_report: the system BLAS's backend or algorithm");
    return;
  }
  tmm_kernel_info k;
  for (int index = 0; kernel_info(index, &k); ++index) {
    if (std::strcmp(k.name, r.kernel) != 0) continue;
    expect(k.backend == r.backend && k.algorithm == r.algorithm,
           "tmm_get_last_report: the kernel's backend or algorithm");
    return;
  }
  fail("tmm_get_last_report: a kernel tmm_get_kernel_info does not list");
}

// Timings and the report: none before a successful sgemm (outputs untouched);
// after one, sane numbers that agree with each other and with what ran.
void check_timing(tmm_handle h, bool has_timing, const Call& p, int setting, int64_t host_threads) {
  double ms = -1.0;
  tmm_timing t;
  t.algorithm = TMM_ALGO_AUTO;
  t.total_ms = -1.0;
  tmm_report r;
  std::memset(&r, 0x5a, sizeof r);
  r.struct_size = sizeof r;
  const tmm_report r0 = r;
  const tmm_status s1 = checked(h, tmm_get_last_time(h, &ms), "tmm_get_last_time");
  const tmm_status s2 = checked(h, tmm_get_last_timing(h, &t), "tmm_get_last_timing");
  const tmm_status s3 = checked(h, tmm_get_last_report(h, &r), "tmm_get_last_report");
  if (!has_timing) {
    expect(s1 == TMM_ERROR_INVALID_VALUE && s2 == TMM_ERROR_INVALID_VALUE &&
               s3 == TMM_ERROR_INVALID_VALUE,
           "a timing before any successful sgemm");
    expect(ms == -1.0 && t.total_ms == -1.0 && same_bits(&r, &r0, sizeof r),
           "a timing getter wrote its output on failure");
    return;
  }
  expect(s1 == TMM_SUCCESS && s2 == TMM_SUCCESS && s3 == TMM_SUCCESS,
         "no timing after a successful sgemm");
  expect(std::isfinite(ms) && ms >= 0.0 && ms == t.compute_ms, "tmm_get_last_time");
  expect(std::isfinite(t.compute_ms) && t.compute_ms >= 0.0 && std::isfinite(t.total_ms) &&
             t.total_ms >= 0.0,
         "tmm_get_last_timing: compute or total time");
  expect(t.upload_ms == 0.0 && t.download_ms == 0.0, "copy times on the CPU");
  expect(t.algorithm == TMM_ALGO_NAIVE || t.algorithm == TMM_ALGO_BLOCKED,
         "tmm_get_last_timing: the algorithm that ran on the CPU");
  expect(setting != TMM_ALGO_NAIVE || t.algorithm == TMM_ALGO_NAIVE,
         "tmm_get_last_timing: NAIVE asked for, something else ran");

  expect(r.struct_size == sizeof r, "tmm_get_last_report: struct_size");
  expect(r.total_ms == t.total_ms && r.compute_ms == t.compute_ms && r.upload_ms == t.upload_ms &&
             r.download_ms == t.download_ms && r.algorithm == t.algorithm &&
             r.tile_size == t.tile_size && r.coarsening == t.coarsening,
         "tmm_get_last_report and tmm_get_last_timing disagree");
  expect(r.backend == TMM_BACKEND_CPU && r.device == -1, "tmm_get_last_report: backend, device");
  expect(r.splits == 1, "tmm_get_last_report: split-K on the CPU");
  expect(r.kernel != nullptr && r.kernel[0] != '\0', "tmm_get_last_report: kernel name");
  check_report_kernel(r);
  if (p.m == 0 || p.n == 0) {
    expect(std::strcmp(r.kernel, "none") == 0, "tmm_get_last_report: a kernel ran for nothing");
  } else {
    expect(r.host_threads >= 1, "tmm_get_last_report: no host thread computed");
    expect(host_threads == 0 || r.host_threads <= host_threads,
           "tmm_get_last_report: more threads than the host_threads option allows");
  }
}

// tmm_get_last_report with struct_size off sizeof(tmm_report) by `delta`: a larger
// struct (a newer program) gets this library's fields and struct_size; a smaller one
// may be refused; nothing is written past struct_size or, on failure, at all.
void check_report_size(tmm_handle h, int delta) {
  struct {
    tmm_report report;
    unsigned char tail[32];
  } buffer;
  std::memset(&buffer, 0xa5, sizeof buffer);
  buffer.report.struct_size = size_t(int64_t(sizeof(tmm_report)) + delta);
  const auto before = buffer;
  const tmm_status s = checked(h, tmm_get_last_report(h, &buffer.report), "tmm_get_last_report");
  if (s != TMM_SUCCESS) {
    expect(same_bits(&buffer, &before, sizeof buffer), "tmm_get_last_report wrote on failure");
    return;
  }
  const size_t written = buffer.report.struct_size;
  expect(written <= before.report.struct_size && written <= sizeof(tmm_report),
         "tmm_get_last_report: struct_size out");
  const auto* now = reinterpret_cast<const unsigned char*>(&buffer);
  const auto* old = reinterpret_cast<const unsigned char*>(&before);
  expect(same_bits(now + written, old + written, sizeof buffer - written),
         "tmm_get_last_report wrote past struct_size");
}

// A second handle on the backend and device the input names, and one on AUTO.
void check_create(int backend, int device) {
  tmm_handle h = reinterpret_cast<tmm_handle>(&h);
  const tmm_status s = tmm_create_with_backend(&h, static_cast<tmm_backend>(backend), device);
  expect(documented(s) && s != TMM_ERROR_INTERNAL, "tmm_create_with_backend");
  const bool known = backend >= TMM_BACKEND_AUTO && backend <= TMM_BACKEND_CPU;
  if (!known) expect(s == TMM_ERROR_INVALID_VALUE, "an unknown backend was accepted");
  if (backend == TMM_BACKEND_CPU) expect(s == TMM_SUCCESS, "no CPU handle");
  if (s != TMM_SUCCESS) {
    expect(h == reinterpret_cast<tmm_handle>(&h), "tmm_create_with_backend wrote on failure");
    expect(tmm_get_error_message(nullptr)[0] != '\0', "no message for a failed create");
  } else {
    tmm_backend got = TMM_BACKEND_AUTO;
    expect(tmm_get_backend(h, &got) == TMM_SUCCESS, "tmm_get_backend");
    expect(backend == TMM_BACKEND_AUTO ? got != TMM_BACKEND_AUTO : got == backend,
           "the handle runs on another backend than asked");
    tmm_destroy(h);
  }

  // AUTO on device 0: CUDA when usable, else the CPU; never a failure for want of
  // a GPU.
  expect(tmm_create(&h) == TMM_SUCCESS, "tmm_create");
  tmm_backend got = TMM_BACKEND_AUTO;
  expect(tmm_get_backend(h, &got) == TMM_SUCCESS &&
             (got == TMM_BACKEND_CPU || got == TMM_BACKEND_CUDA),
         "tmm_create: backend");
  tmm_destroy(h);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r{data, size};
  const uint32_t hash = input_hash(data, size);
  // Checks that do not depend on the input (and that fail by exceptions inside the
  // library, slow under ASan): on the empty input, which libFuzzer runs first, and
  // on one input in 16.
  const bool constant_checks = size == 0 || hash % 16 == 1;
  expect(tmm_version() == TILEDMM_VERSION, "tmm_version");
  if (constant_checks) check_null_handle();

  tmm_handle h = nullptr;
  expect(tmm_create_with_backend(&h, TMM_BACKEND_CPU, 0) == TMM_SUCCESS, "CPU handle");
  tmm_backend backend = TMM_BACKEND_AUTO;
  expect(tmm_get_backend(h, &backend) == TMM_SUCCESS && backend == TMM_BACKEND_CPU,
         "tmm_get_backend");
  if (constant_checks) {
    check_option_defaults(h);
    check_kernel_list();
  }

  const uint8_t flags = r.get<uint8_t>();
  // Enums: mostly valid, sometimes any value at all.
  const int layout = flags & 1 ? r.get<int32_t>() : (r.get<uint8_t>() & 1 ? 101 : 102);
  const int ta = flags & 2 ? r.get<int32_t>() : (r.get<uint8_t>() & 1 ? 111 : 112);
  const int tb = flags & 4 ? r.get<int32_t>() : (r.get<uint8_t>() & 1 ? 111 : 112);
  // Sizes: small (including negative), rarely large; leading dimensions around the
  // minimum.
  const bool large_allowed = (flags & 128) && hash % 64 == 0;
  bool large = false;
  const int64_t m = size_from(r.get<int8_t>(), large_allowed, large);
  const int64_t n = size_from(r.get<int8_t>(), large_allowed, large);
  const int64_t k = size_from(r.get<int8_t>(), large_allowed, large);
  const int8_t lda_byte = r.get<int8_t>(), ldb_byte = r.get<int8_t>(), ldc_byte = r.get<int8_t>();
  float alpha = r.get<float>(), beta = r.get<float>();
  if (flags & 8) alpha = 1.0f, beta = 0.0f;
  const int algorithm = r.get<uint8_t>() % 7 - 1;  // -1 and 5 are invalid
  check_setting(h, algorithm, set_algorithm, get_algorithm, TMM_OPTION_ALGORITHM,
                "tmm_set_algorithm");
  check_setting(h, int(r.get<int8_t>()), tmm_set_tile_size, tmm_get_tile_size, TMM_OPTION_TILE_SIZE,
                "tmm_set_tile_size");
  int setting = -1;
  expect(get_algorithm(h, &setting) == TMM_SUCCESS, "tmm_get_algorithm");

  const bool row = layout == TMM_ROW_MAJOR;
  const bool tra = ta == TMM_TRANS, trb = tb == TMM_TRANS;
  const int64_t ar = tra ? k : m, ac = tra ? m : k, br = trb ? n : k, bc = trb ? k : n;
  const Call p{row,
               tra,
               trb,
               m,
               n,
               k,
               ld_from(lda_byte, std::max<int64_t>(1, row ? ac : ar)),
               ld_from(ldb_byte, std::max<int64_t>(1, row ? bc : br)),
               ld_from(ldc_byte, std::max<int64_t>(1, row ? n : m)),
               alpha,
               beta};
  const i128 a_span = footprint(row, ar, ac, p.lda), b_span = footprint(row, br, bc, p.ldb),
             c_span = footprint(row, m, n, p.ldc);
  const auto buffer = [](i128 span) { return size_t(span <= kMaxElements ? span : 0); };
  std::vector<float> a(buffer(a_span)), b(buffer(b_span)), c(buffer(c_span));
  if (large) {
    Generator g{r.get<uint32_t>()};
    for (std::vector<float>* x : {&a, &b, &c})
      for (float& v : *x) v = g.next();
    check_option(h, TMM_OPTION_HOST_THREADS, r.get<uint8_t>() % 5);
  } else {
    for (std::vector<float>* x : {&a, &b, &c})
      for (float& v : *x) v = r.get<int8_t>() / 16.0f;
  }
  int64_t host_threads = -1;
  expect(tmm_get_option(h, TMM_OPTION_HOST_THREADS, &host_threads) == TMM_SUCCESS,
         "tmm_get_option(TMM_OPTION_HOST_THREADS)");
  check_timing(h, false, p, setting, host_threads);

  // beta = 0 must not read C: NaN there must not reach the result.
  if (beta == 0.0f && !c.empty() && m > 0 && n > 0)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[p.c_index(i, j)] = std::nanf("");
  const std::vector<float> a0 = a, b0 = b, c0 = c;
  // Matrices too large to have a buffer: a one-float stand-in where the call does not
  // need them or their byte size overflows (rejected before any access), else NULL.
  const bool needs_c = m > 0 && n > 0, needs_ab = needs_c && k > 0 && alpha != 0.0f;
  std::vector<float> stand_in[3] = {{5.0f}, {5.0f}, {5.0f}};  // apart, for ASan
  const auto pointer = [&](std::vector<float>& x, i128 span, bool needed, int i) -> float* {
    if (span <= kMaxElements) return x.empty() ? nullptr : x.data();
    return !needed || span > INT64_MAX / 4 ? stand_in[i].data() : nullptr;
  };
  const float* pa = (flags & 16) ? nullptr : pointer(a, a_span, needs_ab, 0);
  const float* pb = (flags & 32) ? nullptr : pointer(b, b_span, needs_ab, 1);
  float* pc = (flags & 64) ? nullptr : pointer(c, c_span, needs_c, 2);

  const tmm_status s =
      checked(h,
              tmm_sgemm(h, static_cast<tmm_layout>(layout), static_cast<tmm_transpose>(ta),
                        static_cast<tmm_transpose>(tb), m, n, k, alpha, pa, p.lda, pb, p.ldb, beta,
                        pc, p.ldc),
              "tmm_sgemm");
  expect(a == a0 && b == b0, "tmm_sgemm wrote A or B");
  for (const std::vector<float>& x : stand_in) expect(x[0] == 5.0f, "tmm_sgemm wrote a stand-in");
  if (s == TMM_SUCCESS && ((needs_c && c.empty()) || (needs_ab && (a.empty() || b.empty()))))
    fail("tmm_sgemm succeeded on a matrix larger than its buffer");
  if (s != TMM_SUCCESS) {
    expect(same_bits(c, c0), "a failed tmm_sgemm wrote C");
  } else {
    expect(tmm_get_error_message(h)[0] == '\0', "a message after a successful call");
    check_padding(p, c0, c);
    check_result(p, a, b, c0, c);
  }
  check_timing(h, s == TMM_SUCCESS, p, setting, host_threads);

  // The same call on device pointers: the CPU backend has none, and C stays as it is.
  const std::vector<float> c1 = c;
  const tmm_status sd =
      checked(h,
              tmm_sgemm_device(h, static_cast<tmm_layout>(layout), static_cast<tmm_transpose>(ta),
                               static_cast<tmm_transpose>(tb), m, n, k, alpha, pa, p.lda, pb, p.ldb,
                               beta, pc, p.ldc),
              "tmm_sgemm_device");
  expect(sd == TMM_ERROR_NOT_SUPPORTED || (s != TMM_SUCCESS && sd == TMM_ERROR_INVALID_VALUE),
         "tmm_sgemm_device on the CPU");
  expect(same_bits(c, c1), "tmm_sgemm_device wrote C on the CPU");

  check_setting(h, int(r.get<int8_t>()), tmm_set_coarsening, tmm_get_coarsening,
                TMM_OPTION_COARSENING, "tmm_set_coarsening");
  const char* text = tmm_status_string(static_cast<tmm_status>(r.get<int32_t>()));
  expect(text != nullptr && text[0] != '\0', "tmm_status_string");
  const int other_backend = r.get<int8_t>() % 4, other_device = r.get<int8_t>();
  check_cpu_only(h, reinterpret_cast<void*>(r.get<uintptr_t>()));
  const int8_t option = r.get<int8_t>();
  check_option(h, option % 6, option & 1 ? r.get<int64_t>() : r.get<int16_t>());
  check_report_size(h, r.get<int8_t>() % 17);
  tmm_kernel_info kernel;
  kernel_info(r.get<int8_t>(), &kernel);
  if (constant_checks) check_null_outputs(h);
  tmm_destroy(h);
  check_create(other_backend, other_device);
  return 0;
}
