// blas/route/engine: which handles the pool makes. Several devices in TILEDMM_BLAS_DEVICE
// give a process that is not a launcher's rank handles spanning them all
// (tmm_create_with_devices); a rank takes one device by its local rank.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "route/engine.hpp"
#include "support/config.hpp"

namespace {

using tiledmm::blas::BackendChoice;
using tiledmm::blas::Config;

TEST(BlasEngine, HandlesSpanTheDevicesOnlyOutsideARank) {
  Config cfg;
  cfg.devices = {0};
  EXPECT_FALSE(tiledmm::blas::spans_devices(cfg, false)) << "one device";
  cfg.devices = {0, 1};
  EXPECT_TRUE(tiledmm::blas::spans_devices(cfg, false));
  EXPECT_FALSE(tiledmm::blas::spans_devices(cfg, true)) << "a rank takes one device";
  cfg.devices = {0, 0};
  EXPECT_TRUE(tiledmm::blas::spans_devices(cfg, false)) << "device 0 twice: two engines";
  cfg.backend = BackendChoice::kCpu;
  EXPECT_FALSE(tiledmm::blas::spans_devices(cfg, false)) << "the CPU backend has no devices";
  cfg.backend = BackendChoice::kCuda;
  EXPECT_TRUE(tiledmm::blas::spans_devices(cfg, false));
}

TEST(BlasEngine, ALauncherVariableMakesARank) {
  const char* names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
                         "PALS_LOCAL_RANKID"};
  std::string saved[4];
  bool had[4];
  for (int i = 0; i < 4; ++i) {
    const char* v = std::getenv(names[i]);
    had[i] = v != nullptr;
    if (had[i]) saved[i] = v;
    unsetenv(names[i]);
  }
  EXPECT_FALSE(tiledmm::blas::launched_as_rank());
  EXPECT_EQ(tiledmm::blas::find_local_rank(), 0);
  for (int i = 0; i < 4; ++i) {
    setenv(names[i], "3", 1);
    EXPECT_TRUE(tiledmm::blas::launched_as_rank()) << names[i];
    EXPECT_EQ(tiledmm::blas::find_local_rank(), 3) << names[i];
    unsetenv(names[i]);
  }
  setenv("SLURM_LOCALID", "", 1);
  EXPECT_FALSE(tiledmm::blas::launched_as_rank()) << "empty is unset";
  unsetenv("SLURM_LOCALID");
  for (int i = 0; i < 4; ++i)
    if (had[i]) setenv(names[i], saved[i].c_str(), 1);
}

}  // namespace
