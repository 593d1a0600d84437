// The double-precision entry points (tmm_dgemm, tmm_dgemm_io, tmm_dgemm_device): the
// contract of their single-precision twins, argument by argument and word for word,
// results within the FP64 bound, the report's and the registry's precision, and the
// CUDA backend's kernels in double (DgemmCuda, run on a GPU).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "gemm_reference.hpp"
#include "gemm_reference_f64.hpp"

namespace {

// One call's arguments, for both precisions: the tests break them one at a time.
struct Args {
  tmm_layout layout = TMM_ROW_MAJOR;
  tmm_transpose ta = TMM_NO_TRANS, tb = TMM_NO_TRANS;
  int64_t m = 4, n = 3, k = 5, lda = 5, ldb = 3, ldc = 3;
  bool null_a = false, null_b = false, null_c = false;
  int c_offset = 0;  // C this many elements into A's array (aliasing)
};

class Dgemm : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(tmm_create_with_backend(&h_, TMM_BACKEND_CPU, 0), TMM_SUCCESS);
  }
  void TearDown() override { tmm_destroy(h_); }

  template <class T>
  tmm_status call(const Args& x) {
    static std::vector<T> a(64, T(1)), b(64, T(2)), c(64, T(3));
    T* cp = x.c_offset ? a.data() + x.c_offset : c.data();
    if constexpr (std::is_same_v<T, double>) {
      return tmm_dgemm(h_, x.layout, x.ta, x.tb, x.m, x.n, x.k, 1.0, x.null_a ? nullptr : a.data(),
                       x.lda, x.null_b ? nullptr : b.data(), x.ldb, 0.5, x.null_c ? nullptr : cp,
                       x.ldc);
    } else {
      return tmm_sgemm(h_, x.layout, x.ta, x.tb, x.m, x.n, x.k, 1.0f, x.null_a ? nullptr : a.data(),
                       x.lda, x.null_b ? nullptr : b.data(), x.ldb, 0.5f, x.null_c ? nullptr : cp,
                       x.ldc);
    }
  }
  std::string message() const { return tmm_get_error_message(h_); }

  tmm_handle h_ = nullptr;
};

// Every argument error of tmm_sgemm is tmm_dgemm's, with the same status and words.
TEST_F(Dgemm, ArgumentErrorsAreSgemmsWordForWord) {
  std::vector<Args> bad;
  Args x;
  x.m = -1, bad.push_back(x), x = Args{};
  x.k = -2, bad.push_back(x), x = Args{};
  x.lda = 4, bad.push_back(x), x = Args{};
  x.ldb = 2, bad.push_back(x), x = Args{};
  x.ldc = 0, bad.push_back(x), x = Args{};
  x.layout = tmm_layout(7), bad.push_back(x), x = Args{};
  x.ta = tmm_transpose(9), bad.push_back(x), x = Args{};
  x.null_a = true, bad.push_back(x), x = Args{};
  x.null_b = true, bad.push_back(x), x = Args{};
  x.null_c = true, bad.push_back(x), x = Args{};
  x.c_offset = 2, bad.push_back(x), x = Args{};  // C shares elements with A
  // Byte counts past what int64 holds: the check counts 8-byte elements for double.
  x.m = int64_t(1) << 60, x.lda = 5, x.ldc = 3, bad.push_back(x), x = Args{};
  for (size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const tmm_status s = call<float>(bad[i]);
    const std::string words = message();
    EXPECT_NE(s, TMM_SUCCESS);
    EXPECT_EQ(call<double>(bad[i]), s);
    EXPECT_EQ(message(), words);
  }
}

// 2^59 rows of one double are 2^62 bytes: representable, and a valid size; 2^60 rows
// of floats are too, of doubles they are 2^63 bytes, past int64.
TEST_F(Dgemm, ByteCountsCountEightByteElements) {
  Args x;
  x.m = int64_t(1) << 60, x.n = 1, x.k = 1, x.lda = 1, x.ldb = 1, x.ldc = 1;
  EXPECT_EQ(call<double>(x), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("overflow"), std::string::npos) << message();
}

TEST_F(Dgemm, BlasSemanticsAsInSgemm) {
  for (tmm_algorithm algo : {TMM_ALGO_AUTO, TMM_ALGO_NAIVE, TMM_ALGO_BLOCKED}) {
    ASSERT_EQ(tmm_set_algorithm(h_, algo), TMM_SUCCESS);
    // beta = 0 never reads C: NaN there does not leak.
    tmm_test::DgemmCase g;
    g.m = 33, g.n = 17, g.k = 65, g.alpha = -1.25, g.beta = 0.0, g.pad = 2;
    tmm_test::fill_case(g, tmm_test::fresh_seed());
    SCOPED_TRACE(tmm_test::describe(g) + " algorithm " + std::to_string(int(algo)));
    ASSERT_TRUE(std::isnan(g.c[0]));
    ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << message();
    EXPECT_TRUE(tmm_test::check_case(g));
    // k = 0: C = beta C, A and B not read (NULL).
    std::vector<double> c(12, 2.0);
    ASSERT_EQ(tmm_dgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 3, 0, 1.0, nullptr, 1,
                        nullptr, 3, -0.5, c.data(), 3),
              TMM_SUCCESS)
        << message();
    EXPECT_EQ(c, std::vector<double>(12, -1.0));
    // alpha = 0: the same, with a k.
    ASSERT_EQ(tmm_dgemm(h_, TMM_COL_MAJOR, TMM_TRANS, TMM_NO_TRANS, 4, 3, 9, 0.0, nullptr, 9,
                        nullptr, 9, 2.0, c.data(), 4),
              TMM_SUCCESS)
        << message();
    EXPECT_EQ(c, std::vector<double>(12, -2.0));
  }
}

// The report says DOUBLE after a dgemm (and strict arithmetic whatever the math
// mode), SINGLE after an sgemm; a 1.1-sized report gets no precision field.
TEST_F(Dgemm, ReportSaysThePrecisionThatRan) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, TMM_MATH_TF32), TMM_SUCCESS);
  ASSERT_EQ(call<double>(Args{}), TMM_SUCCESS) << message();
  tmm_report r{};
  r.struct_size = sizeof r;
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_EQ(r.precision, TMM_PRECISION_DOUBLE);
  EXPECT_EQ(r.math_mode, TMM_MATH_FP32);
  if (std::strncmp(r.kernel, "system BLAS (", 13) != 0) {  // AUTO: the system BLAS, or
    EXPECT_STREQ(r.kernel, "cpu_f64_blocked");             // the own kernels without one
  }
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_NAIVE), TMM_SUCCESS);
  ASSERT_EQ(call<double>(Args{}), TMM_SUCCESS) << message();
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_STREQ(r.kernel, "cpu_f64_naive");
  ASSERT_EQ(call<float>(Args{}), TMM_SUCCESS) << message();
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_EQ(r.precision, TMM_PRECISION_SINGLE);
  EXPECT_STREQ(r.kernel, "cpu_naive");

  ASSERT_EQ(call<double>(Args{}), TMM_SUCCESS) << message();
  tmm_report old{};
  std::memset(&old, 0x5a, sizeof old);
  old.struct_size = offsetof(tmm_report, precision);  // 1.1's size, tail padding included
  ASSERT_EQ(tmm_get_last_report(h_, &old), TMM_SUCCESS);
  EXPECT_EQ(old.struct_size, offsetof(tmm_report, precision));
  int64_t untouched;
  std::memset(&untouched, 0x5a, sizeof untouched);
  EXPECT_EQ(old.precision, untouched) << "written past the caller's struct_size";
}

TEST_F(Dgemm, RegistrySaysEachKernelsPrecision) {
  int doubles = 0;
  for (int i = 0;; ++i) {
    tmm_kernel_info info{};
    info.struct_size = sizeof info;
    if (tmm_get_kernel_info(i, &info) != TMM_SUCCESS) break;
    ASSERT_TRUE(info.precision == TMM_PRECISION_SINGLE || info.precision == TMM_PRECISION_DOUBLE);
    const bool named_f64 = std::strstr(info.name, "f64") != nullptr;
    EXPECT_EQ(info.precision == TMM_PRECISION_DOUBLE, named_f64) << info.name;
    if (info.precision == TMM_PRECISION_DOUBLE) {
      ++doubles;
      EXPECT_EQ(info.math_mode, TMM_MATH_FP32) << info.name;
    }
  }
  EXPECT_GE(doubles, 2) << "the CPU's two algorithms in double";
}

// A 1.1 program's tmm_kernel_info has no precision field: it sees the single rows
// alone, in the order and at the indices the full list gives them.
TEST(KernelInfo, A11CallerSeesTheSingleRowsAlone) {
  std::vector<std::string> singles;
  for (int i = 0;; ++i) {
    tmm_kernel_info info{};
    info.struct_size = sizeof info;
    if (tmm_get_kernel_info(i, &info) != TMM_SUCCESS) break;
    if (info.precision == TMM_PRECISION_SINGLE) singles.push_back(info.name);
  }
  for (size_t i = 0;; ++i) {
    tmm_kernel_info old{};
    old.struct_size = offsetof(tmm_kernel_info, precision);
    if (tmm_get_kernel_info(int(i), &old) != TMM_SUCCESS) {
      EXPECT_EQ(i, singles.size());
      break;
    }
    ASSERT_LT(i, singles.size());
    EXPECT_EQ(old.name, singles[i]);
    EXPECT_EQ(old.struct_size, offsetof(tmm_kernel_info, precision));
  }
}

// tmm_dgemm_io gives what tmm_dgemm gives, through the caller's functions.
struct Store {
  std::vector<double>* v;
  static int read(void* user, int64_t offset, int64_t count, double* dst) {
    auto* s = static_cast<Store*>(user);
    std::copy_n(s->v->data() + offset, count, dst);
    return 0;
  }
  static int write(void* user, int64_t offset, int64_t count, const double* src) {
    auto* s = static_cast<Store*>(user);
    std::copy_n(src, count, s->v->data() + offset);
    return 0;
  }
};

// g through tmm_dgemm_io, its matrices behind Store functions.
tmm_status run_through_io(tmm_handle h, tmm_test::DgemmCase& g) {
  Store sa{&g.a}, sb{&g.b}, sc{&g.c};
  const tmm_host_io_double a{sizeof(tmm_host_io_double), Store::read, nullptr, &sa};
  const tmm_host_io_double b{sizeof(tmm_host_io_double), Store::read, nullptr, &sb};
  const tmm_host_io_double c{sizeof(tmm_host_io_double), Store::read, Store::write, &sc};
  return tmm_dgemm_io(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, &a, g.lda, &b, g.ldb, g.beta,
                      &c, g.ldc);
}

TEST_F(Dgemm, IoMatchesThePointerCall) {
  for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
    tmm_test::DgemmCase g;
    g.layout = layout, g.tb = TMM_TRANS, g.m = 21, g.n = 34, g.k = 55, g.alpha = 0.5;
    g.beta = 1.5, g.pad = 1;
    tmm_test::fill_case(g, tmm_test::fresh_seed());
    SCOPED_TRACE(tmm_test::describe(g));
    tmm_test::DgemmCase pointers = g;
    ASSERT_EQ(tmm_test::run_case(h_, pointers), TMM_SUCCESS) << message();
    ASSERT_EQ(run_through_io(h_, g), TMM_SUCCESS) << message();
    EXPECT_EQ(g.c, pointers.c);
    EXPECT_TRUE(tmm_test::check_case(g));
  }
  // A struct_size short of the functions is rejected, naming the double struct.
  std::vector<double> v(64, 1.0);
  Store s{&v};
  const tmm_host_io_double small{sizeof(size_t), Store::read, Store::write, &s};
  EXPECT_EQ(tmm_dgemm_io(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 2, 2, 2, 1.0, &small, 2,
                         &small, 2, 0.0, &small, 2),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("sizeof(tmm_host_io_double)"), std::string::npos) << message();
}

TEST_F(Dgemm, DevicePointersNeedCuda) {
  std::vector<double> a(16, 1.0), b(16, 1.0), c(16, 1.0);
  EXPECT_EQ(tmm_dgemm_device(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0, a.data(),
                             4, b.data(), 4, 0.0, c.data(), 4),
            TMM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(c, std::vector<double>(16, 1.0));
}

// The CUDA backend in double: the FP64 tensor-core rows (f64_mma_*) or, where DMMA does
// not pay, the CUDA-core rows (f64_blocked_*), and the ladder's kernels over double
// (f64_naive_*, f64_tiled_*, f64_coarsened_*), through the direct path, the streamed path
// and device pointers, each result within the FP64 bound.
class DgemmCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    TMM_SKIP_OR_FAIL_WITHOUT_GPU();
    ASSERT_EQ(tmm_create_with_backend(&h_, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  }
  void TearDown() override {
    if (h_ != nullptr) tmm_destroy(h_);
  }
  std::string message() const { return tmm_get_error_message(h_); }

  // Whether this device runs double on the FP64 tensor cores (cc 8.0, 9.0 and later).
  bool dmma_pays() {
    tmm_device_info d{};
    EXPECT_EQ(tmm_get_device_info(h_, &d), TMM_SUCCESS);
    const int cc = 10 * d.compute_capability_major + d.compute_capability_minor;
    return cc == 80 || cc >= 90;
  }

  // Whether it also runs their 128 x 128 tile (tile 256): a block of 160 KiB of shared
  // memory must fit an SM (the driver keeps 1 KiB of it), as on the A100 and the H100.
  bool widest_runs() {
    tmm_device_info d{};
    EXPECT_EQ(tmm_get_device_info(h_, &d), TMM_SUCCESS);
    return dmma_pays() && d.shared_memory_per_multiprocessor_bytes >= (161u << 10);
  }

  // What AUTO runs in double for an m x n product with shallow k: the FP64 tensor cores
  // where DMMA pays (128 x 128 with 16 waves of those tiles, one per SM; 128 x 64 with a
  // wave of those tiles; else 64 x 64), else the CUDA cores (128 x 128 with a wave of
  // those tiles, else 64 x 64; the planner's model may prefer 64 x 64 beyond that, which
  // test_dispatch covers).
  std::string auto_kernel(int64_t m, int64_t n) {
    tmm_device_info d{};
    EXPECT_EQ(tmm_get_device_info(h_, &d), TMM_SUCCESS);
    const int64_t wide = (m + 127) / 128 * ((n + 127) / 128);
    if (dmma_pays()) {
      if (widest_runs() && wide >= 16 * int64_t(d.multiprocessors)) return "f64_mma_128x128";
      // 128 x 64 where its tiles fill a wave of two blocks per SM (k not deep).
      return (m + 127) / 128 * ((n + 63) / 64) >= 2 * int64_t(d.multiprocessors) ? "f64_mma_128x64"
                                                                                 : "f64_mma_64x64";
    }
    return wide >= d.multiprocessors ? "f64_blocked_128x128" : "f64_blocked_64x64";
  }

  // The report of the last call: DOUBLE, strict, a kernel of double.
  tmm_report report_of_double() {
    tmm_report r{};
    r.struct_size = sizeof r;
    EXPECT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
    EXPECT_EQ(r.precision, TMM_PRECISION_DOUBLE);
    EXPECT_EQ(r.math_mode, TMM_MATH_FP32);
    EXPECT_NE(std::strstr(r.kernel, "f64"), nullptr) << r.kernel;
    return r;
  }

  tmm_handle h_ = nullptr;
};

// One setting of the algorithm options.
struct Setting {
  tmm_algorithm algorithm;
  int tile, coarsening;
};

// AUTO and BLOCKED (tile 0), BLOCKED's tiles in double (256, the FP64 tensor cores'
// 128 x 128, where it runs), and every ladder row's setting.
std::vector<Setting> every_setting(bool widest) {
  std::vector<Setting> s{{TMM_ALGO_AUTO, 0, 0},
                         {TMM_ALGO_BLOCKED, 0, 0},
                         {TMM_ALGO_BLOCKED, 128, 0},
                         {TMM_ALGO_BLOCKED, 64, 0},
                         {TMM_ALGO_BLOCKED, 16, 0}};  // f64_thin, in passes of 16
  if (widest) s.push_back({TMM_ALGO_BLOCKED, 256, 0});
  for (int tile : {8, 16, 32}) {
    s.push_back({TMM_ALGO_NAIVE, tile, 0});
    s.push_back({TMM_ALGO_TILED, tile, 0});
    for (int c : {1, 2, 4}) s.push_back({TMM_ALGO_COARSENED, tile, c});
  }
  return s;
}

void apply(tmm_handle h, const Setting& s) {
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_ALGORITHM, s.algorithm), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_TILE_SIZE, s.tile), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h, TMM_OPTION_COARSENING, s.coarsening), TMM_SUCCESS);
}

std::string describe(const Setting& s) {
  return "algorithm " + std::to_string(int(s.algorithm)) + " tile " + std::to_string(s.tile) +
         " x" + std::to_string(s.coarsening);
}

// Every setting, layout and transpose on ragged shapes, beta 0 (NaN in C) and not,
// padded leading dimensions: host pointers on the direct path.
TEST_F(DgemmCuda, HostCallsMatchTheReferenceEverySetting) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  const int64_t shapes[][3] = {{67, 45, 129}, {1, 1, 1}, {300, 260, 100}, {129, 65, 7}};
  int variant = 0;
  for (const Setting& s : every_setting(widest_runs())) {
    apply(h_, s);
    for (const auto& shape : shapes) {
      for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
        for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
          for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
            tmm_test::DgemmCase g;
            g.layout = layout, g.ta = ta, g.tb = tb;
            g.m = shape[0], g.n = shape[1], g.k = shape[2];
            g.alpha = 0.75, g.beta = variant % 2 ? 0.0 : -1.5, g.pad = variant % 3;
            ++variant;
            tmm_test::fill_case(g, tmm_test::fresh_seed());
            SCOPED_TRACE(describe(s) + " " + tmm_test::describe(g));
            ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << message();
            EXPECT_TRUE(tmm_test::check_case(g));
            const tmm_report r = report_of_double();
            EXPECT_EQ(r.host_path, TMM_HOST_PATH_DIRECT);
          }
        }
      }
    }
  }
}

// AUTO in double runs the FP64 tensor cores where DMMA pays (the CUDA cores elsewhere),
// its tile from the product's size; BLOCKED with tile 256 runs the tensor cores' 128 x 128
// where it runs and is refused elsewhere (the CUDA cores have no row of it).
TEST_F(DgemmCuda, AutoRunsTheTensorCoresAndTheWidestTileWhereTheyPay) {
  // The direct path plans the whole product (the streamed path plans each tile of C).
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  tmm_test::DgemmCase big;
  big.m = 2048, big.n = 1100, big.k = 40, big.beta = 0.5;  // 16 x 18 tiles of 128 x 64
  tmm_test::fill_case(big, tmm_test::fresh_seed());
  tmm_test::DgemmCase wide = big;  // for tile 256, below: C as filled
  ASSERT_EQ(tmm_test::run_case(h_, big), TMM_SUCCESS) << message();
  EXPECT_TRUE(tmm_test::check_case(big));
  EXPECT_EQ(report_of_double().kernel, auto_kernel(big.m, big.n));
  tmm_test::DgemmCase g;
  g.m = 65, g.n = 33, g.k = 17, g.beta = 0.5;
  tmm_test::fill_case(g, tmm_test::fresh_seed());
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << message();
  EXPECT_TRUE(tmm_test::check_case(g));
  EXPECT_EQ(report_of_double().kernel, auto_kernel(g.m, g.n));
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_ALGORITHM, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_TILE_SIZE, 256), TMM_SUCCESS);
  if (widest_runs()) {
    ASSERT_EQ(tmm_test::run_case(h_, wide), TMM_SUCCESS) << message();
    EXPECT_TRUE(tmm_test::check_case(wide));
    EXPECT_EQ(report_of_double().kernel, std::string("f64_mma_128x128"));
    return;
  }
  const std::vector<double> before = g.c;
  EXPECT_EQ(tmm_test::run_case(h_, g), TMM_ERROR_NOT_SUPPORTED);
  EXPECT_NE(message().find("double"), std::string::npos) << message();
  EXPECT_EQ(g.c, before) << "refused before C is touched";
}

// Deep k in one tile of C: the FP64 tensor cores split k over the SMs (the report says
// how many slices), the partials added in slice order: within the FP64 bound, and the
// same bits on a second call.
TEST_F(DgemmCuda, DeepKSplitsAndGivesTheSameBitsTwice) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  tmm_test::DgemmCase g;
  g.m = 48, g.n = 40, g.k = 100000, g.beta = -0.5, g.pad = 1;
  tmm_test::fill_case(g, tmm_test::fresh_seed());
  tmm_test::DgemmCase again = g;
  ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << message();
  EXPECT_TRUE(tmm_test::check_case(g));
  const tmm_report r = report_of_double();
  EXPECT_GT(r.splits, 1) << r.kernel << ": the tensor-core rows and the CUDA-core rows split";
  ASSERT_EQ(tmm_test::run_case(h_, again), TMM_SUCCESS) << message();
  EXPECT_EQ(again.c, g.c) << "split-K in FP64 gives the same bits run to run";
}

// One partial wave over k that is not deep (78 tiles of 64 x 64, 35 steps of 16): AUTO
// splits every tile into slices that fill the idle slots, each transpose, padded rows,
// within the FP64 bound and with the same bits on a second call.
TEST_F(DgemmCuda, OneWaveOverShallowKSplitsEveryTile) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  int variant = 0;
  for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS})
    for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
      tmm_test::DgemmCase g;
      g.ta = ta, g.tb = tb;
      g.m = 333, g.n = 777, g.k = 555 - variant;
      g.alpha = -1.25, g.beta = variant % 2 ? 0.0 : 0.75, g.pad = variant % 3;
      g.layout = variant < 2 ? TMM_ROW_MAJOR : TMM_COL_MAJOR;
      ++variant;
      tmm_test::fill_case(g, tmm_test::fresh_seed());
      SCOPED_TRACE(tmm_test::describe(g));
      tmm_test::DgemmCase again = g;
      ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << message();
      EXPECT_TRUE(tmm_test::check_case(g));
      const tmm_report r = report_of_double();
      if (dmma_pays()) {
        EXPECT_EQ(std::string(r.kernel), "f64_mma_64x64");
        EXPECT_GT(r.splits, 1) << r.kernel;
      }
      ASSERT_EQ(tmm_test::run_case(h_, again), TMM_SUCCESS) << message();
      EXPECT_EQ(again.c, g.c) << "the same bits run to run";
    }
}

// A partial last wave: AUTO's 128 x 64 tiles (270 of them, 6 past two blocks per SM on an
// H100), BLOCKED's 64 x 64 (540, 144 past three per SM) and 128 x 128 (140, 8 past one
// per SM; where DMMA pays) split those tiles along k, each transpose, within the FP64
// bound.
TEST_F(DgemmCuda, LastWaveSplitsMatchTheReference) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  int variant = 0;
  for (int tile : {0, 64, 256}) {
    if (tile == 256 && !widest_runs()) continue;
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_ALGORITHM, tile ? TMM_ALGO_BLOCKED : TMM_ALGO_AUTO),
              TMM_SUCCESS);
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_TILE_SIZE, tile), TMM_SUCCESS);
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      tmm_test::DgemmCase g;
      g.ta = ta, g.tb = variant % 2 ? TMM_TRANS : TMM_NO_TRANS;
      g.m = 1280, g.n = 1728, g.k = 256 + 7 * variant;
      g.alpha = 0.5, g.beta = variant % 2 ? 0.0 : 1.5, g.pad = variant % 3;
      ++variant;
      tmm_test::fill_case(g, tmm_test::fresh_seed());
      SCOPED_TRACE("tile " + std::to_string(tile) + " " + tmm_test::describe(g));
      ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << message();
      EXPECT_TRUE(tmm_test::check_case(g));
      const tmm_report r = report_of_double();
      if (std::string(r.kernel).rfind("f64_mma_", 0) == 0) {
        EXPECT_GT(r.splits, 1) << r.kernel;
      }
    }
  }
}

// TMM_OPTION_MATH_MODE is a permission about FP32 inputs: a dgemm runs the same strict
// kernel under TF32 and FP32_ACCURATE.
TEST_F(DgemmCuda, MathModeDoesNotChangeADgemm) {
  for (tmm_math_mode mode : {TMM_MATH_TF32, TMM_MATH_FP32_ACCURATE}) {
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, mode), TMM_SUCCESS);
    // Odd integers whose products FP32 (let alone TF32) cannot hold: strict FP64 is exact.
    tmm_test::DgemmCase g;
    g.m = 96, g.n = 80, g.k = 64, g.beta = 1.0;
    tmm_test::fill_odd_integers(g, tmm_test::fresh_seed());
    ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << message();
    EXPECT_TRUE(tmm_test::check_case(g));
    EXPECT_EQ(report_of_double().kernel, auto_kernel(g.m, g.n));
  }
}

// A host call the streamed path takes in double (a device budget the direct path does
// not fit): tiles of C and chunks of k, beta 0 and not, pinned staging poisoned.
TEST_F(DgemmCuda, StreamedPathRunsDouble) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_DEVICE_MEMORY_BUDGET, int64_t(1) << 20), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_DEBUG_POISON_STAGING, 1), TMM_SUCCESS);
  int variant = 0;
  for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        tmm_test::DgemmCase g;
        g.layout = layout, g.ta = ta, g.tb = tb, g.m = 301, g.n = 257, g.k = 400;
        g.alpha = -0.5, g.beta = variant % 2 ? 0.0 : 2.0, g.pad = variant % 3;
        ++variant;
        tmm_test::fill_case(g, tmm_test::fresh_seed());
        SCOPED_TRACE(tmm_test::describe(g));
        ASSERT_EQ(tmm_test::run_case(h_, g), TMM_SUCCESS) << message();
        EXPECT_TRUE(tmm_test::check_case(g));
        const tmm_report r = report_of_double();
        EXPECT_EQ(r.host_path, TMM_HOST_PATH_STREAMED);
        EXPECT_GT(r.tiles * r.k_chunks, 1) << "the budget cuts the product";
      }
    }
  }
  // The caller's functions on the streamed path give what the pointers give.
  tmm_test::DgemmCase g;
  g.m = 200, g.n = 300, g.k = 500, g.beta = 1.5;
  tmm_test::fill_case(g, tmm_test::fresh_seed());
  tmm_test::DgemmCase pointers = g;
  ASSERT_EQ(tmm_test::run_case(h_, pointers), TMM_SUCCESS) << message();
  ASSERT_EQ(run_through_io(h_, g), TMM_SUCCESS) << message();
  EXPECT_EQ(report_of_double().host_path, TMM_HOST_PATH_STREAMED);
  EXPECT_EQ(g.c, pointers.c);
  EXPECT_TRUE(tmm_test::check_case(g));
}

#if TMM_TEST_WITH_CUDA
// tmm_dgemm_device on device copies of the case, every setting, both layouts, all
// transposes, beta 0 with NaN in C: C comes back within the bound, padding untouched.
TEST_F(DgemmCuda, DevicePointersEverySetting) {
  int variant = 0;
  for (const Setting& s : every_setting(widest_runs())) {
    apply(h_, s);
    for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
      for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
        for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
          tmm_test::DgemmCase g;
          g.layout = layout, g.ta = ta, g.tb = tb, g.m = 67, g.n = 45, g.k = 129;
          g.alpha = 1.25, g.beta = variant % 2 ? 0.0 : 0.5, g.pad = variant % 3;
          ++variant;
          tmm_test::fill_case(g, tmm_test::fresh_seed());
          SCOPED_TRACE(describe(s) + " " + tmm_test::describe(g));
          double *da = nullptr, *db = nullptr, *dc = nullptr;
          const size_t sa = g.a.size() * sizeof(double), sb = g.b.size() * sizeof(double);
          const size_t sc = g.c.size() * sizeof(double);
          ASSERT_EQ(cudaMalloc(&da, sa), cudaSuccess);
          ASSERT_EQ(cudaMalloc(&db, sb), cudaSuccess);
          ASSERT_EQ(cudaMalloc(&dc, sc), cudaSuccess);
          ASSERT_EQ(cudaMemcpy(da, g.a.data(), sa, cudaMemcpyHostToDevice), cudaSuccess);
          ASSERT_EQ(cudaMemcpy(db, g.b.data(), sb, cudaMemcpyHostToDevice), cudaSuccess);
          ASSERT_EQ(cudaMemcpy(dc, g.c.data(), sc, cudaMemcpyHostToDevice), cudaSuccess);
          ASSERT_EQ(tmm_dgemm_device(h_, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, da, g.lda,
                                     db, g.ldb, g.beta, dc, g.ldc),
                    TMM_SUCCESS)
              << message();
          ASSERT_EQ(tmm_synchronize(h_), TMM_SUCCESS) << message();
          ASSERT_EQ(cudaMemcpy(g.c.data(), dc, sc, cudaMemcpyDeviceToHost), cudaSuccess);
          cudaFree(da);
          cudaFree(db);
          cudaFree(dc);
          EXPECT_TRUE(tmm_test::check_case(g));
          report_of_double();
        }
      }
    }
  }
}
#endif

}  // namespace
