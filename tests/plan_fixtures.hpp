// The device profiles and problem shapes the planners are tested on, host C++ that
// needs no GPU: the tests of the planner, the stream plan, dispatch's choice of row
// and the streamed engine, and the planner's golden output (tests/planner_golden.cpp),
// all plan for the same H100, A100, T4 and 80-SM part, defined once here.
#pragma once

#include <cstdint>
#include <vector>

#include "core/device_profile.hpp"
#include "core/gemm_problem.hpp"

namespace tmm_test {

// ---- Device profiles this machine need not have ---------------------------------

inline tiledmm::DeviceProfile h100() {  // H100 SXM: 132 SMs, 1.98 GHz, 3.35 TB/s, 228 KiB per SM
  tiledmm::DeviceProfile d;
  d.multiprocessors = 132;
  d.cc_major = 9;
  d.cc_minor = 0;
  d.clock_hz = 1.98e9;
  d.memory_bandwidth = 3.35e12;
  d.shared_memory_per_sm = 233472;
  d.shared_memory_per_block_optin = 232448;
  d.max_threads_per_sm = 2048;
  d.registers_per_sm = 65536;
  return d;
}

inline tiledmm::DeviceProfile a100() {  // A100 SXM: 108 SMs, 1.41 GHz, 64 FP32 lanes per SM
  tiledmm::DeviceProfile d = h100();
  d.multiprocessors = 108;
  d.cc_major = 8;
  d.clock_hz = 1.41e9;
  d.memory_bandwidth = 2.04e12;
  d.shared_memory_per_sm = 167936;
  d.shared_memory_per_block_optin = 166912;
  return d;
}

inline tiledmm::DeviceProfile t4() {  // T4: Turing, 40 SMs, no TF32 tensor cores
  tiledmm::DeviceProfile d = h100();
  d.multiprocessors = 40;
  d.cc_major = 7;
  d.cc_minor = 5;
  d.clock_hz = 1.59e9;
  d.memory_bandwidth = 0.32e12;
  d.shared_memory_per_sm = 65536;
  d.shared_memory_per_block_optin = 65536;
  d.max_threads_per_sm = 1024;
  return d;
}

inline tiledmm::DeviceProfile consumer80() {  // an 80-SM Ampere consumer part (RTX 3080 Ti class)
  tiledmm::DeviceProfile d = h100();
  d.multiprocessors = 80;
  d.cc_major = 8;
  d.cc_minor = 6;
  d.clock_hz = 1.67e9;
  d.memory_bandwidth = 0.91e12;
  d.shared_memory_per_sm = 102400;
  d.shared_memory_per_block_optin = 101376;
  d.max_threads_per_sm = 1536;
  return d;
}

inline tiledmm::DeviceProfile v100() {  // V100 SXM2: Volta, 80 SMs, 32 FP64 lanes per SM
  tiledmm::DeviceProfile d = h100();
  d.multiprocessors = 80;
  d.cc_major = 7;
  d.cc_minor = 0;
  d.clock_hz = 1.53e9;
  d.memory_bandwidth = 0.9e12;
  d.shared_memory_per_sm = 98304;
  d.shared_memory_per_block_optin = 98304;
  return d;
}

inline tiledmm::DeviceProfile ada58() {  // an Ada part (cc 8.9, L4 class): 58 SMs
  tiledmm::DeviceProfile d = consumer80();
  d.multiprocessors = 58;
  d.cc_minor = 9;
  d.clock_hz = 2.04e9;
  d.memory_bandwidth = 0.3e12;
  d.max_threads_per_sm = 1536;
  return d;
}

// A row-major m x n x k product, alpha 1, beta 0, dense operands (no pointers: the
// planners never read them).
inline tiledmm::GemmProblem shape(int64_t m, int64_t n, int64_t k) {
  tiledmm::GemmProblem p{};
  p.m = m;
  p.n = n;
  p.k = k;
  p.alpha = 1.0f;
  p.lda = k;
  p.ldb = n;
  p.ldc = n;
  return p;
}

struct Profile {
  const char* name;
  tiledmm::DeviceProfile device;
};

inline std::vector<Profile> profiles() {
  return {{"H100", h100()}, {"A100", a100()}, {"80-SM", consumer80()}};
}

// 140 shapes from 1 x 1 x 1 to 20000 x 9000 x 16384.
inline std::vector<tiledmm::GemmProblem> shapes() {
  std::vector<tiledmm::GemmProblem> all;
  for (int64_t m : {1, 64, 200, 1000, 4096, 8192, 20000})
    for (int64_t n : {1, 100, 512, 4096, 9000})
      for (int64_t k : {1, 300, 2048, 16384}) all.push_back(shape(m, n, k));
  return all;
}

// ---- Extreme sizes (issue 24) ---------------------------------------------------
// The planners take every problem make_problem accepts: sizes up to INT64_MAX where
// the call does not use them (m or n = 0; k with alpha = 0) and operands of up to
// INT64_MAX bytes. None of their arithmetic may overflow (the sanitizer build's UBSan
// stops at any that does).

inline std::vector<tiledmm::GemmProblem> extreme_problems() {
  static float x;  // a stand-in: the planners never read the matrices
  const int64_t big = INT64_MAX, most = INT64_MAX / 4;  // most: 2^61 - 1 floats
  const int64_t wide = (int64_t(1) << 20) + 1, deep = int64_t(1) << 40;
  struct Args {
    bool ta, tb;
    int64_t m, n, k;
    float alpha;
    int64_t lda, ldb, ldc;
  };
  const Args all[] = {
      {false, false, big, 0, big, 1.0f, big, 1, 1},      // empty, m and k INT64_MAX
      {false, false, 0, big, big, 1.0f, big, big, big},  // empty, n and k INT64_MAX
      {false, false, 1, 1, big, 0.0f, big, 1, 1},        // alpha = 0: C = beta * C
      {false, false, 2, 3, big, 0.0f, big, 3, 3},
      {false, false, most, 1, 1, 1.0f, 1, 1, 1},  // A and C of 2^61 - 1 floats
      {false, false, 1, most, 1, 1.0f, 1, most, most},
      {false, false, 1, 1, most, 1.0f, most, 1, 1},
      {true, true, 1, 1, most, 1.0f, 1, most, 1},
      {false, true, 1, wide, deep, 1.0f, deep, deep, wide},  // B: 2^60 + 2^40 floats
      {true, false, wide, 1, deep, 1.0f, wide, 1, 1},
      {false, false, int64_t(1) << 30, int64_t(1) << 30, int64_t(1) << 30, 1.0f, int64_t(1) << 30,
       int64_t(1) << 30, int64_t(1) << 30},
  };
  std::vector<tiledmm::GemmProblem> out;
  for (const Args& a : all)
    out.push_back(tiledmm::make_problem(tiledmm::Layout::RowMajor, a.ta, a.tb, a.m, a.n, a.k,
                                        a.alpha, &x, a.lda, &x, a.ldb, 1.0f, &x, a.ldc));
  // A strided batch of no products: nothing to compute, whatever m, n and k (none of them
  // bounded by a matrix's bytes).
  for (int64_t n : {int64_t(64), big}) {
    tiledmm::GemmProblem none = out[0];
    none.n = n;
    none.batch = 0;
    out.push_back(none);
  }
  return out;
}

}  // namespace tmm_test
