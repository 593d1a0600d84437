// The public contract of the C API: versions, status strings, every invalid
// argument with its exact status, the handle staying usable after an error, the
// caller's memory untouched on failure, and NULL pointers where no element is used.
// Runs on the CPU backend (always present); CUDA-only paths are in
// test_cuda_backend.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
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
    // No CUDA: AUTO is the CPU, whatever the index. The device index itself is tested
    // only with a GPU: TMM_REQUIRE_GPU=1 makes its absence a failure.
    if (tmm_test::gpu_required()) FAIL() << "TMM_REQUIRE_GPU=1 but no usable CUDA device";
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

// tmm_create_with_devices: the arguments are checked before any device is looked for,
// and *out is written only on success.
TEST(Create, WithDevicesRejectsBadArguments) {
  tmm_handle untouched = reinterpret_cast<tmm_handle>(&untouched);
  const tmm_handle before = untouched;
  const int two[2] = {0, 0};
  EXPECT_EQ(tmm_create_with_devices(nullptr, two, 2), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_create_with_devices(&untouched, two, -1), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(std::string(tmm_get_error_message(nullptr)).find("count"), std::string::npos);
  EXPECT_EQ(tmm_create_with_devices(&untouched, two, 65), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_create_with_devices(&untouched, nullptr, 2), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_create_with_devices(&untouched, two, 0), TMM_ERROR_INVALID_VALUE);
  const int missing[2] = {0, 4096};
  EXPECT_EQ(tmm_create_with_devices(&untouched, missing, 2), TMM_ERROR_NO_DEVICE);
  const int negative[1] = {-1};
  EXPECT_EQ(tmm_create_with_devices(&untouched, negative, 1), TMM_ERROR_NO_DEVICE);
  if (!tmm_test::cuda_available()) {
    EXPECT_EQ(tmm_create_with_devices(&untouched, nullptr, 0), TMM_ERROR_NO_DEVICE);
    EXPECT_EQ(tmm_create_with_devices(&untouched, two, 2), TMM_ERROR_NO_DEVICE);
  }
  EXPECT_EQ(untouched, before);
}

// TMM_DEVICES: read by tmm_create; "all" or a list of indices where CUDA is usable, the
// CPU (as AUTO) where it is not; anything else INVALID_VALUE with the text named.
TEST(Create, DevicesFromTheEnvironment) {
  // TMM_DEVICES as it was, again when the test ends however it ends.
  struct Restore {
    const char* before = std::getenv("TMM_DEVICES");
    std::string kept = before != nullptr ? before : "";
    ~Restore() {
      if (before != nullptr) {
        setenv("TMM_DEVICES", kept.c_str(), 1);
      } else {
        unsetenv("TMM_DEVICES");
      }
    }
  } restore;
  setenv("TMM_DEVICES", "nonsense", 1);
  EXPECT_EQ(tmm_create(nullptr), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(std::string(tmm_get_error_message(nullptr)).find("out"), std::string::npos)
      << "out is checked first";
  for (const char* bad : {"none", "0,,1", "1,x", "-1", "0;1", "1234567", "0,"}) {
    setenv("TMM_DEVICES", bad, 1);
    tmm_handle h = nullptr;
    EXPECT_EQ(tmm_create(&h), TMM_ERROR_INVALID_VALUE) << bad;
    EXPECT_EQ(h, nullptr);
    EXPECT_NE(std::string(tmm_get_error_message(nullptr)).find(bad), std::string::npos) << bad;
  }
  for (const char* good : {"all", " ALL", "0", "0,0", "0, 0"}) {
    setenv("TMM_DEVICES", good, 1);
    tmm_handle h = nullptr;
    ASSERT_EQ(tmm_create(&h), TMM_SUCCESS) << good << ": " << tmm_get_error_message(nullptr);
    tmm_backend b = TMM_BACKEND_AUTO;
    ASSERT_EQ(tmm_get_backend(h, &b), TMM_SUCCESS);
    EXPECT_EQ(b, tmm_test::cuda_available() ? TMM_BACKEND_CUDA : TMM_BACKEND_CPU) << good;
    if (tmm_test::cuda_available() && std::string(good).find(',') != std::string::npos) {
      int count = 0;
      ASSERT_EQ(tmm_get_device_count(h, &count), TMM_SUCCESS);
      EXPECT_EQ(count, 2);
    }
    tmm_destroy(h);
  }
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
  EXPECT_EQ(tmm_set_workspace(nullptr, nullptr, 0), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_stream(nullptr, &s), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_synchronize(nullptr), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_reserve_host_staging(nullptr, 0), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_last_time(nullptr, &ms), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_last_timing(nullptr, &t), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_device_info(nullptr, &d), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_last_report(nullptr, &r), TMM_ERROR_INVALID_VALUE);
  tmm_device_report dr{};
  dr.struct_size = sizeof dr;
  EXPECT_EQ(tmm_get_device_count(nullptr, &i), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_device_info_at(nullptr, 0, &d), TMM_ERROR_INVALID_VALUE);
  EXPECT_EQ(tmm_get_last_device_report(nullptr, 0, &dr), TMM_ERROR_INVALID_VALUE);
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
  EXPECT_EQ(tmm_set_workspace(h_, nullptr, 0), TMM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(tmm_set_workspace(h_, &x, sizeof x), TMM_ERROR_NOT_SUPPORTED);
  int count = -5;
  EXPECT_EQ(tmm_get_device_count(h_, &count), TMM_ERROR_NOT_SUPPORTED);
  EXPECT_EQ(count, -5);
  EXPECT_EQ(tmm_get_device_info_at(h_, 0, &d), TMM_ERROR_NOT_SUPPORTED);
  const float a = 2, b = 3;
  float c = 0;
  ASSERT_EQ(
      tmm_sgemm(h_, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1, 1, 1, 1, &a, 1, &b, 1, 0, &c, 1),
      TMM_SUCCESS);
  EXPECT_EQ(c, 6.0f);
  tmm_device_report dr{};
  dr.struct_size = sizeof dr;
  EXPECT_EQ(tmm_get_last_device_report(h_, 0, &dr), TMM_ERROR_NOT_SUPPORTED);
  tmm_report r{};
  r.struct_size = sizeof r;
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_EQ(r.device_count, 0) << "the CPU computes on no device";
  EXPECT_EQ(r.host_bytes, 0);
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
  for (tmm_algorithm algorithm : {TMM_ALGO_AUTO, TMM_ALGO_BLOCKED, TMM_ALGO_NAIVE}) {
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
      if (algorithm == TMM_ALGO_AUTO && std::strncmp(r.kernel, "system BLAS (", 13) == 0)
        continue;  // AUTO on the system BLAS (tests/cpu/test_system_blas.cpp)
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
  // BLOCKED: AUTO may run the system BLAS (tests/cpu/test_system_blas.cpp).
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);
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
  ASSERT_EQ(tmm_set_algorithm(h_, TMM_ALGO_BLOCKED), TMM_SUCCESS);  // the own kernels
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

// ---- Extreme sizes and leading dimensions ---------------------------------------
// Issue 24, "no silent wrong answers": no argument that the header accepts, up to
// INT64_MAX, may make the library's arithmetic on sizes, leading dimensions or byte
// counts overflow. The sweep computes each call's status independently, in 128-bit
// arithmetic, from the header's rules alone:
//   - a negative size, or a leading dimension below max(1, columns) (row-major) or
//     max(1, rows) (column-major) of its stored matrix: INVALID_VALUE;
//   - C is needed when m, n > 0; A and B when also k > 0 and alpha != 0; a needed
//     matrix whose byte footprint ((outer - 1) * ld + inner) * 4 passes INT64_MAX:
//     INVALID_VALUE;
//   - otherwise the call is valid: where every needed matrix is small it runs on
//     buffers of exactly its footprint (ASan reports any access past them) and must
//     give SUCCESS and the exact product; valid calls on huge matrices cannot be run
//     here (no memory) and are only counted.
// Matrices a call does not need are NULL or a one-float buffer, alternately; so are
// the needed ones of an invalid call (never NULL there, so that the size checks,
// not the NULL check, must reject it).

namespace extreme {

using i128 = __int128;

constexpr int64_t kI32 = INT32_MAX;
// Sizes and leading dimensions the sweep draws from.
constexpr int64_t kSmall[] = {0, 1, 2};
constexpr int64_t kBig[] = {kI32 - 1, kI32, kI32 + 1, INT64_MAX / 4, INT64_MAX - 1, INT64_MAX};
constexpr int64_t kAll[] = {0,        1, 2, kI32 - 1, kI32, kI32 + 1, INT64_MAX / 4, INT64_MAX - 1,
                            INT64_MAX};
// A leading dimension at its minimum for the call (resolved per layout and transpose).
constexpr int64_t kMinLd = INT64_MIN;
// Needed matrices up to this many elements run on real buffers.
constexpr i128 kMaxRunElements = 4096;

// One matrix as the caller stores it: rows x cols in the call's layout.
struct Stored {
  int64_t rows, cols, ld;
  bool row_major;
  int64_t outer() const { return row_major ? rows : cols; }
  int64_t inner() const { return row_major ? cols : rows; }
  int64_t min_ld() const { return std::max<int64_t>(1, inner()); }
  // Elements from the first to the last, exactly; 0 for an empty matrix.
  i128 footprint() const { return rows == 0 || cols == 0 ? 0 : i128(outer() - 1) * ld + inner(); }
  // footprint() * 4 > INT64_MAX, without the product.
  bool bytes_overflow() const { return footprint() > INT64_MAX / 4; }
  size_t at(int64_t i, int64_t j) const { return size_t(row_major ? i * ld + j : j * ld + i); }
};

struct Call {
  tmm_layout layout;
  tmm_transpose ta, tb;
  int64_t m, n, k, lda, ldb, ldc;
  float alpha, beta;
};

enum class Outcome { kInvalid, kHuge, kRun };

// What the header says of a call, and the matrices as it stores them.
struct Expected {
  Outcome outcome;
  bool needs_ab, needs_c;
  Stored a, b, c;
};

Expected expected(const Call& x) {
  const bool row = x.layout == TMM_ROW_MAJOR;
  const bool na = x.ta == TMM_NO_TRANS, nb = x.tb == TMM_NO_TRANS;
  Expected e{Outcome::kRun,
             false,
             false,
             Stored{na ? x.m : x.k, na ? x.k : x.m, x.lda, row},
             Stored{nb ? x.k : x.n, nb ? x.n : x.k, x.ldb, row},
             Stored{x.m, x.n, x.ldc, row}};
  e.needs_c = x.m > 0 && x.n > 0;
  e.needs_ab = e.needs_c && x.k > 0 && x.alpha != 0.0f;
  if (x.m < 0 || x.n < 0 || x.k < 0) return e.outcome = Outcome::kInvalid, e;
  for (const Stored* s : {&e.a, &e.b, &e.c})
    if (s->ld < s->min_ld()) return e.outcome = Outcome::kInvalid, e;
  if (e.needs_ab && (e.a.bytes_overflow() || e.b.bytes_overflow()))
    return e.outcome = Outcome::kInvalid, e;
  if (e.needs_c && e.c.bytes_overflow()) return e.outcome = Outcome::kInvalid, e;
  const bool huge =
      (e.needs_ab && (e.a.footprint() > kMaxRunElements || e.b.footprint() > kMaxRunElements)) ||
      (e.needs_c && e.c.footprint() > kMaxRunElements);
  if (huge) e.outcome = Outcome::kHuge;
  return e;
}

// The (m, n, k, lda, ldb, ldc) of the sweep: every combination of small values;
// each parameter at each extreme (and -1) with the others small; each pair of
// parameters at each pair of extremes with the others at one small value; and m, n,
// k over every value with each leading dimension at its minimum or INT64_MAX.
std::vector<std::array<int64_t, 6>> sweep_arguments() {
  std::vector<std::array<int64_t, 6>> out;
  std::array<int64_t, 6> v{};
  // Every assignment of `values` to the parameters not in `fixed`.
  auto fill = [&](auto&& self, int i, const std::array<bool, 6>& fixed, const int64_t* values,
                  size_t count) -> void {
    if (i == 6) return out.push_back(v);
    if (fixed[size_t(i)]) return self(self, i + 1, fixed, values, count);
    for (size_t j = 0; j < count; ++j) {
      v[size_t(i)] = values[j];
      self(self, i + 1, fixed, values, count);
    }
  };
  fill(fill, 0, {}, kSmall, 3);
  for (int p = 0; p < 6; ++p) {
    std::array<bool, 6> fixed{};
    fixed[size_t(p)] = true;
    for (int64_t e : kBig) v[size_t(p)] = e, fill(fill, 0, fixed, kSmall, 3);
    v[size_t(p)] = -1, fill(fill, 0, fixed, kSmall, 3);
  }
  for (int p = 0; p < 6; ++p) {
    for (int q = p + 1; q < 6; ++q) {
      for (int64_t ep : kBig) {
        for (int64_t eq : kBig) {
          for (int64_t s : kSmall) {
            v.fill(s);
            v[size_t(p)] = ep;
            v[size_t(q)] = eq;
            out.push_back(v);
          }
        }
      }
    }
  }
  for (int64_t m : kAll)
    for (int64_t n : kAll)
      for (int64_t k : kAll)
        for (int lds = 0; lds < 8; ++lds)
          out.push_back({m, n, k, lds & 1 ? INT64_MAX : kMinLd, lds & 2 ? INT64_MAX : kMinLd,
                         lds & 4 ? INT64_MAX : kMinLd});
  return out;
}

// The calls of the sweep, kMinLd resolved, for every layout, transpose pair, alpha in
// {0, 1} and beta in {0, 1}.
template <class Visit>
void for_each_call(Visit&& visit) {
  for (const std::array<int64_t, 6>& v : sweep_arguments()) {
    for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
      for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
        for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
          Call x{layout, ta, tb, v[0], v[1], v[2], v[3], v[4], v[5], 1.0f, 1.0f};
          const Expected e = expected(x);  // its stored shapes give the minima
          if (x.lda == kMinLd) x.lda = e.a.min_ld();
          if (x.ldb == kMinLd) x.ldb = e.b.min_ld();
          if (x.ldc == kMinLd) x.ldc = e.c.min_ld();
          for (float alpha : {0.0f, 1.0f}) {
            for (float beta : {0.0f, 1.0f}) {
              x.alpha = alpha;
              x.beta = beta;
              visit(x);
            }
          }
        }
      }
    }
  }
}

std::string describe(const Call& x) {
  return std::string(x.layout == TMM_ROW_MAJOR ? "row " : "col ") +
         (x.ta == TMM_NO_TRANS ? "N" : "T") + (x.tb == TMM_NO_TRANS ? "N" : "T") +
         " m=" + std::to_string(x.m) + " n=" + std::to_string(x.n) + " k=" + std::to_string(x.k) +
         " lda=" + std::to_string(x.lda) + " ldb=" + std::to_string(x.ldb) +
         " ldc=" + std::to_string(x.ldc) + " alpha=" + std::to_string(x.alpha) +
         " beta=" + std::to_string(x.beta);
}

// The operands of one call: exact footprints where it runs, one-float stand-ins
// elsewhere (never read), NULL for every other unneeded matrix.
struct Operands {
  std::vector<float> a, b, c;
  // Each made on its own, not copied: GCC 13's -Warray-bounds misreads a one-float
  // vector's copy.
  std::vector<float> one_a = std::vector<float>(1, 7.0f), one_b = std::vector<float>(1, 7.0f),
                     one_c = std::vector<float>(1, 7.0f);
  const float *pa = nullptr, *pb = nullptr;
  float* pc = nullptr;

  Operands(const Call& x, const Expected& e, size_t parity) {
    const bool run = e.outcome == Outcome::kRun;
    if (run && e.needs_ab) {
      a.resize(size_t(e.a.footprint()));
      b.resize(size_t(e.b.footprint()));
      for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i % 5) - 2);
      for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i % 3) - 1);
    }
    if (run && e.needs_c) {
      c.resize(size_t(e.c.footprint()));
      // beta = 0 must not read C: NaN there must not reach the result.
      for (size_t i = 0; i < c.size(); ++i)
        c[i] = x.beta == 0.0f ? std::nanf("") : float(int(i % 7) - 3);
    }
    const bool stand_in = parity % 2 == 0;
    pa = !a.empty() ? a.data() : (e.needs_ab || stand_in) ? one_a.data() : nullptr;
    pb = !b.empty() ? b.data() : (e.needs_ab || stand_in) ? one_b.data() : nullptr;
    pc = !c.empty() ? c.data() : (e.needs_c || stand_in) ? one_c.data() : nullptr;
  }
};

// C after the call against the header: the exact product (small integers) in its
// m x n part, every other element of its footprint untouched (NaN included).
void expect_product(const Call& x, const Expected& e, const Operands& in,
                    const std::vector<float>& c0) {
  if (!e.needs_c) return;
  std::vector<bool> inside(c0.size(), false);
  for (int64_t i = 0; i < x.m; ++i) {
    for (int64_t j = 0; j < x.n; ++j) {
      const size_t at = e.c.at(i, j);
      inside[at] = true;
      float want = 0.0f;
      if (e.needs_ab) {
        for (int64_t l = 0; l < x.k; ++l) {
          const float av = in.a[x.ta == TMM_NO_TRANS ? e.a.at(i, l) : e.a.at(l, i)];
          const float bv = in.b[x.tb == TMM_NO_TRANS ? e.b.at(l, j) : e.b.at(j, l)];
          want += av * bv;
        }
        want *= x.alpha;
      }
      if (x.beta != 0.0f) want += x.beta * c0[at];
      ASSERT_EQ(in.c[at], want) << describe(x) << ": C(" << i << ", " << j << ")";
    }
  }
  for (size_t i = 0; i < c0.size(); ++i) {
    if (!inside[i]) {
      ASSERT_EQ(std::memcmp(&in.c[i], &c0[i], sizeof(float)), 0) << describe(x) << ": padding";
    }
  }
}

struct Counts {
  size_t invalid = 0, huge = 0, run = 0;
};

// One tmm_sgemm call of the sweep against the expected outcome.
void check_sgemm(tmm_handle h, const Call& x, size_t parity, Counts& counts) {
  const Expected e = expected(x);
  if (e.outcome == Outcome::kHuge) {
    ++counts.huge;
    return;
  }
  Operands in(x, e, parity);
  const std::vector<float> a0 = in.a, b0 = in.b, c0 = in.c;
  const tmm_status s = tmm_sgemm(h, x.layout, x.ta, x.tb, x.m, x.n, x.k, x.alpha, in.pa, x.lda,
                                 in.pb, x.ldb, x.beta, in.pc, x.ldc);
  const std::string message = tmm_get_error_message(h);
  if (e.outcome == Outcome::kInvalid) {
    ++counts.invalid;
    ASSERT_EQ(s, TMM_ERROR_INVALID_VALUE) << describe(x);
    ASSERT_FALSE(message.empty()) << describe(x);
    ASSERT_EQ(in.one_c[0], 7.0f) << describe(x) << ": a rejected call wrote C";
    return;
  }
  ++counts.run;
  ASSERT_EQ(s, TMM_SUCCESS) << describe(x) << ": " << message;
  ASSERT_TRUE(in.a == a0 && in.b == b0) << describe(x) << ": A or B written";
  ASSERT_EQ(in.one_c[0], 7.0f) << describe(x) << ": a stand-in for C written";
  expect_product(x, e, in, c0);
}

// A matrix behind tmm_host_io for the sweep: copies within its vector only; a
// stand-in (no vector) for a matrix the call must never touch.
struct IoMatrix {
  std::vector<float>* data;
  bool touched = false, out_of_range = false;
  tmm_host_io io{sizeof(tmm_host_io), &IoMatrix::read, &IoMatrix::write, this};

  explicit IoMatrix(std::vector<float>* v) : data(v) {}
  bool enter(int64_t offset, int64_t count) {
    touched = true;
    out_of_range = out_of_range || data == nullptr || offset < 0 || count < 0 ||
                   i128(offset) + count > i128(data->size());
    return !out_of_range;
  }
  static int read(void* user, int64_t offset, int64_t count, float* dst) {
    auto* self = static_cast<IoMatrix*>(user);
    if (!self->enter(offset, count)) return 1;
    std::memcpy(dst, self->data->data() + offset, size_t(count) * sizeof(float));
    return 0;
  }
  static int write(void* user, int64_t offset, int64_t count, const float* src) {
    auto* self = static_cast<IoMatrix*>(user);
    if (!self->enter(offset, count)) return 1;
    std::memcpy(self->data->data() + offset, src, size_t(count) * sizeof(float));
    return 0;
  }
};

// The same call through tmm_sgemm_io: the same outcome as the pointer call, and only
// the elements of needed matrices read or written.
void check_sgemm_io(tmm_handle h, const Call& x, size_t parity, Counts& counts) {
  const Expected e = expected(x);
  if (e.outcome == Outcome::kHuge) {
    ++counts.huge;
    return;
  }
  Operands in(x, e, parity);
  const std::vector<float> c0 = in.c;
  const bool run = e.outcome == Outcome::kRun;
  IoMatrix a(run && e.needs_ab ? &in.a : nullptr), b(run && e.needs_ab ? &in.b : nullptr),
      c(run && e.needs_c ? &in.c : nullptr);
  const tmm_status s =
      tmm_sgemm_io(h, x.layout, x.ta, x.tb, x.m, x.n, x.k, x.alpha, in.pa ? &a.io : nullptr, x.lda,
                   in.pb ? &b.io : nullptr, x.ldb, x.beta, in.pc ? &c.io : nullptr, x.ldc);
  const std::string message = tmm_get_error_message(h);
  ASSERT_FALSE(a.out_of_range || b.out_of_range || c.out_of_range)
      << describe(x) << ": an io function was called outside its matrix";
  if (e.outcome == Outcome::kInvalid) {
    ++counts.invalid;
    ASSERT_EQ(s, TMM_ERROR_INVALID_VALUE) << describe(x);
    ASSERT_FALSE(message.empty()) << describe(x);
    ASSERT_FALSE(a.touched || b.touched || c.touched) << describe(x) << ": a rejected call's io";
    return;
  }
  ++counts.run;
  ASSERT_EQ(s, TMM_SUCCESS) << describe(x) << ": " << message;
  ASSERT_TRUE(e.needs_ab || !(a.touched || b.touched)) << describe(x) << ": A or B touched";
  ASSERT_TRUE(e.needs_c || !c.touched) << describe(x) << ": C touched";
  expect_product(x, e, in, c0);
}

}  // namespace extreme

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

// The sweep described above; one call in three on NAIVE, the others on AUTO (BLOCKED).
TEST_F(Contract, ExtremeSizesAndLeadingDimensionsGiveTheHeadersStatus) {
  extreme::Counts counts;
  size_t calls = 0;
  extreme::for_each_call([&](const extreme::Call& x) {
    if (HasFatalFailure()) return;
    ASSERT_EQ(tmm_set_algorithm(h_, calls % 3 == 0 ? TMM_ALGO_NAIVE : TMM_ALGO_AUTO), TMM_SUCCESS);
    extreme::check_sgemm(h_, x, calls++, counts);
  });
  ASSERT_FALSE(HasFatalFailure());
  std::printf("%zu calls: %zu invalid, %zu run, %zu valid but too large to run\n", calls,
              counts.invalid, counts.run, counts.huge);
  EXPECT_GT(counts.invalid, 0u);
  EXPECT_GT(counts.run, 0u);
  EXPECT_GT(counts.huge, 0u);
}

// The sweep through tmm_sgemm_io, on every seventh call of it (seven is prime to the
// 32 variants of each size, so every variant comes round): the offsets the library
// hands to the functions stay inside each matrix.
TEST_F(Contract, ExtremeSizesAndLeadingDimensionsThroughHostIo) {
  extreme::Counts counts;
  size_t calls = 0;
  extreme::for_each_call([&](const extreme::Call& x) {
    if (HasFatalFailure() || calls++ % 7 != 0) return;
    extreme::check_sgemm_io(h_, x, calls / 7, counts);
  });
  ASSERT_FALSE(HasFatalFailure());
  std::printf("%zu io calls: %zu invalid, %zu run, %zu valid but too large to run\n",
              counts.invalid + counts.run + counts.huge, counts.invalid, counts.run, counts.huge);
  EXPECT_GT(counts.invalid, 0u);
  EXPECT_GT(counts.run, 0u);
  EXPECT_GT(counts.huge, 0u);
}

}  // namespace
