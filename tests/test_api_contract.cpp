// The public contract of the C API: versions, status strings, every invalid
// argument with its exact status, the handle staying usable after an error, the
// caller's memory untouched on failure, and NULL pointers where no element is used.
// Runs on the CPU backend (always present); CUDA-only paths are in
// test_cuda_backend.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "gemm_reference.hpp"

namespace {

class Contract : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(tmm_create_with_backend(&h_, TMM_BACKEND_CPU, 0), TMM_SUCCESS);
  }
  void TearDown() override { tmm_destroy(h_); }

  // A valid 4x3x5 row-major call whose arguments tests then break one at a time.
  tmm_status call(tmm_layout layout = TMM_ROW_MAJOR, tmm_transpose ta = TMM_NO_TRANS,
                  tmm_transpose tb = TMM_NO_TRANS, int64_t m = 4, int64_t n = 3, int64_t k = 5,
                  int64_t lda = 5, int64_t ldb = 3, int64_t ldc = 3) {
    return tmm_sgemm(h_, layout, ta, tb, m, n, k, 1.0f, a_.data(), lda, b_.data(), ldb, 0.5f,
                     c_.data(), ldc);
  }
  std::string message() const { return tmm_get_error_message(h_); }

  tmm_handle h_ = nullptr;
  std::vector<float> a_ = std::vector<float>(64, 1.0f);
  std::vector<float> b_ = std::vector<float>(64, 2.0f);
  std::vector<float> c_ = std::vector<float>(64, 3.0f);
};

TEST(Version, HeaderMatchesLibrary) {
  EXPECT_EQ(tmm_version(), TILEDMM_VERSION);
  EXPECT_EQ(TILEDMM_VERSION,
            TILEDMM_VERSION_MAJOR * 10000 + TILEDMM_VERSION_MINOR * 100 + TILEDMM_VERSION_PATCH);
}

TEST(StatusString, EveryCodeHasItsOwnText) {
  const tmm_status all[] = {TMM_SUCCESS,
                            TMM_ERROR_INVALID_VALUE,
                            TMM_ERROR_NO_DEVICE,
                            TMM_ERROR_OUT_OF_MEMORY,
                            TMM_ERROR_NOT_SUPPORTED,
                            TMM_ERROR_CUDA,
                            TMM_ERROR_INTERNAL,
                            TMM_ERROR_CALLBACK};
  std::set<std::string> texts;
  for (tmm_status s : all) {
    ASSERT_NE(tmm_status_string(s), nullptr);
    texts.insert(tmm_status_string(s));
  }
  EXPECT_EQ(texts.size(), 8u);
  EXPECT_NE(std::string(tmm_status_string(TMM_ERROR_CUDA)).find("TMM_ERROR_CUDA"),
            std::string::npos);
  EXPECT_NE(std::string(tmm_status_string(static_cast<tmm_status>(77))).find("unknown"),
            std::string::npos);
}

TEST(StatusString, ValuesAreStable) {
  EXPECT_EQ(TMM_SUCCESS, 0);
  EXPECT_EQ(TMM_ERROR_INVALID_VALUE, 1);
  EXPECT_EQ(TMM_ERROR_NO_DEVICE, 2);
  EXPECT_EQ(TMM_ERROR_OUT_OF_MEMORY, 3);
  EXPECT_EQ(TMM_ERROR_NOT_SUPPORTED, 4);
  EXPECT_EQ(TMM_ERROR_CUDA, 5);
  EXPECT_EQ(TMM_ERROR_INTERNAL, 6);
  EXPECT_EQ(TMM_ERROR_CALLBACK, 7);
  EXPECT_EQ(TMM_ROW_MAJOR, 101);
  EXPECT_EQ(TMM_COL_MAJOR, 102);
  EXPECT_EQ(TMM_NO_TRANS, 111);
  EXPECT_EQ(TMM_TRANS, 112);
}

TEST(Create, RejectsNullOutAndUnknownBackend) {
  EXPECT_EQ(tmm_create(nullptr), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(std::string(tmm_get_error_message(nullptr)).find("out"), std::string::npos);
  tmm_handle h = reinterpret_cast<tmm_handle>(0x1);
  EXPECT_EQ(tmm_create_with_backend(&h, static_cast<tmm_backend>(9), 0), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(h, reinterpret_cast<tmm_handle>(0x1)) << "out must not change on failure";
}

TEST(Create, AutoKeepsTheRequestedDevice) {
  tmm_handle h = nullptr;
  if (!tmm_test::cuda_available()) {
    // No CUDA: AUTO is the CPU, whatever the index.
    ASSERT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_AUTO, 7), TMM_SUCCESS);
    tmm_backend b = TMM_BACKEND_AUTO;
    ASSERT_EQ(tmm_get_backend(h, &b), TMM_SUCCESS);
    EXPECT_EQ(b, TMM_BACKEND_CPU);
    tmm_destroy(h);
    return;
  }
  // With CUDA, a missing index fails instead of silently becoming device 0.
  EXPECT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_AUTO, 4096), TMM_ERROR_NO_DEVICE);
  EXPECT_EQ(h, nullptr);
  EXPECT_NE(std::string(tmm_get_error_message(nullptr)).find("4096"), std::string::npos);
  ASSERT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_AUTO, 0), TMM_SUCCESS);
  tmm_device_info d{};
  ASSERT_EQ(tmm_get_device_info(h, &d), TMM_SUCCESS);
  EXPECT_EQ(d.device, 0);
  tmm_destroy(h);
}

TEST(Create, MissingCudaDeviceIsNoDevice) {
  tmm_handle h = nullptr;
  EXPECT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 4096), TMM_ERROR_NO_DEVICE);
  EXPECT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, -1), TMM_ERROR_NO_DEVICE);
  EXPECT_EQ(h, nullptr);
  EXPECT_STRNE(tmm_get_error_message(nullptr), "");
}

TEST(Create, AutoPicksCudaExactlyWhenAvailable) {
  tmm_handle h = nullptr;
  ASSERT_EQ(tmm_create(&h), TMM_SUCCESS);
  tmm_backend b = TMM_BACKEND_AUTO;
  ASSERT_EQ(tmm_get_backend(h, &b), TMM_SUCCESS);
  EXPECT_EQ(b, tmm_test::cuda_available() ? TMM_BACKEND_CUDA : TMM_BACKEND_CPU);
  tmm_destroy(h);
}

TEST(Destroy, NullIsANoOpAndKeepsTheThreadMessage) {
  EXPECT_EQ(tmm_create(nullptr), TMM_ERROR_INVALID_VALUE);
  const std::string before = tmm_get_error_message(nullptr);
  ASSERT_NE(before, "");
  tmm_destroy(nullptr);  // must neither crash nor count as a call
  EXPECT_EQ(before, tmm_get_error_message(nullptr));
}

TEST(NullHandle, EveryCallSaysInvalidValue) {
  float x = 0;
  double ms = 0;
  int i = 0;
  void* s = nullptr;
  tmm_backend b;
  tmm_algorithm a;
  tmm_timing t;
  tmm_report r{};
  r.struct_size = sizeof r;
  tmm_device_info d;
  int64_t v = 0;
  EXPECT_EQ(tmm_get_backend(nullptr, &b), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_set_algorithm(nullptr, TMM_ALGO_AUTO), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_algorithm(nullptr, &a), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_set_tile_size(nullptr, 16), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_tile_size(nullptr, &i), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_set_coarsening(nullptr, 2), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_coarsening(nullptr, &i), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_sgemm(nullptr, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1, 1, 1, 1, &x, 1, &x, 1,
                      0, &x, 1),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_sgemm_device(nullptr, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1, 1, 1, 1, &x, 1,
                             &x, 1, 0, &x, 1),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_set_stream(nullptr, nullptr), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_stream(nullptr, &s), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_synchronize(nullptr), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_reserve_host_staging(nullptr, 0), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_last_time(nullptr, &ms), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_last_timing(nullptr, &t), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_device_info(nullptr, &d), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_last_report(nullptr, &r), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_set_option(nullptr, TMM_OPTION_HOST_THREADS, 1), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_option(nullptr, TMM_OPTION_HOST_THREADS, &v), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(std::string(tmm_get_error_message(nullptr)).find("handle"), std::string::npos);
  EXPECT_EQ(x, 0.0f);
}

TEST_F(Contract, NullOutputPointersAreInvalid) {
  EXPECT_EQ(tmm_get_backend(h_, nullptr), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_algorithm(h_, nullptr), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_tile_size(h_, nullptr), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_coarsening(h_, nullptr), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_last_time(h_, nullptr), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_last_timing(h_, nullptr), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_device_info(h_, nullptr), TMM_ERROR_INVALID_VALUE);
}

TEST_F(Contract, SettingsRoundTripAndRejectBadValues) {
  tmm_algorithm a = TMM_ALGO_TILED;
  ASSERT_EQ(tmm_get_algorithm(h_, &a), TMM_SUCCESS);
  EXPECT_EQ(a, TMM_ALGO_AUTO);
  EXPECT_EQ(tmm_set_algorithm(h_, TMM_ALGO_NAIVE), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_algorithm(h_, static_cast<tmm_algorithm>(42)), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("algorithm"), std::string::npos);
  ASSERT_EQ(tmm_get_algorithm(h_, &a), TMM_SUCCESS);
  EXPECT_EQ(a, TMM_ALGO_NAIVE);

  for (int tile : {0, 8, 16, 64, 128, 256, 32}) EXPECT_EQ(tmm_set_tile_size(h_, tile), TMM_SUCCESS);
  for (int tile : {-1, 1, 7, 24, 512})
    EXPECT_EQ(tmm_set_tile_size(h_, tile), TMM_ERROR_INVALID_VALUE);
  int v = -1;
  ASSERT_EQ(tmm_get_tile_size(h_, &v), TMM_SUCCESS);
  EXPECT_EQ(v, 32);

  for (int c : {0, 1, 2, 4}) EXPECT_EQ(tmm_set_coarsening(h_, c), TMM_SUCCESS);
  for (int c : {-2, 3, 8}) EXPECT_EQ(tmm_set_coarsening(h_, c), TMM_ERROR_INVALID_VALUE);
  ASSERT_EQ(tmm_get_coarsening(h_, &v), TMM_SUCCESS);
  EXPECT_EQ(v, 4);
}

TEST_F(Contract, CpuLacksGpuAlgorithmsAndKeepsTheSetting) {
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_algorithm(h_, TMM_ALGO_TILED), TMM_ERROR_NOT_SUPPORTED);
  EXPECT_NE(message().find("CPU"), std::string::npos);
  EXPECT_EQ(tmm_set_algorithm(h_, TMM_ALGO_COARSENED), TMM_ERROR_NOT_SUPPORTED);
  tmm_algorithm a = TMM_ALGO_AUTO;
  ASSERT_EQ(tmm_get_algorithm(h_, &a), TMM_SUCCESS);
  EXPECT_EQ(a, TMM_ALGO_BLOCKED);
}

TEST_F(Contract, CpuLacksDeviceFeatures) {
  float x = 0;
  void* s = nullptr;
  tmm_device_info d;
  EXPECT_EQ(tmm_sgemm_device(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1, 1, 1, 1, &x, 1, &x,
                             1, 0, &x, 1),
            TMM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(tmm_set_stream(h_, nullptr), TMM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(tmm_get_stream(h_, &s), TMM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(tmm_get_device_info(h_, &d), TMM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(tmm_synchronize(h_), TMM_SUCCESS);
  // No staging on the CPU: a reservation within the bounds is a no-op, outside them
  // the same error as on CUDA.
  EXPECT_EQ(tmm_reserve_host_staging(h_, 0), TMM_SUCCESS);
  EXPECT_EQ(tmm_reserve_host_staging(h_, int64_t(1) << 20), TMM_SUCCESS);
  EXPECT_EQ(tmm_reserve_host_staging(h_, -1), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_reserve_host_staging(h_, (int64_t(512) << 20) + 1), TMM_ERROR_INVALID_VALUE)
      << "over the default budget of 512 MiB";
}

TEST_F(Contract, NegativeSizesAreInvalid) {
  EXPECT_EQ(call(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, -1), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("m must be"), std::string::npos);
  EXPECT_EQ(call(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, -3), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("n must be"), std::string::npos);
  EXPECT_EQ(call(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 3, -5), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("k must be"), std::string::npos);
}

TEST_F(Contract, UnknownEnumsAreInvalid) {
  EXPECT_EQ(call(static_cast<tmm_layout>(0)), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("layout"), std::string::npos);
  EXPECT_EQ(call(TMM_ROW_MAJOR, static_cast<tmm_transpose>(113)), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("trans_a"), std::string::npos);
  EXPECT_EQ(call(TMM_ROW_MAJOR, TMM_NO_TRANS, static_cast<tmm_transpose>(110)),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("trans_b"), std::string::npos);
}

// CBLAS: row-major needs ld >= columns of the stored matrix, column-major >= rows.
TEST_F(Contract, LeadingDimensionsFollowCblas) {
  const tmm_layout R = TMM_ROW_MAJOR, C = TMM_COL_MAJOR;
  const tmm_transpose N = TMM_NO_TRANS, T = TMM_TRANS;
  // m=4, n=3, k=5.
  EXPECT_EQ(call(R, N, N, 4, 3, 5, 5, 3, 3), TMM_SUCCESS) << message();
  EXPECT_EQ(call(R, N, N, 4, 3, 5, 4, 3, 3), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("lda"), std::string::npos);
  EXPECT_EQ(call(R, T, N, 4, 3, 5, 4, 3, 3), TMM_SUCCESS) << message();
  EXPECT_EQ(call(R, T, N, 4, 3, 5, 3, 3, 3), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(call(R, N, N, 4, 3, 5, 5, 2, 3), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("ldb"), std::string::npos);
  EXPECT_EQ(call(R, N, T, 4, 3, 5, 5, 5, 3), TMM_SUCCESS) << message();
  EXPECT_EQ(call(R, N, T, 4, 3, 5, 5, 4, 3), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(call(R, N, N, 4, 3, 5, 5, 3, 2), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("ldc"), std::string::npos);

  EXPECT_EQ(call(C, N, N, 4, 3, 5, 4, 5, 4), TMM_SUCCESS) << message();
  EXPECT_EQ(call(C, N, N, 4, 3, 5, 3, 5, 4), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("lda"), std::string::npos);
  EXPECT_EQ(call(C, T, N, 4, 3, 5, 5, 5, 4), TMM_SUCCESS) << message();
  EXPECT_EQ(call(C, T, N, 4, 3, 5, 4, 5, 4), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(call(C, N, N, 4, 3, 5, 4, 4, 4), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("ldb"), std::string::npos);
  EXPECT_EQ(call(C, N, T, 4, 3, 5, 4, 3, 4), TMM_SUCCESS) << message();
  EXPECT_EQ(call(C, N, T, 4, 3, 5, 4, 2, 4), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(call(C, N, N, 4, 3, 5, 4, 5, 3), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("ldc"), std::string::npos);

  // Zero-sized dimensions still need ld >= 1.
  EXPECT_EQ(call(R, N, N, 0, 0, 0, 0, 1, 1), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(call(R, N, N, 0, 0, 0, 1, 1, 1), TMM_SUCCESS);
}

TEST_F(Contract, NullMatricesAreInvalidWhenUsed) {
  float* none = nullptr;
  EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 3, 5, 1, none, 5, b_.data(),
                      3, 0, c_.data(), 3),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("A is NULL"), std::string::npos);
  EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 3, 5, 1, a_.data(), 5, none,
                      3, 0, c_.data(), 3),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("B is NULL"), std::string::npos);
  EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 3, 5, 1, a_.data(), 5,
                      b_.data(), 3, 0, none, 3),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("C is NULL"), std::string::npos);
  // Column-major names the caller's arguments, not the swapped internal ones.
  EXPECT_EQ(tmm_sgemm(h_, TMM_COL_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 3, 5, 1, none, 4, b_.data(),
                      5, 0, c_.data(), 4),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("A is NULL"), std::string::npos);
}

TEST_F(Contract, NullMatricesAreFineWhenNotUsed) {
  float* none = nullptr;
  // m or n = 0: nothing is touched at all.
  EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 0, 3, 5, 1, none, 5, none, 3,
                      1, none, 3),
            TMM_SUCCESS);
  EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 0, 5, 1, none, 5, none, 1,
                      1, none, 1),
            TMM_SUCCESS);
  // k = 0 or alpha = 0: A and B are not read, C = beta * C.
  std::vector<float> c(12, 4.0f);
  EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 3, 0, 1, none, 1, none, 3,
                      0.5f, c.data(), 3),
            TMM_SUCCESS);
  for (float x : c) EXPECT_EQ(x, 2.0f);
  EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 3, 5, 0, none, 5, none, 3,
                      2.0f, c.data(), 3),
            TMM_SUCCESS);
  for (float x : c) EXPECT_EQ(x, 4.0f);
}

TEST_F(Contract, ByteCountOverflowIsInvalid) {
  const int64_t huge = int64_t(1) << 62;
  EXPECT_EQ(call(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, huge, 3, 5, 5, 3, 3),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("overflow"), std::string::npos);
  EXPECT_EQ(call(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 3, 5, huge, 3, 3),
            TMM_ERROR_INVALID_VALUE);
}

TEST_F(Contract, FailureLeavesCallerMemoryAndHandleIntact) {
  const std::vector<float> before = c_;
  EXPECT_EQ(call(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 3, 5, 5, 3, 2),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(std::memcmp(before.data(), c_.data(), before.size() * sizeof(float)), 0);
  double ms = -1;
  EXPECT_EQ(tmm_get_last_time(h_, &ms), TMM_ERROR_INVALID_VALUE) << "no sgemm succeeded yet";
  EXPECT_EQ(ms, -1);
  // The handle still works and the message is cleared by the next success.
  EXPECT_EQ(call(), TMM_SUCCESS);
  EXPECT_EQ(message(), "");
  EXPECT_EQ(c_[0], 1.0f * 5 * 2 + 0.5f * 3);
  ASSERT_EQ(tmm_get_last_time(h_, &ms), TMM_SUCCESS);
  EXPECT_GE(ms, 0.0);
}

TEST_F(Contract, LastTimingSurvivesAFailedCall) {
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_NAIVE), TMM_SUCCESS);
  ASSERT_EQ(call(), TMM_SUCCESS);
  tmm_timing t{};
  ASSERT_EQ(tmm_get_last_timing(h_, &t), TMM_SUCCESS);
  EXPECT_EQ(t.algorithm, TMM_ALGO_NAIVE);
  EXPECT_EQ(call(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, -1), TMM_ERROR_INVALID_VALUE);
  tmm_timing after{};
  ASSERT_EQ(tmm_get_last_timing(h_, &after), TMM_SUCCESS);
  EXPECT_EQ(after.algorithm, TMM_ALGO_NAIVE);
  EXPECT_EQ(after.compute_ms, t.compute_ms);
}

// ---- Options ---------------------------------------------------------------

TEST(Options, EveryOptionHasANameBoundsAndDefault) {
  const tmm_option all[] = {TMM_OPTION_ALGORITHM,
                            TMM_OPTION_TILE_SIZE,
                            TMM_OPTION_COARSENING,
                            TMM_OPTION_HOST_THREADS,
                            TMM_OPTION_DEVICE_MEMORY_BUDGET,
                            TMM_OPTION_HOST_STAGING_BYTES,
                            TMM_OPTION_HOST_PATH,
                            TMM_OPTION_DEBUG_POISON_STAGING,
                            TMM_OPTION_MATH_MODE};
  std::set<std::string> names;
  for (tmm_option o : all) {
    int64_t lo = -7, hi = -7, def = -7;
    ASSERT_EQ(tmm_get_option_bounds(o, &lo, &hi, &def), TMM_SUCCESS) << o;
    EXPECT_LE(lo, def);
    EXPECT_LE(def, hi);
    ASSERT_NE(tmm_option_name(o), nullptr);
    names.insert(tmm_option_name(o));
  }
  EXPECT_EQ(names.size(), 9u) << "names are distinct";
  EXPECT_STREQ(tmm_option_name(TMM_OPTION_HOST_THREADS), "host_threads");
  EXPECT_STREQ(tmm_option_name(TMM_OPTION_MATH_MODE), "math_mode");
  int64_t lo = -7, hi = -7, def = -7;
  ASSERT_EQ(tmm_get_option_bounds(TMM_OPTION_MATH_MODE, &lo, &hi, &def), TMM_SUCCESS);
  EXPECT_EQ(lo, TMM_MATH_FP32);
  EXPECT_EQ(hi, TMM_MATH_FP32_ACCURATE);
  EXPECT_EQ(def, TMM_MATH_FP32) << "strict FP32 unless the caller allows more";
  EXPECT_EQ(tmm_get_option_bounds(TMM_OPTION_ALGORITHM, nullptr, nullptr, nullptr), TMM_SUCCESS);
  EXPECT_EQ(tmm_get_option_bounds(static_cast<tmm_option>(999), nullptr, nullptr, nullptr),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(std::string(tmm_get_error_message(nullptr)).find("999"), std::string::npos);
  EXPECT_EQ(tmm_option_name(static_cast<tmm_option>(0)), nullptr);
}

TEST_F(Contract, OptionsRoundTripAndMatchTheOldSetters) {
  int64_t v = -1;
  for (tmm_option o :
       {TMM_OPTION_ALGORITHM, TMM_OPTION_TILE_SIZE, TMM_OPTION_COARSENING, TMM_OPTION_HOST_THREADS,
        TMM_OPTION_DEVICE_MEMORY_BUDGET, TMM_OPTION_HOST_STAGING_BYTES, TMM_OPTION_HOST_PATH}) {
    int64_t def = -1;
    ASSERT_EQ(tmm_get_option_bounds(o, nullptr, nullptr, &def), TMM_SUCCESS);
    ASSERT_EQ(tmm_get_option(h_, o, &v), TMM_SUCCESS);
    EXPECT_EQ(v, def) << "a new handle has the default of " << tmm_option_name(o);
  }
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_THREADS, 3), TMM_SUCCESS);
  ASSERT_EQ(tmm_get_option(h_, TMM_OPTION_HOST_THREADS, &v), TMM_SUCCESS);
  EXPECT_EQ(v, 3);
  const int64_t six_gib = int64_t(6) << 30;  // byte counts above 4 GiB round-trip
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_DEVICE_MEMORY_BUDGET, six_gib), TMM_SUCCESS);
  ASSERT_EQ(tmm_get_option(h_, TMM_OPTION_DEVICE_MEMORY_BUDGET, &v), TMM_SUCCESS);
  EXPECT_EQ(v, six_gib);
  EXPECT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, 3), TMM_ERROR_INVALID_VALUE);
  // The 1.0 setters and the options are one setting.
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_ALGORITHM, TMM_ALGO_NAIVE), TMM_SUCCESS);
  tmm_algorithm a = TMM_ALGO_AUTO;
  ASSERT_EQ(tmm_get_algorithm(h_, &a), TMM_SUCCESS);
  EXPECT_EQ(a, TMM_ALGO_NAIVE);
  ASSERT_EQ(tmm_set_tile_size(h_, 64), TMM_SUCCESS);
  ASSERT_EQ(tmm_get_option(h_, TMM_OPTION_TILE_SIZE, &v), TMM_SUCCESS);
  EXPECT_EQ(v, 64);
}

TEST_F(Contract, BadOptionValuesAreRejectedAndChangeNothing) {
  int64_t hi = 0;
  ASSERT_EQ(tmm_get_option_bounds(TMM_OPTION_HOST_THREADS, nullptr, &hi, nullptr), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_THREADS, 2), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_THREADS, -1), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("host_threads"), std::string::npos) << message();
  EXPECT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_THREADS, hi + 1), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_set_option(h_, TMM_OPTION_TILE_SIZE, 48), TMM_ERROR_INVALID_VALUE)
      << "within bounds but not a tile size";
  EXPECT_EQ(tmm_set_option(h_, TMM_OPTION_TILE_SIZE, int64_t(1) << 40), TMM_ERROR_INVALID_VALUE)
      << "64-bit values are not truncated to int";
  EXPECT_EQ(tmm_set_option(h_, TMM_OPTION_ALGORITHM, TMM_ALGO_TILED), TMM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(tmm_set_option(h_, static_cast<tmm_option>(12345), 0), TMM_ERROR_INVALID_VALUE);
  int64_t v = 0;
  EXPECT_EQ(tmm_get_option(h_, static_cast<tmm_option>(12345), &v), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_option(h_, TMM_OPTION_HOST_THREADS, nullptr), TMM_ERROR_INVALID_VALUE);
  ASSERT_EQ(tmm_get_option(h_, TMM_OPTION_HOST_THREADS, &v), TMM_SUCCESS);
  EXPECT_EQ(v, 2);
  ASSERT_EQ(tmm_get_option(h_, TMM_OPTION_ALGORITHM, &v), TMM_SUCCESS);
  EXPECT_EQ(v, TMM_ALGO_AUTO);
}

TEST(Options, MathModeValuesAreStable) {
  EXPECT_EQ(TMM_OPTION_MATH_MODE, 9);
  EXPECT_EQ(TMM_MATH_FP32, 0);
  EXPECT_EQ(TMM_MATH_TF32, 1);
  EXPECT_EQ(TMM_MATH_FP32_ACCURATE, 2);
}

// A mode is a permission: the CPU has only strict FP32 kernels, takes every mode, runs
// them, and says FP32 ran.
TEST_F(Contract, CpuAcceptsEveryMathModeAndReportsFp32) {
  for (tmm_algorithm algorithm : {TMM_ALGO_AUTO, TMM_ALGO_NAIVE}) {
    ASSERT_EQ(tmm_set_algorithm(h_, algorithm), TMM_SUCCESS);
    for (int64_t mode : {TMM_MATH_FP32, TMM_MATH_TF32, TMM_MATH_FP32_ACCURATE}) {
      ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, mode), TMM_SUCCESS) << message();
      int64_t v = -1;
      ASSERT_EQ(tmm_get_option(h_, TMM_OPTION_MATH_MODE, &v), TMM_SUCCESS);
      EXPECT_EQ(v, mode);
      std::fill(c_.begin(), c_.end(), 3.0f);
      ASSERT_EQ(call(), TMM_SUCCESS) << message();
      EXPECT_EQ(c_[0], 1.0f * 5 * 2 + 0.5f * 3);
      tmm_report r{};
      r.struct_size = sizeof r;
      ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
      EXPECT_EQ(r.math_mode, TMM_MATH_FP32) << "mode " << mode;
      EXPECT_STREQ(r.kernel, algorithm == TMM_ALGO_NAIVE ? "cpu_naive" : "cpu_blocked");
    }
  }
  for (int64_t bad : {int64_t(-1), int64_t(3), int64_t(1) << 33})
    EXPECT_EQ(tmm_set_option(h_, TMM_OPTION_MATH_MODE, bad), TMM_ERROR_INVALID_VALUE) << bad;
  EXPECT_NE(message().find("math_mode"), std::string::npos) << message();
  int64_t v = -1;
  ASSERT_EQ(tmm_get_option(h_, TMM_OPTION_MATH_MODE, &v), TMM_SUCCESS);
  EXPECT_EQ(v, TMM_MATH_FP32_ACCURATE) << "a rejected value changes nothing";
}

// TMM_MATH_MODE, read when a handle is created, sets its default (any case); other
// values leave strict FP32. Handles that exist keep their setting.
TEST(Options, MathModeEnvironmentSetsTheDefaultOfNewHandles) {
  const char* before = std::getenv("TMM_MATH_MODE");
  const std::string saved = before ? before : "";
  struct Case {
    const char* value;  // nullptr: unset
    int64_t mode;
  };
  const Case cases[] = {{nullptr, TMM_MATH_FP32}, {"tf32", TMM_MATH_TF32},
                        {"TF32", TMM_MATH_TF32},  {"fp32_accurate", TMM_MATH_FP32_ACCURATE},
                        {"fp32", TMM_MATH_FP32},  {"1", TMM_MATH_FP32},
                        {"tf32 ", TMM_MATH_FP32}, {"", TMM_MATH_FP32}};
  tmm_handle earlier = nullptr;
  unsetenv("TMM_MATH_MODE");
  ASSERT_EQ(tmm_create_with_backend(&earlier, TMM_BACKEND_CPU, 0), TMM_SUCCESS);
  for (const Case& c : cases) {
    c.value ? setenv("TMM_MATH_MODE", c.value, 1) : unsetenv("TMM_MATH_MODE");
    tmm_handle h = nullptr;
    ASSERT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CPU, 0), TMM_SUCCESS);
    int64_t v = -1;
    ASSERT_EQ(tmm_get_option(h, TMM_OPTION_MATH_MODE, &v), TMM_SUCCESS);
    EXPECT_EQ(v, c.mode) << "TMM_MATH_MODE=" << (c.value ? c.value : "(unset)");
    tmm_destroy(h);
    ASSERT_EQ(tmm_get_option(earlier, TMM_OPTION_MATH_MODE, &v), TMM_SUCCESS);
    EXPECT_EQ(v, TMM_MATH_FP32) << "read at creation only";
  }
  tmm_destroy(earlier);
  before ? setenv("TMM_MATH_MODE", saved.c_str(), 1) : unsetenv("TMM_MATH_MODE");
}

// The kernel list says each kernel's arithmetic: the CPU's are strict FP32, and a
// TF32 kernel needs tensor cores (compute capability 8.0). math_mode belongs to 1.1.
TEST(KernelInfo, EveryKernelSaysItsMathMode) {
  int tf32 = 0, count = 0;
  for (int i = 0;; ++i, ++count) {
    tmm_kernel_info info{};
    info.struct_size = sizeof info;
    if (tmm_get_kernel_info(i, &info) != TMM_SUCCESS) break;
    EXPECT_EQ(info.struct_size, sizeof info);
    EXPECT_GE(info.math_mode, TMM_MATH_FP32) << info.name;
    EXPECT_LE(info.math_mode, TMM_MATH_FP32_ACCURATE) << info.name;
    if (info.backend == TMM_BACKEND_CPU) {
      EXPECT_EQ(info.math_mode, TMM_MATH_FP32) << info.name;
    }
    if (info.math_mode == TMM_MATH_TF32) {
      ++tf32;
      EXPECT_EQ(info.backend, TMM_BACKEND_CUDA) << info.name;
      EXPECT_GE(info.min_compute_capability, 80) << info.name;
    }
  }
  EXPECT_GE(count, 2);
#if TMM_TEST_WITH_CUDA
  EXPECT_GE(tf32, 1) << "a CUDA build lists its TF32 kernel, GPU or not";
#else
  EXPECT_EQ(tf32, 0) << "a CPU-only build has no tensor-core kernel";
#endif
  tmm_kernel_info small{};
  small.struct_size = offsetof(tmm_kernel_info, math_mode);
  EXPECT_EQ(tmm_get_kernel_info(0, &small), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(small.name, nullptr) << "nothing written";
}

// ---- The growable report ------------------------------------------------------

TEST_F(Contract, ReportDescribesTheCallAndRespectsStructSize) {
  ASSERT_EQ(call(), TMM_SUCCESS);
  tmm_report r{};
  EXPECT_EQ(tmm_get_last_report(h_, &r), TMM_ERROR_INVALID_VALUE) << "struct_size not set";
  EXPECT_NE(message().find("struct_size"), std::string::npos);
  r.struct_size = sizeof r;
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_EQ(r.struct_size, sizeof r);
  EXPECT_EQ(r.backend, TMM_BACKEND_CPU);
  EXPECT_EQ(r.device, -1);
  EXPECT_EQ(r.algorithm, TMM_ALGO_BLOCKED);
  EXPECT_STREQ(r.kernel, "cpu_blocked");
  EXPECT_EQ(r.splits, 1);
  EXPECT_EQ(r.host_threads, 1) << "a 4x3x5 product is not worth a second thread";
  EXPECT_EQ(r.total_ms, r.compute_ms) << "the CPU has no copies";
  EXPECT_EQ(r.math_mode, TMM_MATH_FP32);
  // math_mode belongs to 1.1's report: a struct without it is too small.
  tmm_report short_of_1_1{};
  short_of_1_1.struct_size = offsetof(tmm_report, math_mode);
  EXPECT_EQ(tmm_get_last_report(h_, &short_of_1_1), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(short_of_1_1.struct_size, offsetof(tmm_report, math_mode)) << "nothing written";
  // A caller built against a later header passes a larger struct: the library writes
  // what it knows, says how much, and leaves the rest alone.
  struct Later {
    tmm_report known;
    double future_field;
  } later{};
  later.known.struct_size = sizeof later;
  later.future_field = 42.0;
  ASSERT_EQ(tmm_get_last_report(h_, &later.known), TMM_SUCCESS);
  EXPECT_EQ(later.known.struct_size, sizeof(tmm_report));
  EXPECT_EQ(later.future_field, 42.0);
  EXPECT_STREQ(later.known.kernel, "cpu_blocked");
}

TEST_F(Contract, ReportNamesNaiveScaleAndEmptyCalls) {
  tmm_report r{};
  r.struct_size = sizeof r;
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_NAIVE), TMM_SUCCESS);
  ASSERT_EQ(call(), TMM_SUCCESS);
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_STREQ(r.kernel, "cpu_naive");
  ASSERT_EQ(call(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 3, 0), TMM_SUCCESS);
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_STREQ(r.kernel, "cpu_scale");
  ASSERT_EQ(call(TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 0, 3, 5), TMM_SUCCESS);
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_STREQ(r.kernel, "none");
}

TEST_F(Contract, HostThreadsOptionBoundsTheThreadsUsed) {
  const int64_t m = 512, n = 64, k = 128;  // 8 row blocks, 8.4 MFLOP: worth threads
  std::vector<float> a(size_t(m * k), 0.5f), b(size_t(k * n), 0.25f), c(size_t(m * n), 1.0f);
  tmm_report r{};
  r.struct_size = sizeof r;
  for (int threads : {1, 3, 8}) {
    ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_THREADS, threads), TMM_SUCCESS);
    ASSERT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, 1.0f, a.data(), k,
                        b.data(), n, 0.0f, c.data(), n),
              TMM_SUCCESS);
    ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
    EXPECT_EQ(r.host_threads, threads);
    for (float x : c) ASSERT_EQ(x, 0.5f * 0.25f * k);
  }
}

// ---- Aliasing -----------------------------------------------------------------

TEST_F(Contract, CSharingAnElementWithAOrBIsRejected) {
  std::vector<float> buf(64, 1.0f);
  const std::vector<float> before = buf;
  // C == A, C == B, and C overlapping the last row of A.
  EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0f, buf.data(), 4,
                      b_.data(), 4, 0.0f, buf.data(), 4),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("C shares elements with A"), std::string::npos) << message();
  EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0f, a_.data(), 4,
                      buf.data(), 4, 0.0f, buf.data(), 4),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("C shares elements with B"), std::string::npos) << message();
  EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0f, buf.data(), 4,
                      b_.data(), 4, 0.0f, buf.data() + 15, 4),
            TMM_ERROR_INVALID_VALUE);
  // Column-major names the caller's matrices, not the swapped ones.
  EXPECT_EQ(tmm_sgemm(h_, TMM_COL_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0f, buf.data(), 4,
                      b_.data(), 4, 0.0f, buf.data(), 4),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(message().find("C shares elements with A"), std::string::npos) << message();
  // A misaligned C that shares bytes, not whole floats, with A is rejected too.
  float* shifted = reinterpret_cast<float*>(reinterpret_cast<char*>(buf.data() + 5) + 2);
  EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 2, 2, 2, 1.0f, buf.data(), 4,
                      b_.data(), 2, 0.0f, shifted, 2),
            TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(std::memcmp(before.data(), buf.data(), buf.size() * sizeof(float)), 0);
  // Where A and B take no part (alpha = 0), C may be anywhere.
  EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 0.0f, buf.data(), 4,
                      buf.data(), 4, 2.0f, buf.data(), 4),
            TMM_SUCCESS);
  EXPECT_EQ(buf[0], 2.0f);
}

// One-row matrices may have any leading dimension up to INT64_MAX: the aliasing
// check still finds a shared element, and still lets neighbours through.
TEST_F(Contract, AliasingIsExactForOneRowMatricesWithHugeLeadingDimensions) {
  std::vector<float> buf(8, 1.0f);
  for (int64_t ld : {int64_t(4), INT64_MAX / 4, INT64_MAX - 1, INT64_MAX}) {
    // A = buf[0..3] (1 x 4), C = buf[3..4] (1 x 2): they share buf[3].
    EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1, 2, 4, 1.0f, buf.data(),
                        ld, b_.data(), 2, 0.0f, buf.data() + 3, ld),
              TMM_ERROR_INVALID_VALUE)
        << ld;
    EXPECT_NE(message().find("C shares elements with A"), std::string::npos) << message();
    // C = buf[4..5], right after A: allowed.
    EXPECT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1, 2, 4, 1.0f, buf.data(),
                        ld, b_.data(), 2, 0.0f, buf.data() + 4, ld),
              TMM_SUCCESS)
        << ld << ": " << message();
    // Column-major, one column each: B = buf[0..3] (4 x 1) and C = buf[2] (1 x 1).
    EXPECT_EQ(tmm_sgemm(h_, TMM_COL_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1, 1, 4, 1.0f, a_.data(), 1,
                        buf.data(), ld, 0.0f, buf.data() + 2, ld),
              TMM_ERROR_INVALID_VALUE)
        << ld;
    EXPECT_NE(message().find("C shares elements with B"), std::string::npos) << message();
    std::fill(buf.begin(), buf.end(), 1.0f);
  }
}

// LAPACK's sgetrf updates the trailing block A22 -= A21 * A12 of one column-major
// array: three submatrices with one leading dimension whose address ranges
// interleave but share no element. That call is legal BLAS and must work.
TEST_F(Contract, InterleavedSubmatricesOfOneArrayAreAllowed) {
  const int64_t n = 9, kb = 3, ld = 11;  // a 9x9 matrix in an 11-row array
  std::vector<float> full(size_t(ld * n));
  for (size_t i = 0; i < full.size(); ++i) full[i] = float(int(i % 7) - 3);
  const std::vector<float> before = full;
  auto at = [&](int64_t r, int64_t c) { return r + c * ld; };
  float* a21 = full.data() + at(kb, 0);   // (n-kb) x kb
  float* a12 = full.data() + at(0, kb);   // kb x (n-kb)
  float* a22 = full.data() + at(kb, kb);  // (n-kb) x (n-kb)
  ASSERT_EQ(tmm_sgemm(h_, TMM_COL_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, n - kb, n - kb, kb, -1.0f, a21,
                      ld, a12, ld, 1.0f, a22, ld),
            TMM_SUCCESS)
      << message();
  for (int64_t c = 0; c < n; ++c) {
    for (int64_t r = 0; r < ld; ++r) {
      float want = before[size_t(at(r, c))];
      if (r >= kb && r < n && c >= kb) {
        for (int64_t l = 0; l < kb; ++l)
          want -= before[size_t(at(r, l))] * before[size_t(at(l, c))];
      }
      ASSERT_EQ(full[size_t(at(r, c))], want) << "row " << r << " col " << c;
    }
  }
}

// ---- IEEE specials ------------------------------------------------------------

TEST_F(Contract, AlphaInfinityFollowsOneRuleOnEveryCpuAlgorithm) {
  for (tmm_algorithm a : {TMM_ALGO_NAIVE, TMM_ALGO_BLOCKED, TMM_ALGO_AUTO}) {
    for (int64_t k : {int64_t(5), int64_t(700)}) {  // 700 spans several KC slices of BLOCKED
      tmm_test::expect_alpha_inf_rule(h_, a, k);
    }
  }
}

TEST_F(Contract, InfinityInAFollowsTheSumRuleOnEveryCpuAlgorithm) {
  // One +Inf in a row of A gives +-Inf (by B's sign) in that row, NaN where B is 0,
  // and a row holding both +Inf and -Inf gives NaN wherever both meet non-zeros.
  const int64_t m = 3, n = 4, k = 600;
  std::vector<float> a(size_t(m * k), 1.0f), b(size_t(k * n), 1.0f);
  a[10] = INFINITY;                // row 0
  a[size_t(k + 5)] = INFINITY;     // row 1: +Inf early ...
  a[size_t(k + 550)] = -INFINITY;  // ... and -Inf in another KC slice
  for (int64_t j = 0; j < n; ++j) b[size_t(10 * n + j)] = j == 2 ? 0.0f : (j == 3 ? -1.0f : 1.0f);
  for (tmm_algorithm alg : {TMM_ALGO_NAIVE, TMM_ALGO_BLOCKED}) {
    std::vector<float> c(size_t(m * n), 0.0f);
    ASSERT_EQ(tmm_set_algorithm(h_, alg), TMM_SUCCESS);
    ASSERT_EQ(tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, 2.0f, a.data(), k,
                        b.data(), n, 0.0f, c.data(), n),
              TMM_SUCCESS);
    EXPECT_EQ(c[0], INFINITY);
    EXPECT_EQ(c[1], INFINITY);
    EXPECT_TRUE(std::isnan(c[2])) << "Inf * 0";
    EXPECT_EQ(c[3], -INFINITY);
    for (int64_t j = 0; j < n; ++j) EXPECT_TRUE(std::isnan(c[size_t(n + j)])) << "Inf - Inf";
    for (int64_t j = 0; j < n; ++j)
      EXPECT_EQ(c[size_t(2 * n + j)], 2.0f * float(k - 1 + b[size_t(10 * n + j)]));
  }
}

// The bug that opened issue 24: a 1 x 1 x 1 product (one row: every leading
// dimension is valid) with every leading dimension INT64_MAX overflowed in the
// aliasing check (UBSan: signed integer overflow), for every layout and transpose.
TEST_F(Contract, OneByOneProductTakesEveryLeadingDimensionUpToInt64Max) {
  for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        for (int64_t ld : {INT64_MAX / 4, INT64_MAX - 1, INT64_MAX}) {
          const float a = 3.0f, b = 5.0f;
          float c = 7.0f;
          ASSERT_EQ(tmm_sgemm(h_, layout, ta, tb, 1, 1, 1, 2.0f, &a, ld, &b, ld, 1.0f, &c, ld),
                    TMM_SUCCESS)
              << message();
          EXPECT_EQ(c, 37.0f);
        }
      }
    }
  }
}

}  // namespace
