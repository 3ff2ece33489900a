// 23_Softmax: softmax over dim 1 of a (rows, cols) fp32 matrix; one 256-thread block per row,
// three passes (max, sum of exp, normalise) with DPP wave reductions and an LDS cross-wave step.
#include "asmevo_hip.h"

constexpr int NT = 256;

extern "C" __global__ __launch_bounds__(NT) void softmax_f32(const float* __restrict__ x, float* __restrict__ y,
                                                              int cols) {
  __shared__ float red[NT / WAVE];
  const float* xr = x + (long)blockIdx_x() * cols;
  float* yr = y + (long)blockIdx_x() * cols;
  int t = threadIdx_x();
  float m = -__builtin_inff();
  for (int i = t; i < cols; i += NT) m = fmaxf_(m, xr[i]);
  m = block_max<NT>(m, red);
  float s = 0.f;
  for (int i = t; i < cols; i += NT) s += expf_(xr[i] - m);
  s = block_sum<NT>(s, red);
  float inv = 1.f / s;
  for (int i = t; i < cols; i += NT) yr[i] = expf_(xr[i] - m) * inv;
}
