// Every allocation and every thread start of a call made to fail in turn, and the
// allocations of warm calls counted.
//
// This program replaces the global operator new (the library's C++ allocations come
// here, as the standard allows) and interposes pthread_create (std::thread starts
// its threads through it). Armed, the n-th allocation since arming throws
// std::bad_alloc, or the j-th thread start returns EAGAIN. The contract under test:
//   - a call either fails with TMM_ERROR_OUT_OF_MEMORY and leaves C bit-identical,
//     or succeeds with the exact result (a worker that could not start had its share
//     run by the caller), never aborts;
//   - the handle stays usable after each failure;
//   - a warm call allocates nothing.
// "Pretend CPUs" are TMM_OPTION_HOST_THREADS: the thread count the library uses.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <new>
#include <vector>

#include "gemm_reference.hpp"

namespace {

std::atomic<bool> g_armed{false};
std::atomic<long> g_allocations{0};      // since arming
std::atomic<long> g_fail_allocation{0};  // 1-based; 0 = none
std::atomic<long> g_thread_starts{0};
std::atomic<long> g_fail_thread_from{0};  // this and every later start fail; 0 = none

bool allocation_fails() {
  if (!g_armed.load(std::memory_order_relaxed)) return false;
  const long n = g_allocations.fetch_add(1) + 1;
  return n == g_fail_allocation.load();
}

void* allocate(std::size_t size) {
  if (allocation_fails()) throw std::bad_alloc();
  void* p = std::malloc(size ? size : 1);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void* allocate_nothrow(std::size_t size) noexcept {
  if (allocation_fails()) return nullptr;
  return std::malloc(size ? size : 1);
}

void* allocate_aligned(std::size_t size, std::align_val_t align) {
  if (allocation_fails()) throw std::bad_alloc();
  void* p = nullptr;
  if (posix_memalign(&p, std::max(sizeof(void*), std::size_t(align)), size ? size : 1) != 0)
    throw std::bad_alloc();
  return p;
}

}  // namespace

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate_nothrow(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate_nothrow(n); }
void* operator new(std::size_t n, std::align_val_t a) { return allocate_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate_aligned(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                              void* arg) {
  using Fn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "pthread_create"));
  if (g_armed.load()) {
    const long j = g_thread_starts.fetch_add(1) + 1;
    const long from = g_fail_thread_from.load();
    if (from != 0 && j >= from) return EAGAIN;
  }
  return real(thread, attr, start, arg);
}

namespace {

struct Arm {
  Arm(long fail_allocation, long fail_threads_from) {
    g_allocations = 0;
    g_thread_starts = 0;
    g_fail_allocation = fail_allocation;
    g_fail_thread_from = fail_threads_from;
    g_armed = true;
  }
  ~Arm() { g_armed = false; }
  long allocations() const { return g_allocations.load(); }
  long thread_starts() const { return g_thread_starts.load(); }
};

// A product whose result is exact in FP32 (small integers), large enough for the
// CPU BLOCKED kernel to use 8 threads and several k slices: 520 rows = 9 row
// blocks, k = 300 > one 256-deep slice.
struct Product {
  int64_t m = 520, n = 40, k = 300;
  std::vector<float> a, b, c0, want;
  Product() {
    a.resize(size_t(m * k));
    b.resize(size_t(k * n));
    c0.resize(size_t(m * n));
    for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i * 7 % 5) - 2);
    for (size_t i = 0; i < b.size(); ++i) b[i] = float(int(i * 11 % 5) - 2);
    for (size_t i = 0; i < c0.size(); ++i) c0[i] = float(int(i % 9) - 4);
    want.resize(c0.size());
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0;
        for (int64_t q = 0; q < k; ++q) dot += double(a[size_t(i * k + q)]) * b[size_t(q * n + j)];
        want[size_t(i * n + j)] = float(2.0 * dot + 3.0 * c0[size_t(i * n + j)]);
      }
  }
  tmm_status run(tmm_handle h, std::vector<float>& c) const {
    return tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, m, n, k, 2.0f, a.data(), k,
                     b.data(), n, 3.0f, c.data(), n);
  }
};

const Product& product() {
  static const Product p;
  return p;
}

tmm_handle cpu_handle(int threads) {
  tmm_handle h = nullptr;
  EXPECT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CPU, 0), TMM_SUCCESS);
  EXPECT_EQ(tmm_set_option(h, TMM_OPTION_HOST_THREADS, threads), TMM_SUCCESS);
  return h;
}

// One armed call: OUT_OF_MEMORY with C untouched, or SUCCESS with the exact result;
// then the handle must still compute correctly. Returns the allocations the call made.
long armed_call(tmm_handle h, long fail_allocation, long fail_threads_from, bool* injected) {
  const Product& p = product();
  std::vector<float> c = p.c0;
  tmm_status s;
  long made;
  long starts;
  {
    Arm arm(fail_allocation, fail_threads_from);
    s = p.run(h, c);
    made = arm.allocations();
    starts = arm.thread_starts();
  }
  *injected = (fail_allocation != 0 && made >= fail_allocation) ||
              (fail_threads_from != 0 && starts >= fail_threads_from);
  if (s == TMM_ERROR_OUT_OF_MEMORY) {
    EXPECT_EQ(std::memcmp(c.data(), p.c0.data(), c.size() * sizeof(float)), 0)
        << "C changed by a call that failed (allocation " << fail_allocation << ")";
  } else {
    EXPECT_EQ(s, TMM_SUCCESS) << tmm_status_string(s);
    EXPECT_EQ(c, p.want) << "wrong result with allocation " << fail_allocation << " / thread start "
                         << fail_threads_from << " failing";
  }
  std::vector<float> again = p.c0;
  EXPECT_EQ(p.run(h, again), TMM_SUCCESS) << "the handle must stay usable";
  EXPECT_EQ(again, p.want);
  return made;
}

// Whether the library's allocations reach this program's operator new: tmm_create
// allocates its handle. A libtiledmm linked with its own copy of libstdc++ (a
// toolchain whose g++ links it statically, as the GPU machine's /opt/gcc did) keeps
// operator new to itself, and then every count here would read 0 whatever it does.
bool library_allocations_visible() {
  Arm arm(0, 0);
  tmm_handle h = nullptr;
  const bool created = tmm_create_with_backend(&h, TMM_BACKEND_CPU, 0) == TMM_SUCCESS;
  const long made = arm.allocations();
  if (created) tmm_destroy(h);
  return made > 0;
}

#define TMM_SKIP_UNLESS_ALLOCATIONS_VISIBLE()                                               \
  do {                                                                                      \
    if (!library_allocations_visible())                                                     \
      GTEST_SKIP() << "the library's allocations do not reach this program's operator new " \
                      "(libstdc++ linked into libtiledmm statically?): nothing to count";   \
  } while (0)

void sweep_allocations(int threads, bool warm) {
  TMM_SKIP_UNLESS_ALLOCATIONS_VISIBLE();
  long n = 1;
  for (;; ++n) {
    tmm_handle h = cpu_handle(threads);
    if (warm) {
      std::vector<float> c = product().c0;
      ASSERT_EQ(product().run(h, c), TMM_SUCCESS);
    }
    bool injected = false;
    armed_call(h, n, 0, &injected);
    tmm_destroy(h);
    if (::testing::Test::HasFailure() || !injected) break;
  }
  // A cold call allocates (workspaces, threads); the sweep must have tried each one.
  if (!warm) {
    EXPECT_GT(n, threads) << "the cold call's allocations were swept";
  }
}

TEST(AllocationFaults, EveryAllocationOfAColdCallFailsCleanly2Threads) {
  sweep_allocations(2, false);
}
TEST(AllocationFaults, EveryAllocationOfAColdCallFailsCleanly8Threads) {
  sweep_allocations(8, false);
}
TEST(AllocationFaults, EveryAllocationOfAWarmCallFailsCleanly2Threads) {
  sweep_allocations(2, true);
}
TEST(AllocationFaults, EveryAllocationOfAWarmCallFailsCleanly8Threads) {
  sweep_allocations(8, true);
}

TEST(AllocationFaults, ThreadsThatCannotStartHaveTheirShareRunInline) {
  for (int threads : {2, 8}) {
    for (long from = 1; from < threads; ++from) {
      tmm_handle h = cpu_handle(threads);
      bool injected = false;
      armed_call(h, 0, from, &injected);
      EXPECT_TRUE(injected) << "thread start " << from << " of " << threads - 1;
      tmm_destroy(h);
    }
  }
}

TEST(AllocationFaults, CreateFailsCleanlyAtEveryAllocation) {
  TMM_SKIP_UNLESS_ALLOCATIONS_VISIBLE();
  for (long n = 1;; ++n) {
    tmm_handle h = reinterpret_cast<tmm_handle>(0x1);
    tmm_status s;
    long made;
    {
      Arm arm(n, 0);
      s = tmm_create_with_backend(&h, TMM_BACKEND_CPU, 0);
      made = arm.allocations();
    }
    if (s == TMM_SUCCESS) {
      tmm_destroy(h);
      ASSERT_LT(made, n) << "success although an allocation failed";
      break;
    }
    ASSERT_EQ(s, TMM_ERROR_OUT_OF_MEMORY);
    ASSERT_EQ(h, reinterpret_cast<tmm_handle>(0x1)) << "out written on failure";
  }
}

TEST(AllocationFaults, InvalidCallsKeepTheirStatusWithoutMemoryForTheMessage) {
  tmm_handle h = cpu_handle(1);
  float x[4] = {};
  for (long n = 1; n < 8; ++n) {
    tmm_status s;
    {
      Arm arm(n, 0);
      s = tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 2, 2, 2, 1.0f, x, 1, x, 2, 0.0f,
                    x + 2, 2);  // lda too small
    }
    EXPECT_EQ(s, TMM_ERROR_INVALID_VALUE)
        << "allocation " << n << " failing: " << tmm_get_error_message(h);
  }
  tmm_destroy(h);
}

// A valid tmm_sgemm_io call whose dense host copy of A, 2^61 - 1 floats (just under
// 2^63 bytes), no host can allocate: the real allocation fails (nothing injected), the
// call says OUT_OF_MEMORY before any io function runs, and the handle works on. (Here
// and not in test_api_contract: ASan and valgrind abort on such a request instead of
// failing it.)
int io_must_not_run(void* called, int64_t, int64_t, float*) {
  *static_cast<bool*>(called) = true;
  return 1;
}
int io_write_must_not_run(void* called, int64_t, int64_t, const float*) {
  *static_cast<bool*>(called) = true;
  return 1;
}

TEST(AllocationFaults, HostIoCopyLargerThanAnyHostIsOutOfMemory) {
  tmm_handle h = cpu_handle(1);
  bool called = false;
  const tmm_host_io io{sizeof(tmm_host_io), io_must_not_run, io_write_must_not_run, &called};
  const int64_t k = INT64_MAX / 4;
  EXPECT_EQ(tmm_sgemm_io(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1, 1, k, 1.0f, &io, k, &io,
                         1, 1.0f, &io, 1),
            TMM_ERROR_OUT_OF_MEMORY)
      << tmm_get_error_message(h);
  EXPECT_FALSE(called) << "an io function ran before the allocation";
  std::vector<float> c = product().c0;
  EXPECT_EQ(product().run(h, c), TMM_SUCCESS) << tmm_get_error_message(h);
  tmm_destroy(h);
}

// ---- Allocations of warm calls ----------------------------------------------

long allocations_of(const std::function<void()>& body) {
  Arm arm(0, 0);
  body();
  return arm.allocations();
}

// The CPU's AUTO loads the system BLAS (lib/cpu/system_blas.hpp) at the first product
// of the process; OpenBLAS starts its threads as it loads, and raises SIGINT when one
// cannot start. Loading it is not a part of a call this program arms, so the first
// product runs here, before any test.
class LoadSystemBlas : public ::testing::Environment {
 public:
  void SetUp() override {
    tmm_handle h = nullptr;
    ASSERT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CPU, 0), TMM_SUCCESS);
    float a = 1.0f, b = 1.0f, c = 0.0f;
    EXPECT_EQ(tmm_sgemm(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, 1, 1, 1, 1.0f, &a, 1, &b, 1,
                        0.0f, &c, 1),
              TMM_SUCCESS);
    tmm_destroy(h);
  }
};
const ::testing::Environment* const load_system_blas =
    ::testing::AddGlobalTestEnvironment(new LoadSystemBlas);

// AUTO on the system BLAS (where there is one; else the own kernels) allocates nothing
// of its own once warm; the BLAS's own memory is its business (malloc, not operator new).
TEST(WarmCalls, CpuAutoCallsAllocateNothing) {
  TMM_SKIP_UNLESS_ALLOCATIONS_VISIBLE();
  tmm_handle h = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CPU, 0), TMM_SUCCESS);
  std::vector<float> c = product().c0;
  ASSERT_EQ(product().run(h, c), TMM_SUCCESS);
  c = product().c0;
  tmm_status s = TMM_ERROR_INTERNAL;
  EXPECT_EQ(allocations_of([&] { s = product().run(h, c); }), 0);
  EXPECT_EQ(s, TMM_SUCCESS);
  EXPECT_EQ(c, product().want);
  tmm_destroy(h);
}

TEST(WarmCalls, CpuCallsAllocateNothing) {
  TMM_SKIP_UNLESS_ALLOCATIONS_VISIBLE();
  for (tmm_algorithm alg : {TMM_ALGO_BLOCKED, TMM_ALGO_NAIVE}) {
    for (int threads : {1, 2, 8}) {
      tmm_handle h = cpu_handle(threads);
      ASSERT_EQ(tmm_set_algorithm(h, alg), TMM_SUCCESS);
      std::vector<float> c = product().c0;
      ASSERT_EQ(product().run(h, c), TMM_SUCCESS);  // cold: workspaces, threads
      tmm_status s = TMM_ERROR_INTERNAL;
      EXPECT_EQ(allocations_of([&] { s = product().run(h, c); }), 0)
          << "algorithm " << alg << ", " << threads << " threads";
      EXPECT_EQ(s, TMM_SUCCESS);
      tmm_destroy(h);
    }
  }
}

TEST(WarmCalls, CudaCallsAllocateNothing) {
  TMM_SKIP_OR_FAIL_WITHOUT_GPU();
  TMM_SKIP_UNLESS_ALLOCATIONS_VISIBLE();
  tmm_handle h = nullptr;
  ASSERT_EQ(tmm_create_with_backend(&h, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  const Product& p = product();
  std::vector<float> c = p.c0;
  ASSERT_EQ(p.run(h, c), TMM_SUCCESS);
  tmm_status s = TMM_ERROR_INTERNAL;
  EXPECT_EQ(allocations_of([&] { s = p.run(h, c); }), 0) << "host API";
  EXPECT_EQ(s, TMM_SUCCESS);
#if TMM_TEST_WITH_CUDA
  float *da = nullptr, *db = nullptr, *dc = nullptr;
  ASSERT_EQ(cudaMalloc(&da, p.a.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&db, p.b.size() * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dc, p.c0.size() * sizeof(float)), cudaSuccess);
  auto device_call = [&] {
    s = tmm_sgemm_device(h, TMM_ROW_MAJOR, TMM_NO_TRANS, TMM_NO_TRANS, p.m, p.n, p.k, 1.0f, da, p.k,
                         db, p.n, 0.0f, dc, p.n);
  };
  device_call();
  ASSERT_EQ(s, TMM_SUCCESS);
  EXPECT_EQ(allocations_of(device_call), 0) << "device API";
  EXPECT_EQ(s, TMM_SUCCESS);
  EXPECT_EQ(tmm_synchronize(h), TMM_SUCCESS);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
#endif
  tmm_destroy(h);
}

}  // namespace
