// 31_ELU: y = x > 0 ? x : alpha * (exp(x) - 1), fp32, float4-vectorised.
#include "asmevo_hip.h"

DEVFN float elu(float v, float alpha) { return v > 0.f ? v : alpha * (expf_(v) - 1.f); }

extern "C" __global__ __launch_bounds__(256) void elu_f32(const float* __restrict__ x, float* __restrict__ y, int n,
                                                           float alpha) {
  int base = (blockIdx_x() * 256 + threadIdx_x()) * 4;
  if (base + 3 < n) {
    float4_t v = *reinterpret_cast<const float4_t*>(x + base);
    v.x = elu(v.x, alpha); v.y = elu(v.y, alpha); v.z = elu(v.z, alpha); v.w = elu(v.w, alpha);
    *reinterpret_cast<float4_t*>(y + base) = v;
  } else {
    for (int i = base; i < n; ++i) y[i] = elu(x[i], alpha);
  }
}
