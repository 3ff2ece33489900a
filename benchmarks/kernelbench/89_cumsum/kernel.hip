// 89_cumsum: inclusive prefix sum along dim 1 of (rows, cols) fp32; one 256-thread block per row.
// Each chunk of 1024: 4 elements per thread, DPP wave scan of thread totals, LDS scan of wave totals.
#include "asmevo_hip.h"

constexpr int NT = 256, PER = 4, CHUNK = NT * PER;

extern "C" __global__ __launch_bounds__(NT) void cumsum_f32(const float* __restrict__ x, float* __restrict__ y,
                                                             int cols) {
  __shared__ float wsum[NT / WAVE];
  const float* xr = x + (long)blockIdx_x() * cols;
  float* yr = y + (long)blockIdx_x() * cols;
  int t = threadIdx_x();
  unsigned w = t / WAVE, lane = lane_id();
  float carry = 0.f;
  for (int c0 = 0; c0 < cols; c0 += CHUNK) {
    int base = c0 + t * PER;
    float v[PER];
#pragma unroll
    for (int j = 0; j < PER; ++j) v[j] = base + j < cols ? xr[base + j] : 0.f;
#pragma unroll
    for (int j = 1; j < PER; ++j) v[j] += v[j - 1];
    float incl = wave_inclusive_scan(v[PER - 1]);
    if (lane == WAVE - 1) wsum[w] = incl;
    __syncthreads();
    float before = carry, total = carry;
#pragma unroll
    for (int i = 0; i < NT / WAVE; ++i) {
      float s = wsum[i];
      if ((unsigned)i < w) before += s;
      total += s;
    }
    __syncthreads();
    float off = before + (incl - v[PER - 1]);
#pragma unroll
    for (int j = 0; j < PER; ++j)
      if (base + j < cols) yr[base + j] = off + v[j];
    carry = total;
  }
}
