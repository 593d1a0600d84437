// The public header compiled as C++ with every warning, on its own: it must need no
// other include and declare everything with C linkage.
#include <type_traits>

#include "tiledmm/tiledmm.h"

static_assert(std::is_same<decltype(&tmm_version), int (*)()>::value, "C signature");
static_assert(TMM_ROW_MAJOR == 101 && TMM_TRANS == 112, "CBLAS values");

int main() { return tmm_version() == TILEDMM_VERSION ? 0 : 1; }
