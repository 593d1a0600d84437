#include "registry/kernel_registry.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace tiledmm {

#if !TILEDMM_WITH_CUDA
KernelTable cuda_kernel_table() { return {nullptr, 0}; }
#endif

const KernelEntry* kernel_at(size_t index) {
  const KernelTable cpu = cpu_kernel_table(), cuda = cuda_kernel_table();
  if (index < cpu.count) return cpu.rows + index;
  index -= cpu.count;
  return index < cuda.count ? cuda.rows + index : nullptr;
}

namespace {

KernelTable table_of(BackendKind backend) {
  return backend == BackendKind::Cpu ? cpu_kernel_table() : cuda_kernel_table();
}

const KernelEntry* exact(BackendKind backend, Precision precision, Algorithm algorithm,
                         MathMode mode, int tile, int coarsening) {
  for (const KernelEntry& k : table_of(backend))
    if (k.precision == precision && k.algorithm == algorithm && k.math_mode == mode &&
        k.tile == tile && k.coarsening == coarsening)
      return &k;
  return nullptr;
}

const KernelEntry* default_of(BackendKind backend, Precision precision, Algorithm algorithm,
                              MathMode mode) {
  for (const KernelEntry& k : table_of(backend))
    if (k.precision == precision && k.algorithm == algorithm && k.math_mode == mode && k.is_default)
      return &k;
  return nullptr;
}

}  // namespace

// Rows are unique by (precision, algorithm, mode, tile, coarsening). A 0 setting takes
// the default row's value: tile 0 with coarsening 4 is the default tile at coarsening 4.
const KernelEntry* find_kernel(BackendKind backend, Precision precision, Algorithm algorithm,
                               int tile, int coarsening, MathMode math_mode) {
  const KernelEntry* d = default_of(backend, precision, algorithm, math_mode);
  if (tile == 0 && d == nullptr) return nullptr;
  return exact(backend, precision, algorithm, math_mode, tile != 0 ? tile : d->tile,
               coarsening != 0 ? coarsening : (d ? d->coarsening : 0));
}

// Each tile size once, in the order of the rows (several modes may share one).
std::string tiles_of(BackendKind backend, Precision precision, Algorithm algorithm) {
  std::vector<int> seen;
  std::string list;
  for (const KernelEntry& k : table_of(backend)) {
    if (k.precision != precision || k.algorithm != algorithm || k.tile == 0) continue;
    if (std::find(seen.begin(), seen.end(), k.tile) != seen.end()) continue;
    seen.push_back(k.tile);
    list += (list.empty() ? "" : ", ") + std::to_string(k.tile);
  }
  return list.empty() ? "none" : list;
}

// The 1.0 values stay valid in every build (a CPU-only build too, where no CUDA row
// exists): they are part of the 1.x contract. New kernels add theirs.
bool is_known_tile(int tile) {
  for (int v : {0, 8, 16, 32, 64, 128, 256})
    if (tile == v) return true;
  for (size_t i = 0; const KernelEntry* k = kernel_at(i); ++i)
    if (k->tile == tile) return true;
  return false;
}

bool is_known_coarsening(int coarsening) {
  for (int v : {0, 1, 2, 4})
    if (coarsening == v) return true;
  for (size_t i = 0; const KernelEntry* k = kernel_at(i); ++i)
    if (k->algorithm == Algorithm::Coarsened && k->coarsening == coarsening) return true;
  return false;
}

}  // namespace tiledmm
