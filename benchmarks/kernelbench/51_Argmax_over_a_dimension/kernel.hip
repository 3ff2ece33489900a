// 51_Argmax_over_a_dimension: x (B, R, C) fp32 -> y (B, C) int64 = argmax over R (first max wins).
// Block = 64 columns x 4 row groups; each group scans rows ty, ty+4, ...; LDS combine.
#include "asmevo_hip.h"

extern "C" __global__ __launch_bounds__(256) void argmax_dim1_f32(const float* __restrict__ x,
                                                                   long long* __restrict__ y, int R, int C) {
  __shared__ float pv[4][64];
  __shared__ int pi[4][64];
  int tx = threadIdx_x() & 63, ty = threadIdx_x() >> 6;
  int c = blockIdx_x() * 64 + tx;
  const float* xb = x + (long)blockIdx_y() * R * C;
  float best = -__builtin_inff();
  int bi = 0x7fffffff;
  if (c < C) {
    for (int r = ty; r < R; r += 4) {
      float v = xb[(long)r * C + c];
      if (v > best) { best = v; bi = r; }
    }
  }
  pv[ty][tx] = best;
  pi[ty][tx] = bi;
  __syncthreads();
  if (ty == 0 && c < C) {
#pragma unroll
    for (int g = 1; g < 4; ++g) {
      float v = pv[g][tx];
      int i = pi[g][tx];
      if (v > best || (v == best && i < bi)) { best = v; bi = i; }
    }
    y[(long)blockIdx_y() * C + c] = bi;
  }
}
