// Every tensor-core row of the CUDA kernel table (lib/cuda/kernels/kernel_table.cu)
// through its own launcher, against FP64 with its mode's bound, the split last waves
// included, and every BLOCKED row in double against the double-double reference: the
// API runs only the first row of a setting (of its kind, in double) that runs on the
// device. Skips without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/gemm_problem.hpp"
#include "core/settings.hpp"
#include "gemm_reference.hpp"
#include "gemm_reference_f64.hpp"
#include "plan/f64_shapes.hpp"
#include "plan/planner.hpp"
#include "plan/tf32_shapes.hpp"
#include "registry/kernel_registry.hpp"

namespace tiledmm {
namespace {

// ---- Every tensor-core row through its own launcher ------------------------------

// The current device's compute capability, major * 10 + minor (0 if unknown).
int current_cc() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return 0;
  return 10 * major + minor;
}

// The shared memory a block of this device may opt into (0 when it cannot be read).
int shared_optin() {
  int device = 0, bytes = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) !=
          cudaSuccess)
    return 0;
  return bytes;
}

// Whether a tensor-core (mma.sync) row's block fits this device's shared memory (the
// FP64 128 x 128 row's 160 KiB and the TF32 128 x 256 row's 162 KiB do not on sm_86 and
// sm_89, which opt into 99 KiB; dispatch never takes them there).
bool row_fits(const KernelEntry& row, int optin) {
  const auto named = [&](const char* prefix, const MmaShapeInfo& s) {
    return std::string(row.name) == prefix + std::to_string(s.rows) + "x" + std::to_string(s.cols);
  };
  for (const MmaShapeInfo& s : kF64MmaShapes)
    if (named("f64_mma_", s)) return s.shared_bytes <= optin;
  for (const MmaShapeInfo& s : kTf32Shapes)
    if (named("tf32_mma_", s)) return s.shared_bytes <= optin;
  for (const MmaShapeInfo& s : kTf32x3Shapes)
    if (named("tf32x3_mma_", s)) return s.shared_bytes <= optin;
  return true;  // the CUDA-core rows use 33 KiB or less
}

// A device copy of v, `offset` elements past the start of its allocation (an offset of
// 1 puts every operand one element past a 16-byte boundary); free with free_shifted.
template <class T>
T* upload_shifted(const std::vector<T>& v, int offset) {
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, (v.size() + size_t(offset)) * sizeof(T)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d + offset, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice),
            cudaSuccess);
  return d + offset;
}

template <class T>
void free_shifted(T* d, int offset) {
  if (d != nullptr) cudaFree(d - offset);
}

// g (either layout) through `row`'s own launcher with `plan`, on device copies `offset`
// elements past their allocations' starts; C comes back into g. The workspace, if any,
// is poisoned first: a partial sum the kernel failed to write would show.
void run_row(const KernelEntry& row, tmm_test::GemmCase& g, const KernelPlan& plan,
             int offset = 0) {
  float *a = upload_shifted(g.a, offset), *b = upload_shifted(g.b, offset),
        *c = upload_shifted(g.c, offset), *workspace = nullptr;
  const GemmProblem p =
      make_problem(g.row() ? Layout::RowMajor : Layout::ColMajor, g.ta == TMM_TRANS,
                   g.tb == TMM_TRANS, g.m, g.n, g.k, g.alpha, a, g.lda, b, g.ldb, g.beta, c, g.ldc);
  const size_t bytes = row.workspace != nullptr ? row.workspace(p, plan) : 0;
  if (plan.splits > 1 && row.workspace != nullptr) {  // room for the partial sums
    EXPECT_GT(bytes, row.workspace(p, KernelPlan{plan.tile, plan.coarsening, 1}));
  }
  if (bytes > 0) {
    EXPECT_EQ(cudaMalloc(&workspace, bytes), cudaSuccess);
    EXPECT_EQ(cudaMemset(workspace, 0x7f, bytes), cudaSuccess);
  }
  row.launch(p, plan, workspace, nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(g.c.data(), c, g.c.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (float* d : {a, b, c}) free_shifted(d, offset);
  cudaFree(workspace);
}

// g (either layout) through `row`'s own launcher with `plan`, on device copies `offset`
// elements past their allocations' starts; C comes back into g. The workspace, if any,
// is poisoned first.
void run_f64_row(const KernelEntry& row, tmm_test::DgemmCase& g, const KernelPlan& plan,
                 int offset = 0) {
  double *a = upload_shifted(g.a, offset), *b = upload_shifted(g.b, offset),
         *c = upload_shifted(g.c, offset);
  void* workspace = nullptr;
  const GemmProblem p =
      make_problem(Precision::F64, g.row() ? Layout::RowMajor : Layout::ColMajor, g.ta == TMM_TRANS,
                   g.tb == TMM_TRANS, g.m, g.n, g.k, g.alpha, a, g.lda, b, g.ldb, g.beta, c, g.ldc);
  const size_t bytes = row.workspace != nullptr ? row.workspace(p, plan) : 0;
  if (bytes > 0) {
    EXPECT_EQ(cudaMalloc(&workspace, bytes), cudaSuccess);
    EXPECT_EQ(cudaMemset(workspace, 0x7f, bytes), cudaSuccess);
  }
  row.launch(p, plan, workspace, nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(g.c.data(), c, g.c.size() * sizeof(double), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (double* d : {a, b, c}) free_shifted(d, offset);
  cudaFree(workspace);
}

tmm_test::Arithmetic arithmetic_of(const KernelEntry& row) {
  return row.math_mode == MathMode::Tf32           ? tmm_test::Arithmetic::Tf32
         : row.math_mode == MathMode::Fp32Accurate ? tmm_test::Arithmetic::Fp32Accurate
                                                   : tmm_test::Arithmetic::Fp32;
}

// Through the API a setting runs the first row of it that runs on the device: on an
// H100 the mma.sync 128 x 256 row stands behind the Hopper one and would go
// untested. Here each row that runs on this device multiplies every transpose pair
// on ragged shapes, checked against FP64 with its mode's bound.
TEST(TensorCoreRows, EachRowThatRunsHereMatchesFp64) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const int cc = current_cc();
  ASSERT_GT(cc, 0);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int rows = 0;
  for (const KernelEntry& row : cuda_kernel_table()) {
    if (row.math_mode == MathMode::Fp32 || !runs_here(row, cc)) continue;
    ++rows;
    int variant = 0;
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        tmm_test::GemmCase g;
        g.ta = ta;
        g.tb = tb;
        g.m = 131 + variant;
        g.n = 263 - 2 * variant;
        g.k = 77 + 5 * variant;
        g.alpha = 0.75f;
        g.beta = variant % 2 ? 0.0f : 0.5f;
        g.pad = variant % 2;
        tmm_test::fill_case(g, seed + uint32_t(variant));
        ++variant;
        SCOPED_TRACE(std::string(row.name) + " " + tmm_test::describe(g));
        run_row(row, g, KernelPlan{row.tile, row.coarsening, 1});
        EXPECT_TRUE(tmm_test::check_case(g, arithmetic_of(row)));
      }
    }
  }
  // Compute capability 8.0 and later have the mma.sync rows at least.
  if (cc >= 80) {
    EXPECT_GE(rows, 2);
  }
}

// In double, BLOCKED's tiles have an FP64 tensor-core row and a CUDA-core row; through
// the API a device runs one kind (the tensor cores where DMMA pays: cc 8.0, 9.0 on), so
// on an H100 the CUDA-core rows would go untested. Here each BLOCKED row in double that
// runs on this device multiplies both layouts and every transpose pair on ragged shapes
// (edge tiles, k not a multiple of the depth), beta 0 (NaN in C) and not, padded leading
// dimensions (odd ones: the scalar loads), against the double-double reference with the
// FP64 bound (which a result with one FP32-rounded product fails). The CUDA-core rows also
// with every tile split along k in 3 slices (the last short), twice: the same bits.
TEST(Fp64Rows, EachBlockedRowThatRunsHereMatchesTheReference) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const int cc = current_cc();
  ASSERT_GT(cc, 0);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int optin = shared_optin();
  int rows = 0, cuda_core_rows = 0, too_large = 0;
  for (const KernelEntry& row : cuda_kernel_table()) {
    // Tile 16 is the thin kernel's (ThinRows.*).
    if (row.precision != Precision::F64 || row.algorithm != Algorithm::Blocked || row.tile == 16 ||
        !runs_here(row, cc))
      continue;
    if (!row_fits(row, optin)) {
      ++too_large;  // dispatch never takes it here (plan_f64 checks the shared memory)
      continue;
    }
    ++rows;
    const bool cuda_cores = std::string(row.name).rfind("f64_blocked_", 0) == 0;
    cuda_core_rows += cuda_cores;
    int variant = 0;
    for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
      for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
        for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
          for (int splits : {1, 3}) {
            if (splits > 1 && !cuda_cores) continue;  // theirs: DgemmCuda.*Split*
            tmm_test::DgemmCase g;
            g.layout = layout, g.ta = ta, g.tb = tb;
            g.m = 131 + variant;
            g.n = 263 - 2 * variant;
            g.k = (splits > 1 ? 1277 : 77) + 5 * variant;
            g.alpha = 0.75;
            g.beta = variant % 2 ? 0.0 : -1.5;
            g.pad = variant % 3;
            tmm_test::fill_case(g, seed + uint32_t(variant));
            ++variant;
            SCOPED_TRACE(std::string(row.name) + " " + tmm_test::describe(g) + " splits " +
                         std::to_string(splits));
            tmm_test::DgemmCase again = g;
            const KernelPlan plan{row.tile, 0, splits, 0};
            run_f64_row(row, g, plan);
            EXPECT_TRUE(tmm_test::check_case(g));
            if (splits > 1) {
              run_f64_row(row, again, plan);
              EXPECT_EQ(again.c, g.c) << "split-K in FP64 gives the same bits run to run";
            }
          }
        }
      }
    }
  }
  // The CUDA-core rows and the small kernel (f64_small, tile 32) run on every device (no
  // max_cc); the tensor-core rows from 8.0.
  EXPECT_EQ(cuda_core_rows, 2);
  if (cc >= 80) {
    EXPECT_EQ(rows + too_large, 6);  // and 128 x 128, 128 x 64, 64 x 64 on the tensor cores
    EXPECT_LE(too_large, 1) << "only the 128 x 128 row needs more than 99 KiB";
  }
}

// One case of a thin row: g through `row`'s launcher with `plan` and operands `offset`
// elements past their allocations, checked against the reference (float: strict FP32's
// bound against FP64; double: FP64's against double-double); a split run twice gives
// the same bits.
template <class Case>
void check_thin_case(const KernelEntry& row, Case& g, const KernelPlan& plan, int offset) {
  Case again = g;
  if constexpr (std::is_same_v<Case, tmm_test::DgemmCase>) {
    run_f64_row(row, g, plan, offset);
    EXPECT_TRUE(tmm_test::check_case(g));
    if (plan.splits > 1) run_f64_row(row, again, plan, offset);
  } else {
    run_row(row, g, plan, offset);
    EXPECT_TRUE(tmm_test::check_case(g, tmm_test::Arithmetic::Fp32));
    if (plan.splits > 1) run_row(row, again, plan, offset);
  }
  if (plan.splits > 1) {
    EXPECT_EQ(again.c, g.c) << "split-K gives the same bits run to run";
  }
}

// Every form of (m, n, k) on a thin row: both layouts, every transpose pair, k split
// into splits_of[variant % 3] slices, beta 0 (NaN in C) every other case, pads 0, 1
// and 3 in turn (or `pad`, where it is not negative), operands `offset` elements past
// their allocations.
template <class Case>
void check_thin_forms(const KernelEntry& row, int64_t m, int64_t n, int64_t k,
                      const int (&splits_of)[3], int pad, int offset, uint32_t seed, int& variant) {
  for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        const KernelPlan plan{row.tile, 0, splits_of[variant % 3], 0};
        Case g;
        g.layout = layout, g.ta = ta, g.tb = tb;
        g.m = m, g.n = n, g.k = k;
        g.alpha = 0.75f;
        g.beta = variant % 2 ? 0.0f : -1.5f;
        g.pad = pad >= 0 ? pad : (variant / 2) % 3 == 2 ? 3 : (variant / 2) % 3;
        tmm_test::fill_case(g, seed + uint32_t(variant));
        SCOPED_TRACE(std::string(row.name) + " " + tmm_test::describe(g) + " splits " +
                     std::to_string(plan.splits) + " offset " + std::to_string(offset));
        check_thin_case(row, g, plan, offset);
        ++variant;
      }
    }
  }
}

// The thin rows (thin_kernel.cu, tile 16), through their own launcher: every form (both
// layouts, every transpose pair, the short side m or n, so W read along K or along L),
// W's rows aligned for 16-byte loads or not (pads 0, 1, 3; and every operand one element
// past a 16-byte boundary with a leading dimension the vector divides), edges of L and
// of k, short sides 1 to 16 (each bucket of X's columns: 1, 2, 4, 8, 16) and 20 and 37
// (passes of 16, with k under a chunk and over one), shallow k (1, 3, 50), k split in 1,
// 3 or 7 slices (the last ones short or not launched; the workspace poisoned), beta 0
// (NaN in C) and not. Float against FP64 with strict FP32's bound, double against
// double-double with FP64's; a split run twice gives the same bits.
TEST(ThinRows, EveryFormSplitAndEdgeMatchesTheReference) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const int cc = current_cc();
  ASSERT_GT(cc, 0);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  struct Shape {
    int64_t m, n, k;
  };
  const Shape shapes[] = {{1, 777, 1029},  {777, 1, 1029}, {5, 1000, 333},  {1000, 13, 333},
                          {16, 640, 2051}, {3, 1, 4099},   {20, 300, 100},  {9, 2000, 700},
                          {2, 1500, 900},  {1500, 2, 900}, {20, 300, 1100}, {37, 300, 1100},
                          {7, 900, 1},     {900, 7, 3},    {1, 800, 50}};
  // Aligned leading dimensions (pad 0 where the vector divides the long side), every
  // base pointer one element past a 16-byte boundary: the element-by-element loads.
  const Shape shifted[] = {{1, 1024, 1024}, {1024, 1, 1024}, {8, 512, 640}, {512, 4, 640}};
  const int splits_of[] = {1, 3, 7};
  const int shifted_splits[] = {3, 1, 7};
  int rows = 0, variant = 0;
  for (const KernelEntry& row : cuda_kernel_table()) {
    if (row.algorithm != Algorithm::Blocked || row.tile != 16 || !runs_here(row, cc)) continue;
    ++rows;
    const bool f64 = row.precision == Precision::F64;
    for (const Shape& s : shapes) {
      f64 ? check_thin_forms<tmm_test::DgemmCase>(row, s.m, s.n, s.k, splits_of, -1, 0, seed,
                                                  variant)
          : check_thin_forms<tmm_test::GemmCase>(row, s.m, s.n, s.k, splits_of, -1, 0, seed,
                                                 variant);
    }
    for (const Shape& s : shifted) {
      f64 ? check_thin_forms<tmm_test::DgemmCase>(row, s.m, s.n, s.k, shifted_splits, 0, 1, seed,
                                                  variant)
          : check_thin_forms<tmm_test::GemmCase>(row, s.m, s.n, s.k, shifted_splits, 0, 1, seed,
                                                 variant);
    }
  }
  EXPECT_EQ(rows, 2) << "thin and f64_thin run on every device";
}

// ---- Batched rows: a strided batch in one launch -----------------------------------

// One batch of `batch` products of g's shape (each product's A, B and C g's matrices with
// fresh random values, `gap` elements between products: an odd gap makes later products
// less aligned than the first), through `row`'s launcher in one launch and then product
// by product: the same bits (the same kernel, unsplit, whatever the alignment), and
// nothing between the products written.
template <class Case>
void check_batched_row(const KernelEntry& row, Case g, int64_t batch, int64_t gap, uint32_t seed) {
  using T = std::remove_reference_t<decltype(g.a[0])>;
  const Precision precision = std::is_same_v<T, double> ? Precision::F64 : Precision::F32;
  const int64_t sa = int64_t(g.a.size()) + gap, sb = int64_t(g.b.size()) + gap;
  const int64_t sc = int64_t(g.c.size()) + gap;
  std::vector<T> a(size_t(batch * sa)), b(size_t(batch * sb)), c(size_t(batch * sc));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (T& x : a) x = T(u(rng));
  for (T& x : b) x = T(u(rng));
  for (T& x : c) x = g.beta == T(0) ? T(tmm_test::kPadSentinel) : T(u(rng));
  const Layout layout = g.row() ? Layout::RowMajor : Layout::ColMajor;
  std::vector<T> outs[2];
  for (int by_product = 0; by_product < 2; ++by_product) {
    T *da = upload_shifted(a, 0), *db = upload_shifted(b, 0), *dc = upload_shifted(c, 0);
    const GemmProblem p =
        make_batched_problem(precision, layout, g.ta == TMM_TRANS, g.tb == TMM_TRANS, g.m, g.n, g.k,
                             g.alpha, da, g.lda, sa, db, g.ldb, sb, g.beta, dc, g.ldc, sc, batch);
    const KernelPlan plan{row.tile, 0, 1, 0};
    // A row that packs operands (the TF32 Hopper row, for a batch it runs product by
    // product) gets the most any product needs.
    size_t workspace_bytes = 0;
    if (row.workspace != nullptr) {
      workspace_bytes = row.workspace(p, plan);
      for (int64_t q = 0; q < batch; ++q)
        workspace_bytes = std::max(workspace_bytes, row.workspace(product_of(p, q), plan));
    }
    void* workspace = nullptr;
    if (workspace_bytes > 0) {
      EXPECT_EQ(cudaMalloc(&workspace, workspace_bytes), cudaSuccess);
    }
    if (by_product) {
      for (int64_t q = 0; q < batch; ++q) row.launch(product_of(p, q), plan, workspace, nullptr);
    } else {
      row.launch(p, plan, workspace, nullptr);
    }
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    outs[by_product].resize(c.size());
    EXPECT_EQ(cudaMemcpy(outs[by_product].data(), dc, c.size() * sizeof(T), cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (T* d : {da, db, dc}) free_shifted(d, 0);
    if (workspace != nullptr) {
      EXPECT_EQ(cudaFree(workspace), cudaSuccess);
    }
  }
  size_t written = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    ASSERT_EQ(std::memcmp(&outs[0][i], &outs[1][i], sizeof(T)), 0)
        << "element " << i << ": one launch " << outs[0][i] << ", product by product "
        << outs[1][i];
    written += std::memcmp(&outs[0][i], &c[i], sizeof(T)) != 0;
  }
  EXPECT_LE(written, size_t(batch * g.m * g.n)) << "elements outside the products changed";
  EXPECT_GE(written, size_t(batch * g.m * g.n) / 2) << "the products were not written";
}

// Every batched row that runs here: ragged shapes in both layouts and all transposes,
// pads, aligned and odd gaps between products, beta 0 and not; one launch gives the bits
// of launching its products one by one.
TEST(BatchedRows, OneLaunchGivesTheBitsOfItsProductsOneByOne) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const int cc = current_cc();
  ASSERT_GT(cc, 0);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  const int optin = shared_optin();
  int rows = 0, variant = 0;
  for (const KernelEntry& row : cuda_kernel_table()) {
    if (!row.batched || !runs_here(row, cc) || !row_fits(row, optin)) continue;
    ++rows;
    for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
      for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
        for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
          const int64_t m = 61 + 37 * (variant % 5), n = 150 - 23 * (variant % 4);
          const int64_t k = 45 + 31 * (variant % 3), gap = variant % 3 == 0 ? 0 : variant % 2 + 1;
          const int64_t batch = 2 + variant % 4;
          SCOPED_TRACE(std::string(row.name) + " variant " + std::to_string(variant) + " m " +
                       std::to_string(m) + " n " + std::to_string(n) + " k " + std::to_string(k) +
                       " gap " + std::to_string(gap) + " batch " + std::to_string(batch));
          const auto make = [&](auto g) {
            g.layout = layout, g.ta = ta, g.tb = tb, g.m = m, g.n = n, g.k = k;
            g.alpha = 0.75;
            g.beta = variant % 2 ? 0.0 : -1.5;
            g.pad = variant % 3;
            tmm_test::fill_case(g, seed + uint32_t(variant));
            check_batched_row(row, g, batch, gap, seed + uint32_t(variant));
          };
          if (row.precision == Precision::F64) {
            make(tmm_test::DgemmCase{});
          } else {
            make(tmm_test::GemmCase{});
          }
          ++variant;
        }
      }
    }
  }
  EXPECT_GE(rows, 11) << "blocked_*, f64_blocked_* and the tiled rows are batched on every device";
}

// The TF32 Hopper row reads a batch's products through a third dimension of its copy
// engine maps where they lie as it reads them (wgmma_batches_in_one_launch): every
// layout and transpose at ragged sizes whose rows stay on 16 bytes, products 0 or 16
// bytes apart, beta 0 and not; one launch gives the bits of its products one by one.
TEST(BatchedRows, HopperTf32RowReadsTheProductsWhereTheyLie) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const int cc = current_cc();
  const KernelEntry* row = nullptr;
  for (const KernelEntry& r : cuda_kernel_table())
    if (std::string(r.name) == "tf32_wgmma_128x256" && runs_here(r, cc)) row = &r;
  if (row == nullptr) GTEST_SKIP() << "the sm_90a code does not run here";
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int variant = 0, one_launch = 0;
  for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        tmm_test::GemmCase g;
        g.layout = layout, g.ta = ta, g.tb = tb;
        g.m = 196 + 4 * (variant % 2), g.n = 132 + 260 * (variant % 3 == 1), g.k = 76;
        g.alpha = 0.75;
        g.beta = variant % 2 ? 0.0 : -1.5;
        g.pad = 4 * (variant % 2);
        tmm_test::fill_case(g, seed + uint32_t(variant));
        const int64_t gap = 4 * (variant % 2), batch = 3 + variant % 2;
        SCOPED_TRACE("variant " + std::to_string(variant));
        const int64_t sa = int64_t(g.a.size()) + gap, sb = int64_t(g.b.size()) + gap;
        const GemmProblem p = make_batched_problem(
            Precision::F32, g.row() ? Layout::RowMajor : Layout::ColMajor, ta == TMM_TRANS,
            tb == TMM_TRANS, g.m, g.n, g.k, 1.0, g.a.data(), g.lda, sa, g.b.data(), g.ldb, sb, 0.0,
            g.c.data(), g.ldc, int64_t(g.c.size()) + gap, batch);
        one_launch += wgmma_batches_in_one_launch(p, kTf32Wgmma128x256);
        check_batched_row(*row, g, batch, gap, seed + uint32_t(variant));
        ++variant;
      }
    }
  }
  EXPECT_EQ(one_launch, 6) << "all but both operands MN-major (packed) in one launch";
}

// `batch` products of 4 x 4 x 4 through `row` in one call (slices of 65535 products).
void batches_past_one_launch(const KernelEntry& row, int64_t batch) {
  const int64_t e = 16;  // 16 elements a matrix
  std::vector<float> a(size_t(batch * e)), b(a.size()), c(a.size(), 0.0f);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = float(int(i % 7) - 3);
    b[i] = float(int((i * 5 + i / 16) % 5) - 2);
  }
  float *da = upload_shifted(a, 0), *db = upload_shifted(b, 0), *dc = upload_shifted(c, 0);
  const GemmProblem p = make_batched_problem(Precision::F32, Layout::RowMajor, false, false, 4, 4,
                                             4, 1.0, da, 4, e, db, 4, e, 0.0, dc, 4, e, batch);
  const KernelPlan plan{row.tile, 0, 1, 0};
  void* workspace = nullptr;  // the 3xTF32 Hopper row packs a group of products there
  const size_t workspace_bytes = row.workspace != nullptr ? row.workspace(p, plan) : 0;
  if (workspace_bytes > 0) {
    ASSERT_EQ(cudaMalloc(&workspace, workspace_bytes), cudaSuccess);
  }
  row.launch(p, plan, workspace, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  if (workspace != nullptr) {
    ASSERT_EQ(cudaFree(workspace), cudaSuccess);
  }
  ASSERT_EQ(cudaMemcpy(c.data(), dc, c.size() * sizeof(float), cudaMemcpyDeviceToHost),
            cudaSuccess);
  for (float* d : {da, db, dc}) free_shifted(d, 0);
  for (int64_t q = 0; q < batch; ++q) {
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        float want = 0;
        for (int l = 0; l < 4; ++l)
          want += a[size_t(q * e + i * 4 + l)] * b[size_t(q * e + l * 4 + j)];
        ASSERT_EQ(c[size_t(q * e + i * 4 + j)], want)
            << "product " << q << " (" << i << ", " << j << ")";
      }
    }
  }
}

// More products than one launch's 65535 (gridDim.z): slices of the batch, each product
// right. Products of 4 x 4 x 4 on small integers, exact in FP32 (and in TF32 and 3xTF32,
// on the Hopper rows: the TF32 row reads them through its maps, the 3xTF32 row in groups
// of 32768 packed products): 70000 (a last slice of 4465), and a last slice or group of
// one product (65536; 32769 on the 3xTF32 row), which the batched kernels still read
// through maps of three dimensions.
TEST(BatchedRows, BatchesPastOneLaunchAreSliced) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  struct Run {
    const char* name;
    int64_t batch;
  };
  for (const Run& run : {Run{"blocked_64x64", 70000}, Run{"blocked_64x64", 65536},
                         Run{"tf32_wgmma_128x256", 70000}, Run{"tf32_wgmma_128x256", 65536},
                         Run{"tf32x3_wgmma_128x128", 70000}, Run{"tf32x3_wgmma_128x128", 32769}}) {
    SCOPED_TRACE(std::string(run.name) + " batch " + std::to_string(run.batch));
    const KernelEntry* row = nullptr;
    for (const KernelEntry& r : cuda_kernel_table())
      if (std::string(r.name) == run.name && runs_here(r, current_cc())) row = &r;
    if (row == nullptr && std::string(run.name) != "blocked_64x64") continue;  // no sm_90a here
    ASSERT_NE(row, nullptr);
    batches_past_one_launch(*row, run.batch);
  }
}

// The tiles of C `row` (a row with a plan_tail hook) computes for p: what a split of
// every tile sets as plan.tail_tiles; 0 for other rows.
int64_t tiles_of(const KernelEntry& row, const GemmProblem& p) {
  if (row.plan_tail == nullptr) return 0;
  const auto count = [](int64_t rows, int64_t cols, int64_t tr, int64_t tc) {
    return ((rows + tr - 1) / tr) * ((cols + tc - 1) / tc);
  };
  for (const MmaShapeInfo& s : kF64MmaShapes)
    if (row.precision == Precision::F64 && row.tile == s.tile)
      return count(p.m, p.n, s.rows, s.cols);
  for (const WgmmaShapeInfo* w : {&kTf32Wgmma128x256, &kTf32x3Wgmma128x128})
    if (row.precision == Precision::F32 && row.tile == w->tile &&
        row.math_mode == (w == &kTf32Wgmma128x256 ? MathMode::Tf32 : MathMode::Fp32Accurate))
      return wgmma_tiles(p, *w, wgmma_operands(p, *w).transposed);
  return 0;
}

// A list of numbers "a,b,c" or of shapes "MxNxK,MxNxK" (each as three numbers).
std::vector<int64_t> numbers_of(const char* text) {
  std::vector<int64_t> out;
  for (const char* c = text; c != nullptr && *c != '\0';) {
    char* end = nullptr;
    out.push_back(std::strtoll(c, &end, 10));
    c = (*end == '\0') ? nullptr : end + 1;
  }
  return out;
}

// Not a check, and disabled: the speed of named rows through their own launchers, for
// the measurements the API cannot make (on an H100, BLOCKED in double takes the DMMA rows,
// so the CUDA-core rows' efficiencies in plan/measured_rates.hpp are measured here; and
// each row's time over k split into a given number of slices, which the planner's
// choices are checked against). Run:
//   TMM_TIME_ROWS=f64_blocked_128x128,f64_blocked_64x64 TMM_TIME_SIZE=4096
//     test_kernel_table --gtest_also_run_disabled_tests --gtest_filter='RowTiming.*'
// (one command line; TMM_TIME_SIZE may be left out). TMM_TIME_SHAPES=MxNxK,MxNxK,... times
// those shapes instead, and TMM_TIME_SPLITS=1,2,4,... each in that many slices of k: the
// rows whose workspace holds partial sums split every tile (BLOCKED's plan.splits; a
// plan_tail row's tail_tiles = all its tiles); other rows only unsplit.
// Row-major NN products, uniform data, alpha 1, beta 0; median of 7 launches after 2, by
// CUDA events; prints the time and TFLOP/s per row, shape and split.
TEST(RowTiming, DISABLED_NamedRowsThroughTheirLaunchers) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const char* names = std::getenv("TMM_TIME_ROWS");
  ASSERT_NE(names, nullptr) << "TMM_TIME_ROWS names the rows to time";
  const char* size = std::getenv("TMM_TIME_SIZE");
  const int64_t n = size != nullptr ? std::atoll(size) : 4096;
  ASSERT_GT(n, 0);
  std::vector<int64_t> shapes = {n, n, n};
  if (const char* list = std::getenv("TMM_TIME_SHAPES")) shapes = numbers_of(list);
  ASSERT_TRUE(!shapes.empty() && shapes.size() % 3 == 0) << "TMM_TIME_SHAPES: MxNxK,...";
  std::vector<int64_t> splits = {1};
  if (const char* list = std::getenv("TMM_TIME_SPLITS")) splits = numbers_of(list);
  const std::string list = names;
  for (size_t begin = 0; begin < list.size();) {
    const size_t end = std::min(list.find(',', begin), list.size());
    const std::string name = list.substr(begin, end - begin);
    begin = end + 1;
    const KernelEntry* row = nullptr;
    for (const KernelEntry& k : cuda_kernel_table())
      if (name == k.name) row = &k;
    ASSERT_NE(row, nullptr) << "no CUDA row " << name;
    ASSERT_TRUE(runs_here(*row, current_cc())) << name << " does not run here";
    for (size_t s = 0; s < shapes.size(); s += 3) {
      const int64_t m = shapes[s], cols = shapes[s + 1], k = shapes[s + 2];
      ASSERT_TRUE(m > 0 && cols > 0 && k > 0);
      const size_t bytes =
          size_t(std::max({m * k, k * cols, m * cols})) * size_t(element_bytes(row->precision));
      void *a = nullptr, *b = nullptr, *c = nullptr;
      ASSERT_EQ(cudaMalloc(&a, bytes), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&b, bytes), cudaSuccess);
      ASSERT_EQ(cudaMalloc(&c, bytes), cudaSuccess);
      std::vector<unsigned char> host(bytes);
      std::mt19937 rng(1);
      if (row->precision == Precision::F64) {
        std::uniform_real_distribution<double> u(-1.0, 1.0);
        for (size_t i = 0; i < bytes / 8; ++i) reinterpret_cast<double*>(host.data())[i] = u(rng);
      } else {
        std::uniform_real_distribution<float> u(-1.0f, 1.0f);
        for (size_t i = 0; i < bytes / 4; ++i) reinterpret_cast<float*>(host.data())[i] = u(rng);
      }
      ASSERT_EQ(cudaMemcpy(a, host.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(b, host.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
      const GemmProblem p = make_problem(row->precision, Layout::RowMajor, false, false, m, cols, k,
                                         1.0, a, k, b, cols, 0.0, c, cols);
      for (const int64_t split : splits) {
        KernelPlan plan{row->tile, row->coarsening, 1, 0};
        if (split > 1) {
          plan.splits = int(split);
          plan.tail_tiles = tiles_of(*row, p);
          // A row splits where its workspace grows by the partial sums (BLOCKED's every
          // tile, a plan_tail row's tail_tiles); the others (the mma.sync TF32 rows, the
          // thin row...) only unsplit.
          const KernelPlan one{row->tile, row->coarsening, 1, 0};
          if (row->workspace == nullptr || (row->plan_tail != nullptr && plan.tail_tiles == 0) ||
              row->workspace(p, plan) <= row->workspace(p, one))
            continue;
        }
        void* workspace = nullptr;
        const size_t workspace_size = row->workspace != nullptr ? row->workspace(p, plan) : 0;
        if (workspace_size > 0) {
          ASSERT_EQ(cudaMalloc(&workspace, workspace_size), cudaSuccess);
        }
        cudaEvent_t start, stop;
        ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
        ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
        std::vector<float> ms;
        for (int run = 0; run < 9; ++run) {
          ASSERT_EQ(cudaEventRecord(start), cudaSuccess);
          row->launch(p, plan, workspace, nullptr);
          ASSERT_EQ(cudaEventRecord(stop), cudaSuccess);
          ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
          float t = 0;
          ASSERT_EQ(cudaEventElapsedTime(&t, start, stop), cudaSuccess);
          if (run >= 2) ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        const double median_s = ms[ms.size() / 2] * 1e-3;
        std::printf("%s %lldx%lldx%lld splits %lld: %.4f ms, %.2f TFLOP/s\n", row->name,
                    static_cast<long long>(m), static_cast<long long>(cols),
                    static_cast<long long>(k), static_cast<long long>(split), median_s * 1e3,
                    2.0 * double(m) * double(cols) * double(k) / median_s / 1e12);
        for (cudaEvent_t e : {start, stop}) cudaEventDestroy(e);
        cudaFree(workspace);
      }
      for (void* d : {a, b, c}) cudaFree(d);
    }
  }
}

// The rows that split their last wave along k (plan_tail), with a split forced on small
// products: 1, 5 or 8 of the last tiles (of at least 9) in up to 4 slices of k, the last
// slice short (k = 333: 11 steps of 32, slices of 3 and a last of 2, 13 in k past the
// last whole step). Every transpose, so every variant of the TF32 kernel (D = C^T among
// them), beta 0 and not, padded rows.
TEST(TensorCoreRows, SplitLastWavesMatchFp64) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const int cc = current_cc();
  ASSERT_GT(cc, 0);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int rows = 0;
  for (const KernelEntry& row : cuda_kernel_table()) {
    // Float rows: the FP64 rows' splits run in test_dgemm (DgemmCuda.*Split*).
    if (row.plan_tail == nullptr || row.precision != Precision::F32 || !runs_here(row, cc))
      continue;
    ++rows;
    int variant = 0;
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        for (int64_t tail : {1, 5, 8}) {
          tmm_test::GemmCase g;
          g.ta = ta;
          g.tb = tb;
          g.m = 300 + variant;
          g.n = 520 - variant;
          g.k = 333;
          g.alpha = -1.5f;
          g.beta = variant % 2 ? 0.0f : 0.5f;
          g.pad = variant % 3;
          tmm_test::fill_case(g, seed + uint32_t(variant));
          ++variant;
          SCOPED_TRACE(std::string(row.name) + " " + tmm_test::describe(g) + " tail " +
                       std::to_string(tail));
          const KernelPlan plan{row.tile, row.coarsening, 4, tail};
          run_row(row, g, plan);
          EXPECT_TRUE(tmm_test::check_case(g, arithmetic_of(row)));
        }
      }
    }
  }
  // On cc 9.0 every row with a split runs (the Hopper rows: their sm_90a code loads).
  int with_split = 0;
  for (const KernelEntry& row : cuda_kernel_table())
    with_split += row.plan_tail != nullptr && row.precision == Precision::F32;
  if (cc == 90) {
    EXPECT_EQ(rows, with_split);
  }
}

// Every tile of the launch split (one wave of tiles over deep k: plan_tail_split
// splits them all, and no block owns a whole tile). Each row's tiles counted as its
// launcher counts them (wgmma_tiles, on the operands as the launcher packs them), on
// 200 x 100 (one to two tiles) and 300 x 520; every transpose, beta 0 and not.
TEST(TensorCoreRows, EveryTileSplitMatchesFp64) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  const int cc = current_cc();
  ASSERT_GT(cc, 0);
  const uint32_t seed = tmm_test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  int variant = 0;
  for (const KernelEntry& row : cuda_kernel_table()) {
    // Float rows: the FP64 rows' splits run in test_dgemm (DgemmCuda.*Split*).
    if (row.plan_tail == nullptr || row.precision != Precision::F32 || !runs_here(row, cc))
      continue;
    const WgmmaShapeInfo& shape =
        row.math_mode == MathMode::Tf32 ? kTf32Wgmma128x256 : kTf32x3Wgmma128x128;
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        for (int64_t m : {200, 300}) {
          tmm_test::GemmCase g;
          g.ta = ta;
          g.tb = tb;
          g.m = m;
          g.n = m == 200 ? 100 : 520;
          g.k = 333;
          g.alpha = 0.75f;
          g.beta = variant % 2 ? 0.0f : -0.5f;
          g.pad = variant % 3;
          tmm_test::fill_case(g, seed + uint32_t(variant));
          ++variant;
          // The tiles as the launcher counts them: its device buffers start on 256-byte
          // boundaries, so only the leading dimensions decide which operands it packs.
          const float* aligned = reinterpret_cast<const float*>(uintptr_t(256));
          const GemmProblem shape_only = make_problem(
              Layout::RowMajor, g.ta == TMM_TRANS, g.tb == TMM_TRANS, g.m, g.n, g.k, g.alpha,
              aligned, g.lda, aligned, g.ldb, g.beta, const_cast<float*>(aligned), g.ldc);
          const int64_t tiles =
              wgmma_tiles(shape_only, shape, wgmma_operands(shape_only, shape).transposed);
          SCOPED_TRACE(std::string(row.name) + " " + tmm_test::describe(g) + " tiles " +
                       std::to_string(tiles));
          run_row(row, g, KernelPlan{row.tile, row.coarsening, 4, tiles});
          EXPECT_TRUE(tmm_test::check_case(g, arithmetic_of(row)));
        }
      }
    }
  }
}

}  // namespace
}  // namespace tiledmm
