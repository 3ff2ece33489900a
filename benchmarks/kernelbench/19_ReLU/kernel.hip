// 19_ReLU: y = max(x, 0), fp32, float4-vectorised, one float4 per thread.
#include "asmevo_hip.h"

extern "C" __global__ __launch_bounds__(256) void relu_f32(const float* __restrict__ x, float* __restrict__ y, int n) {
  int base = (blockIdx_x() * 256 + threadIdx_x()) * 4;
  if (base + 3 < n) {
    float4_t v = *reinterpret_cast<const float4_t*>(x + base);
    v.x = fmaxf_(v.x, 0.f); v.y = fmaxf_(v.y, 0.f); v.z = fmaxf_(v.z, 0.f); v.w = fmaxf_(v.w, 0.f);
    *reinterpret_cast<float4_t*>(y + base) = v;
  } else {
    for (int i = base; i < n; ++i) y[i] = fmaxf_(x[i], 0.f);
  }
}
