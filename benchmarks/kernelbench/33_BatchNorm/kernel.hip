// 33_BatchNorm (inference): y = (x - mean[c]) * rsqrt(var[c] + eps) * w[c] + b[c] on x (N, C, HW) fp32.
// grid = (ceil(HW / 1024), C, N); per-channel scale/shift computed once per block; float4 body.
#include "asmevo_hip.h"

extern "C" __global__ __launch_bounds__(256) void batchnorm_infer_f32(
    const float* __restrict__ x, const float* __restrict__ mean, const float* __restrict__ var,
    const float* __restrict__ w, const float* __restrict__ b, float* __restrict__ y, int C, int HW, float eps) {
  int c = blockIdx_y();
  float scale = w[c] * rsqrtf_(var[c] + eps);
  float shift = __builtin_fmaf(-mean[c], scale, b[c]);
  long plane = ((long)blockIdx_z() * C + c) * HW;
  int i = (blockIdx_x() * 256 + threadIdx_x()) * 4;
  const float* xp = x + plane;
  float* yp = y + plane;
  if ((HW & 3) == 0 && i + 3 < HW) {
    float4_t v = *reinterpret_cast<const float4_t*>(xp + i);
    v.x = __builtin_fmaf(v.x, scale, shift); v.y = __builtin_fmaf(v.y, scale, shift);
    v.z = __builtin_fmaf(v.z, scale, shift); v.w = __builtin_fmaf(v.w, scale, shift);
    *reinterpret_cast<float4_t*>(yp + i) = v;
  } else {
    for (int j = i; j < i + 4 && j < HW; ++j) yp[j] = __builtin_fmaf(xp[j], scale, shift);
  }
}
