// Step 3 of the routing (route/router.cpp): tiledmm runs the call, and what the
// router does when tiledmm fails. tmm_sgemm (tmm_dgemm alike) fails before it touches
// C only on its checks of the arguments and the device (TMM_ERROR_INVALID_VALUE,
// NO_DEVICE); after any other failure C may hold tiles already written back. try_tiledmm then
// restores C from the copy it took (TILEDMM_BLAS_KEEP_C) so that the fallback can recompute the
// call, or says the call is lost; with beta = 0 C is recomputed from A and B alone.
#pragma once

#include "route/router.hpp"
#include "support/config.hpp"
#include "tiledmm/tiledmm.h"

namespace tiledmm::blas {

enum class Outcome {
  kDone,      // tiledmm computed C
  kDeclined,  // tiledmm did not run; C untouched
  kRecover,   // tiledmm failed; C is as before the call (or beta = 0): recompute
  kLost       // tiledmm failed, may have written C, and C cannot be restored
};

struct Attempt {
  tmm_status status = TMM_SUCCESS;
  int device = -1;
  int devices = 1;  // the handle's devices (its first is `device`)
};

// Runs the call on a handle of the pool (tmm_sgemm for float, tmm_dgemm for
// double); at says which device and what status. Defined for float and double.
template <class T>
Outcome try_tiledmm(const Config& cfg, const GemmCallOf<T>& c, Attempt& at);

// C = NaN, for a call that could not be computed (nothing when C cannot be memory).
template <class T>
void poison_c(const GemmCallOf<T>& c);

}  // namespace tiledmm::blas
