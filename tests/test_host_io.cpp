// tmm_sgemm_io: host matrices behind the caller's functions (what the Java binding
// passes float[] through). The result must be the pointer call's, bit for bit, on
// every path (CPU; CUDA direct and streamed, many tiles); C's padding is never
// written; beta = 0 never reads C; a failing function is TMM_ERROR_CALLBACK naming
// the operand, and the handle works on. CUDA cases skip without a GPU (fail with
// TMM_REQUIRE_GPU=1).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gemm_reference.hpp"

namespace {

using tmm_test::GemmCase;

// One matrix of a GemmCase behind tmm_host_io: bounds-checked copies, counted, with
// the threads that made them, and an optional failure on the n-th call.
struct ArrayIo {
  std::vector<float>* data = nullptr;
  std::atomic<int> reads{0}, writes{0};
  std::atomic<int> fail_at{-1};  // fail the call with this index (reads and writes)
  std::atomic<int> calls{0};
  std::mutex mutex;
  std::set<std::thread::id> threads;
  tmm_host_io io{};

  explicit ArrayIo(std::vector<float>& v) : data(&v) {
    io.struct_size = sizeof io;
    io.read = &ArrayIo::read;
    io.write = &ArrayIo::write;
    io.user = this;
  }
  bool enter(int64_t offset, int64_t count) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      threads.insert(std::this_thread::get_id());
    }
    const int index = calls.fetch_add(1);
    if (index == fail_at.load()) return false;
    return offset >= 0 && count >= 0 && size_t(offset + count) <= data->size();
  }
  static int read(void* user, int64_t offset, int64_t count, float* dst) {
    auto* self = static_cast<ArrayIo*>(user);
    if (!self->enter(offset, count)) return 5;
    self->reads.fetch_add(1);
    std::memcpy(dst, self->data->data() + offset, size_t(count) * sizeof(float));
    return 0;
  }
  static int write(void* user, int64_t offset, int64_t count, const float* src) {
    auto* self = static_cast<ArrayIo*>(user);
    if (!self->enter(offset, count)) return 6;
    self->writes.fetch_add(1);
    std::memcpy(self->data->data() + offset, src, size_t(count) * sizeof(float));
    return 0;
  }
};

tmm_status run_io(tmm_handle h, GemmCase& g, ArrayIo& a, ArrayIo& b, ArrayIo& c) {
  return tmm_sgemm_io(h, g.layout, g.ta, g.tb, g.m, g.n, g.k, g.alpha, &a.io, g.lda, &b.io, g.ldb,
                      g.beta, &c.io, g.ldc);
}

// Every layout, transpose pair and beta: the io call equals the pointer call bit for
// bit, and C's padding keeps its sentinel.
void expect_io_matches_pointers(tmm_handle h, int64_t m, int64_t n, int64_t k) {
  int variant = 0;
  for (tmm_layout layout : {TMM_ROW_MAJOR, TMM_COL_MAJOR}) {
    for (tmm_transpose ta : {TMM_NO_TRANS, TMM_TRANS}) {
      for (tmm_transpose tb : {TMM_NO_TRANS, TMM_TRANS}) {
        for (float beta : {0.0f, 0.5f}) {
          GemmCase g;
          g.layout = layout;
          g.ta = ta;
          g.tb = tb;
          g.m = m + variant;
          g.n = n - variant;
          g.k = k + 2 * variant;
          g.alpha = 1.25f;
          g.beta = beta;
          g.pad = variant % 3;
          tmm_test::fill_case(g, tmm_test::fresh_seed());
          ++variant;
          SCOPED_TRACE(tmm_test::describe(g));
          GemmCase pointers = g;
          ASSERT_EQ(tmm_test::run_case(h, pointers), TMM_SUCCESS) << tmm_get_error_message(h);
          ArrayIo a(g.a), b(g.b), c(g.c);
          ASSERT_EQ(run_io(h, g, a, b, c), TMM_SUCCESS) << tmm_get_error_message(h);
          EXPECT_EQ(std::memcmp(g.c.data(), pointers.c.data(), g.c.size() * sizeof(float)), 0)
              << "the io call differs from the pointer call";
          EXPECT_TRUE(tmm_test::check_case(g));  // FP64, and the padding untouched
          if (beta == 0.0f) {
            EXPECT_EQ(c.reads.load(), 0) << "beta = 0 never reads C";
          }
          EXPECT_GT(c.writes.load(), 0);
        }
      }
    }
  }
}

class HostIoCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(tmm_create_with_backend(&h_, TMM_BACKEND_CPU, 0), TMM_SUCCESS);
  }
  void TearDown() override { tmm_destroy(h_); }
  tmm_handle h_ = nullptr;
};

TEST_F(HostIoCpu, MatchesThePointerCallBitForBit) { expect_io_matches_pointers(h_, 37, 29, 41); }

TEST_F(HostIoCpu, MissingOrIncompleteFunctionsAreInvalidAndTouchNothing) {
  GemmCase g;
  g.m = 8;
  g.n = 9;
  g.k = 10;
  g.beta = 1.0f;
  tmm_test::fill_case(g, 3);
  ArrayIo a(g.a), b(g.b), c(g.c);
  auto call = [&](const tmm_host_io* A, const tmm_host_io* B, const tmm_host_io* C, float beta) {
    return tmm_sgemm_io(h_, g.layout, g.ta, g.tb, g.m, g.n, g.k, 1.0f, A, g.lda, B, g.ldb, beta, C,
                        g.ldc);
  };
  EXPECT_EQ(call(nullptr, &b.io, &c.io, 1.0f), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(std::string(tmm_get_error_message(h_)).find("A"), std::string::npos);
  tmm_host_io small = a.io;
  small.struct_size = 8;
  EXPECT_EQ(call(&small, &b.io, &c.io, 1.0f), TMM_ERROR_INVALID_VALUE);
  EXPECT_NE(std::string(tmm_get_error_message(h_)).find("struct_size"), std::string::npos);
  tmm_host_io no_read = b.io;
  no_read.read = nullptr;
  EXPECT_EQ(call(&a.io, &no_read, &c.io, 1.0f), TMM_ERROR_INVALID_VALUE);
  tmm_host_io no_write = c.io;
  no_write.write = nullptr;
  EXPECT_EQ(call(&a.io, &b.io, &no_write, 1.0f), TMM_ERROR_INVALID_VALUE);
  tmm_host_io c_no_read = c.io;
  c_no_read.read = nullptr;
  EXPECT_EQ(call(&a.io, &b.io, &c_no_read, 1.0f), TMM_ERROR_INVALID_VALUE) << "beta != 0 reads C";
  EXPECT_EQ(a.calls + b.calls + c.calls, 0) << "nothing was called for invalid calls";
  EXPECT_EQ(std::memcmp(g.c.data(), g.c0.data(), g.c.size() * sizeof(float)), 0);
  // beta = 0 needs no read function for C; alpha = 0 needs none for A and B.
  EXPECT_EQ(call(&a.io, &b.io, &c_no_read, 0.0f), TMM_SUCCESS) << tmm_get_error_message(h_);
  EXPECT_EQ(tmm_sgemm_io(h_, g.layout, g.ta, g.tb, g.m, g.n, g.k, 0.0f, nullptr, g.lda, nullptr,
                         g.ldb, 2.0f, &c.io, g.ldc),
            TMM_SUCCESS);
  // The pointer call's other checks hold as they are (a negative size).
  EXPECT_EQ(tmm_sgemm_io(h_, g.layout, g.ta, g.tb, -1, g.n, g.k, 1.0f, &a.io, g.lda, &b.io, g.ldb,
                         0.0f, &c.io, g.ldc),
            TMM_ERROR_INVALID_VALUE);
}

TEST_F(HostIoCpu, AFailingReadIsCallbackNamesTheOperandAndLeavesCUntouched) {
  GemmCase g;
  g.m = 20;
  g.n = 15;
  g.k = 12;
  g.beta = 1.0f;
  g.pad = 2;
  tmm_test::fill_case(g, 4);
  ArrayIo a(g.a), b(g.b), c(g.c);
  b.fail_at = 3;
  EXPECT_EQ(run_io(h_, g, a, b, c), TMM_ERROR_CALLBACK);
  const std::string message = tmm_get_error_message(h_);
  EXPECT_NE(message.find("read function of B"), std::string::npos) << message;
  EXPECT_NE(message.find("5"), std::string::npos) << "carries the function's return value";
  EXPECT_EQ(c.writes.load(), 0);
  EXPECT_EQ(std::memcmp(g.c.data(), g.c0.data(), g.c.size() * sizeof(float)), 0);
  b.fail_at = -1;
  ASSERT_EQ(run_io(h_, g, a, b, c), TMM_SUCCESS) << "the handle works on";
  EXPECT_TRUE(tmm_test::check_case(g));
}

#if TMM_TEST_WITH_CUDA
class HostIoCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    TMM_SKIP_OR_FAIL_WITHOUT_GPU();
    ASSERT_EQ(tmm_create_with_backend(&h_, TMM_BACKEND_CUDA, 0), TMM_SUCCESS);
  }
  void TearDown() override { tmm_destroy(h_); }
  tmm_handle h_ = nullptr;
};

TEST_F(HostIoCuda, DirectPathMatchesThePointerCall) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_DIRECT), TMM_SUCCESS);
  expect_io_matches_pointers(h_, 70, 50, 90);
}

TEST_F(HostIoCuda, StreamedPathMatchesThePointerCallAndReadsFromSeveralThreads) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_DEVICE_MEMORY_BUDGET, 1 << 20), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_STAGING_BYTES, 256 << 10), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_THREADS, 4), TMM_SUCCESS);
  expect_io_matches_pointers(h_, 300, 280, 700);
  // Several packing threads call the functions: chunks large enough to be split
  // (at least 16K floats a task), through a budget that still cuts several tiles.
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_DEVICE_MEMORY_BUDGET, 8 << 20), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_STAGING_BYTES, 4 << 20), TMM_SUCCESS);
  GemmCase g;
  g.m = 1000;
  g.n = 800;
  g.k = 1200;
  tmm_test::fill_case(g, 5);
  ArrayIo a(g.a), b(g.b), c(g.c);
  ASSERT_EQ(run_io(h_, g, a, b, c), TMM_SUCCESS) << tmm_get_error_message(h_);
  tmm_report r{};
  r.struct_size = sizeof r;
  ASSERT_EQ(tmm_get_last_report(h_, &r), TMM_SUCCESS);
  EXPECT_EQ(r.host_path, TMM_HOST_PATH_STREAMED);
  EXPECT_GE(r.tiles, 2);
  std::set<std::thread::id> callers = a.threads;
  callers.insert(b.threads.begin(), b.threads.end());
  callers.insert(c.threads.begin(), c.threads.end());
  EXPECT_GE(callers.size(), 2u) << "the packing threads call the functions in parallel";
  EXPECT_TRUE(tmm_test::check_case(g));
}

TEST_F(HostIoCuda, AFailingWriteOnTheStreamedPathIsCallbackAndTheHandleWorksOn) {
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_HOST_PATH, TMM_HOST_PATH_STREAMED), TMM_SUCCESS);
  ASSERT_EQ(tmm_set_option(h_, TMM_OPTION_DEVICE_MEMORY_BUDGET, 1 << 20), TMM_SUCCESS);
  GemmCase g;
  g.m = 400;
  g.n = 300;
  g.k = 500;
  tmm_test::fill_case(g, 6);
  ArrayIo a(g.a), b(g.b), c(g.c);
  c.fail_at = 7;
  EXPECT_EQ(run_io(h_, g, a, b, c), TMM_ERROR_CALLBACK);
  EXPECT_NE(std::string(tmm_get_error_message(h_)).find("write function of C"), std::string::npos)
      << tmm_get_error_message(h_);
  c.fail_at = -1;
  ASSERT_EQ(run_io(h_, g, a, b, c), TMM_SUCCESS) << tmm_get_error_message(h_);
  EXPECT_TRUE(tmm_test::check_case(g));
}
#endif

}  // namespace
