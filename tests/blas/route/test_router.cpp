// blas/route/router: the size rule the front end applies before it copies C.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>

#include "route/router.hpp"

namespace {

// The front end copies C (TILEDMM_BLAS_KEEP_C) or fills it with NaN only where its
// span fits in INT64_MAX bytes: j * ldc never overflows there.
TEST(BlasRouter, SpanFitsExactlyBelowTwoToThe63Bytes) {
  using tiledmm::blas::span_fits;
  const int64_t most = INT64_MAX / 4;  // floats in INT64_MAX bytes
  EXPECT_TRUE(span_fits(0, INT64_MAX, INT64_MAX)) << "no element";
  EXPECT_TRUE(span_fits(INT64_MAX, 0, INT64_MAX));
  EXPECT_TRUE(span_fits(1, 1, INT64_MAX)) << "one column: ld takes no part";
  EXPECT_TRUE(span_fits(most, 1, most));
  EXPECT_FALSE(span_fits(most + 1, 1, most + 1));
  EXPECT_TRUE(span_fits(1, 2, most - 1));
  EXPECT_FALSE(span_fits(1, 2, most));
  EXPECT_FALSE(span_fits(2, 2, INT64_MAX)) << "(n - 1) ldc + m overflows int64";
  EXPECT_FALSE(span_fits(1, INT64_MAX, INT64_MAX)) << "(n - 1) ldc overflows int64";
  EXPECT_FALSE(span_fits(INT_MAX, INT_MAX, INT_MAX)) << "2^62 floats";
  EXPECT_TRUE(span_fits(INT_MAX, 2, INT_MAX));
}

}  // namespace
