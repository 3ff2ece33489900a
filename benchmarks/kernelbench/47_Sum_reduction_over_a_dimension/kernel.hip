// 47_Sum_reduction_over_a_dimension: x (B, R, C) -> y (B, 1, C) = sum over R.
// Block = 64 columns x 4 row groups; coalesced column loads, LDS combine of the 4 partials.
#include "asmevo_hip.h"

extern "C" __global__ __launch_bounds__(256) void sum_dim1_f32(const float* __restrict__ x, float* __restrict__ y,
                                                                int R, int C) {
  __shared__ float part[4][64];
  int tx = threadIdx_x() & 63, ty = threadIdx_x() >> 6;
  int c = blockIdx_x() * 64 + tx;
  const float* xb = x + (long)blockIdx_y() * R * C;
  float s = 0.f;
  if (c < C) {
    int r = ty;
    for (; r + 12 < R; r += 16) {
      s += xb[(long)r * C + c];
      s += xb[(long)(r + 4) * C + c];
      s += xb[(long)(r + 8) * C + c];
      s += xb[(long)(r + 12) * C + c];
    }
    for (; r < R; r += 4) s += xb[(long)r * C + c];
  }
  part[ty][tx] = s;
  __syncthreads();
  if (ty == 0 && c < C) y[(long)blockIdx_y() * C + c] = (part[0][tx] + part[1][tx]) + (part[2][tx] + part[3][tx]);
}
