// A kernel fault (an illegal address) destroys the process's CUDA context on that
// device: CUDA reports the same "sticky" error from every later call. The header
// promises that every later tiledmm call on that device then returns TMM_ERROR_CUDA
// with a message saying a new process is needed, and that nothing crashes. This is
// its own program because the fault ends CUDA on this device for the whole process.
// (compute-sanitizer's memcheck reports the fault on purpose: scripts/gpu-check.sh
// leaves this program out of the sanitizer runs.)
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gemm_reference.hpp"

namespace {

bool says_lost(const char* message) {
  return std::string(message).find("start a new process") != std::string::npos;
}

TEST(CudaStickyError, EveryLaterCallSaysTheContextIsLost) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  tmm_handle h = nullptr, other = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  ASSERT_EQ(tmm_create_with_backend(&other, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  float *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_EQ(cudaMalloc(&a, 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&c, 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMemset(a, 0, 1 << 20), cudaSuccess);
  ASSERT_EQ(cudaMemset(b, 0, 1 << 20), cudaSuccess);
  // C's rows are 1 GiB apart: row 1 onwards lies far outside any allocation. The
  // library cannot know an allocation's extent, so the kernel writes there.
  const int64_t m = 64, n = 1, k = 4, ldc = int64_t(1) << 28;
  tmm_status s = tmm_sgemm_device(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, 1.0f, a, k,
                                  b, n, 0.0f, c, ldc);
  if (s == TMM_SUCCESS) s = tmm_synchronize(h);
  ASSERT_EQ(s, TMM_ERROR_CUDA) << "the fault must surface as TMM_ERROR_CUDA";
  EXPECT_TRUE(says_lost(tmm_get_error_message(h))) << tmm_get_error_message(h);

  // Every later call, on this handle and on another of the same device, says so.
  std::vector<float> x(16, 1.0f), y(16, 1.0f), z(16, 0.0f);
  EXPECT_EQ(tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0f, x.data(), 4,
                      y.data(), 4, 0.0f, z.data(), 4),
            TMM_ERROR_CUDA);
  EXPECT_TRUE(says_lost(tmm_get_error_message(h))) << tmm_get_error_message(h);
  EXPECT_EQ(z, std::vector<float>(16, 0.0f)) << "C untouched";
  EXPECT_EQ(tmm_sgemm(other, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0f, x.data(), 4,
                      y.data(), 4, 0.0f, z.data(), 4),
            TMM_ERROR_CUDA);
  EXPECT_TRUE(says_lost(tmm_get_error_message(other))) << tmm_get_error_message(other);
  EXPECT_EQ(tmm_synchronize(other), TMM_ERROR_CUDA);
  tmm_handle fresh = nullptr;
  EXPECT_EQ(tmm_create_with_backend(&fresh, TMM_BACKEND_CUDA, 0), TMM_ERROR_CUDA);
  EXPECT_TRUE(says_lost(tmm_get_error_message(nullptr))) << tmm_get_error_message(nullptr);
  EXPECT_EQ(fresh, nullptr);
  // The CPU still works, and destroying the dead handles neither hangs nor crashes.
  tmm_handle cpu = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&cpu, TMM_BACKEND_CPU, 0), TMM_SUCCESS);
  EXPECT_EQ(tmm_sgemm(cpu, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 4, 4, 4, 1.0f, x.data(), 4,
                      y.data(), 4, 0.0f, z.data(), 4),
            TMM_SUCCESS);
  EXPECT_EQ(z[0], 4.0f);
  tmm_destroy(cpu);
  tmm_destroy(h);
  tmm_destroy(other);
}

}  // namespace
