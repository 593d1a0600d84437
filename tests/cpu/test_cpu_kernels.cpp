// The CPU kernels (lib/cpu/cpu_kernels.hpp) in both element types, called directly on
// the canonical problem make_problem gives: every layout and transpose, ragged sizes
// around the blocking's edges (4 x 8 register blocks, 64 x 256 x 512 packed blocks),
// padded leading dimensions, beta 0 (C holds NaN: never read) and not. Float results
// meet the FP32 bound of gemm_reference.hpp; double results the FP64 bound of
// gemm_reference_f64.hpp, which a sum kept in float anywhere fails.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/gemm_problem.hpp"
#include "core/precision.hpp"
#include "core/worker_pool.hpp"
#include "cpu/cpu_kernels.hpp"
#include "gemm_reference.hpp"
#include "gemm_reference_f64.hpp"

namespace tiledmm {
namespace {

struct Shape {
  int64_t m, n, k;
};

// Sizes on both sides of each block edge, one that takes 3 threads (4 blocks of rows,
// over the kernel's threshold of work), k = 0 (C = beta C) and a single element.
const Shape kShapes[] = {{1, 1, 1},     {7, 13, 17}, {65, 130, 257}, {200, 130, 300},
                         {100, 9, 300}, {5, 520, 3}, {33, 31, 0}};

template <class Case>
GemmProblem problem_of(Case& g) {
  using T = typename decltype(g.a)::value_type;
  return make_problem(precision_of<T>, g.row() ? Layout::RowMajor : Layout::ColMajor,
                      g.ta == TMM_TRANS, g.tb == TMM_TRANS, g.m, g.n, g.k, g.alpha, g.a.data(),
                      g.lda, g.b.data(), g.ldb, g.beta, g.c.data(), g.ldc);
}

// Runs `kernel` on every case of T's kind and checks each result.
template <class Case, class Kernel>
void for_every_case(Kernel kernel) {
  using T = typename decltype(Case::a)::value_type;
  for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        for (const Shape s : kShapes) {
          for (T beta : {T(0), T(1.5)}) {
            Case g;
            g.layout = layout;
            g.ta = ta;
            g.tb = tb;
            g.m = s.m;
            g.n = s.n;
            g.k = s.k;
            g.alpha = T(-0.75);
            g.beta = beta;
            g.pad = 3;
            tmm_test::fill_case(g, tmm_test::fresh_seed());
            SCOPED_TRACE(tmm_test::describe(g));
            kernel(view_of<T>(problem_of(g)));
            EXPECT_TRUE(tmm_test::check_case(g));
          }
        }
      }
    }
  }
}

TEST(CpuKernels, NaiveInFloat) {
  for_every_case<tmm_test::GemmCase>([](const GemmView<float>& v) {
    if (v.k == 0) return cpu_scale_c(v);  // as the backend does: no product to sum
    cpu_naive_gemm(v);
  });
}

TEST(CpuKernels, NaiveInDouble) {
  for_every_case<tmm_test::DgemmCase>([](const GemmView<double>& v) {
    if (v.k == 0) return cpu_scale_c(v);
    cpu_naive_gemm(v);
  });
}

// Several threads (each owns interleaved blocks of rows of C) and one.
TEST(CpuKernels, BlockedInFloat) {
  WorkerPool pool;
  std::vector<BlockedWorkspace<float>> workspaces;
  for (int threads : {1, 3}) {
    for_every_case<tmm_test::GemmCase>(
        [&](const GemmView<float>& v) { cpu_blocked_gemm(v, threads, workspaces, pool); });
  }
}

TEST(CpuKernels, BlockedInDouble) {
  WorkerPool pool;
  std::vector<BlockedWorkspace<double>> workspaces;
  for (int threads : {1, 3}) {
    for_every_case<tmm_test::DgemmCase>(
        [&](const GemmView<double>& v) { cpu_blocked_gemm(v, threads, workspaces, pool); });
  }
}

}  // namespace
}  // namespace tiledmm
