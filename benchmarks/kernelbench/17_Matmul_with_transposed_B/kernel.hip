// 17_Matmul_with_transposed_B: C (M, N) fp32 = A (M, K) @ B(N, K)^T with bf16 inputs, MFMA 16x16x16 bf16_1k.
#include "mfma_gemm_nt.h"

extern "C" __global__ __launch_bounds__(256) void gemm_nt_bf16(const bf16* __restrict__ A, const bf16* __restrict__ B,
                                                                float* __restrict__ C, int M, int N, int K) {
  float4_t acc[2][2];
  nt::mainloop<short4_t>(reinterpret_cast<const unsigned short*>(A), reinterpret_cast<const unsigned short*>(B), M, N,
                         K, acc);
  nt::epilogue(acc, M, N, [&](int r, int c, float v) { C[(long)r * N + c] = v; });
}
