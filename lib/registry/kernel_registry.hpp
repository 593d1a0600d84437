// The kernel registry: every kernel tiledmm has, as one table per backend, each row
// saying what selects the kernel, where it runs and how to launch it. The C
// boundary (valid tile sizes, tmm_get_kernel_info), dispatch, the report and the
// tests all read it, so a new kernel is its own file plus one row (and, for a new
// user-selectable algorithm, its enum value).
//
//   CPU rows:  lib/cpu/cpu_backend.cpp (cpu_kernel_table)
//   CUDA rows: lib/cuda/kernels/kernel_table.cu (cuda_kernel_table)
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/device_profile.hpp"
#include "core/gemm_problem.hpp"
#include "core/settings.hpp"

namespace tiledmm {

// A resolved choice: the variant's tile and coarsening, and how k is split: for
// BLOCKED, every tile in `splits` slices (split-K); for the rows with a plan_tail hook,
// only the last `tail_tiles` tiles (the partial last wave, planner.hpp's TailSplitPlan).
struct KernelPlan {
  int tile = 0;
  int coarsening = 0;
  int splits = 1;
  int64_t tail_tiles = 0;
};

// Enqueues the kernel on a CUDA stream (a cudaStream_t; void* keeps this header
// free of CUDA). `workspace` holds at least `workspace(p, plan)` bytes: untyped, so
// that one signature serves rows of either precision.
using KernelLauncher = void (*)(const GemmProblem& p, const KernelPlan& plan, void* workspace,
                                void* stream);
using WorkspaceBytes = size_t (*)(const GemmProblem& p, const KernelPlan& plan);

// A row, written with named fields through KernelRow below. The defaults are what most
// rows leave out: single precision, strict FP32, no tile or coarsening setting, no
// compute capability (the CPU's rows), not a default, and no hooks.
struct KernelEntry {
  const char* name = nullptr;         // reported in tmm_report.kernel; unique
  const char* description = nullptr;  // one line
  BackendKind backend = BackendKind::Auto;
  Algorithm algorithm = Algorithm::Auto;
  Precision precision = Precision::F32;  // the element type of the products it computes
  MathMode math_mode =
      MathMode::Fp32;  // its arithmetic; other than Fp32, it runs only where the setting allows
  int tile = 0;        // the tile_size setting that selects it (0: none)
  int coarsening = 0;  // the coarsening setting that selects it (0: none)
  int outputs_per_thread = 0;          // reported as tmm_timing.coarsening (0: not applicable)
  int min_cc = 0, max_cc = 0;          // compute capabilities it runs on, major * 10 + minor
  bool is_default = false;             // what tile_size (and coarsening) 0 select
  KernelLauncher launch = nullptr;     // CUDA rows; nullptr on the CPU
  WorkspaceBytes workspace = nullptr;  // nullptr: needs none
  // Whether the current device can run it beyond its cc range (its code loaded);
  // nullptr: always. Rows of one (algorithm, mode, tile, coarsening) may differ only
  // in where they run and in `batched`: dispatch takes the first that runs on the device
  // (for a strided batch, the first batched one, where there is one).
  bool (*available)() = nullptr;
  // How it splits k in its last wave for p on the device (plan.splits, plan.tail_tiles);
  // nullptr: it never splits. Dispatch asks only where a workspace may be used.
  void (*plan_tail)(const GemmProblem& p, const DeviceProfile& device, KernelPlan& plan) = nullptr;
  // Whether its launcher runs a strided batch in one call (product blockIdx.z, unsplit:
  // one launch, or, on the 3xTF32 Hopper row, one a group of products packed together);
  // false: dispatch launches a batch product by product.
  bool batched = false;
  // Of a batched row: whether it runs the batch p in one launch (nullptr: every batch).
  // Where not, its launcher runs p product by product, and dispatch prefers another
  // batched row (runs_batch_in_one_launch).
  bool (*batches)(const GemmProblem& p) = nullptr;
};

// Whether `row` runs the strided batch p in one launch.
inline bool runs_batch_in_one_launch(const KernelEntry& row, const GemmProblem& p) {
  return row.batched && (row.batches == nullptr || row.batches(p));
}

// Named fields for a row in C++17 (designated initialisers are C++20):
//   kernel_row(BackendKind::Cuda, "naive_8", "one thread per element of C, 8 x 8 blocks")
//       .algorithm(Algorithm::Naive).tile(8).min_cc(50).max_cc(999).launch(launch_naive)
// Each setter returns a copy with one field set, so a table of rows is constexpr:
// constant-initialised, as the positional rows were, before any code reads it.
class KernelRow {
  // First in the class: Clang constant-evaluates a member template only after its
  // definition, and the setters below call it.
  template <class Field, class Value>
  constexpr KernelRow with(Field KernelEntry::*field, Value v) const {
    KernelRow r = *this;
    r.e_.*field = v;
    return r;
  }

 public:
  constexpr KernelRow(BackendKind backend, const char* name, const char* description) {
    e_.backend = backend;
    e_.name = name;
    e_.description = description;
  }
  constexpr KernelRow algorithm(Algorithm v) const { return with(&KernelEntry::algorithm, v); }
  constexpr KernelRow precision(Precision v) const { return with(&KernelEntry::precision, v); }
  constexpr KernelRow math_mode(MathMode v) const { return with(&KernelEntry::math_mode, v); }
  constexpr KernelRow tile(int v) const { return with(&KernelEntry::tile, v); }
  constexpr KernelRow coarsening(int v) const { return with(&KernelEntry::coarsening, v); }
  constexpr KernelRow outputs_per_thread(int v) const {
    return with(&KernelEntry::outputs_per_thread, v);
  }
  // A shape of plan/ (blocked_shapes.hpp, tf32_shapes.hpp): its tile setting and the
  // outputs per thread, stated there once.
  template <class Shape>
  constexpr KernelRow shape(const Shape& s) const {
    return tile(s.tile).outputs_per_thread(s.outputs_per_thread);
  }
  constexpr KernelRow min_cc(int v) const { return with(&KernelEntry::min_cc, v); }
  constexpr KernelRow max_cc(int v) const { return with(&KernelEntry::max_cc, v); }
  constexpr KernelRow is_default() const { return with(&KernelEntry::is_default, true); }
  constexpr KernelRow launch(KernelLauncher v) const { return with(&KernelEntry::launch, v); }
  constexpr KernelRow workspace(WorkspaceBytes v) const { return with(&KernelEntry::workspace, v); }
  constexpr KernelRow available(bool (*v)()) const { return with(&KernelEntry::available, v); }
  constexpr KernelRow batched() const { return with(&KernelEntry::batched, true); }
  // Batched where `v` says (KernelEntry::batches).
  constexpr KernelRow batched(decltype(KernelEntry::batches) v) const {
    return batched().with(&KernelEntry::batches, v);
  }
  constexpr KernelRow plan_tail(decltype(KernelEntry::plan_tail) v) const {
    return with(&KernelEntry::plan_tail, v);
  }
  constexpr operator KernelEntry() const { return e_; }  // NOLINT: a row is written as one

 private:
  KernelEntry e_;
};

constexpr KernelRow kernel_row(BackendKind backend, const char* name, const char* description) {
  return KernelRow(backend, name, description);
}

struct KernelTable {
  const KernelEntry* rows;
  size_t count;
  const KernelEntry* begin() const { return rows; }
  const KernelEntry* end() const { return rows + count; }
};

KernelTable cpu_kernel_table();
KernelTable cuda_kernel_table();  // empty in a build without CUDA

// Row `index` of the CPU rows followed by the CUDA rows; nullptr past the end.
const KernelEntry* kernel_at(size_t index);

// The row for these settings, nullptr if none. tile 0 (and coarsening 0) select the
// algorithm's default row in that precision. Rows are unique by (precision,
// algorithm, math mode, tile, coarsening), a tensor-core row may share a tile size
// with a strict FP32 row, and rows for different architectures may share all five
// (the first row wins here; dispatch asks runs_here() of each).
const KernelEntry* find_kernel(BackendKind backend, Precision precision, Algorithm algorithm,
                               int tile, int coarsening, MathMode math_mode = MathMode::Fp32);

// The tile sizes rows of `algorithm` in `precision` on `backend` take, for messages:
// "8, 16, 32". Builds a string: only on failure paths.
std::string tiles_of(BackendKind backend, Precision precision, Algorithm algorithm);

// The tile_size option's valid values: 0, 1.0's sizes (valid in every build) and any
// a row takes.
bool is_known_tile(int tile);

// The coarsening option's valid values: 0, 1.0's (1, 2, 4) and any a row takes.
bool is_known_coarsening(int coarsening);

inline bool runs_on(const KernelEntry& k, int compute_capability) {
  return compute_capability >= k.min_cc && compute_capability <= k.max_cc;
}

// runs_on, and its code is there for the current device.
inline bool runs_here(const KernelEntry& k, int compute_capability) {
  return runs_on(k, compute_capability) && (k.available == nullptr || k.available());
}

}  // namespace tiledmm
