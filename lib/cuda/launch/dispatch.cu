// Choosing a kernel for a call from the registry's CUDA rows, and running it.
//
// AUTO runs BLOCKED, the fastest kernel at every shape measured on the H100 (see
// BENCHMARKS.md), with its tile and split-K factor chosen by plan_blocked() from
// the shape and the device's profile; a strided batch of small products
// (small_batch_pays) runs TILED, the products side by side, and AUTO runs TILED 16 for a
// tiny product where the strict FP32 rows would run (tiny_pays). First of all, in every math mode
// and precision, a product with m or n at most 16 that thin_pays() runs BLOCKED's tile 16, the thin
// kernel (thin_kernel.cu: strict, bound by memory, plan_thin()'s split of k), as
// BLOCKED with tile 16 does at any shape.
//
// The math mode is a permission, as cuBLAS's is: with TF32 allowed, AUTO and
// BLOCKED (tile 0, or a tile a TF32 row has) run a TF32 tensor-core row where the
// device can (plan_tf32() picks the tile); with FP32_ACCURATE, likewise a 3xTF32
// row (plan_tf32x3(): tiles 128 and 64), but strict FP32 with tile 0 where C is small
// and k deep (fp32_accurate_takes_strict(): faster there); everything else runs the
// strict FP32 rows, always an allowed answer. Both modes run strict FP32 with tile 0
// for a C of one small tile over deep k (tiny_c_deep_k()). On Hopper a small single product
// (small_product()) runs TF32 in the 64 x 64 tile (or, under AUTO and tiny, TILED 16,
// strict) and FP32_ACCURATE strict, not on the wgmma rows' wide tiles.
//
// A double problem meets only double rows (the registry's precision field), never a
// TF32 row: the math mode is a permission about FP32 inputs, so it changes nothing in a
// dgemm. AUTO and BLOCKED in double run the FP64 tensor-core rows (f64_mma_kernel.cu:
// strict FP64, plan_f64() picks the tile) where DMMA pays (DeviceProfile::dmma_pays:
// compute capability 8.0 and 9.0 on), else the FP64 CUDA-core rows
// (f64_blocked_kernel.cu: plain fma in double, plan_f64_blocked() picks the tile and
// split); the ladder's best row (ladder_row_for_f64) only where neither runs. The two
// kinds of row share tile settings, so the row is the first of its kind whose code runs
// on the device (f64_blocked_row), never find_kernel's first.
#include <algorithm>
#include <cstdint>
#include <string>

#include "core/error.hpp"
#include "cuda/kernels/kernel_common.cuh"
#include "cuda/kernels/kernels.hpp"
#include "cuda/launch/dispatch.hpp"
#include "plan/planner.hpp"

namespace tiledmm {
namespace {

const char* algorithm_name(Algorithm a) {
  switch (a) {
    case Algorithm::Naive:
      return "NAIVE";
    case Algorithm::Tiled:
      return "TILED";
    case Algorithm::Coarsened:
      return "COARSENED";
    case Algorithm::Blocked:
      return "BLOCKED";
    default:
      return "AUTO";
  }
}

[[noreturn]] void no_such_tile(Precision precision, Algorithm a, int tile) {
  fail(Status::NotSupported, "tile size ", tile, " is not available for ", algorithm_name(a),
       precision == Precision::F64 ? " in double precision" : "", " (",
       tiles_of(BackendKind::Cuda, precision, a), ")");
}

// AUTO and BLOCKED (tile 0) in double where no FP64 tensor-core row runs (before
// compute capability 8.0): coarsened, 32 x 32 tiles, 4 outputs per thread. It is the
// fastest of the ladder in float on the H100 (docs/benchmarks/device-kernels.md), and
// the reason carries over to double: each element of A read from shared memory feeds 4
// multiply-adds, and each block loads one tile of A for four of B, so it does the most
// work per load of the ladder's rows. In double its 42,240 bytes of shared memory still
// fit the 48 KiB of a static block. Not measured in double yet; the FP64 CUDA-core rows
// run before it wherever their code is there (from compute capability 5.0).
const KernelEntry* ladder_row_for_f64() {
  return find_kernel(BackendKind::Cuda, Precision::F64, Algorithm::Coarsened, 32, 4);
}

// Whether a BLOCKED row in double is a CUDA-core row (f64_blocked_kernel.cu) rather than
// an FP64 tensor-core row (f64_mma_kernel.cu), which shares its tiles: the DMMA rows need
// compute capability 8.0, the CUDA-core rows run from 5.0.
bool is_f64_cuda_core_row(const KernelEntry& k) {
  return k.min_cc < 80 && k.tile != 16 && k.tile != 32;  // not the thin and small rows
}

// The first BLOCKED row of `precision` and `mode` with this tile whose code runs here
// (a Hopper row before the mma.sync row of its tile) and that `wanted` accepts. Without a
// workspace, a row that needs one is passed over (the next row of the tile needs none).
// nullptr: none.
template <class Wanted>
const KernelEntry* first_blocked_row_here(const GemmProblem& p, Precision precision, MathMode mode,
                                          int tile, const DeviceProfile& device,
                                          bool with_workspace, Wanted wanted) {
  for (const KernelEntry& k : cuda_kernel_table()) {
    if (k.algorithm != Algorithm::Blocked || k.precision != precision || k.math_mode != mode ||
        k.tile != tile || !runs_here(k, device.compute_capability()) || !wanted(k))
      continue;
    if (!with_workspace && k.workspace != nullptr && k.workspace(p, KernelPlan{k.tile, 0, 1}) > 0)
      continue;
    return &k;
  }
  return nullptr;
}

// The FP64 tensor-core row of `tile` (plan_f64's for tile 0) where DMMA pays and one runs.
const KernelEntry* f64_tensor_core_row(const GemmProblem& p, int tile,
                                       const DeviceProfile& device) {
  if (!device.dmma_pays()) return nullptr;
  const int chosen = plan_f64(p, device, tile);
  if (chosen == 0) return nullptr;
  return first_blocked_row_here(p, Precision::F64, MathMode::Fp32, chosen, device, true,
                                [](const KernelEntry& k) { return !is_f64_cuda_core_row(k); });
}

// Whether the FP64 CUDA-core rows have tile `tile` (256 is the tensor cores' only).
bool has_f64_cuda_core_row(int tile) {
  return std::any_of(cuda_kernel_table().begin(), cuda_kernel_table().end(),
                     [&](const KernelEntry& k) {
                       return k.precision == Precision::F64 && k.algorithm == Algorithm::Blocked &&
                              is_f64_cuda_core_row(k) && k.tile == tile;
                     });
}

// The FP64 CUDA-core row of `tile` (plan_f64_blocked's for tile 0) if one runs here, and
// its split of k (1 without a workspace: the same row, unsplit). nullptr for a tile only
// the tensor cores have (256).
const KernelEntry* f64_cuda_core_row(const GemmProblem& p, int tile, const DeviceProfile& device,
                                     int max_splits, bool with_workspace, int& splits) {
  if (tile != 0 && !has_f64_cuda_core_row(tile)) return nullptr;
  const BlockedPlan plan = plan_f64_blocked(p, device, tile, max_splits);
  splits = with_workspace ? plan.splits : 1;
  return first_blocked_row_here(p, Precision::F64, MathMode::Fp32, plan.tile, device, true,
                                is_f64_cuda_core_row);
}

// BLOCKED in double: the FP64 tensor-core row where DMMA pays (cc 8.0, 9.0 and later),
// else the CUDA-core row of the tile; for tile 0, the ladder's row if neither runs. A
// forced tile no row of which runs here (256 off the tensor cores) is NotSupported.
// `splits`: the CUDA-core row's split of k (1 otherwise; a tensor-core row splits
// through its plan_tail hook).
const KernelEntry* f64_blocked_row(const GemmProblem& p, int tile, const DeviceProfile& device,
                                   int max_splits, bool with_workspace, int& splits) {
  splits = 1;
  if (const KernelEntry* row = f64_tensor_core_row(p, tile, device)) return row;
  if (const KernelEntry* row =
          f64_cuda_core_row(p, tile, device, max_splits, with_workspace, splits))
    return row;
  splits = 1;
  if (tile != 0 && !has_f64_cuda_core_row(tile))
    fail(Status::NotSupported, "tile size ", tile,
         " of BLOCKED in double runs only on the FP64 tensor cores (compute capability 8.0, "
         "9.0 and later, with the shared memory it needs), not on compute capability ",
         device.cc_major, ".", device.cc_minor);
  if (tile != 0)
    fail(Status::NotSupported, "no row of tile size ", tile,
         " of BLOCKED in double runs on compute capability ", device.cc_major, ".",
         device.cc_minor);
  return ladder_row_for_f64();
}

// Whether a Hopper row of `mode` (a wgmma kernel, cc 9.0 only) runs here: then the
// planner gives TF32 its wide tile at every size, and FP32_ACCURATE its wgmma tile
// where k is deep (those kernels split k).
bool hopper_row_runs(MathMode mode, const DeviceProfile& device) {
  for (const KernelEntry& k : cuda_kernel_table())
    if (k.math_mode == mode && k.min_cc >= 90 && runs_here(k, device.compute_capability()))
      return true;
  return false;
}

// The tensor-core row the settings allow for BLOCKED (the planner's tile for tile 0),
// if the device runs it; nullptr sends the call to the strict rows. No split-K over
// every tile: a row with a plan_tail hook may split its last wave's tiles (choose_kernel).
const KernelEntry* tensor_core_row(const GemmProblem& p, const Settings& s, int tile,
                                   const DeviceProfile& device, bool with_workspace) {
  // The tensor-core rows take floats; the math mode does not apply to double.
  if (p.precision != Precision::F32 || s.math_mode == MathMode::Fp32) return nullptr;
  // FP32_ACCURATE, a permission: strict FP32 where it is the faster (small C, deep k),
  // which it is by splitting k over every SM: not where k cannot be split (no workspace,
  // or max_splits 1: the streamed path's chunks).
  if (s.math_mode == MathMode::Fp32Accurate && tile == 0 && with_workspace && s.max_splits != 1 &&
      fp32_accurate_takes_strict(p))
    return nullptr;
  // Both modes: strict FP32 for a C of one small tile over deep k (tiny_c_deep_k), by the
  // same split of k.
  if (tile == 0 && with_workspace && s.max_splits != 1 && tiny_c_deep_k(p)) return nullptr;
  // FP32_ACCURATE, a strided batch where the Hopper rows run: strict FP32's batched rows,
  // faster there than the 3xTF32 mma.sync rows at every size of the suite's batched group
  // (H100: 10,000 x 64^3 0.21 ms against 0.55, 100 x 1024^3 4.46 against 5.75;
  // docs/benchmarks/batched.md, "Batched tensor cores"), but for products large enough
  // for the 3xTF32 Hopper row (tf32x3_batch_pays; with a workspace for its groups).
  if (s.math_mode == MathMode::Fp32Accurate && tile == 0 && p.batch > 1 &&
      hopper_row_runs(MathMode::Fp32Accurate, device) &&
      !(with_workspace && tf32x3_batch_pays(p, device)))
    return nullptr;
  // Small single products where the Hopper rows run (small_product): FP32_ACCURATE in
  // strict FP32, faster there than 3xTF32 and more accurate; TF32 under AUTO, a tiny
  // one (tf32_tiny_pays), in strict TILED 16 (choose_kernel's tiny_pays), faster there
  // than any TF32 row (docs/benchmarks/tensor-cores.md, "Small products on Hopper").
  if (tile == 0 && small_product(p) && hopper_row_runs(s.math_mode, device) &&
      (s.math_mode == MathMode::Fp32Accurate ||
       (s.algorithm == Algorithm::Auto && tf32_tiny_pays(p))))
    return nullptr;
  // TF32: the TF32 rows; FP32_ACCURATE: the 3xTF32 rows (tf32x3_mma_kernel.cu).
  const int chosen =
      s.math_mode == MathMode::Tf32
          ? plan_tf32(p, device, tile, hopper_row_runs(MathMode::Tf32, device))
          : plan_tf32x3(p, device, tile, with_workspace && hopper_row_runs(s.math_mode, device));
  if (chosen == 0) return nullptr;  // no such tile, or the device cannot hold it
  // A strided batch: a row that runs it in one launch (the TF32 Hopper row where the
  // copy engine reads the products as they lie, wgmma_batches_in_one_launch; else
  // mma.sync).
  const bool batch = p.batch > 1;
  return first_blocked_row_here(
      p, Precision::F32, s.math_mode, chosen, device, with_workspace,
      [batch, &p](const KernelEntry& k) { return !batch || runs_batch_in_one_launch(k, p); });
}

// BLOCKED's tile 16: the thin kernel (thin_kernel.cu), which AUTO also runs where
// thin_pays; tile 32: the small kernel (small_kernel.cu), which AUTO also runs for a
// strided batch of small products (small_batch_pays).
constexpr int kThinTile = 16;
constexpr int kSmallTile = 32;

// BLOCKED's row of this tile in `precision` (the thin and small rows: one each).
const KernelEntry* blocked_row_of_tile(Precision precision, int tile) {
  for (const KernelEntry& k : cuda_kernel_table())
    if (k.algorithm == Algorithm::Blocked && k.precision == precision && k.tile == tile) return &k;
  return nullptr;
}

// The problem a batch's kernel is chosen for: the batch, with each pointer given the
// least alignment of any product's (x + b stride is at least as aligned as the lesser of
// x and the stride's bytes), so that the choice holds for every product. The planners of
// the batched rows (KernelEntry::batched) count its products; the others plan one product,
// which then runs product by product (launch_gemm). The pointers are never read.
GemmProblem chosen_for(const GemmProblem& p) {
  if (p.batch <= 1) return p;
  GemmProblem q = p;
  const auto least_aligned = [&](const void* x, int64_t stride) -> const void* {
    if (x == nullptr || stride == 0) return x;
    // (batch - 1) stride bytes fits 64 bits (make_batched_problem), so one stride does.
    const uintptr_t step = uintptr_t(stride) * uintptr_t(element_bytes(p.precision));
    const uintptr_t step_alignment = step & (~step + 1);  // its lowest set bit
    const uintptr_t at = reinterpret_cast<uintptr_t>(x);
    if ((at & (2 * step_alignment - 1)) != 0) return x;  // x is no more aligned than that
    return reinterpret_cast<const void*>(at + step_alignment);
  };
  q.a = least_aligned(q.a, p.stride_a);
  q.b = least_aligned(q.b, p.stride_b);
  q.c = const_cast<void*>(least_aligned(q.c, p.stride_c));
  return q;
}

}  // namespace

KernelChoice choose_kernel(const GemmProblem& call, const Settings& s, const DeviceProfile& device,
                           bool with_workspace) {
  const GemmProblem p = chosen_for(call);
  // AUTO runs BLOCKED with the planner's tile; the tile and coarsening settings are
  // ignored.
  const Algorithm algorithm = s.algorithm == Algorithm::Auto ? Algorithm::Blocked : s.algorithm;
  const int tile = s.algorithm == Algorithm::Auto ? 0 : s.tile_size;
  KernelChoice choice{nullptr, KernelPlan{}};
  // A strided batch of small products, then thin products, in every mode and precision:
  // the tensor-core planners are then not asked at all.
  const bool small_batch =
      algorithm == Algorithm::Blocked && (tile == kSmallTile || (tile == 0 && small_batch_pays(p)));
  const bool thin = !small_batch && algorithm == Algorithm::Blocked &&
                    (tile == kThinTile || (tile == 0 && thin_pays(p)));
  const KernelEntry* tensor_cores = algorithm == Algorithm::Blocked && !thin && !small_batch
                                        ? tensor_core_row(p, s, tile, device, with_workspace)
                                        : nullptr;
  if (small_batch && tile == 0 && small_batch_tile(p) == 16) {
    // Products up to 16 x 16: TILED's 16 x 16 blocks, the batch's in one launch, strict.
    choice.kernel = find_kernel(BackendKind::Cuda, p.precision, Algorithm::Tiled, 16, 0);
  } else if (small_batch) {
    // The small kernel, the batch's products in one launch, strict.
    choice.kernel = blocked_row_of_tile(p.precision, kSmallTile);
  } else if (thin) {
    // Thin products, in every mode and precision: strict, and bound by memory.
    choice.kernel = blocked_row_of_tile(p.precision, kThinTile);
    choice.plan.splits = with_workspace ? plan_thin(p, device, s.max_splits) : 1;
  } else if (algorithm == Algorithm::Blocked && p.precision == Precision::F64) {
    if (tile != 0 && find_kernel(BackendKind::Cuda, p.precision, algorithm, tile, 0) == nullptr)
      no_such_tile(p.precision, algorithm, tile);
    choice.kernel =
        f64_blocked_row(p, tile, device, s.max_splits, with_workspace, choice.plan.splits);
    choice.plan.tile = choice.kernel->tile;  // the FP64 rows' plan_tail reads it
    if (with_workspace && choice.kernel->plan_tail != nullptr)
      choice.kernel->plan_tail(p, device, choice.plan);
  } else if (tensor_cores != nullptr) {
    choice.kernel = tensor_cores;
    if (with_workspace && tensor_cores->plan_tail != nullptr)
      tensor_cores->plan_tail(p, device, choice.plan);
  } else if (s.algorithm == Algorithm::Auto && tiny_pays(p)) {
    // AUTO, a tiny product in strict FP32: TILED's 16 x 16 blocks, more of them than
    // BLOCKED's (BLOCKED asked for runs BLOCKED).
    choice.kernel = find_kernel(BackendKind::Cuda, p.precision, Algorithm::Tiled, 16, 0);
  } else if (algorithm == Algorithm::Blocked) {
    if (tile != 0 && find_kernel(BackendKind::Cuda, p.precision, algorithm, tile, 0) == nullptr)
      no_such_tile(p.precision, algorithm, tile);
    const BlockedPlan plan = plan_blocked(p, device, tile, s.max_splits);
    choice.kernel = find_kernel(BackendKind::Cuda, p.precision, algorithm, plan.tile, 0);
    choice.plan.splits = with_workspace ? plan.splits : 1;  // partial sums need one
  } else {
    const int coarsening = algorithm == Algorithm::Coarsened ? s.coarsening : 0;
    choice.kernel = find_kernel(BackendKind::Cuda, p.precision, algorithm, tile, coarsening);
    if (choice.kernel == nullptr) no_such_tile(p.precision, algorithm, tile);
  }
  require(choice.kernel != nullptr, Status::Internal, "planner chose a kernel not in the registry");
  require(runs_on(*choice.kernel, device.compute_capability()), Status::NotSupported, "kernel ",
          choice.kernel->name, " does not run on compute capability ", device.cc_major, ".",
          device.cc_minor);
  choice.plan.tile = choice.kernel->tile;
  choice.plan.coarsening = choice.kernel->coarsening;
  // A batched row runs a batch in one launch, its products side by side (blockIdx.z):
  // unsplit, as they share no workspace (its planner counts the batch's tiles). Unless the
  // batch leaves SMs idle and a product alone splits k over them (by_product_pays): then
  // product by product, each as the single call (sharing the workspace one after another).
  if (call.batch > 1 && runs_batch_in_one_launch(*choice.kernel, p)) {
    if (with_workspace && batch_leaves_sms_idle(p, device)) {
      GemmProblem one = p;
      one.batch = 1;
      one.stride_a = one.stride_b = one.stride_c = 0;
      KernelChoice single = choose_kernel(one, s, device, with_workspace);
      if (by_product_pays(one, single.plan.splits, single.plan.tail_tiles)) {
        single.by_product = true;
        return single;
      }
    }
    choice = without_splits(choice);
  }
  return choice;
}

bool KernelChoiceCache::Key::operator==(const Key& o) const {
  return device == o.device && m == o.m && n == o.n && k == o.k && lda == o.lda && ldb == o.ldb &&
         ldc == o.ldc && batch == o.batch && stride_a == o.stride_a && stride_b == o.stride_b &&
         stride_c == o.stride_c && a_low == o.a_low && b_low == o.b_low && c_low == o.c_low &&
         precision == o.precision && trans_a == o.trans_a && trans_b == o.trans_b &&
         with_workspace == o.with_workspace && algorithm == o.algorithm &&
         tile_size == o.tile_size && coarsening == o.coarsening && max_splits == o.max_splits &&
         math_mode == o.math_mode;
}

KernelChoice KernelChoiceCache::get(const GemmProblem& p, const Settings& s,
                                    const DeviceProfile& device, bool with_workspace) {
  const auto low = [](const void* x) { return reinterpret_cast<uintptr_t>(x) & 0xff; };
  const Key key{&device,     p.m,         p.n,          p.k,          p.lda,      p.ldb,
                p.ldc,       p.batch,     p.stride_a,   p.stride_b,   p.stride_c, low(p.a),
                low(p.b),    low(p.c),    p.precision,  p.trans_a,    p.trans_b,  with_workspace,
                s.algorithm, s.tile_size, s.coarsening, s.max_splits, s.math_mode};
  for (int i = 0; i < size_; ++i) {
    if (!(keys_[i] == key)) continue;
    const KernelChoice hit = choices_[i];
    for (int j = i; j > 0; --j) {  // most recent first
      keys_[j] = keys_[j - 1];
      choices_[j] = choices_[j - 1];
    }
    keys_[0] = key;
    choices_[0] = hit;
    ++hits_;
    return hit;
  }
  const KernelChoice fresh = choose_kernel(p, s, device, with_workspace);  // may throw
  size_ = std::min(size_ + 1, kEntries);
  for (int j = size_ - 1; j > 0; --j) {
    keys_[j] = keys_[j - 1];
    choices_[j] = choices_[j - 1];
  }
  keys_[0] = key;
  choices_[0] = fresh;
  return fresh;
}

KernelChoice without_splits(KernelChoice choice) {
  choice.plan.splits = 1;
  choice.plan.tail_tiles = 0;
  return choice;
}

size_t workspace_bytes(const KernelChoice& c, const GemmProblem& p) {
  if (is_empty(p) || is_scale_only(p) || c.kernel->workspace == nullptr) return 0;
  if (p.batch <= 1) return c.kernel->workspace(p, c.plan);
  // A batch's products share it, one after another, and their alignments differ: the
  // most any of them needs. A less aligned product does not always need more (the TF32
  // Hopper row packs A where A is unaligned, else B), so every combination of aligned
  // and least aligned A, B and C is asked (the pointers are never read).
  const GemmProblem least = chosen_for(p);
  // The first product's pointers at 256 bytes: as aligned as any product can be.
  const auto aligned = [](const void* x) {
    return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(x) & ~uintptr_t(255));
  };
  size_t most = 0;
  for (int combination = 0; combination < 8; ++combination) {
    GemmProblem q = least;
    if (combination & 1) q.a = aligned(p.a);
    if (combination & 2) q.b = aligned(p.b);
    if (combination & 4) q.c = aligned(p.c);
    most = std::max(most, c.kernel->workspace(q, c.plan));
  }
  return most;
}

void launch_gemm(const KernelChoice& c, const GemmProblem& p, void* workspace,
                 cudaStream_t stream) {
  // A batch: in one launch on a batched row, else its products one after another on the
  // stream (so they can share the workspace), each with the batch's choice (chosen_for).
  if (p.batch > 1 && runs_batch_in_one_launch(*c.kernel, p) && !c.by_product && !is_scale_only(p)) {
    c.kernel->launch(p, c.plan, workspace, stream);
    return;
  }
  for (int64_t b = 0; b < p.batch; ++b) {
    const GemmProblem q = p.batch == 1 ? p : product_of(p, b);
    if (is_scale_only(q)) {
      launch_scale(q, stream);
    } else {
      c.kernel->launch(q, c.plan, workspace, stream);
    }
  }
}

const char* kernel_name(const KernelChoice& c, const GemmProblem& p) {
  if (is_empty(p)) return "none";
  if (is_scale_only(p)) return "scale";
  return c.kernel->name;
}

MathMode math_mode_of(const KernelChoice& c, const GemmProblem& p) {
  return is_empty(p) || is_scale_only(p) ? MathMode::Fp32 : c.kernel->math_mode;
}

}  // namespace tiledmm
