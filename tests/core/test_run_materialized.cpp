// run_materialized (lib/core/host_io.hpp): operands read through the caller's functions
// into dense buffers of the problem's precision, the product run on them, C written
// back; in float and double, with the CPU's naive kernel as the product.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/gemm_problem.hpp"
#include "core/host_io.hpp"
#include "core/precision.hpp"
#include "cpu/cpu_kernels.hpp"
#include "gemm_reference.hpp"
#include "gemm_reference_f64.hpp"

namespace tiledmm {
namespace {

// A matrix held in a vector, behind io functions; counts the calls, and can fail.
template <class T>
struct Store {
  std::vector<T>* data;
  int reads = 0, writes = 0;
  int fail_read_at = -1;  // the read call that returns 5
  static int read(void* user, int64_t offset, int64_t count, T* dst) {
    auto* s = static_cast<Store*>(user);
    if (s->reads++ == s->fail_read_at) return 5;
    std::copy_n(s->data->data() + offset, count, dst);
    return 0;
  }
  static int write(void* user, int64_t offset, int64_t count, const T* src) {
    auto* s = static_cast<Store*>(user);
    ++s->writes;
    std::copy_n(src, count, s->data->data() + offset);
    return 0;
  }
};

template <class Case>
void run_through_io(Case& g, int fail_read_of_c = -1) {
  using T = typename decltype(g.a)::value_type;
  Store<T> sa{&g.a}, sb{&g.b}, sc{&g.c};
  sc.fail_read_at = fail_read_of_c;
  const HostIo a = host_io(IoFunctions<T>{Store<T>::read, Store<T>::write}, &sa, "A");
  const HostIo b = host_io(IoFunctions<T>{Store<T>::read, Store<T>::write}, &sb, "B");
  const HostIo c = host_io(IoFunctions<T>{Store<T>::read, Store<T>::write}, &sc, "C");
  static T stand_in;
  GemmProblem p =
      make_problem(precision_of<T>, Layout::RowMajor, g.ta == TMM_TRANS, g.tb == TMM_TRANS, g.m,
                   g.n, g.k, g.alpha, &stand_in, g.lda, &stand_in, g.ldb, g.beta, &stand_in, g.ldc);
  p.a_io = &a;
  p.b_io = &b;
  p.c_io = &c;
  run_materialized(p, [](const GemmProblem& q) {
    EXPECT_EQ(q.a_io, nullptr);
    cpu_naive_gemm(view_of<T>(q));
  });
  // beta = 0 never reads C; every other call reads each row once.
  EXPECT_EQ(sc.reads, g.beta == T(0) ? 0 : g.m);
  EXPECT_EQ(sc.writes, g.m);
}

template <class Case>
Case make_case(decltype(Case::alpha) beta) {
  Case g;
  g.ta = TMM_TRANS;
  g.m = 37;
  g.n = 29;
  g.k = 51;
  g.alpha = 1.25;
  g.beta = beta;
  g.pad = 2;
  tmm_test::fill_case(g, tmm_test::fresh_seed());
  return g;
}

TEST(RunMaterialized, FloatOperandsThroughTheirFunctions) {
  for (float beta : {0.0f, -0.5f}) {
    auto g = make_case<tmm_test::GemmCase>(beta);
    SCOPED_TRACE(tmm_test::describe(g));
    run_through_io(g);
    EXPECT_TRUE(tmm_test::check_case(g));
  }
}

// Buffers of double, each element read and written whole: the FP64 bound holds.
TEST(RunMaterialized, DoubleOperandsThroughTheirFunctions) {
  for (double beta : {0.0, -0.5}) {
    auto g = make_case<tmm_test::DgemmCase>(beta);
    SCOPED_TRACE(tmm_test::describe(g));
    run_through_io(g);
    EXPECT_TRUE(tmm_test::check_case(g));
  }
}

// A failing read of C throws Error(Callback) naming it, before C is written.
TEST(RunMaterialized, AFailingReadLeavesCUnwritten) {
  auto g = make_case<tmm_test::DgemmCase>(2.0);
  const std::vector<double> before = g.c;
  try {
    run_through_io(g, /*fail_read_of_c=*/3);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.status(), Status::Callback);
    EXPECT_NE(std::string(e.what()).find("the read function of C returned 5"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(g.c, before);
}

}  // namespace
}  // namespace tiledmm
