// The planner's choices as text, compared byte for byte with tests/data/planner_golden.txt
// by the ctest test planner_golden (tests/planner_golden.cmake). Host C++ only: it links
// the library's own objects (tiledmm_core) and runs in the CPU-only CI.
//
// What it prints, one line each, with integers only (no modelled times, so that a
// rounding difference cannot change a line unless it changes a choice):
//  - "auto": for the H100, A100 and 80-SM profiles of tests/plan_fixtures.hpp, every
//    math mode, both layouts, all four transposes and 80 shapes (thin, small, mid,
//    deep k, odd, large, and those of the open issues), what AUTO runs on the device:
//    the kernel, its tile and its split of k (BLOCKED's split-K, or the Hopper rows'
//    split of the last wave);
//  - "blocked": BLOCKED with each tile asked for, and AUTO with max_splits 1 and 4;
//  - "host": the streamed host path's cut (plan_stream) for host shapes, transposes,
//    beta and budgets, whether its model beats the direct path's, and the strict
//    chunk kernel's tile.
//
// The choice for a device call is made by choose_kernel (lib/cuda/launch/dispatch.cu), CUDA
// code that is not built here. This program makes it as dispatch does, from the
// host parts it calls: thin_pays and plan_thin, fp32_accurate_takes_strict, tiny_c_deep_k,
// small_product, tf32_tiny_pays, tiny_pays,
// plan_blocked, plan_tf32, plan_tf32x3 and, for the Hopper rows' last-wave split, plan_wgmma_tail
// (lib/plan/planner.cpp: the rule the rows' plan_tail hooks call, the TF32 kernel's packing and
// transposition included), and the shape tables (lib/plan/blocked_shapes.hpp, tf32_shapes.hpp). It
// takes the device as one running a build with sm_90a code (the Hopper rows run on the H100
// profile; "no sm_90a:" names what a build without it runs instead), operands on 16-byte
// boundaries, and a workspace. When it was written, a one-off nvcc build of dispatch.cu,
// kernel_table.cu and the Hopper kernels' hooks agreed with choose() below on every device shape
// here, with and without the sm_90a rows. Not covered: a change to dispatch.cu's order of rules, or
// to the registry's rows (a CUDA build checks only that each name printed is a row of its table);
// and the direct-or-streamed rule's memory test (direct_bytes, cuda_backend.cu).
//
// To regenerate it on purpose (a planner change), from the repository root:
//   cmake --build build --target planner_golden
//   build/tests/planner_golden > tests/data/planner_golden.txt
// A difference is a change in what the library runs: the commit that makes it says
// which lines changed and why.
#include <cstdint>
#include <cstdio>
#include <string>

#include "core/device_profile.hpp"
#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "core/settings.hpp"
#include "plan/blocked_shapes.hpp"
#include "plan/f64_shapes.hpp"
#include "plan/planner.hpp"
#include "plan/stream_plan.hpp"
#include "plan/tf32_shapes.hpp"
#include "plan_fixtures.hpp"
#include "registry/kernel_registry.hpp"

namespace tiledmm {
namespace {

// ---- Device profiles: those of the planner's tests (tests/plan_fixtures.hpp) ------

using tmm_test::a100;
using tmm_test::consumer80;
using tmm_test::h100;
using tmm_test::Profile;

// ---- The rows dispatch picks among -----------------------------------------------

// The tensor-core rows (kernel_table.cu) run from compute capability 8.0.
constexpr int kTensorCoreMinCc = 80;

// A Hopper row (cc 9.0, sm_90a code): its name and its geometry (plan/tf32_shapes.hpp,
// which the wgmma kernels take their tile, k-step and partial sums from).
struct HopperRow {
  const char* name;
  const WgmmaShapeInfo& shape;
};
const HopperRow kHopperTf32{"tf32_wgmma_128x256", kTf32Wgmma128x256};
const HopperRow kHopperTf32x3{"tf32x3_wgmma_128x128", kTf32x3Wgmma128x128};

const BlockedShapeInfo* blocked_shape(int tile) {
  for (const BlockedShapeInfo& s : kBlockedShapes)
    if (s.tile == tile) return &s;
  return nullptr;
}

template <size_t N>
const MmaShapeInfo* tc_shape(const MmaShapeInfo (&shapes)[N], int tile) {
  for (const MmaShapeInfo& s : shapes)
    if (s.tile == tile) return &s;
  return nullptr;
}

// What a call runs: the row's name, its split of k and (Hopper rows) the tiles split.
struct Choice {
  std::string kernel;
  int splits = 1;
  int64_t tail_tiles = 0;
  std::string fallback;     // cc 9.0: the row a build without sm_90a code runs instead
  bool by_product = false;  // a strided batch run product by product (batch_leaves_sms_idle)
};

std::string blocked_name(int tile) {
  const BlockedShapeInfo* s = blocked_shape(tile);
  if (s == nullptr) return "no_blocked_row_" + std::to_string(tile);
  return "blocked_" + std::to_string(s->rows) + "x" + std::to_string(s->cols);
}

Choice strict(const GemmProblem& p, const DeviceProfile& d, int tile, int max_splits) {
  Choice c;
  try {
    const BlockedPlan plan = plan_blocked(p, d, tile, max_splits);
    c.kernel = blocked_name(plan.tile);
    c.splits = plan.splits;
  } catch (const Error&) {
    c.kernel = "not_supported";
  }
  return c;
}

// The last-wave split of a Hopper row's plan_tail hook: the planner's own rule
// (plan_wgmma_tail, which the hooks in lib/cuda/kernels/sm90/ call).
void hopper_tail(const HopperRow& row, const GemmProblem& p, const DeviceProfile& d, Choice& c) {
  const TailSplitPlan tail = plan_wgmma_tail(p, row.shape, d);
  c.splits = tail.splits;
  c.tail_tiles = tail.tail_tiles;
}

// The thin row where dispatch takes it first (BLOCKED tile 16, or tile 0 where
// thin_pays), in every mode, with plan_thin's split (1 without a workspace: max_splits 1).
bool thin_choice(const GemmProblem& p, const DeviceProfile& d, int tile, int max_splits,
                 Choice& c) {
  if (tile != 16 && !(tile == 0 && thin_pays(p))) return false;
  c.kernel = "thin";
  c.splits = plan_thin(p, d, max_splits);
  return true;
}

// choose_kernel (dispatch.cu) for BLOCKED (AUTO: tile 0), with a workspace; on cc 9.0
// as a build with the sm_90a code (hopper_code) chooses, or without it.
Choice choose_on(const GemmProblem& p, const DeviceProfile& d, MathMode mode, int tile,
                 int max_splits, bool hopper_code) {
  if (Choice thin; thin_choice(p, d, tile, max_splits, thin)) return thin;
  const int cc = d.compute_capability();
  const bool hopper_runs = cc == 90 && hopper_code;
  // Small single products on Hopper (tile 0 here is AUTO's): FP32_ACCURATE strict, TF32
  // strict TILED 16 where tiny.
  const bool small_strict =
      tile == 0 && hopper_runs && small_product(p) &&
      (mode == MathMode::Fp32Accurate || (mode == MathMode::Tf32 && tf32_tiny_pays(p)));
  const bool strict_faster = (mode == MathMode::Fp32Accurate && tile == 0 && max_splits != 1 &&
                              fp32_accurate_takes_strict(p)) ||
                             (tile == 0 && max_splits != 1 && tiny_c_deep_k(p)) || small_strict;
  if (mode != MathMode::Fp32 && cc >= kTensorCoreMinCc && !strict_faster) {
    const bool tf32 = mode == MathMode::Tf32;
    const HopperRow& hopper = tf32 ? kHopperTf32 : kHopperTf32x3;
    const int chosen =
        tf32 ? plan_tf32(p, d, tile, hopper_runs) : plan_tf32x3(p, d, tile, hopper_runs);
    const MmaShapeInfo* s = tf32 ? tc_shape(kTf32Shapes, chosen) : tc_shape(kTf32x3Shapes, chosen);
    if (chosen != 0 && s != nullptr) {
      const std::string mma = std::string(tf32 ? "tf32" : "tf32x3") + "_mma_" +
                              std::to_string(s->rows) + "x" + std::to_string(s->cols);
      Choice c;
      if (hopper_runs && chosen == hopper.shape.tile) {
        c.kernel = hopper.name;
        hopper_tail(hopper, p, d, c);
      } else {
        c.kernel = mma;
      }
      return c;
    }
  }
  if (tile == 0 && tiny_pays(p)) {
    Choice c;
    c.kernel = "tiled_16";
    return c;
  }
  return strict(p, d, tile, max_splits);
}

// choose_on with the sm_90a code, and on cc 9.0 the kernel a build without it runs
// instead where that differs (the Hopper rows and the rules that hold only where they
// run: small products, the wide TF32 tile everywhere).
Choice choose(const GemmProblem& p, const DeviceProfile& d, MathMode mode, int tile,
              int max_splits) {
  Choice c = choose_on(p, d, mode, tile, max_splits, true);
  if (d.compute_capability() == 90) {
    const Choice plain = choose_on(p, d, mode, tile, max_splits, false);
    if (plain.kernel != c.kernel) c.fallback = plain.kernel;
  }
  return c;
}

// ---- Problems -----------------------------------------------------------------------

alignas(16) float g_operand[4];  // a stand-in: make_problem checks, never reads

struct Caller {
  Layout layout;
  bool trans_a, trans_b;
  int64_t m, n, k, lda, ldb, ldc;
};

// The caller's tight leading dimensions, plus `pad` each.
Caller caller(Layout layout, bool ta, bool tb, int64_t m, int64_t n, int64_t k, int64_t pad) {
  const bool row = layout == Layout::RowMajor;
  // Columns of each matrix as stored, in the caller's layout.
  const int64_t a_cols = row ? (ta ? m : k) : (ta ? k : m);
  const int64_t b_cols = row ? (tb ? k : n) : (tb ? n : k);
  const int64_t c_cols = row ? n : m;
  return {layout, ta, tb, m, n, k, a_cols + pad, b_cols + pad, c_cols + pad};
}

GemmProblem problem(const Caller& c, float beta = 0.0f) {
  return make_problem(c.layout, c.trans_a, c.trans_b, c.m, c.n, c.k, 1.0f, g_operand, c.lda,
                      g_operand, c.ldb, beta, g_operand, c.ldc);
}

std::string describe(const Caller& c) {
  char text[160];
  std::snprintf(text, sizeof text, "%s %c%c %lldx%lldx%lld ld=%lld,%lld,%lld",
                c.layout == Layout::RowMajor ? "row" : "col", c.trans_a ? 'T' : 'N',
                c.trans_b ? 'T' : 'N', (long long)c.m, (long long)c.n, (long long)c.k,
                (long long)c.lda, (long long)c.ldb, (long long)c.ldc);
  return text;
}

const char* mode_name(MathMode m) {
  return m == MathMode::Fp32 ? "fp32" : m == MathMode::Tf32 ? "tf32" : "fp32_accurate";
}

std::string describe(const Choice& c) {
  std::string s = c.kernel + " splits=" + std::to_string(c.splits);
  if (c.tail_tiles != 0) s += " tail_tiles=" + std::to_string(c.tail_tiles);
  if (!c.fallback.empty()) s += " (no sm_90a: " + c.fallback + ")";
  if (c.by_product) s += " by_product";
  return s;
}

struct Shape {
  int64_t m, n, k;
};

constexpr int64_t kMi = int64_t(1) << 20;

// Thin (m or n 1..16), small, mid, deep k, odd, large; those of the open issues marked.
const Shape kDeviceShapes[] = {
    // thin
    {1, 1, 1},
    {1, 4096, 4096},
    {4096, 1, 4096},
    {2, 1024, 1024},
    {3, 3000, 500},
    {4, 512, 8192},
    {7, 9000, 300},
    {8, 4096, 4096},
    {15, 2048, 2048},
    {16, 16, 16},
    {16, 100000, 64},
    {1000, 5, 1000},
    {4096, 8, 4096},
    {8192, 16, 1024},
    {1, 1, kMi},
    {16, 16, kMi},
    {3, 4096, kMi / 4},
    {12, 12, 12},
    // small
    {32, 32, 32},
    {64, 64, 64},
    {100, 100, 100},
    {128, 128, 128},
    {200, 100, 16384},
    {96, 96, 32768},
    {256, 256, 256},
    {64, 64, 8 * kMi},
    {33, 65, 129},
    {127, 255, 511},
    {256, 64, 4096},
    {64, 256, 65536},
    // mid
    {512, 512, 512},
    {640, 480, 320},
    {1000, 1000, 1000},
    {1024, 1024, 1024},
    {1536, 1536, 1536},
    {2048, 2048, 2048},
    {1000, 1000, 32768},
    {2048, 512, 512},
    {768, 3072, 768},
    {3072, 768, 3072},
    {1408, 1408, 4096},
    {2304, 1152, 2048},
    // deep k
    {64, 64, kMi},
    {128, 128, kMi},
    {256, 256, kMi / 2},
    {512, 512, kMi / 4},
    {1024, 1024, kMi / 8},
    {2048, 2048, kMi},
    {8192, 8192, kMi},
    {32, 4096, kMi / 2},
    // odd
    {31, 33, 8191},
    {300, 5000, 5000},
    {5000, 300, 5000},
    {3000, 5000, 4000},
    {11111, 2222, 3333},
    {777, 999, 1111},
    {4097, 4095, 4099},
    {1023, 1025, 10001},
    {12345, 678, 9},
    {999, 17, 65537},
    {17, 999, 65537},
    {1919, 1081, 1},
    // large
    {4096, 4096, 4096},
    {8192, 8192, 8192},
    {16384, 16384, 16384},
    {20000, 20000, 1000},
    {32768, 32768, 256},
    {65536, 1024, 1024},
    {1024, 65536, 1024},
    {100000, 100000, 16},
    {8192, 8192, 64},
    {16896, 16896, 2048},
    {6144, 12288, 4096},
    {12288, 6144, 4096},
    {4224, 4224, 16384},
    {2112, 4224, 8192},
    {16384, 1, 16384},
    {1, 16384, 16384},
    {50000, 50000, 50000},
    {3, 3, 3},
};

// The shapes the open issues name: also run with leading dimensions one past tight.
const Shape kIssueShapes[] = {
    {1, 4096, 4096},     {4096, 1, 4096},       {31, 33, 8191},      {640, 480, 320},
    {100, 100, 100},     {300, 5000, 5000},     {5000, 300, 5000},   {3000, 5000, 4000},
    {11111, 2222, 3333}, {1536, 1536, 1536},    {1000, 1000, 32768}, {200, 100, 16384},
    {96, 96, 32768},     {64, 64, 8 * kMi},     {8192, 8192, kMi},   {4096, 4096, 4096},
    {8192, 8192, 8192},  {16384, 16384, 16384},
};

constexpr MathMode kModes[] = {MathMode::Fp32, MathMode::Tf32, MathMode::Fp32Accurate};

// Every caller form of a shape: both layouts, all four transposes.
template <typename F>
void for_each_form(const Shape& s, int64_t pad, F&& f) {
  for (Layout layout : {Layout::RowMajor, Layout::ColMajor})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) f(caller(layout, ta, tb, s.m, s.n, s.k, pad));
}

// Each name printed is a row of the CUDA table, where this build has one (the Hopper
// rows only where it has sm_90a code).
int g_unknown_names = 0;
void check_name(const std::string& name) {
  const KernelTable table = cuda_kernel_table();
  if (table.count == 0 || name == "not_supported") return;
  bool hopper_rows = false;
  for (const KernelEntry& k : table) {
    if (name == k.name) return;
    hopper_rows = hopper_rows || k.min_cc >= 90;
  }
  if (!hopper_rows && name.find("wgmma") != std::string::npos) return;
  std::fprintf(stderr, "planner_golden: %s is not a row of the CUDA kernel table\n", name.c_str());
  ++g_unknown_names;
}

void print_choice(const char* section, const char* profile, const char* setting,
                  const std::string& form, const Choice& c) {
  check_name(c.kernel);
  if (!c.fallback.empty()) check_name(c.fallback);
  std::printf("%s %s %s %s -> %s\n", section, profile, setting, form.c_str(), describe(c).c_str());
}

void device_section(const Profile& prof) {
  for (MathMode mode : kModes) {
    for (const Shape& s : kDeviceShapes)
      for_each_form(s, 0, [&](const Caller& c) {
        print_choice("auto", prof.name, mode_name(mode), describe(c),
                     choose(problem(c), prof.device, mode, 0, 0));
      });
    for (const Shape& s : kIssueShapes)
      for_each_form(s, 1, [&](const Caller& c) {
        print_choice("auto", prof.name, mode_name(mode), describe(c),
                     choose(problem(c), prof.device, mode, 0, 0));
      });
  }
}

// BLOCKED with each tile asked for (a tensor-core tile where the mode allows one, else
// the strict row), and AUTO with the split-K cap at 1 (the streamed path's chunks) and 4.
void blocked_section(const Profile& prof) {
  for (MathMode mode : kModes)
    for (const Shape& s : kDeviceShapes) {
      const Caller c = caller(Layout::RowMajor, false, false, s.m, s.n, s.k, 0);
      const GemmProblem p = problem(c);
      for (int tile : {16, 64, 128, 256}) {
        const std::string setting = std::string(mode_name(mode)) + " tile=" + std::to_string(tile);
        print_choice("blocked", prof.name, setting.c_str(), describe(c),
                     choose(p, prof.device, mode, tile, 0));
      }
      for (int max_splits : {1, 4}) {
        const std::string setting =
            std::string(mode_name(mode)) + " max_splits=" + std::to_string(max_splits);
        print_choice("blocked", prof.name, setting.c_str(), describe(c),
                     choose(p, prof.device, mode, 0, max_splits));
      }
    }
}

// ---- Strided batches ------------------------------------------------------------------

// AUTO on a strided batch, in strict FP32 and in FP64 (choose_kernel): small products on
// TILED 16 or the small kernel, thin ones on the thin row (product by product, its own
// split), else the batched rows with the planner counting every product (never split):
// BLOCKED in float, in double the FP64 tensor cores' tile where DMMA pays, else the FP64
// CUDA-core plan.
struct Batch {
  int64_t batch, m, n, k;
};
const Batch kBatches[] = {
    {100000, 16, 16, 16},  {50000, 32, 32, 32},     {10000, 64, 64, 64}, {4000, 128, 128, 128},
    {1000, 256, 256, 256}, {100, 1024, 1024, 1024}, {4, 64, 64, kMi},    {3, 31, 33, 8191},
    {2, 4096, 4096, 4096}, {1000, 17, 3, 100},      {7, 1, 4096, 4096},  {65536, 8, 24, 128},
    {4, 100, 100, 100},
};

// The batched rows' choice for p (a batch: unsplit; one product: with its split).
Choice batched_row_choice(const GemmProblem& p, const DeviceProfile& d) {
  Choice c;
  if (p.precision == Precision::F32) return strict(p, d, 0, 0);
  if (d.dmma_pays()) {
    const int tile = plan_f64(p, d, 0);
    const MmaShapeInfo& shape = tile == 256   ? kF64Mma128x128
                                : tile == 128 ? kF64Mma128x64
                                              : kF64Mma64x64;
    c.kernel = "f64_mma_" + std::to_string(shape.rows) + "x" + std::to_string(shape.cols);
    if (p.batch == 1) {
      const TailSplitPlan tail = plan_f64_tail(p, shape, d);
      c.splits = tail.splits;
      c.tail_tiles = tail.tail_tiles;
    }
    return c;
  }
  const BlockedPlan plan = plan_f64_blocked(p, d, 0);
  c.kernel = plan.tile == 128 ? "f64_blocked_128x128" : "f64_blocked_64x64";
  c.splits = plan.splits;
  return c;
}

Choice batched_choice(const GemmProblem& p, const DeviceProfile& d) {
  const std::string f64 = p.precision == Precision::F64 ? "f64_" : "";
  Choice c;
  if (small_batch_pays(p)) {
    c.kernel = f64 + (small_batch_tile(p) == 16 ? "tiled_16" : "small");
    return c;
  }
  if (thin_choice(p, d, 0, 0, c)) {
    c.kernel = f64 + c.kernel;
    return c;
  }
  if (batch_leaves_sms_idle(p, d)) {
    GemmProblem one = p;
    one.batch = 1;
    Choice single = batched_row_choice(one, d);
    if (by_product_pays(one, single.splits, single.tail_tiles)) {
      single.by_product = true;
      return single;
    }
  }
  return batched_row_choice(p, d);
}

void batched_section(const Profile& prof) {
  for (Precision precision : {Precision::F32, Precision::F64})
    for (const Batch& b : kBatches) {
      const Caller c = caller(Layout::RowMajor, false, false, b.m, b.n, b.k, 0);
      GemmProblem p = problem(c);
      p.precision = precision;
      p.batch = b.batch;
      const std::string form = "batch=" + std::to_string(b.batch) + " " + describe(c);
      print_choice("batched", prof.name, precision == Precision::F64 ? "fp64" : "fp32", form,
                   batched_choice(p, prof.device));
    }
}

// ---- The streamed host path ---------------------------------------------------------

const Shape kHostShapes[] = {
    {1, 4096, 4096},       {4096, 1, 4096},       {16, 16, 16},       {100, 100, 100},
    {640, 480, 320},       {1000, 1000, 32768},   {64, 64, 8 * kMi},  {96, 96, 32768},
    {3000, 5000, 4000},    {11111, 2222, 3333},   {4096, 4096, 4096}, {8192, 8192, 8192},
    {16384, 16384, 16384}, {30000, 30000, 30000}, {8192, 8192, kMi},  {65536, 65536, 64},
    {1, 1, 64 * kMi},      {200000, 16, 16},      {31, 33, 8191},     {50000, 1000, 50000},
};

struct Budget {
  const char* name;
  int64_t device, staging;
};

constexpr int64_t kMiB = int64_t(1) << 20, kGiB = int64_t(1) << 30;
const Budget kBudgets[] = {
    {"dev=4KiB,stage=512MiB", 4 << 10, 512 * kMiB},  // not even the least cut: OutOfMemory
    {"dev=64KiB,stage=64KiB", 64 << 10, 64 << 10},
    {"dev=1MiB,stage=1MiB", kMinStreamBudget, kMinStreamBudget},
    {"dev=64MiB,stage=16MiB", 64 * kMiB, 16 * kMiB},
    {"dev=1GiB,stage=512MiB", kGiB, 512 * kMiB},
    {"dev=16GiB,stage=512MiB", 16 * kGiB, 512 * kMiB},
    {"dev=72GiB,stage=4GiB", 72 * kGiB, 4 * kGiB},
};

void host_section(const Profile& prof) {
  const double rate = 0.74 * prof.device.fp32_peak();  // cuda_backend.cu's kernel_rate()
  struct Host {
    int threads;
    float beta;
  };
  for (const Budget& budget : kBudgets)
    for (const Host& host : {Host{12, 0.0f}, Host{12, 1.0f}, Host{1, 0.0f}})
      for (const Shape& s : kHostShapes)
        for (bool ta : {false, true})
          for (bool tb : {false, true}) {
            const Caller c = caller(Layout::RowMajor, ta, tb, s.m, s.n, s.k, 0);
            const GemmProblem p = problem(c, host.beta);
            std::string plan;
            try {
              const StreamPlan sp =
                  plan_stream(p, budget.device, budget.staging, rate, host.threads);
              const HostRates rates;
              const bool faster = streamed_seconds(p, sp, rate, host.threads, rates) <
                                  direct_seconds(p, rate, rates);
              GemmProblem chunk = p;
              chunk.m = sp.tile_m;
              chunk.n = sp.tile_n;
              chunk.k = sp.chunk_k;
              Choice kernel;
              if (!thin_choice(chunk, prof.device, 0, 1, kernel)) {
                if (tiny_pays(chunk)) {
                  kernel.kernel = "tiled_16";  // AUTO's chunks as its calls (dispatch)
                } else {
                  kernel = strict(chunk, prof.device, 0, 1);
                }
              }
              check_name(kernel.kernel);
              char text[320];
              std::snprintf(text, sizeof text,
                            "tile=%lldx%lld chunk_k=%lld group=%lld b_resident=%d "
                            "streamed_faster=%d chunk_kernel=%s",
                            (long long)sp.tile_m, (long long)sp.tile_n, (long long)sp.chunk_k,
                            (long long)sp.group, sp.b_resident ? 1 : 0, faster ? 1 : 0,
                            kernel.kernel.c_str());
              plan = text;
            } catch (const Error& e) {
              plan = e.status() == Status::OutOfMemory ? "out_of_memory" : "error";
            }
            std::printf("host %s %s threads=%d beta=%g %s -> %s\n", prof.name, budget.name,
                        host.threads, double(host.beta), describe(c).c_str(), plan.c_str());
          }
}

}  // namespace
}  // namespace tiledmm

int main() {
  using namespace tiledmm;
  const Profile device_profiles[] = {{"H100", h100()}, {"A100", a100()}, {"80-SM", consumer80()}};
  std::printf(
      "# tests/data/planner_golden.txt: the planner's choices, written by tests/planner_golden\n"
      "# (tests/planner_golden.cpp says what each line holds) and compared byte for byte by\n"
      "# the ctest test planner_golden. A change here is a change in what the library runs:\n"
      "# regenerate it only on purpose (build/tests/planner_golden > "
      "tests/data/planner_golden.txt)\n# and say in the commit which choices changed and why.\n");
  for (const Profile& prof : device_profiles) device_section(prof);
  for (const Profile& prof : device_profiles) blocked_section(prof);
  for (const Profile& prof : device_profiles) batched_section(prof);
  for (const Profile& prof : {device_profiles[0], device_profiles[1]}) host_section(prof);
  if (g_unknown_names != 0) return 1;
  return std::fflush(stdout) == 0 ? 0 : 1;
}
