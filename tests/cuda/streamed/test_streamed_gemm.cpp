// The streamed engine (lib/cuda/streamed/streamed_gemm.hpp) on a GPU: run directly with
// hand-made plans, and through the C API with a copy or a callback failing at each
// step in turn (the fault injection of lib/cuda/runtime/host_memory.hpp). Skips
// without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/device_profile.hpp"
#include "core/gemm_problem.hpp"
#include "core/host_copy.hpp"
#include "core/settings.hpp"
#include "cuda/runtime/host_memory.hpp"
#include "cuda/streamed/streamed_gemm.hpp"
#include "gemm_reference.hpp"
#include "plan/stream_plan.hpp"
#include "plan_fixtures.hpp"

namespace tiledmm {
namespace {

using tmm_test::h100;

// This machine's GPU 0 as the chunk kernels' dispatch sees it: the H100 profile with the
// device's compute capability and SM count.
DeviceProfile this_device() {
  DeviceProfile device = h100();
  cudaDeviceGetAttribute(&device.cc_major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&device.cc_minor, cudaDevAttrComputeCapabilityMinor, 0);
  cudaDeviceGetAttribute(&device.multiprocessors, cudaDevAttrMultiProcessorCount, 0);
  return device;
}

// A row-major m x n x k product of exact integers (A m x k, B k x n, both dense) run on
// the engine with hand-made plans of one column tile as wide as n, poisoned staging.
struct OneColumnProduct {
  int64_t m, n, k;
  std::vector<float> a, b;
  std::vector<double> product;  // A B, exact

  OneColumnProduct(int64_t m_, int64_t n_, int64_t k_, uint32_t seed)
      : m(m_), n(n_), k(k_), a(size_t(m_ * k_)), b(size_t(k_ * n_)), product(size_t(m_ * n_)) {
    tmm_test::fill_exact(a, seed);
    tmm_test::fill_exact(b, seed + 1);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t q = 0; q < k; ++q) dot += double(a[size_t(i * k + q)]) * b[size_t(q * n + j)];
        product[size_t(i * n + j)] = dot;
      }
    }
  }
  // The exact A B + beta C0 (the product first: beta 0 times a negative C0 is -0, which
  // a product of exact zeros is not; c0 may be empty for beta 0).
  std::vector<float> want(float beta, const std::vector<float>& c0) const {
    std::vector<float> w(product.size());
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = float(product[i] + (beta == 0.0f ? 0.0 : beta * double(c0[i])));
    return w;
  }
  // Row tiles of tile_m rows, chunks of chunk_k, groups of `group`.
  StreamPlan plan(int64_t tile_m, int64_t chunk_k, int64_t group) const {
    StreamPlan s;
    s.tile_m = tile_m;
    s.tile_n = n;
    s.chunk_k = chunk_k;
    s.tiles_m = (m + tile_m - 1) / tile_m;
    s.tiles_n = 1;
    s.chunks = (k + chunk_k - 1) / chunk_k;
    s.group = group;
    return s;
  }
  // C (ld n) = A B + beta C by `plan` on `engine`.
  void run(StreamedGemm& engine, const DeviceProfile& device, const StreamPlan& plan, float beta,
           float* c) const {
    GemmProblem p{};
    p.m = m;
    p.n = n;
    p.k = k;
    p.alpha = 1.0f;
    p.beta = beta;
    p.a = a.data();
    p.lda = k;
    p.b = b.data();
    p.ldb = n;
    p.c = c;
    p.ldc = n;
    Settings settings;
    settings.poison_staging = true;
    engine.run(p, settings, plan, DispatchChunkKernels(settings, device));
  }
};

// The streamed engine run directly with hand-made plans: groups of 1, 2, 3 and 5 row
// tiles computed together while the panel goes up, ragged tile and chunk edges,
// beta 0 and not, transposed and not. Exact integers: every plan gives the exact
// result, bit for bit. Skips without a GPU (fails with TMM_REQUIRE_GPU=1).
TEST(StreamedGemm, EveryGroupOfRowTilesGivesTheExactResult) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const DeviceProfile device = this_device();
  std::shared_ptr<StreamedGemm> engine = shared_streamed_gemm(0);
  EXPECT_EQ(engine.get(), shared_streamed_gemm(0).get()) << "one engine per device";

  std::mt19937 rng(11);
  const int64_t m = 333, n = 200, k = 700;
  for (bool trans : {false, true}) {
    for (float beta : {0.0f, 2.0f}) {
      std::vector<float> a(size_t(m * k)), b(size_t(k * n)), c0(size_t(m * n));
      for (float& x : a) x = float(int(rng() % 5) - 2);
      for (float& x : b) x = float(int(rng() % 5) - 2);
      for (float& x : c0) x = beta == 0.0f ? std::nanf("") : float(int(rng() % 7) - 3);
      std::vector<float> want(c0.size());
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t q = 0; q < k; ++q) {
            const double x = trans ? a[size_t(q * m + i)] : a[size_t(i * k + q)];
            dot += x * b[size_t(q * n + j)];
          }
          want[size_t(i * n + j)] =
              float(dot + (beta == 0.0f ? 0.0 : beta * c0[size_t(i * n + j)]));
        }
      }
      for (int64_t group : {1, 2, 3, 5}) {
        SCOPED_TRACE("trans " + std::to_string(trans) + ", beta " + std::to_string(beta) +
                     ", group " + std::to_string(group));
        GemmProblem p{};
        p.trans_a = trans;
        p.trans_b = false;
        p.m = m;
        p.n = n;
        p.k = k;
        p.alpha = 1.0f;
        p.beta = beta;
        p.a = a.data();
        p.lda = trans ? m : k;
        p.b = b.data();
        p.ldb = n;
        p.ldc = n;
        StreamPlan plan;
        plan.tile_m = 48;   // 7 row tiles, the last of 45 rows
        plan.tile_n = 128;  // 2 column tiles, the last of 72 columns
        plan.chunk_k = 96;  // 8 chunks, the last of 28
        plan.tiles_m = 7;
        plan.tiles_n = 2;
        plan.chunks = 8;
        plan.group = group;
        // Small integers are exact in TF32 too: the tensor-core chunks must give the
        // same bits, and the timing must name the mode of the kernel that ran.
        for (MathMode mode : {MathMode::Fp32, MathMode::Tf32}) {
          std::vector<float> out = c0;
          p.c = out.data();
          Settings settings;
          settings.poison_staging = true;
          settings.math_mode = mode;
          const Timing t = engine->run(p, settings, plan, DispatchChunkKernels(settings, device));
          EXPECT_EQ(t.tiles, 14);
          EXPECT_EQ(t.math_mode, mode);
          EXPECT_EQ(std::memcmp(out.data(), want.data(), out.size() * sizeof(float)), 0)
              << "mode " << int(mode);
        }
      }
    }
  }
}

// Tiles of C of about one strip of C's staging (1000 rows of 4096 floats, just under
// 16 MiB: the host unpacks each while it waits for a copy), in a C of 64 MiB never
// written before (malloc'd; 64 MiB is BackgroundPopulate's threshold, so with the
// default packing threads its pages are faulted in ahead), groups of 1 and 3: the exact
// result, and every element of C written.
TEST(StreamedGemm, TilesUnpackedInStripsIntoAFreshCGiveTheExactResult) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const DeviceProfile device = this_device();
  std::shared_ptr<StreamedGemm> engine = shared_streamed_gemm(0);
  const OneColumnProduct x(4096, 4096, 40, 5);
  ASSERT_GE(x.m * x.n * int64_t(sizeof(float)), BackgroundPopulate::kMinPopulateBytes);
  const std::vector<float> want = x.want(0.0f, {});
  for (int64_t group : {1, 3}) {
    SCOPED_TRACE("group " + std::to_string(group));
    // 5 row tiles of 16 MB (one strip each), the last of 96 rows; 3 chunks, the last of 8.
    const StreamPlan plan = x.plan(1000, 16, group);
    // Fresh memory: new[] of 64 MiB maps pages the process has never touched.
    std::unique_ptr<float[]> c(new float[size_t(x.m * x.n)]);
    x.run(*engine, device, plan, 0.0f, c.get());
    EXPECT_EQ(std::memcmp(c.get(), want.data(), want.size() * sizeof(float)), 0);
  }
}

// Tiles of several strips of C's staging (rows of 8192 floats: 512 rows a strip), and
// groups whose tiles queue more strips than the ring of kCStrips holds: C goes up
// (beta 2) and comes down strip by strip, each strip slot reused while the group's
// other strips wait. The exact result, poisoned staging, groups of 1, 2 and 3.
TEST(StreamedGemm, TilesOfSeveralStripsGiveTheExactResult) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const DeviceProfile device = this_device();
  std::shared_ptr<StreamedGemm> engine = shared_streamed_gemm(0);
  const OneColumnProduct x(2000, 8192, 40, 7);
  std::vector<float> c0(size_t(x.m * x.n));
  tmm_test::fill_exact(c0, 9);
  for (float beta : {0.0f, 2.0f}) {
    const std::vector<float> want = x.want(beta, c0);
    for (int64_t group : {1, 2, 3}) {
      SCOPED_TRACE("beta " + std::to_string(beta) + ", group " + std::to_string(group));
      // 3 row tiles (700, 700, 600): two strips each, the second short; 3 chunks.
      const StreamPlan plan = x.plan(700, 16, group);
      ASSERT_EQ(c_strip_rows(plan, 4), 512);
      std::vector<float> out = c0;
      x.run(*engine, device, plan, beta, out.data());
      EXPECT_EQ(std::memcmp(out.data(), want.data(), want.size() * sizeof(float)), 0);
    }
  }
}

// Tiles of more strips than the ring of kCStrips holds (2100 rows of 8192 floats: five
// strips of up to 512 rows), four row tiles, groups of 1 and 3, beta 0 and 2: a C slot
// is taken again while the strips of the tile that last used it are still queued, so
// the group first waits for the oldest strips' downloads, unpacks them and enqueues the
// rest (begin_group) before anything writes the slot. The exact result, poisoned
// staging.
TEST(StreamedGemm, ASlotTakenAgainFirstSendsDownEveryStripOfItsLastTile) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  const DeviceProfile device = this_device();
  std::shared_ptr<StreamedGemm> engine = shared_streamed_gemm(0);
  const OneColumnProduct x(8400, 8192, 8, 10);
  std::vector<float> c0(size_t(x.m * x.n));
  tmm_test::fill_exact(c0, 12);
  for (float beta : {0.0f, 2.0f}) {
    const std::vector<float> want = x.want(beta, c0);
    for (int64_t group : {1, 3}) {
      SCOPED_TRACE("beta " + std::to_string(beta) + ", group " + std::to_string(group));
      const StreamPlan plan = x.plan(2100, x.k, group);  // 4 row tiles of five strips each
      ASSERT_EQ(c_strip_rows(plan, 4), 512);
      ASSERT_GT((plan.tile_m + 511) / 512, kCStrips) << "a tile must outnumber the ring";
      std::vector<float> out = c0;
      x.run(*engine, device, plan, beta, out.data());
      EXPECT_EQ(std::memcmp(out.data(), want.data(), want.size() * sizeof(float)), 0);
    }
  }
}

// ---- The streamed path after a failure -----------------------------------------

// A host product through the C API on the streamed path, many tiles and chunks: C
// (row-major, ld n) in the caller's memory, pinned or not; integer operands.
struct HostProduct {
  int64_t m, n, k;
  float beta;
  std::vector<float> a, b, c0;
  float* c = nullptr;  // pinned (cudaMallocHost) or owned by `pageable`
  std::vector<float> pageable;
  bool pinned;

  HostProduct(int64_t m_, int64_t n_, int64_t k_, float beta_, bool pinned_, uint32_t seed)
      : m(m_),
        n(n_),
        k(k_),
        beta(beta_),
        a(size_t(m_ * k_)),
        b(size_t(k_ * n_)),
        c0(size_t(m_ * n_)),
        pinned(pinned_) {
    tmm_test::fill_exact(a, seed);
    tmm_test::fill_exact(b, seed + 1);
    tmm_test::fill_exact(c0, seed + 2);
    if (pinned) {
      void* p = nullptr;
      EXPECT_EQ(cudaMallocHost(&p, c0.size() * sizeof(float)), cudaSuccess);
      c = static_cast<float*>(p);
    } else {
      pageable.resize(c0.size());
      c = pageable.data();
    }
    reset();
  }
  ~HostProduct() {
    if (pinned) cudaFreeHost(c);
  }
  HostProduct(const HostProduct&) = delete;  // c may point into pageable
  HostProduct& operator=(const HostProduct&) = delete;

  void reset() { std::copy(c0.begin(), c0.end(), c); }
  tmm_status run(tmm_handle h) {
    return tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, 1.0f, a.data(), k,
                     b.data(), n, beta, c, n);
  }
  // The exact result (integers), computed once.
  const std::vector<float>& result() {
    if (want.empty()) {
      want.resize(c0.size());
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double dot = 0;
          for (int64_t q = 0; q < k; ++q)
            dot += double(a[size_t(i * k + q)]) * b[size_t(q * n + j)];
          want[size_t(i * n + j)] = float(dot + beta * double(c0[size_t(i * n + j)]));
        }
      }
    }
    return want;
  }
  // C equals the exact result (== on integers), or, with `or_old`, each element
  // equals either it or its value before the call (the header's promise after a
  // late failure).
  ::testing::AssertionResult exact(bool or_old = false) {
    const std::vector<float>& r = result();
    for (int64_t e = 0; e < m * n; ++e) {
      if (c[e] == r[size_t(e)] || (or_old && c[e] == c0[size_t(e)])) continue;
      return ::testing::AssertionFailure() << "C[" << e << "] = " << c[e] << ", exactly "
                                           << r[size_t(e)] << (or_old ? " or as before" : "");
    }
    return ::testing::AssertionSuccess();
  }
  std::vector<float> want;
};

tmm_handle streamed_handle() {
  tmm_handle h = nullptr;
  EXPECT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_DEVICE_MEMORY_BUDGET, 1 << 20), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_HOST_STAGING_BYTES, 256 << 10), TMM_SUCCESS);
  return h;
}

// Indices 1..count, all of them or `most` spread evenly (first and last included).
std::vector<int64_t> spread(int64_t count, int64_t most) {
  std::vector<int64_t> out;
  if (count <= most) {
    for (int64_t i = 1; i <= count; ++i) out.push_back(i);
  } else {
    for (int64_t i = 0; i < most; ++i) out.push_back(1 + i * (count - 1) / (most - 1));
  }
  return out;
}

// Poisons C right after a failed call and checks, `wait` later, that nothing of the
// call wrote it since (a copy left in flight would).
::testing::AssertionResult c_stays_poisoned(HostProduct& x, std::chrono::milliseconds wait) {
  const float poison = -7777.0f;
  std::fill(x.c, x.c + x.m * x.n, poison);
  std::this_thread::sleep_for(wait);
  for (int64_t e = 0; e < x.m * x.n; ++e)
    if (x.c[e] != poison) return ::testing::AssertionFailure() << "C[" << e << "] written late";
  return ::testing::AssertionSuccess();
}

// A copy of the streamed path failing (as a late cudaErrorMemoryAllocation would: the
// status is OUT_OF_MEMORY) at each copy in turn, C pinned and pageable: the call
// fails, leaves nothing in flight (a pinned C poisoned right after it stays poisoned),
// and the next calls, of another shape with other operands, on the same handle and on
// a second handle sharing the device's engine, are exact.
TEST(StreamedGemm, AFailingCopyAtEachStepLeavesNothingInFlight) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  tmm_handle h = streamed_handle(), other = streamed_handle();
  HostProduct next_a(333, 250, 410, 1.0f, false, 91), next_b(210, 390, 300, 0.0f, true, 93);
  for (bool pinned : {false, true}) {
    HostProduct x(600, 500, 700, 1.0f, pinned, 17);
    inject_copy_failure(int64_t(1) << 40, cudaErrorMemoryAllocation);
    ASSERT_EQ(x.run(h), TMM_SUCCESS) << tmm_get_error_message(h);
    const int64_t copies = (int64_t(1) << 40) - inject_copy_failure(0, cudaSuccess);
    ASSERT_TRUE(x.exact());
    tmm_report r{};
    r.struct_size = sizeof r;
    ASSERT_EQ(tmm_get_last_report(h, &r), TMM_SUCCESS);
    ASSERT_GE(r.tiles, 4);
    ASSERT_GE(r.k_chunks, 2);
    ASSERT_GE(copies, 8);
    const std::vector<int64_t> at = spread(copies, tmm_test::under_sanitizer() ? 6 : 40);
    for (size_t i = 0; i < at.size(); ++i) {
      SCOPED_TRACE(std::string(pinned ? "pinned" : "pageable") + " C, copy " +
                   std::to_string(at[i]) + " of " + std::to_string(copies) + " fails");
      x.reset();
      inject_copy_failure(at[i], cudaErrorMemoryAllocation);
      EXPECT_EQ(x.run(h), TMM_ERROR_OUT_OF_MEMORY);
      inject_copy_failure(0, cudaSuccess);
      EXPECT_TRUE(x.exact(/*or_old=*/true));
      if (pinned) {
        const bool long_wait = i == 0 || i + 1 == at.size() || i == at.size() / 2;
        EXPECT_TRUE(c_stays_poisoned(x, std::chrono::milliseconds(long_wait ? 1000 : 20)));
      }
      HostProduct& next = i % 2 ? next_b : next_a;
      next.reset();
      ASSERT_EQ(next.run(i % 4 < 2 ? h : other), TMM_SUCCESS);
      EXPECT_TRUE(next.exact());
    }
    x.reset();
    ASSERT_EQ(x.run(other), TMM_SUCCESS);
    EXPECT_TRUE(x.exact());
  }
  tmm_destroy(h);
  tmm_destroy(other);
}

// A read (A, B or C) or write (C) function of tmm_sgemm_io failing at each of its calls
// in turn: TMM_ERROR_CALLBACK, and the next calls (another shape, other operands, the
// same and a second handle) are exact.
TEST(StreamedGemm, AFailingCallbackAtEachChunkLeavesTheEngineClean) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  struct Io {
    std::vector<float>* data;
    std::atomic<int64_t> calls{0}, fail_at{-1};
    tmm_host_io io{};
    explicit Io(std::vector<float>& v) : data(&v) {
      io.struct_size = sizeof io;
      io.user = this;
      io.read = [](void* u, int64_t offset, int64_t count, float* dst) {
        auto* self = static_cast<Io*>(u);
        if (self->calls.fetch_add(1) + 1 == self->fail_at.load()) return 3;
        std::memcpy(dst, self->data->data() + offset, size_t(count) * sizeof(float));
        return 0;
      };
      io.write = [](void* u, int64_t offset, int64_t count, const float* src) {
        auto* self = static_cast<Io*>(u);
        if (self->calls.fetch_add(1) + 1 == self->fail_at.load()) return 4;
        std::memcpy(self->data->data() + offset, src, size_t(count) * sizeof(float));
        return 0;
      };
    }
  };
  tmm_handle h = streamed_handle(), other = streamed_handle();
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_HOST_THREADS, 1), TMM_SUCCESS);  // counted in order
  HostProduct next_a(333, 250, 410, 1.0f, true, 95), next_b(210, 390, 300, 0.0f, false, 97);
  HostProduct x(600, 500, 700, 1.0f, false, 19);
  std::vector<float> a = x.a, b = x.b, c(x.c0);
  Io ia(a), ib(b), ic(c);
  auto run = [&] {
    return tmm_sgemm_io(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, x.m, x.n, x.k, 1.0f, &ia.io,
                        x.k, &ib.io, x.n, 1.0f, &ic.io, x.n);
  };
  ASSERT_EQ(run(), TMM_SUCCESS) << tmm_get_error_message(h);
  std::copy(c.begin(), c.end(), x.c);
  ASSERT_TRUE(x.exact());
  const int64_t counts[3] = {ia.calls.load(), ib.calls.load(), ic.calls.load()};
  int step = 0;
  for (int which = 0; which < 3; ++which) {
    Io& io = which == 0 ? ia : which == 1 ? ib : ic;
    for (int64_t at : spread(counts[which], tmm_test::under_sanitizer() ? 4 : 25)) {
      SCOPED_TRACE(std::string("operand ") + "ABC"[which] + ", call " + std::to_string(at) +
                   " of " + std::to_string(counts[which]) + " fails");
      std::copy(x.c0.begin(), x.c0.end(), c.begin());
      for (Io* i : {&ia, &ib, &ic}) i->calls = 0;
      io.fail_at = at;
      EXPECT_EQ(run(), TMM_ERROR_CALLBACK);
      io.fail_at = -1;
      std::copy(c.begin(), c.end(), x.c);
      EXPECT_TRUE(x.exact(/*or_old=*/true)) << "C's write function got only final values";
      HostProduct& next = step % 2 ? next_b : next_a;
      next.reset();
      ASSERT_EQ(next.run(step % 4 < 2 ? h : other), TMM_SUCCESS);
      EXPECT_TRUE(next.exact());
      ++step;
    }
  }
  tmm_destroy(h);
  tmm_destroy(other);
}

}  // namespace
}  // namespace tiledmm
