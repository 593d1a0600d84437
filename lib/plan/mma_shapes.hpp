// What the planner knows of an mma.sync kernel's block shape (host C++, no CUDA): the
// rows of tf32_shapes.hpp and f64_shapes.hpp. mma_common.cuh's matches() checks a
// kernel's shape against its row.
#pragma once

namespace tiledmm {

struct MmaShapeInfo {
  int tile;          // the tile_size setting that selects it
  int rows, cols;    // the tile of C one block owns
  int threads;       // per block
  int shared_bytes;  // dynamic shared memory per block, the most over the transposes
  int outputs_per_thread;
  int blocks_per_sm = 1;  // its launch bounds' blocks per SM (the FP64 rows state theirs)
};

}  // namespace tiledmm
