// libFuzzer target: drives the C API on the CPU backend with random sizes, leading
// dimensions, enum values (valid or not), alpha/beta (NaN and infinities too),
// algorithms, settings and NULL pointers. Each matrix buffer holds exactly the
// elements the call may touch, so ASan reports any read or write past them.
// Every call must return a documented status; a successful call must leave C
// finite when its inputs were finite and must not write C's padding.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
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
    std::memcpy(&v, data, n);
    data += n;
    size -= n;
    return v;
  }
};

bool documented(tmm_status s) { return s >= TMM_SUCCESS && s <= TMM_ERROR_INTERNAL; }

// Elements a stored rows x cols matrix with leading dimension ld spans (CBLAS), or
// 0 when the call does not need it or its ld is invalid (rejected before any access).
size_t footprint(bool row, int64_t rows, int64_t cols, int64_t ld) {
  const int64_t outer = row ? rows : cols, inner = row ? cols : rows;
  if (outer <= 0 || inner <= 0 || ld < inner) return 0;
  return size_t((outer - 1) * ld + inner);
}

tmm_handle handle() {
  static tmm_handle h = [] {
    tmm_handle out = nullptr;
    if (tmm_create_with_backend(&out, TMM_BACKEND_CPU, 0) != TMM_SUCCESS) std::abort();
    return out;
  }();
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Reader r{data, size};
  tmm_handle h = handle();
  const uint8_t flags = r.get<uint8_t>();
  // Enums: mostly valid, sometimes any value at all.
  const int layout = flags & 1 ? r.get<int32_t>() : (r.get<uint8_t>() & 1 ? 101 : 102);
  const int ta = flags & 2 ? r.get<int32_t>() : (r.get<uint8_t>() & 1 ? 111 : 112);
  const int tb = flags & 4 ? r.get<int32_t>() : (r.get<uint8_t>() & 1 ? 111 : 112);
  // Sizes: small (including negative), leading dimensions around the minimum.
  const int64_t m = int64_t(r.get<int8_t>()) % 40, n = int64_t(r.get<int8_t>()) % 40,
                k = int64_t(r.get<int8_t>()) % 40;
  const int64_t lda_delta = r.get<int8_t>() % 6, ldb_delta = r.get<int8_t>() % 6,
                ldc_delta = r.get<int8_t>() % 6;
  float alpha = r.get<float>(), beta = r.get<float>();
  if (flags & 8) alpha = 1.0f, beta = 0.0f;
  const int algorithm = r.get<uint8_t>() % 7 - 1;  // -1 and 5 are invalid
  if (!documented(tmm_set_algorithm(h, static_cast<tmm_algorithm>(algorithm)))) std::abort();
  if (!documented(tmm_set_tile_size(h, r.get<int8_t>()))) std::abort();

  const bool row = layout == TMM_ROW_MAJOR;
  const bool tra = ta == TMM_TRANS, trb = tb == TMM_TRANS;
  const int64_t ar = tra ? k : m, ac = tra ? m : k, br = trb ? n : k, bc = trb ? k : n;
  const int64_t lda = std::max<int64_t>(1, row ? ac : ar) + lda_delta;
  const int64_t ldb = std::max<int64_t>(1, row ? bc : br) + ldb_delta;
  const int64_t ldc = std::max<int64_t>(1, row ? n : m) + ldc_delta;
  std::vector<float> a(footprint(row, ar, ac, lda)), b(footprint(row, br, bc, ldb)),
      c(footprint(row, m, n, ldc));
  for (float& x : a) x = r.get<int8_t>() / 16.0f;
  for (float& x : b) x = r.get<int8_t>() / 16.0f;
  for (float& x : c) x = r.get<int8_t>() / 16.0f;
  const std::vector<float> c0 = c;
  const float* pa = (flags & 16) || a.empty() ? nullptr : a.data();
  const float* pb = (flags & 32) || b.empty() ? nullptr : b.data();
  float* pc = (flags & 64) || c.empty() ? nullptr : c.data();

  const tmm_status s =
      tmm_sgemm(h, static_cast<tmm_layout>(layout), static_cast<tmm_transpose>(ta),
                static_cast<tmm_transpose>(tb), m, n, k, alpha, pa, lda, pb, ldb, beta, pc, ldc);
  if (!documented(s) || s == TMM_ERROR_INTERNAL) std::abort();
  if (s != TMM_SUCCESS) {
    if (!c.empty() && std::memcmp(c.data(), c0.data(), c.size() * sizeof(float)) != 0) std::abort();
    if (tmm_get_error_message(h)[0] == '\0') std::abort();  // a failure always says why
    return 0;
  }
  // Success: finite inputs give finite C (inputs are at most 8 in magnitude).
  if (std::isfinite(alpha) && std::isfinite(beta) && std::fabs(alpha) < 1e3f &&
      std::fabs(beta) < 1e3f) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (!std::isfinite(c[size_t(row ? i * ldc + j : j * ldc + i)])) std::abort();
  }
  return 0;
}
