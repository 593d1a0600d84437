// The settings a handle holds and the records that travel back from a backend: what
// the user asked for (Settings, one enum per setting), where the time went and what
// ran (Timing), and the device (DeviceInfo). Plain C++: nothing here knows about the C
// API (lib/api/ translates its options and reports) or about CUDA.
#pragma once

#include <cstdint>
#include <string>

#include "core/precision.hpp"

namespace tiledmm {

enum class BackendKind { Auto, Cuda, Cpu };

enum class Algorithm { Auto, Naive, Tiled, Coarsened, Blocked };

// What the user asked for; 0 means "choose for the shape" (or "one per core").
enum class HostPath { Auto, Direct, Streamed };

// The arithmetic a handle allows (tmm_math_mode, same order): a permission. The
// strict FP32 kernels are always allowed; a kernel of another mode runs only where
// the setting names its mode.
enum class MathMode { Fp32, Tf32, Fp32Accurate };

// The modes' names (TMM_MATH_MODE's values, any case), in MathMode's order, and the
// last mode (the option's upper bound): a new mode is its enumerator and its name here.
constexpr const char* kMathModeNames[] = {"fp32", "tf32", "fp32_accurate"};
constexpr MathMode kLastMathMode = MathMode::Fp32Accurate;
static_assert(sizeof kMathModeNames / sizeof kMathModeNames[0] == int(kLastMathMode) + 1,
              "one name per math mode");

struct Settings {
  Algorithm algorithm = Algorithm::Auto;
  int tile_size = 0;
  int coarsening = 0;
  int host_threads = 0;
  int64_t device_budget =
      0;  // bytes the host path may allocate on the device; 0 = free less a margin
  int64_t staging_bytes = 0;  // pinned staging of the streamed path; 0 = the default
  HostPath host_path = HostPath::Auto;
  bool poison_staging = false;          // fill staging with NaN between uses (tests)
  int max_splits = 0;                   // split-K cap (0 = the planner's); the streamed path uses 1
  MathMode math_mode = MathMode::Fp32;  // TMM_OPTION_MATH_MODE
};

// The pinned staging the streamed path may use: the setting, or 512 MiB.
inline int64_t staging_budget(const Settings& s) {
  return s.staging_bytes > 0 ? s.staging_bytes : int64_t(512) << 20;
}

// Where the time of one sgemm went, and what actually ran.
struct Timing {
  double upload_ms = 0;
  double compute_ms = 0;
  double download_ms = 0;
  double total_ms = 0;
  Algorithm algorithm = Algorithm::Naive;
  int tile_size = 0;
  int coarsening = 0;
  int splits = 1;
  int host_threads = 0;
  const char* kernel = "none";           // static text
  MathMode math_mode = MathMode::Fp32;   // the arithmetic of that kernel
  Precision precision = Precision::F32;  // the element type of the product
  HostPath host_path = HostPath::Auto;   // Direct or Streamed for host calls on CUDA
  int64_t tiles = 0, k_chunks = 0;       // the streamed path's cut of the product
  double pack_ms = 0;                    // host time packing into and out of staging
  double link_ms = 0;                    // time copies kept the link busy
  int64_t batch = 1;                     // products of the call (a strided batch's count)
  // The streamed path's traffic: bytes the packing threads moved into and out of staging
  // (host_bytes / pack_ms is the host's packing rate), bytes up and down the link, and
  // the panels of op(B) it uploaded.
  int64_t host_bytes = 0, upload_bytes = 0, download_bytes = 0, panel_uploads = 0;
  // A lane's first product enqueued and its last tile unpacked, in ms from the call's start
  // (host clock: lanes on different devices compare); 0 and 0 for a lane with no tile.
  double start_ms = 0, end_ms = 0;
  int devices = 1;              // devices that computed tiles of the call (a multi-device handle's)
  int64_t workspace_bytes = 0;  // device workspace the call's kernel used
};

// A strided batch's report after one more product: `next` (that product's) after `sum`
// (the products' before it). What ran and the moments are the last product's; the times
// and the packed bytes add up, and with `counts` (a device's report over the batch) its
// tiles, copies and panels too.
inline Timing add_product(const Timing& sum, const Timing& next, bool counts) {
  Timing t = next;
  t.upload_ms += sum.upload_ms;
  t.compute_ms += sum.compute_ms;
  t.download_ms += sum.download_ms;
  t.total_ms += sum.total_ms;
  t.pack_ms += sum.pack_ms;
  t.link_ms += sum.link_ms;
  t.host_bytes += sum.host_bytes;
  if (counts) {
    t.upload_bytes += sum.upload_bytes;
    t.download_bytes += sum.download_bytes;
    t.panel_uploads += sum.panel_uploads;
    t.tiles += sum.tiles;
  }
  t.devices = next.devices > sum.devices ? next.devices : sum.devices;
  return t;
}

struct DeviceInfo {
  std::string name;
  int device = 0;
  int major = 0;
  int minor = 0;
  int multiprocessors = 0;
  uint64_t global_memory = 0;
  uint64_t shared_memory_per_block = 0;
  uint64_t shared_memory_per_multiprocessor = 0;
  uint64_t l2_cache = 0;
};

}  // namespace tiledmm
