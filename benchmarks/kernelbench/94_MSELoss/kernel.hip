// 94_MSELoss: out[0] += sum((a - b)^2) / n. Each block reduces 4096 elements (4 float4 per thread),
// DPP/LDS block reduction, one float atomic add per block. `out` must start at zero.
#include "asmevo_hip.h"

constexpr int NT = 256, VEC = 4, ITEMS = 4, PER_BLOCK = NT * VEC * ITEMS;

extern "C" __global__ __launch_bounds__(NT) void mse_loss_f32(const float* __restrict__ a, const float* __restrict__ b,
                                                               float* __restrict__ out, int n) {
  __shared__ float red[NT / WAVE];
  int t = threadIdx_x();
  long blk = (long)blockIdx_x() * PER_BLOCK;
  float s = 0.f;
#pragma unroll
  for (int it = 0; it < ITEMS; ++it) {
    long i = blk + (long)(it * NT + t) * VEC;
    if (i + VEC <= n) {
      float4_t va = *reinterpret_cast<const float4_t*>(a + i);
      float4_t vb = *reinterpret_cast<const float4_t*>(b + i);
      float4_t d = va - vb;
      s = __builtin_fmaf(d.x, d.x, s); s = __builtin_fmaf(d.y, d.y, s);
      s = __builtin_fmaf(d.z, d.z, s); s = __builtin_fmaf(d.w, d.w, s);
    } else {
      for (long j = i; j < n; ++j) { float d = a[j] - b[j]; s = __builtin_fmaf(d, d, s); }
    }
  }
  s = block_sum<NT>(s, red);
  if (t == 0) atomic_add_f32(out, s / (float)n);
}
