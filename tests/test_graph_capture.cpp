// CUDA graphs: the device calls captured on the handle's stream, in each capture mode,
// on a fresh handle and on one whose workspace is in use, then replayed; host calls
// refused while the handle's stream captures; a capture of another stream (another
// thread's, in global mode) left alone while the library allocates and waits. Its own
// program, so that the first capture comes before the process has run any of the
// library's kernels. Skips without a GPU; fails instead when TMM_REQUIRE_GPU=1.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "capture_fixtures.hpp"
#include "gemm_reference.hpp"
#include "gemm_reference_f64.hpp"

namespace {

using tmm_test::CaptureCloser;
using tmm_test::DgemmCase;
using tmm_test::GemmCase;
using tmm_test::HandleAndStream;

// A device copy of a host vector, freed at scope exit.
template <class T>
struct DeviceVector {
  T* p = nullptr;
  size_t n = 0;
  explicit DeviceVector(const std::vector<T>& host) : n(host.size()) {
    EXPECT_EQ(cudaMalloc(&p, n * sizeof(T)), cudaSuccess);
    upload(host);
  }
  ~DeviceVector() { cudaFree(p); }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  void upload(const std::vector<T>& host) {
    EXPECT_EQ(cudaMemcpy(p, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  std::vector<T> download() const {
    std::vector<T> host(n);
    EXPECT_EQ(cudaMemcpy(host.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
};

// One product of the capture: its case on the device, the call that enqueues it, and
// what its captured call reported.
template <class Case, class T>
struct Product {
  Case g;
  DeviceVector<T> a, b, c;
  std::function<tmm_status(tmm_handle)> call;
  explicit Product(Case gc) : g(std::move(gc)), a(g.a), b(g.b), c(g.c) {}
};

GemmCase sgemm_case(int64_t m, int64_t n, int64_t k, tmm_transpose ta, float beta) {
  GemmCase g;
  g.layout = TMM_ROW_MAJOR;
  g.ta = ta;
  g.m = m;
  g.n = n;
  g.k = k;
  g.alpha = 0.75f;
  g.beta = beta;
  g.pad = 3;
  tmm_test::fill_case(g, tmm_test::fresh_seed());
  return g;
}

DgemmCase dgemm_case(int64_t m, int64_t n, int64_t k) {
  DgemmCase g;
  g.layout = TMM_COL_MAJOR;
  g.ta = TMM_TRANS;
  g.m = m;
  g.n = n;
  g.k = k;
  g.alpha = -1.25;
  g.beta = 0.5;
  g.pad = 2;
  tmm_test::fill_case(g, tmm_test::fresh_seed());
  return g;
}

tmm_report last_report(tmm_handle h) {
  tmm_report r{};
  r.struct_size = sizeof r;
  EXPECT_EQ(tmm_get_last_report(h, &r), TMM_SUCCESS) << tmm_get_error_message(h);
  return r;
}

bool capturing(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  EXPECT_EQ(cudaStreamIsCapturing(s, &status), cudaSuccess);
  return status == cudaStreamCaptureStatusActive;
}

// The shape BLOCKED splits along k outside a capture (CudaBackend.SplitKShapesMatchReference's).
constexpr int64_t kSplitM = 150, kSplitN = 333, kSplitK = 6000;

// (capture mode, whether the handle used its workspace on another stream before).
class GraphCapture : public ::testing::TestWithParam<std::tuple<cudaStreamCaptureMode, bool>> {};

TEST_P(GraphCapture, DeviceCallsReplayWithTheirPointersAndScalars) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const auto [mode, warm] = GetParam();
  HandleAndStream owned;
  ASSERT_EQ(tmm_create_with_backend(&owned.h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  ASSERT_EQ(cudaStreamCreateWithFlags(&owned.s, cudaStreamNonBlocking), cudaSuccess);
  const tmm_handle h = owned.h;
  const cudaStream_t s = owned.s;

  if (warm) {  // the workspace allocated and last used on the handle's own stream
    GemmCase g = sgemm_case(kSplitM, kSplitN, kSplitK, TMM_NO_TRANS, 0.0f);
    DeviceVector<float> a(g.a), b(g.b), c(g.c);
    ASSERT_EQ(tmm_set_algorithm(h, TMM_ALGO_BLOCKED), TMM_SUCCESS);
    ASSERT_EQ(tmm_sgemm_device(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a.p, g.lda, b.p,
                               g.ldb, g.beta, c.p, g.ldc),
              TMM_SUCCESS)
        << tmm_get_error_message(h);
    ASSERT_GT(last_report(h).splits, 1) << "the shape must split outside a capture";
    ASSERT_EQ(tmm_set_algorithm(h, TMM_ALGO_AUTO), TMM_SUCCESS);
  }
  ASSERT_EQ(tmm_set_stream(h, s), TMM_SUCCESS);

  // Single precision: a tiny product, the split-K shape, TF32 and FP32_ACCURATE (whose
  // Hopper kernels pack their operands into the workspace), and a strided batch.
  std::vector<std::unique_ptr<Product<GemmCase, float>>> singles;
  const auto single = [&](GemmCase g, tmm_algorithm algorithm, tmm_math_mode math) {
    auto p = std::make_unique<Product<GemmCase, float>>(std::move(g));
    Product<GemmCase, float>* q = p.get();
    q->call = [q, algorithm, math](tmm_handle hh) {
      tmm_status st = tmm_set_algorithm(hh, algorithm);
      if (st == TMM_SUCCESS) st = tmm_set_option(hh, TMM_OPTION_MATH_MODE, math);
      if (st != TMM_SUCCESS) return st;
      const GemmCase& c = q->g;
      return tmm_sgemm_device(hh, c.layout, c.ta, c.tb, c.m, c.n, c.k, c.alpha, q->a.p, c.lda,
                              q->b.p, c.ldb, c.beta, q->c.p, c.ldc);
    };
    singles.push_back(std::move(p));
  };
  single(sgemm_case(64, 64, 64, TMM_NO_TRANS, 0.0f), TMM_ALGO_AUTO, TMM_MATH_FP32);
  single(sgemm_case(kSplitM, kSplitN, kSplitK, TMM_TRANS, -0.5f), TMM_ALGO_BLOCKED, TMM_MATH_FP32);
  single(sgemm_case(512, 384, 1100, TMM_NO_TRANS, 0.25f), TMM_ALGO_AUTO, TMM_MATH_TF32);
  single(sgemm_case(384, 512, 1100, TMM_TRANS, 0.0f), TMM_ALGO_AUTO, TMM_MATH_FP32_ACCURATE);

  // A strided batch of three products, one C for each.
  constexpr int64_t kBatch = 3;
  GemmCase bg = sgemm_case(40, 48, 56, TMM_NO_TRANS, 1.0f);
  std::vector<GemmCase> parts;
  std::vector<float> ba, bb, bc;
  for (int64_t i = 0; i < kBatch; ++i) {
    parts.push_back(sgemm_case(bg.m, bg.n, bg.k, TMM_NO_TRANS, bg.beta));
    parts.back().alpha = bg.alpha;
    ba.insert(ba.end(), parts.back().a.begin(), parts.back().a.end());
    bb.insert(bb.end(), parts.back().b.begin(), parts.back().b.end());
    bc.insert(bc.end(), parts.back().c.begin(), parts.back().c.end());
  }
  const int64_t sa = int64_t(bg.a.size()), sb = int64_t(bg.b.size()), sc = int64_t(bg.c.size());
  DeviceVector<float> da(ba), db(bb), dc(bc);

  DgemmCase dg = dgemm_case(200, 100, 300);
  DeviceVector<double> dda(dg.a), ddb(dg.b), ddc(dg.c);

  const std::vector<float> host_c_before = singles[0]->g.c;
  ASSERT_EQ(cudaStreamBeginCapture(s, mode), cudaSuccess);
  const CaptureCloser closer{s};
  std::vector<tmm_report> reports;
  for (auto& p : singles) {
    ASSERT_EQ(p->call(h), TMM_SUCCESS)
        << tmm_get_error_message(h) << " " << tmm_test::describe(p->g);
    reports.push_back(last_report(h));
  }
  ASSERT_EQ(tmm_set_algorithm(h, TMM_ALGO_AUTO), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_MATH_MODE, TMM_MATH_FP32), TMM_SUCCESS);
  ASSERT_EQ(tmm_sgemm_strided_batched_device(h, bg.layout, bg.ta, bg.tb, bg.m, bg.n, bg.k, bg.alpha,
                                             da.p, bg.lda, sa, db.p, bg.ldb, sb, bg.beta, dc.p,
                                             bg.ldc, sc, kBatch),
            TMM_SUCCESS)
      << tmm_get_error_message(h);
  reports.push_back(last_report(h));
  ASSERT_EQ(tmm_dgemm_device(h, dg.layout, dg.ta, dg.tb, dg.m, dg.n, dg.k, dg.alpha, dda.p, dg.lda,
                             ddb.p, dg.ldb, dg.beta, ddc.p, dg.ldc),
            TMM_SUCCESS)
      << tmm_get_error_message(h);
  reports.push_back(last_report(h));
  double ms = -1;
  EXPECT_EQ(tmm_get_last_time(h, &ms), TMM_SUCCESS);  // no wait on a captured event
  EXPECT_EQ(ms, 0.0);

  // A host call while the stream captures: refused, nothing written, capture intact.
  {
    GemmCase& g = singles[0]->g;
    EXPECT_EQ(tmm_sgemm(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, g.a.data(), g.lda,
                        g.b.data(), g.ldb, g.beta, g.c.data(), g.ldc),
              TMM_ERROR_NOT_SUPPORTED);
    EXPECT_NE(std::string(tmm_get_error_message(h)).find("capturing"), std::string::npos)
        << tmm_get_error_message(h);
    EXPECT_EQ(std::memcmp(g.c.data(), host_c_before.data(), g.c.size() * sizeof(float)), 0);
  }
  EXPECT_EQ(tmm_synchronize(h), TMM_ERROR_NOT_SUPPORTED);  // a capture cannot be waited for
  EXPECT_TRUE(capturing(s));

  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess)
      << "a call of the library spoiled the capture";
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);

  for (const tmm_report& r : reports) {
    EXPECT_EQ(r.splits, 1) << r.kernel;           // no workspace: no partial sums
    EXPECT_EQ(r.workspace_bytes, 0) << r.kernel;  // nor packed operands
    EXPECT_EQ(r.compute_ms, 0.0) << r.kernel;
    EXPECT_EQ(r.total_ms, 0.0) << r.kernel;
  }
  // Captured, not run: C (NaN where beta = 0) is as it was.
  {
    const std::vector<float> c = singles[0]->c.download();
    for (size_t i = 0; i < c.size(); ++i) {
      ASSERT_EQ(std::memcmp(&c[i], &singles[0]->g.c[i], sizeof(float)), 0) << "element " << i;
    }
  }

  for (int replay = 0; replay < 2; ++replay) {
    SCOPED_TRACE("replay " + std::to_string(replay));
    // C as it was passed (replays must not accumulate beta * C); the product writes all.
    for (auto& p : singles) p->c.upload(p->g.c);
    dc.upload(bc);
    ddc.upload(dg.c);
    ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    for (size_t i = 0; i < singles.size(); ++i) {
      GemmCase got = singles[i]->g;
      got.c = singles[i]->c.download();
      SCOPED_TRACE(tmm_test::describe(got) + " " + reports[i].kernel);
      EXPECT_TRUE(tmm_test::check_case(got, tmm_test::arithmetic_of(reports[i].math_mode)));
    }
    const std::vector<float> batch_c = dc.download();
    for (int64_t i = 0; i < kBatch; ++i) {
      GemmCase got = parts[size_t(i)];
      got.c.assign(batch_c.begin() + i * sc, batch_c.begin() + (i + 1) * sc);
      SCOPED_TRACE("batch product " + std::to_string(i));
      EXPECT_TRUE(tmm_test::check_case(got));
    }
    DgemmCase got = dg;
    got.c = ddc.download();
    EXPECT_TRUE(tmm_test::check_case(got));
  }

  // Outside the capture the handle works as before: the split-K shape splits, and the
  // report has its time.
  {
    Product<GemmCase, float>& p = *singles[1];
    p.c.upload(p.g.c);
    ASSERT_EQ(p.call(h), TMM_SUCCESS) << tmm_get_error_message(h);
    const tmm_report r = last_report(h);
    EXPECT_GT(r.splits, 1);
    EXPECT_GT(r.compute_ms, 0.0);
    GemmCase got = p.g;
    got.c = p.c.download();
    EXPECT_TRUE(tmm_test::check_case(got));
  }
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

INSTANTIATE_TEST_SUITE_P(Modes, GraphCapture,
                         ::testing::Combine(::testing::Values(cudaStreamCaptureModeGlobal,
                                                              cudaStreamCaptureModeThreadLocal,
                                                              cudaStreamCaptureModeRelaxed),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<GraphCapture::ParamType>& info) {
                           const cudaStreamCaptureMode mode = std::get<0>(info.param);
                           return std::string(mode == cudaStreamCaptureModeGlobal ? "Global"
                                              : mode == cudaStreamCaptureModeThreadLocal
                                                  ? "ThreadLocal"
                                                  : "Relaxed") +
                                  (std::get<1>(info.param) ? "Warm" : "Fresh");
                         });

// Two calls on forked streams of one capture (the handle's stream switched between them,
// as a program that forks work does), replayed 100 times with new inputs each time, each
// replay against FP64: a graph holds pointers, not values. (Scalars by device pointer,
// which would let a replay change alpha and beta too, are not built.)
TEST(GraphCaptureFork, TwoCallsOnForkedStreamsReplayWithNewInputs) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  HandleAndStream owned;
  ASSERT_EQ(tmm_create_with_backend(&owned.h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  ASSERT_EQ(cudaStreamCreateWithFlags(&owned.s, cudaStreamNonBlocking), cudaSuccess);
  cudaStream_t fork = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&fork, cudaStreamNonBlocking), cudaSuccess);
  cudaEvent_t forked = nullptr, joined = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming), cudaSuccess);
  ASSERT_EQ(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming), cudaSuccess);
  const tmm_handle h = owned.h;

  // A shape BLOCKED splits outside a capture (here unsplit: no workspace), and a TF32 one.
  GemmCase split = sgemm_case(64, 80, 4096, TMM_NO_TRANS, 0.5f);
  GemmCase tf32 = sgemm_case(256, 192, 512, TMM_TRANS, 0.0f);
  DeviceVector<float> sa(split.a), sb(split.b), sc(split.c);
  DeviceVector<float> ta(tf32.a), tb(tf32.b), tc(tf32.c);
  const auto call = [&](cudaStream_t stream, const GemmCase& g, tmm_algorithm algorithm,
                        tmm_math_mode math, const DeviceVector<float>& a,
                        const DeviceVector<float>& b, const DeviceVector<float>& c) {
    EXPECT_EQ(tmm_set_stream(h, stream), TMM_SUCCESS) << tmm_get_error_message(h);
    EXPECT_EQ(tmm_set_algorithm(h, algorithm), TMM_SUCCESS);
    EXPECT_EQ(tmm_set_option(h, TMM_OPTION_MATH_MODE, math), TMM_SUCCESS);
    return tmm_sgemm_device(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a.p, g.lda, b.p, g.ldb,
                            g.beta, c.p, g.ldc);
  };

  ASSERT_EQ(cudaStreamBeginCapture(owned.s, cudaStreamCaptureModeGlobal), cudaSuccess);
  tmm_math_mode tf32_ran = TMM_MATH_FP32;
  cudaGraph_t graph = nullptr;
  {
    const CaptureCloser closer{owned.s};  // ends the capture on a failed assertion
    ASSERT_EQ(cudaEventRecord(forked, owned.s), cudaSuccess);
    ASSERT_EQ(cudaStreamWaitEvent(fork, forked, 0), cudaSuccess);  // `fork` joins the capture
    ASSERT_EQ(call(owned.s, split, TMM_ALGO_BLOCKED, TMM_MATH_FP32, sa, sb, sc), TMM_SUCCESS)
        << tmm_get_error_message(h);
    ASSERT_EQ(call(fork, tf32, TMM_ALGO_AUTO, TMM_MATH_TF32, ta, tb, tc), TMM_SUCCESS)
        << tmm_get_error_message(h);
    tf32_ran = last_report(h).math_mode;
    ASSERT_EQ(cudaEventRecord(joined, fork), cudaSuccess);
    ASSERT_EQ(cudaStreamWaitEvent(owned.s, joined, 0), cudaSuccess);
    ASSERT_EQ(cudaStreamEndCapture(owned.s, &graph), cudaSuccess);
  }
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(tmm_set_stream(h, nullptr), TMM_SUCCESS);

  const int replays = tmm_test::under_sanitizer() ? 5 : 100;
  for (int replay = 0; replay < replays; ++replay) {
    SCOPED_TRACE("replay " + std::to_string(replay));
    tmm_test::fill_case(split, tmm_test::fresh_seed());  // new A, B and C, same shapes
    tmm_test::fill_case(tf32, tmm_test::fresh_seed());
    sa.upload(split.a);
    sb.upload(split.b);
    sc.upload(split.c);
    ta.upload(tf32.a);
    tb.upload(tf32.b);
    tc.upload(tf32.c);
    ASSERT_EQ(cudaGraphLaunch(exec, owned.s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(owned.s), cudaSuccess);
    GemmCase got = split;
    got.c = sc.download();
    ASSERT_TRUE(tmm_test::check_case(got));
    got = tf32;
    got.c = tc.download();
    ASSERT_TRUE(tmm_test::check_case(got, tmm_test::arithmetic_of(tf32_ran)));
  }
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(forked), cudaSuccess);
  EXPECT_EQ(cudaEventDestroy(joined), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(fork), cudaSuccess);
}

// A handle destroyed while its stream captures: the capture stays valid (the handle does
// not wait for a capturing stream), and the graph, holding no memory of the handle's,
// replays after it.
TEST(GraphCaptureLifetime, AGraphOutlivesItsHandle) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  HandleAndStream owned;
  ASSERT_EQ(cudaStreamCreateWithFlags(&owned.s, cudaStreamNonBlocking), cudaSuccess);
  GemmCase g = sgemm_case(96, 80, 200, TMM_NO_TRANS, 0.0f);
  DeviceVector<float> a(g.a), b(g.b), c(g.c);
  tmm_handle h = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_stream(h, owned.s), TMM_SUCCESS);
  ASSERT_EQ(cudaStreamBeginCapture(owned.s, cudaStreamCaptureModeGlobal), cudaSuccess);
  const CaptureCloser closer{owned.s};
  EXPECT_EQ(tmm_sgemm_device(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a.p, g.lda, b.p,
                             g.ldb, g.beta, c.p, g.ldc),
            TMM_SUCCESS)
      << tmm_get_error_message(h);
  tmm_destroy(h);
  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamEndCapture(owned.s, &graph), cudaSuccess)
      << "destroying the handle spoiled the capture";
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  ASSERT_EQ(cudaGraphLaunch(exec, owned.s), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(owned.s), cudaSuccess);
  g.c = c.download();
  EXPECT_TRUE(tmm_test::check_case(g));
  EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
}

// A workspace the caller gives (tmm_set_workspace): a captured call runs the kernel the
// same call runs outside a capture (its split of k, its packed operands), with its bits;
// a smaller one makes the call give way, never fail; bad memory is refused.
TEST(GraphCaptureWorkspace, AGivenWorkspaceRunsTheUncapturedKernelWithItsBits) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  HandleAndStream owned;
  ASSERT_EQ(tmm_create_with_backend(&owned.h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  ASSERT_EQ(cudaStreamCreateWithFlags(&owned.s, cudaStreamNonBlocking), cudaSuccess);
  const tmm_handle h = owned.h;
  const cudaStream_t s = owned.s;
  ASSERT_EQ(tmm_set_stream(h, s), TMM_SUCCESS);

  struct Call {
    tmm_algorithm algorithm;
    tmm_math_mode math;
    GemmCase g;
  };
  std::vector<Call> calls = {
      {TMM_ALGO_BLOCKED, TMM_MATH_FP32, sgemm_case(kSplitM, kSplitN, kSplitK, TMM_NO_TRANS, 0.0f)},
      {TMM_ALGO_AUTO, TMM_MATH_TF32, sgemm_case(512, 384, 1100, TMM_TRANS, 0.25f)},
      {TMM_ALGO_AUTO, TMM_MATH_FP32_ACCURATE, sgemm_case(384, 512, 1100, TMM_NO_TRANS, 0.0f)},
  };
  std::vector<std::unique_ptr<DeviceVector<float>>> a, b, c;
  for (const Call& call : calls) {
    a.push_back(std::make_unique<DeviceVector<float>>(call.g.a));
    b.push_back(std::make_unique<DeviceVector<float>>(call.g.b));
    c.push_back(std::make_unique<DeviceVector<float>>(call.g.c));
  }
  const auto run = [&](size_t i) {
    const Call& call = calls[i];
    EXPECT_EQ(tmm_set_algorithm(h, call.algorithm), TMM_SUCCESS);
    EXPECT_EQ(tmm_set_option(h, TMM_OPTION_MATH_MODE, call.math), TMM_SUCCESS);
    const GemmCase& g = call.g;
    return tmm_sgemm_device(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, a[i]->p, g.lda,
                            b[i]->p, g.ldb, g.beta, c[i]->p, g.ldc);
  };

  // Outside a capture, on the handle's own workspace: what each kernel needs, its bits.
  std::vector<tmm_report> free_runs;
  std::vector<std::vector<float>> free_c;
  size_t most = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    ASSERT_EQ(run(i), TMM_SUCCESS) << tmm_get_error_message(h);
    free_runs.push_back(last_report(h));
    most = std::max(most, size_t(free_runs.back().workspace_bytes));
    ASSERT_EQ(tmm_synchronize(h), TMM_SUCCESS);
    free_c.push_back(c[i]->download());
    GemmCase got = calls[i].g;
    got.c = free_c.back();
    EXPECT_TRUE(tmm_test::check_case(got, tmm_test::arithmetic_of(free_runs.back().math_mode)));
  }
  ASSERT_GT(free_runs[0].splits, 1);
  ASSERT_GT(free_runs[0].workspace_bytes, 0) << "split-K's partial sums are in the workspace";

  void* memory = nullptr;
  ASSERT_EQ(cudaMalloc(&memory, most), cudaSuccess);
  ASSERT_EQ(tmm_set_workspace(h, memory, most), TMM_SUCCESS) << tmm_get_error_message(h);

  for (size_t i = 0; i < calls.size(); ++i) c[i]->upload(calls[i].g.c);
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  {
    const CaptureCloser closer{s};
    std::vector<tmm_report> captured;
    for (size_t i = 0; i < calls.size(); ++i) {
      ASSERT_EQ(run(i), TMM_SUCCESS) << tmm_get_error_message(h);
      captured.push_back(last_report(h));
    }
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (size_t i = 0; i < calls.size(); ++i) {
      SCOPED_TRACE(free_runs[i].kernel);
      EXPECT_STREQ(captured[i].kernel, free_runs[i].kernel);
      EXPECT_EQ(captured[i].splits, free_runs[i].splits);
      EXPECT_EQ(captured[i].workspace_bytes, free_runs[i].workspace_bytes);
      EXPECT_EQ(captured[i].compute_ms, 0.0);
    }
    for (int replay = 0; replay < 2; ++replay) {
      for (size_t i = 0; i < calls.size(); ++i) c[i]->upload(calls[i].g.c);
      ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      for (size_t i = 0; i < calls.size(); ++i) {
        const std::vector<float> got = c[i]->download();
        EXPECT_EQ(std::memcmp(got.data(), free_c[i].data(), got.size() * sizeof(float)), 0)
            << free_runs[i].kernel << ": the replay's bits differ from the uncaptured call's"
            << " (replay " << replay << ")";
      }
    }
    EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
    EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  }

  // Too small for the split: the call runs with less or none, and is right.
  const size_t half = size_t(free_runs[0].workspace_bytes) / 2 / 256 * 256;
  ASSERT_EQ(tmm_set_workspace(h, memory, half), TMM_SUCCESS);
  c[0]->upload(calls[0].g.c);
  ASSERT_EQ(run(0), TMM_SUCCESS) << tmm_get_error_message(h);
  EXPECT_LE(size_t(last_report(h).workspace_bytes), half);
  {
    GemmCase got = calls[0].g;
    got.c = c[0]->download();
    EXPECT_TRUE(tmm_test::check_case(got));
  }

  // The same while capturing: the captured call gives way too, and its replay is right.
  c[0]->upload(calls[0].g.c);
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
  {
    const CaptureCloser closer{s};
    ASSERT_EQ(run(0), TMM_SUCCESS) << tmm_get_error_message(h);
    EXPECT_LE(size_t(last_report(h).workspace_bytes), half);
    cudaGraph_t graph = nullptr;
    ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
    cudaGraphExec_t exec = nullptr;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    GemmCase got = calls[0].g;
    got.c = c[0]->download();
    EXPECT_TRUE(tmm_test::check_case(got));
    EXPECT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
    EXPECT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  }

  // Refused, the setting unchanged: misaligned, host, managed, NULL with bytes, bytes 0,
  // bytes past the allocation's end.
  float host[64] = {};
  void* managed = nullptr;
  ASSERT_EQ(cudaMallocManaged(&managed, 4096), cudaSuccess);
  EXPECT_EQ(tmm_set_workspace(h, static_cast<char*>(memory) + 4, 1024), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_set_workspace(h, host, sizeof host), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_set_workspace(h, managed, 4096), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_set_workspace(h, nullptr, 1024), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_set_workspace(h, memory, 0), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_set_workspace(h, memory, most + 4096), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(std::string(tmm_get_error_message(h)).find("allocation"), std::string::npos)
      << tmm_get_error_message(h);
  c[0]->upload(calls[0].g.c);
  ASSERT_EQ(run(0), TMM_SUCCESS) << tmm_get_error_message(h);
  EXPECT_LE(size_t(last_report(h).workspace_bytes), half) << "the half setting was kept";

  // Back to the handle's own: the split as before.
  ASSERT_EQ(tmm_set_workspace(h, nullptr, 0), TMM_SUCCESS);
  c[0]->upload(calls[0].g.c);
  ASSERT_EQ(run(0), TMM_SUCCESS) << tmm_get_error_message(h);
  EXPECT_EQ(last_report(h).splits, free_runs[0].splits);
  ASSERT_EQ(tmm_synchronize(h), TMM_SUCCESS);
  EXPECT_EQ(cudaFree(managed), cudaSuccess);
  EXPECT_EQ(cudaFree(memory), cudaSuccess);
}

// Another thread captures its own stream in global mode, which makes the runtime refuse
// unsafe calls (cudaMalloc, host waits) from every thread and spoils that capture: the
// library's calls on its own streams meanwhile (a first host call, whose buffers it
// allocates; one on the streamed path, its staging, threads and waits; a device call
// growing the workspace; reading a pending time) must succeed and leave the capture valid.
TEST(GraphCaptureElsewhere, LibraryCallsLeaveAnotherThreadsGlobalCaptureAlone) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  // Made before the capture begins, and read after it ends: the handle and the device
  // operands (the test's own allocations and copies are not the library's).
  tmm_handle h = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_algorithm(h, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  const int twice[] = {0, 0};
  tmm_handle lanes = nullptr;
  ASSERT_EQ(tmm_create_with_devices(&lanes, twice, 2), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(lanes, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), TMM_SUCCESS);
  // Budgets that cut the product into many tiles (test_multi_device's share_everything).
  ASSERT_EQ(tmm_set_option(lanes, TMM_OPTION_DEVICE_MEMORY_BUDGET, int64_t(24) << 20), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(lanes, TMM_OPTION_HOST_STAGING_BYTES, int64_t(4) << 20), TMM_SUCCESS);
  GemmCase host = sgemm_case(300, 200, 500, TMM_TRANS, 0.5f);
  GemmCase streamed = sgemm_case(2000, 1800, 900, TMM_NO_TRANS, -0.5f);
  GemmCase dev = sgemm_case(kSplitM, kSplitN, kSplitK, TMM_NO_TRANS, 0.0f);
  DeviceVector<float> a(dev.a), b(dev.b), c(dev.c);

  std::atomic<int> stage{0};  // 1: capture begun; 2: the library's calls are done
  cudaError_t begin = cudaErrorUnknown, end = cudaErrorUnknown;
  std::thread capturer([&] {
    cudaStream_t s2 = nullptr;
    float* scratch = nullptr;
    if (cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking) == cudaSuccess &&
        cudaMalloc(&scratch, 1024) == cudaSuccess) {
      begin = cudaStreamBeginCapture(s2, cudaStreamCaptureModeGlobal);
      if (begin == cudaSuccess) cudaMemsetAsync(scratch, 0, 1024, s2);
    }
    stage = 1;
    while (stage.load() < 2) std::this_thread::yield();
    cudaGraph_t graph = nullptr;
    if (begin == cudaSuccess) end = cudaStreamEndCapture(s2, &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaFree(scratch);
    if (s2 != nullptr) cudaStreamDestroy(s2);
  });
  while (stage.load() < 1) std::this_thread::yield();

  // The library's calls, in this thread's default (global) capture mode: a first host
  // call (its device buffers allocated, then waited for), a device call that allocates
  // the workspace for its split of k, and its time (a host wait on its event).
  std::string message;
  const tmm_status host_st = tmm_test::run_case(h, host);
  if (host_st != TMM_SUCCESS) message = tmm_get_error_message(h);
  // The streamed path over device 0 twice (a handle of two lanes: the engines run on
  // the lanes' threads): staging allocated, threads, waits.
  const tmm_status streamed_st = tmm_test::run_case(lanes, streamed);
  if (streamed_st != TMM_SUCCESS && message.empty()) message = tmm_get_error_message(lanes);
  tmm_report lanes_report{};
  lanes_report.struct_size = sizeof lanes_report;
  tmm_get_last_report(lanes, &lanes_report);
  const tmm_status dev_st =
      tmm_sgemm_device(h, dev.layout, dev.ta, dev.tb, dev.m, dev.n, dev.k, dev.alpha, a.p, dev.lda,
                       b.p, dev.ldb, dev.beta, c.p, dev.ldc);
  if (dev_st != TMM_SUCCESS && message.empty()) message = tmm_get_error_message(h);
  double ms = 0;
  const tmm_status time_st = tmm_get_last_time(h, &ms);
  if (time_st != TMM_SUCCESS && message.empty()) message = tmm_get_error_message(h);
  const tmm_status sync_st = tmm_synchronize(h);
  if (sync_st != TMM_SUCCESS && message.empty()) message = tmm_get_error_message(h);
  tmm_destroy(lanes);  // waits for its streams and frees its buffers, meanwhile
  stage = 2;
  capturer.join();

  ASSERT_EQ(begin, cudaSuccess);
  EXPECT_EQ(end, cudaSuccess) << "the library's calls spoiled another thread's capture";
  EXPECT_EQ(host_st, TMM_SUCCESS) << message;
  EXPECT_EQ(streamed_st, TMM_SUCCESS) << message;
  ASSERT_EQ(dev_st, TMM_SUCCESS) << message;
  EXPECT_EQ(time_st, TMM_SUCCESS) << message;
  EXPECT_EQ(sync_st, TMM_SUCCESS) << message;
  EXPECT_EQ(lanes_report.device_count, 2) << "both lanes should have computed tiles";
  EXPECT_GT(ms, 0.0);
  EXPECT_TRUE(tmm_test::check_case(host));
  EXPECT_TRUE(tmm_test::check_case(streamed));
  EXPECT_GT(last_report(h).splits, 1) << "the device call should have used the workspace";
  dev.c = c.download();
  EXPECT_TRUE(tmm_test::check_case(dev));
  tmm_destroy(h);
}

}  // namespace
