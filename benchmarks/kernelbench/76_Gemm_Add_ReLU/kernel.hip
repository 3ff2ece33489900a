// 76_Gemm_Add_ReLU: y (M, N) fp16 = relu(x (M, K) @ W(N, K)^T + bias (N)), fp16 in, fp32 accumulate
// with MFMA 16x16x16 f16, fused bias + ReLU epilogue.
#include "mfma_gemm_nt.h"

extern "C" __global__ __launch_bounds__(256) void gemm_bias_relu_f16(const half* __restrict__ X,
                                                                      const half* __restrict__ W,
                                                                      const half* __restrict__ bias,
                                                                      half* __restrict__ Y, int M, int N, int K) {
  float4_t acc[2][2];
  nt::mainloop<half4_t>(reinterpret_cast<const unsigned short*>(X), reinterpret_cast<const unsigned short*>(W), M, N,
                        K, acc);
  nt::epilogue(acc, M, N, [&](int r, int c, float v) {
    Y[(long)r * N + c] = (half)fmaxf_(v + (float)bias[c], 0.f);
  });
}
