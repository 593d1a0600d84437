// blas/route/pilaenv: the PBLAS panel width, widened for the precisions tiledmm
// multiplies (single 'S', PSGEMM's; double 'D', PDGEMM's), in either case, and
// ScaLAPACK's own answer for the complex ones ('C', 'Z'). pilaenv_ reads the
// process's settings, so these tests run only under tests/blas/CMakeLists.txt's
// blas_pilaenv_* runs, which set them and say in TMM_TEST_PILAENV_WIDTH what a widened
// answer must be (0: never widened). This process has no ScaLAPACK: its own answer is
// the default, 32.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "route/router.hpp"
#include "support/counters.hpp"

namespace {

using tiledmm::blas::Counters;
using tiledmm::blas::Routine;

constexpr int kScalapacksDefault = 32;

int expected_width() {
  const char* v = std::getenv("TMM_TEST_PILAENV_WIDTH");
  return v != nullptr ? std::atoi(v) : -1;
}

tmm_blas_counters pilaenv_counters() {
  tmm_blas_counters c{};
  c.struct_size = sizeof c;
  EXPECT_TRUE(Counters::read(int(Routine::kPilaenv), c));
  return c;
}

TEST(BlasPilaenv, SingleAndDoubleWidenedComplexNot) {
  const int widened = expected_width();
  if (widened < 0) GTEST_SKIP() << "run by the blas_pilaenv_* tests, which set the settings";
  const int ictxt = 0;
  const tmm_blas_counters before = pilaenv_counters();
  int widened_answers = 0;
  for (const char* prec : {"S", "s", "D", "d"}) {
    const int want = widened > 0 ? widened : kScalapacksDefault;
    EXPECT_EQ(tiledmm::blas::pilaenv(&ictxt, prec), want) << "precision " << prec;
    widened_answers += widened > 0;
  }
  for (const char* prec : {"C", "c", "Z", "z"})
    EXPECT_EQ(tiledmm::blas::pilaenv(&ictxt, prec), kScalapacksDefault) << "precision " << prec;
  EXPECT_EQ(tiledmm::blas::pilaenv(&ictxt, nullptr), kScalapacksDefault);
  const tmm_blas_counters after = pilaenv_counters();
  EXPECT_EQ(after.tiledmm_calls - before.tiledmm_calls, uint64_t(widened_answers))
      << "tiledmm_calls counts the widened answers";
  EXPECT_EQ(after.fallback_calls - before.fallback_calls, uint64_t(9 - widened_answers))
      << "fallback_calls counts ScaLAPACK's (or the default) answers";
}

}  // namespace
