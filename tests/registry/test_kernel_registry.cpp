// The kernel table's rows and lookup (lib/registry/kernel_registry.hpp), over the CPU
// rows and, in a CUDA build, the CUDA ones: unique names, one row found for each
// setting, one default per algorithm.
#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <string>

#include "plan/blocked_shapes.hpp"
#include "registry/kernel_registry.hpp"

namespace tiledmm {
namespace {

// ---- The registry ----------------------------------------------------------------

TEST(Registry, NamesAreUniqueAndEverySettingFindsItsRow) {
  std::set<std::string> names;
  size_t rows = 0;
  for (size_t i = 0; const KernelEntry* k = kernel_at(i); ++i, ++rows) {
    EXPECT_TRUE(names.insert(k->name).second) << "duplicate " << k->name;
    EXPECT_NE(std::string(k->description), "");
    EXPECT_LE(k->min_cc, k->max_cc);
    if (k->backend == BackendKind::Cuda) {
      EXPECT_NE(k->launch, nullptr) << k->name;
      // The first row of its settings, or one after a row for other devices.
      const KernelEntry* first =
          find_kernel(k->backend, k->precision, k->algorithm, k->tile, k->coarsening, k->math_mode);
      ASSERT_NE(first, nullptr) << k->name;
      if (first != k) {
        EXPECT_TRUE(first->available != nullptr || first->min_cc > k->min_cc)
            << k->name << " is hidden by " << first->name;
      }
      EXPECT_TRUE(is_known_tile(k->tile));
    }
  }
  EXPECT_EQ(rows, cpu_kernel_table().count + cuda_kernel_table().count);
  EXPECT_EQ(kernel_at(rows), nullptr);
}

TEST(Registry, EachAlgorithmHasOneDefaultExceptThePlannedOne) {
  for (BackendKind b : {BackendKind::Cpu, BackendKind::Cuda}) {
    for (Precision p : {Precision::F32, Precision::F64}) {
      for (Algorithm a : {Algorithm::Naive, Algorithm::Tiled, Algorithm::Coarsened}) {
        int rows = 0, defaults = 0;
        for (size_t i = 0; const KernelEntry* k = kernel_at(i); ++i) {
          if (k->backend != b || k->precision != p || k->algorithm != a) continue;
          ++rows;
          defaults += k->is_default;
        }
        if (rows > 0) {
          EXPECT_EQ(defaults, 1) << int(a) << " precision " << int(p);
        }
      }
    }
  }
#if TILEDMM_WITH_CUDA
  // BLOCKED's CUDA rows are the planner's shapes, one each.
  for (const BlockedShapeInfo& s : kBlockedShapes) {
    const KernelEntry* k =
        find_kernel(BackendKind::Cuda, Precision::F32, Algorithm::Blocked, s.tile, 0);
    ASSERT_NE(k, nullptr) << s.tile;
    EXPECT_EQ(k->outputs_per_thread, s.outputs_per_thread);
  }
#endif
}

// The CPU backend checks an algorithm once for both precisions (check_algorithm):
// each of its algorithms has a default row in each, which names what ran.
TEST(Registry, EveryCpuAlgorithmRunsInBothPrecisions) {
  for (Algorithm a : {Algorithm::Naive, Algorithm::Blocked}) {
    const KernelEntry* f32 = find_kernel(BackendKind::Cpu, Precision::F32, a, 0, 0);
    const KernelEntry* f64 = find_kernel(BackendKind::Cpu, Precision::F64, a, 0, 0);
    ASSERT_NE(f32, nullptr) << int(a);
    ASSERT_NE(f64, nullptr) << int(a);
    EXPECT_EQ(f32->precision, Precision::F32);
    EXPECT_EQ(f64->precision, Precision::F64);
  }
  for (Algorithm a : {Algorithm::Tiled, Algorithm::Coarsened}) {
    EXPECT_EQ(find_kernel(BackendKind::Cpu, Precision::F32, a, 0, 0), nullptr);
    EXPECT_EQ(find_kernel(BackendKind::Cpu, Precision::F64, a, 0, 0), nullptr);
  }
}

}  // namespace
}  // namespace tiledmm
