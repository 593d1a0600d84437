// A handle over several devices (tmm_create_with_devices) through the C API. The list:
// TMM_TEST_GPUS=N, devices 0..N-1 (fewer present: skip, or fail with TMM_REQUIRE_GPU=1);
// unset, every device, and on a machine of one device that device twice (two entries,
// two engines, on one GPU). Exact small integers; skips without a GPU (fails with
// TMM_REQUIRE_GPU=1).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gemm_reference.hpp"
#include "tiledmm/tiledmm.h"

namespace {

int present_devices() {
  int count = 0;
  tmm_handle h = nullptr;
  if (tmm_create_with_devices(&h, nullptr, 0) != TMM_SUCCESS) return 0;
  tmm_get_device_count(h, &count);
  tmm_destroy(h);
  return count;
}

// The devices the tests list; empty when the machine has fewer than TMM_TEST_GPUS.
std::vector<int> test_devices() {
  const int present = present_devices();
  const char* v = std::getenv("TMM_TEST_GPUS");
  std::vector<int> list;
  if (v != nullptr && *v != '\0') {
    const int want = std::atoi(v);
    if (want > present) return list;
    for (int d = 0; d < want; ++d) list.push_back(d);
    if (want == 1) list.push_back(0);
    return list;
  }
  for (int d = 0; d < present; ++d) list.push_back(d);
  if (present == 1) list.push_back(0);
  return list;
}

#define TMM_NEED_DEVICES(list)                                                        \
  do {                                                                                \
    TMM_SKIP_OR_FAIL_WITHOUT_GPU();                                                   \
    if ((list).empty()) {                                                             \
      if (::tmm_test::gpu_required()) FAIL() << "fewer GPUs than TMM_TEST_GPUS asks"; \
      GTEST_SKIP() << "fewer GPUs than TMM_TEST_GPUS asks";                           \
    }                                                                                 \
  } while (0)

tmm_handle multi_handle(const std::vector<int>& list) {
  tmm_handle h = nullptr;
  EXPECT_EQ(tmm_create_with_devices(&h, list.data(), int(list.size())), TMM_SUCCESS)
      << tmm_get_error_message(nullptr);
  return h;
}

// Streamed on every entry, with budgets that cut the product into many tiles.
void share_everything(tmm_handle h) {
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_DEVICE_MEMORY_BUDGET, int64_t(24) << 20), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_HOST_STAGING_BYTES, int64_t(4) << 20), TMM_SUCCESS);
}

// C = alpha op(A) op(B) + beta C0 on exact small integers, in T, either layout and
// transpose, with padded leading dimensions.
template <class T>
struct Product {
  tmm_layout layout;
  bool ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  T alpha, beta;
  std::vector<T> a, b, c0, c, want;

  // `nan_c`: C0 all NaN (beta 0 must not read it; the padding must stay NaN).
  Product(tmm_layout layout_, bool ta_, bool tb_, int64_t m_, int64_t n_, int64_t k_, T beta_,
          uint32_t seed, bool nan_c = false)
      : layout(layout_), ta(ta_), tb(tb_), m(m_), n(n_), k(k_), alpha(T(1)), beta(beta_) {
    const bool row = layout == TMM_ROW_MAJOR;
    // Stored rows x cols of each operand, and a leading dimension 3 past its minimum.
    const int64_t a_rows = row ? (ta ? k : m) : (ta ? m : k);
    const int64_t a_cols = row ? (ta ? m : k) : (ta ? k : m);
    const int64_t b_rows = row ? (tb ? n : k) : (tb ? k : n);
    const int64_t b_cols = row ? (tb ? k : n) : (tb ? n : k);
    const int64_t c_rows = row ? m : n, c_cols = row ? n : m;
    lda = a_cols + 3;
    ldb = b_cols + 3;
    ldc = c_cols + 3;
    a.resize(size_t(a_rows * lda));
    b.resize(size_t(b_rows * ldb));
    c0.resize(size_t(c_rows * ldc));
    fill(a, seed);
    fill(b, seed + 1);
    fill(c0, seed + 2);
    if (nan_c) std::fill(c0.begin(), c0.end(), T(std::nan("")));
    want = c0;
    auto at = [&](const std::vector<T>& v, int64_t ld, bool trans, int64_t i, int64_t j) {
      // op(X)(i, j) of a matrix stored in `layout`.
      const int64_t r = trans ? j : i, q = trans ? i : j;
      return double(row ? v[size_t(r * ld + q)] : v[size_t(q * ld + r)]);
    };
    // op(A) and op(B) row by row, then C a row at a time: small integers sum exactly in
    // any order, so the row updates (which vectorize) give the exact product quickly.
    std::vector<double> oa(size_t(m * k)), ob(size_t(k * n)), dot(static_cast<size_t>(n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t q = 0; q < k; ++q) oa[size_t(i * k + q)] = at(a, lda, ta, i, q);
    for (int64_t q = 0; q < k; ++q)
      for (int64_t j = 0; j < n; ++j) ob[size_t(q * n + j)] = at(b, ldb, tb, q, j);
    for (int64_t i = 0; i < m; ++i) {
      std::fill(dot.begin(), dot.end(), 0.0);
      for (int64_t q = 0; q < k; ++q) {
        const double s = oa[size_t(i * k + q)];
        const double* bq = ob.data() + q * n;
        for (int64_t j = 0; j < n; ++j) dot[size_t(j)] += s * bq[j];
      }
      for (int64_t j = 0; j < n; ++j) {
        const size_t e = size_t(row ? i * ldc + j : j * ldc + i);
        want[e] = T(dot[size_t(j)] + (beta == T(0) ? 0.0 : double(beta) * double(c0[e])));
      }
    }
    c = c0;
  }
  static bool same(T x, T y) { return std::memcmp(&x, &y, sizeof(T)) == 0; }
  static void fill(std::vector<T>& v, uint32_t seed) {
    uint32_t x = seed * 2654435761u + 12345u;
    for (T& e : v) {
      x = x * 1664525u + 1013904223u;
      e = T(int((x >> 16) % 5) - 2);
    }
  }
  void reset() { c = c0; }
  tmm_status run(tmm_handle h) {
    const tmm_transpose a_op = ta ? TMM_TRANS : TMM_NO_TRANS, b_op = tb ? TMM_TRANS : TMM_NO_TRANS;
    if constexpr (sizeof(T) == 4) {
      return tmm_sgemm(h, layout, a_op, b_op, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta,
                       c.data(), ldc);
    } else {
      return tmm_dgemm(h, layout, a_op, b_op, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta,
                       c.data(), ldc);
    }
  }
  // Bit for bit (NaN padding included).
  ::testing::AssertionResult exact(bool or_old = false) const {
    for (size_t e = 0; e < c.size(); ++e) {
      if (same(c[e], want[e]) || (or_old && same(c[e], c0[e]))) continue;
      return ::testing::AssertionFailure() << "C[" << e << "] = " << c[e] << ", exactly " << want[e]
                                           << (or_old ? " or as before" : "");
    }
    return ::testing::AssertionSuccess();
  }
};

tmm_report report_of(tmm_handle h) {
  tmm_report r{};
  r.struct_size = sizeof r;
  EXPECT_EQ(tmm_get_last_report(h, &r), TMM_SUCCESS);
  return r;
}

tmm_device_report entry_report(tmm_handle h, int index) {
  tmm_device_report r{};
  r.struct_size = sizeof r;
  EXPECT_EQ(tmm_get_last_device_report(h, index, &r), TMM_SUCCESS) << tmm_get_error_message(h);
  return r;
}

// Every entry computed tiles, and their reports add up to the call's.
void expect_shared(tmm_handle h, int entries) {
  const tmm_report r = report_of(h);
  EXPECT_EQ(r.device_count, entries);
  EXPECT_EQ(r.host_path, TMM_HOST_PATH_STREAMED);
  int64_t tiles = 0, host_bytes = 0;
  for (int i = 0; i < entries; ++i) {
    const tmm_device_report d = entry_report(h, i);
    EXPECT_GT(d.tiles, 0) << "entry " << i;
    EXPECT_GT(d.upload_bytes, 0) << "entry " << i;
    EXPECT_GT(d.download_bytes, 0) << "entry " << i;
    EXPECT_GE(d.end_ms, d.start_ms) << "entry " << i;
    EXPECT_GE(d.host_threads, 1) << "entry " << i;
    tiles += d.tiles;
    host_bytes += d.host_bytes;
  }
  EXPECT_EQ(tiles, r.tiles);
  EXPECT_EQ(host_bytes, r.host_bytes);
}

TEST(MultiDevice, CreatesOverTheListAndDescribesEachEntry) {
  const std::vector<int> list = test_devices();
  TMM_NEED_DEVICES(list);
  tmm_handle h = multi_handle(list);
  int count = 0;
  ASSERT_EQ(tmm_get_device_count(h, &count), TMM_SUCCESS);
  EXPECT_EQ(count, int(list.size()));
  for (int i = 0; i < count; ++i) {
    tmm_device_info info{};
    ASSERT_EQ(tmm_get_device_info_at(h, i, &info), TMM_SUCCESS);
    EXPECT_EQ(info.device, list[size_t(i)]);
    EXPECT_GT(info.multiprocessors, 0);
  }
  tmm_device_info info{};
  EXPECT_EQ(tmm_get_device_info_at(h, count, &info), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_device_info_at(h, -1, &info), TMM_ERROR_INVALID_VALUE);
  ASSERT_EQ(tmm_get_device_info(h, &info), TMM_SUCCESS);
  EXPECT_EQ(info.device, list[0]) << "tmm_get_device_info: the first entry";
  tmm_device_report d{};
  d.struct_size = sizeof d;
  EXPECT_EQ(tmm_get_last_device_report(h, 0, &d), TMM_ERROR_INVALID_VALUE) << "no call yet";
  tmm_destroy(h);

  // count 1: a single-device handle; devices NULL and count 0: every device.
  const int one = list[0];
  ASSERT_EQ(tmm_create_with_devices(&h, &one, 1), TMM_SUCCESS);
  ASSERT_EQ(tmm_get_device_count(h, &count), TMM_SUCCESS);
  EXPECT_EQ(count, 1);
  tmm_destroy(h);
  ASSERT_EQ(tmm_create_with_devices(&h, nullptr, 0), TMM_SUCCESS);
  ASSERT_EQ(tmm_get_device_count(h, &count), TMM_SUCCESS);
  EXPECT_EQ(count, present_devices());
  tmm_destroy(h);

  // An index that does not exist: NO_DEVICE, *out untouched.
  const int bad[2] = {list[0], 1000};
  tmm_handle untouched = reinterpret_cast<tmm_handle>(&count);
  EXPECT_EQ(tmm_create_with_devices(&untouched, bad, 2), TMM_ERROR_NO_DEVICE);
  EXPECT_EQ(untouched, reinterpret_cast<tmm_handle>(&count));
  EXPECT_NE(std::string(tmm_get_error_message(nullptr)).find("1000"), std::string::npos);
}

// Both precisions, both layouts, every transpose, padded leading dimensions, beta 0 over
// NaN and beta 2: the exact result with every entry computing tiles.
TEST(MultiDevice, ExactOnIntegersInEveryForm) {
  const std::vector<int> list = test_devices();
  TMM_NEED_DEVICES(list);
  tmm_handle h = multi_handle(list);
  share_everything(h);
  int variant = 0;
  for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        const int64_t m = 700 + 37 * (variant % 3), n = 650 - 21 * (variant % 4), k = 900;
        SCOPED_TRACE("variant " + std::to_string(variant) +
                     (layout == TMM_ROW_MAJOR ? " row" : " col") + (ta ? " ta" : "") +
                     (tb ? " tb" : ""));
        {
          Product<float> x(layout, ta, tb, m, n, k, variant % 2 ? 2.0f : 0.0f, uint32_t(variant),
                           variant % 2 == 0);
          ASSERT_EQ(x.run(h), TMM_SUCCESS) << tmm_get_error_message(h);
          EXPECT_TRUE(x.exact());
          expect_shared(h, int(list.size()));
          EXPECT_EQ(report_of(h).precision, TMM_PRECISION_SINGLE);
        }
        {
          Product<double> x(layout, ta, tb, m, n, k, -1.0, uint32_t(variant + 50));
          ASSERT_EQ(x.run(h), TMM_SUCCESS) << tmm_get_error_message(h);
          EXPECT_TRUE(x.exact());
          expect_shared(h, int(list.size()));
          EXPECT_EQ(report_of(h).precision, TMM_PRECISION_DOUBLE);
        }
        ++variant;
      }
    }
  }
  tmm_destroy(h);
}

// Every math mode on integers (exact in TF32 too), and the _io call through functions.
TEST(MultiDevice, EveryMathModeAndTheIoCall) {
  const std::vector<int> list = test_devices();
  TMM_NEED_DEVICES(list);
  tmm_handle h = multi_handle(list);
  share_everything(h);
  Product<float> x(TMM_ROW_MAJOR, false, true, 1000, 900, 1100, 1.0f, 7);
  for (tmm_math_mode mode : {TMM_MATH_FP32, TMM_MATH_TF32, TMM_MATH_FP32_ACCURATE}) {
    SCOPED_TRACE("mode " + std::to_string(int(mode)));
    ASSERT_EQ(tmm_set_option(h, TMM_OPTION_MATH_MODE, mode), TMM_SUCCESS);
    x.reset();
    ASSERT_EQ(x.run(h), TMM_SUCCESS) << tmm_get_error_message(h);
    EXPECT_TRUE(x.exact());
    expect_shared(h, int(list.size()));
  }
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_MATH_MODE, TMM_MATH_FP32), TMM_SUCCESS);
  struct Io {
    std::vector<float>* data;
    tmm_host_io io{};
    explicit Io(std::vector<float>& v) : data(&v) {
      io.struct_size = sizeof io;
      io.user = this;
      io.read = [](void* u, int64_t offset, int64_t count, float* dst) {
        std::memcpy(dst, static_cast<Io*>(u)->data->data() + offset, size_t(count) * sizeof(float));
        return 0;
      };
      io.write = [](void* u, int64_t offset, int64_t count, const float* src) {
        std::memcpy(static_cast<Io*>(u)->data->data() + offset, src, size_t(count) * sizeof(float));
        return 0;
      };
    }
  };
  x.reset();
  Io ia(x.a), ib(x.b), ic(x.c);
  ASSERT_EQ(tmm_sgemm_io(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_TRANS, x.m, x.n, x.k, 1.0f, &ia.io,
                         x.lda, &ib.io, x.ldb, 1.0f, &ic.io, x.ldc),
            TMM_SUCCESS)
      << tmm_get_error_message(h);
  EXPECT_TRUE(x.exact());
  expect_shared(h, int(list.size()));
  tmm_destroy(h);
}

// The entries run at once: their spans overlap (a device listed twice is two engines,
// not one taken in turn).
TEST(MultiDevice, EntriesOverlap) {
  const std::vector<int> list = test_devices();
  TMM_NEED_DEVICES(list);
  tmm_handle h = multi_handle(list);
  share_everything(h);
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_DEVICE_MEMORY_BUDGET, int64_t(256) << 20), TMM_SUCCESS);
  Product<float> x(TMM_ROW_MAJOR, false, false, 3000, 2500, 2000, 0.0f, 9);
  ASSERT_EQ(x.run(h), TMM_SUCCESS) << tmm_get_error_message(h);
  EXPECT_TRUE(x.exact());
  double latest_start = 0, earliest_end = 1e30;
  for (int i = 0; i < int(list.size()); ++i) {
    const tmm_device_report d = entry_report(h, i);
    latest_start = std::max(latest_start, d.start_ms);
    earliest_end = std::min(earliest_end, d.end_ms);
  }
  EXPECT_LT(latest_start, earliest_end);
  tmm_destroy(h);
}

// The entries' engines are the handle's own: a long product on a single-device handle
// (which holds the process's engine of device 0 for the whole product) does not hold the
// handle of several devices back. Were the entries to share the process's engines, the
// shared call would wait for the long one to end.
TEST(MultiDevice, ABusyProcessEngineDoesNotHoldTheHandleBack) {
  const std::vector<int> list = test_devices();
  TMM_NEED_DEVICES(list);
  tmm_handle single = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&single, TMM_BACKEND_CUDA, list[0]), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(single, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(single, TMM_OPTION_DEVICE_MEMORY_BUDGET, int64_t(64) << 20),
            TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(single, TMM_OPTION_HOST_THREADS, 2), TMM_SUCCESS);
  // The naive kernel makes it long whatever the host (6144^3 through the fast kernels
  // ended within 200 ms on the H100 host of four GPUs).
  ASSERT_EQ(tmm_set_option(single, TMM_OPTION_ALGORITHM, TMM_ALGO_NAIVE), TMM_SUCCESS);
  tmm_handle h = multi_handle(list);
  share_everything(h);
  Product<float> x(TMM_ROW_MAJOR, false, false, 700, 600, 500, 1.0f, 17);
  // A long product: 8192^3 on the naive kernel (about a second on the H100).
  const int64_t big = 8192;
  std::vector<float> a(size_t(big * big), 1.0f), b(a.size(), 1.0f), c(a.size(), 0.0f);
  std::atomic<bool> started{false}, done{false};
  tmm_status long_status = TMM_ERROR_INTERNAL;
  std::thread other([&] {
    started = true;
    long_status = tmm_sgemm(single, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, big, big, big, 1.0f,
                            a.data(), big, b.data(), big, 0.0f, c.data(), big);
    done = true;
  });
  while (!started) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // inside its product
  const bool long_still_running = !done;
  const tmm_status shared_status = x.run(h);
  const bool overtaken = !done;
  other.join();  // before any assertion returns
  ASSERT_EQ(shared_status, TMM_SUCCESS) << tmm_get_error_message(h);
  ASSERT_EQ(long_status, TMM_SUCCESS) << tmm_get_error_message(single);
  ASSERT_TRUE(long_still_running) << "the long product ended within 200 ms: make it longer";
  EXPECT_TRUE(overtaken) << "the shared call waited for the single-device handle's product";
  EXPECT_TRUE(x.exact());
  EXPECT_EQ(c[0], float(big));
  tmm_destroy(h);
  tmm_destroy(single);
}

// Small products, the direct path and empty products run on the first entry alone.
TEST(MultiDevice, TheFirstEntryAloneWhereSharingCannotPay) {
  const std::vector<int> list = test_devices();
  TMM_NEED_DEVICES(list);
  tmm_handle h = multi_handle(list);
  Product<float> x(TMM_COL_MAJOR, true, false, 100, 90, 80, 1.0f, 3);
  ASSERT_EQ(x.run(h), TMM_SUCCESS) << tmm_get_error_message(h);  // AUTO: small
  EXPECT_TRUE(x.exact());
  EXPECT_EQ(report_of(h).device_count, 1);
  for (int i = 1; i < int(list.size()); ++i) EXPECT_EQ(entry_report(h, i).tiles, 0);
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  Product<double> y(TMM_ROW_MAJOR, false, false, 1200, 1100, 1000, 2.0, 4);
  ASSERT_EQ(y.run(h), TMM_SUCCESS) << tmm_get_error_message(h);
  EXPECT_TRUE(y.exact());
  const tmm_report r = report_of(h);
  EXPECT_EQ(r.device_count, 1);
  EXPECT_EQ(r.host_path, TMM_HOST_PATH_DIRECT);
  EXPECT_EQ(entry_report(h, 0).tiles, 1) << "the first entry computed the call";
  EXPECT_EQ(tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 0, 5, 5, 1.0f, nullptr, 5,
                      nullptr, 5, 0.0f, nullptr, 5),
            TMM_SUCCESS);
  EXPECT_EQ(report_of(h).device_count, 1);
  tmm_destroy(h);
}

// A strided batch on a handle of several devices: each product shared, exact, and the
// device reports adding up over the products.
TEST(MultiDevice, AStridedBatchSharesEveryProduct) {
  const std::vector<int> list = test_devices();
  TMM_NEED_DEVICES(list);
  tmm_handle h = multi_handle(list);
  share_everything(h);
  const int64_t m = 500, n = 400, k = 300, batch = 3;
  std::vector<Product<float>> xs;
  for (int64_t b = 0; b < batch; ++b)
    xs.emplace_back(TMM_ROW_MAJOR, false, false, m, n, k, 1.0f, uint32_t(60 + b));
  // The batch in one array per operand, products one after another (their padded sizes).
  const int64_t sa = int64_t(xs[0].a.size()), sb = int64_t(xs[0].b.size()),
                sc = int64_t(xs[0].c.size());
  std::vector<float> a, b, c;
  for (const auto& x : xs) {
    a.insert(a.end(), x.a.begin(), x.a.end());
    b.insert(b.end(), x.b.begin(), x.b.end());
    c.insert(c.end(), x.c0.begin(), x.c0.end());
  }
  ASSERT_EQ(tmm_sgemm_strided_batched(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, 1.0f,
                                      a.data(), xs[0].lda, sa, b.data(), xs[0].ldb, sb, 1.0f,
                                      c.data(), xs[0].ldc, sc, batch),
            TMM_SUCCESS)
      << tmm_get_error_message(h);
  for (int64_t i = 0; i < batch; ++i) {
    std::copy(c.begin() + i * sc, c.begin() + (i + 1) * sc, xs[size_t(i)].c.begin());
    EXPECT_TRUE(xs[size_t(i)].exact()) << "product " << i;
  }
  const tmm_report r = report_of(h);
  EXPECT_EQ(r.batch, batch);
  int64_t tiles = 0;
  for (int i = 0; i < int(list.size()); ++i) tiles += entry_report(h, i).tiles;
  EXPECT_EQ(tiles, batch * r.tiles) << "each product's tiles, every product";
  tmm_destroy(h);
}

// Device pointers and streams belong to one device.
TEST(MultiDevice, DeviceCallsAreNotSupportedAndSynchronizeSucceeds) {
  const std::vector<int> list = test_devices();
  TMM_NEED_DEVICES(list);
  tmm_handle h = multi_handle(list);
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 3 * 64 * sizeof(float)), cudaSuccess);
  EXPECT_EQ(tmm_sgemm_device(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 8, 8, 8, 1.0f, d, 8,
                             d + 64, 8, 0.0f, d + 128, 8),
            TMM_ERROR_NOT_SUPPORTED);
  EXPECT_NE(std::string(tmm_get_error_message(h)).find("several devices"), std::string::npos);
  void* stream = nullptr;
  EXPECT_EQ(tmm_get_stream(h, &stream), TMM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(tmm_set_stream(h, nullptr), TMM_ERROR_NOT_SUPPORTED);
  int word = 0;
  EXPECT_EQ(tmm_set_workspace(h, nullptr, 0), TMM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(tmm_set_workspace(h, &word, sizeof word), TMM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(tmm_synchronize(h), TMM_SUCCESS);
  EXPECT_EQ(tmm_reserve_host_staging(h, int64_t(1) << 20), TMM_SUCCESS);
  cudaFree(d);
  tmm_destroy(h);
}

// A read of A failing in the middle of a shared call: TMM_ERROR_CALLBACK with a message
// naming the device, each element of C old or final, and the next call exact.
TEST(MultiDevice, AFailureMidCallLeavesTheHandleUsable) {
  const std::vector<int> list = test_devices();
  TMM_NEED_DEVICES(list);
  tmm_handle h = multi_handle(list);
  share_everything(h);
  Product<float> x(TMM_ROW_MAJOR, false, false, 900, 800, 700, 1.0f, 13);
  struct Io {
    std::vector<float>* data;
    std::atomic<int64_t> calls{0}, fail_at{-1};
    tmm_host_io io{};
    explicit Io(std::vector<float>& v) : data(&v) {
      io.struct_size = sizeof io;
      io.user = this;
      io.read = [](void* u, int64_t offset, int64_t count, float* dst) {
        auto* self = static_cast<Io*>(u);
        if (self->calls.fetch_add(1) + 1 == self->fail_at.load()) return 5;
        std::memcpy(dst, self->data->data() + offset, size_t(count) * sizeof(float));
        return 0;
      };
      io.write = [](void* u, int64_t offset, int64_t count, const float* src) {
        std::memcpy(static_cast<Io*>(u)->data->data() + offset, src, size_t(count) * sizeof(float));
        return 0;
      };
    }
  };
  Io ia(x.a), ib(x.b), ic(x.c);
  auto run = [&] {
    return tmm_sgemm_io(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, x.m, x.n, x.k, 1.0f, &ia.io,
                        x.lda, &ib.io, x.ldb, 1.0f, &ic.io, x.ldc);
  };
  ASSERT_EQ(run(), TMM_SUCCESS) << tmm_get_error_message(h);
  ASSERT_TRUE(x.exact());
  const int64_t calls = ia.calls.load();
  ASSERT_GE(calls, 8);
  // The count of reads depends on which device took which tile: failures at reads every
  // run makes.
  for (int64_t at : {int64_t(1), calls / 3, calls / 2}) {
    SCOPED_TRACE("read " + std::to_string(at) + " of " + std::to_string(calls) + " of A fails");
    x.reset();
    ia.calls = 0;
    ia.fail_at = at;
    EXPECT_EQ(run(), TMM_ERROR_CALLBACK);
    ia.fail_at = -1;
    EXPECT_NE(std::string(tmm_get_error_message(h)).find("device"), std::string::npos)
        << tmm_get_error_message(h);
    EXPECT_TRUE(x.exact(/*or_old=*/true));
    x.reset();
    ASSERT_EQ(x.run(h), TMM_SUCCESS) << tmm_get_error_message(h);
    EXPECT_TRUE(x.exact());
  }
  tmm_destroy(h);
}

// The device report's struct_size: too small is INVALID_VALUE; an index past the entries
// too.
TEST(MultiDevice, DeviceReportChecksItsArguments) {
  const std::vector<int> list = test_devices();
  TMM_NEED_DEVICES(list);
  tmm_handle h = multi_handle(list);
  Product<float> x(TMM_ROW_MAJOR, false, false, 64, 64, 64, 0.0f, 1);
  ASSERT_EQ(x.run(h), TMM_SUCCESS);
  tmm_device_report d{};
  d.struct_size = offsetof(tmm_device_report, tiles);
  EXPECT_EQ(tmm_get_last_device_report(h, 0, &d), TMM_ERROR_INVALID_VALUE);
  d.struct_size = sizeof d;
  EXPECT_EQ(tmm_get_last_device_report(h, int(list.size()), &d), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_last_device_report(h, 0, nullptr), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_last_device_report(h, 0, &d), TMM_SUCCESS);
  EXPECT_EQ(d.struct_size, sizeof d);
  EXPECT_EQ(d.device, list[0]);
  tmm_destroy(h);
}

}  // namespace
