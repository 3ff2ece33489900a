// 40_LayerNorm: per row of n = prod(normalized_shape) elements, y = (x - mean) / sqrt(var + eps) * w + b.
// One 256-thread block per row; two-pass mean/variance with DPP wave reductions.
#include "asmevo_hip.h"

constexpr int NT = 256;

extern "C" __global__ __launch_bounds__(NT) void layernorm_f32(const float* __restrict__ x, const float* __restrict__ w,
                                                                const float* __restrict__ b, float* __restrict__ y,
                                                                int n, float eps) {
  __shared__ float red[NT / WAVE];
  const float* xr = x + (long)blockIdx_x() * n;
  float* yr = y + (long)blockIdx_x() * n;
  int t = threadIdx_x();
  float s = 0.f;
  for (int i = t; i < n; i += NT) s += xr[i];
  float mean = block_sum<NT>(s, red) / (float)n;
  float q = 0.f;
  for (int i = t; i < n; i += NT) {
    float d = xr[i] - mean;
    q = __builtin_fmaf(d, d, q);
  }
  float rstd = rsqrtf_(block_sum<NT>(q, red) / (float)n + eps);
  for (int i = t; i < n; i += NT) yr[i] = __builtin_fmaf((xr[i] - mean) * rstd, w[i], b[i]);
}
