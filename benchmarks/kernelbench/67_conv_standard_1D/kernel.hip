// 67_conv_standard_1D: y[b, co, l] = sum_{ci, k} w[co, ci, k] * x[b, ci, l + k]  (stride 1, no padding, no bias,
// kernel size KS = 3). Block: 64 output positions x 16 output channels (4 per thread); input tile in LDS.
#include "asmevo_hip.h"

constexpr int KS = 3, TL = 64, TCO = 16, CI_CHUNK = 16;

extern "C" __global__ __launch_bounds__(256) void conv1d_k3_f32(const float* __restrict__ x,
                                                                 const float* __restrict__ w, float* __restrict__ y,
                                                                 int Cin, int Cout, int L) {
  __shared__ float xs[CI_CHUNK][TL + KS - 1];
  int Lout = L - KS + 1;
  int t = threadIdx_x();
  int lx = t & (TL - 1), g = t >> 6;
  int l0 = blockIdx_x() * TL, co0 = blockIdx_y() * TCO + g * 4;
  const float* xb = x + (long)blockIdx_z() * Cin * L;
  float acc[4] = {0.f, 0.f, 0.f, 0.f};
  for (int c0 = 0; c0 < Cin; c0 += CI_CHUNK) {
    for (int i = t; i < CI_CHUNK * (TL + KS - 1); i += 256) {
      int ci = i / (TL + KS - 1), p = i % (TL + KS - 1);
      int l = l0 + p;
      xs[ci][p] = (c0 + ci < Cin && l < L) ? xb[(long)(c0 + ci) * L + l] : 0.f;
    }
    __syncthreads();
    int nci = Cin - c0 < CI_CHUNK ? Cin - c0 : CI_CHUNK;
    for (int ci = 0; ci < nci; ++ci) {
#pragma unroll
      for (int k = 0; k < KS; ++k) {
        float xv = xs[ci][lx + k];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          int co = co0 + j;
          float wv = co < Cout ? w[((long)co * Cin + c0 + ci) * KS + k] : 0.f;
          acc[j] = __builtin_fmaf(wv, xv, acc[j]);
        }
      }
    }
    __syncthreads();
  }
  int l = l0 + lx;
  if (l < Lout) {
#pragma unroll
    for (int j = 0; j < 4; ++j)
      if (co0 + j < Cout) y[((long)blockIdx_z() * Cout + co0 + j) * Lout + l] = acc[j];
  }
}
