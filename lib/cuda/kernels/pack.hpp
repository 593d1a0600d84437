// Copying an operand into a K-major, 16-byte aligned layout in device memory, for
// kernels that read their operands that way (the Hopper TF32 kernel's copy engine).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace tiledmm {

// dst (rows x cols, leading dimension ld_dst) = src, or src's transpose: dst[r][c] =
// transpose ? src[c * ld_src + r] : src[r * ld_src + c]. With `small` (same shape and
// ld), each value x is split for 3xTF32 instead: big (x rounded to TF32) to dst,
// (x - big) 2^11 to small. Enqueued on `stream`; throws Error on a launch failure.
// With `products` > 1 (at most 65535), as many such operands, side by side in one
// launch: product z's src at src + z strides.src, its copy (and small part) at dst (and
// small) + z strides.dst, in floats.
struct PackStrides {
  int64_t src = 0, dst = 0;
};
void launch_pack(const float* src, int64_t ld_src, bool transpose, int64_t rows, int64_t cols,
                 float* dst, int64_t ld_dst, cudaStream_t stream, float* small = nullptr,
                 unsigned products = 1, PackStrides strides = {});

}  // namespace tiledmm
