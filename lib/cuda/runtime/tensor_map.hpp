// Tensor maps for the Hopper kernels' copy engine (TMA): the driver's encoder, reached
// through the runtime (the library links no libcuda), and the map of one operand.
// Host code; included by the sm_90a kernel files.
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "core/error.hpp"

namespace tiledmm::sm90 {

// The driver's cuTensorMapEncodeTiled, through the runtime (the library links no
// libcuda); nullptr if the driver lacks it.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encode;
}

// An operand of `rows` rows of k floats, `ld` apart, read as boxes of 32 (k) x
// box_rows (K-major) or, for an MN-major operand (stored k rows of `rows` floats),
// as boxes of 32 rows x 32 k; rounded to TF32 and swizzled as they land: a map of two
// dimensions. With `products` >= 1, that many such matrices `stride` floats apart (a
// strided batch, in one launch): a map of three dimensions, the third the products,
// read a box of one product at a time, for a kernel that loads with tma_load_3d (one
// product too: the load's form must match the map's); wgmma_batches_in_one_launch says
// where the copy engine takes the stride.
inline CUtensorMap operand_map(const float* ptr, bool k_major, int64_t rows, int64_t k, int64_t ld,
                               int box_rows, int64_t products = 0, int64_t stride = 0) {
  const auto encode = tensor_map_encoder();
  require(encode != nullptr, Status::NotSupported,
          "wgmma kernels: the driver has no cuTensorMapEncodeTiled");
  CUtensorMap map;
  const cuuint32_t rank = products >= 1 ? 3 : 2;
  const cuuint64_t dims[3] = {cuuint64_t(k_major ? k : rows), cuuint64_t(k_major ? rows : k),
                              cuuint64_t(products)};
  const cuuint64_t strides[2] = {cuuint64_t(ld) * sizeof(float),
                                 cuuint64_t(stride) * sizeof(float)};
  const cuuint32_t box[3] = {32, k_major ? cuuint32_t(box_rows) : 32, 1};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  const CUresult r =
      encode(&map, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, rank, const_cast<float*>(ptr), dims, strides,
             box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  require(r == CUDA_SUCCESS, Status::Internal, "wgmma kernels: cuTensorMapEncodeTiled failed (",
          int(r), ")");
  return map;
}

}  // namespace tiledmm::sm90
