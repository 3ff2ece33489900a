// 9_Tall_skinny_matrix_multiplication_: C (M, N) fp16 = A (M, K) @ B (K, N), fp16 in, fp32 accumulate with
// v_mfma_f32_32x32x8f16 (K is small). 256 threads = 2x2 waves, 64x64 block tile, K step 16 staged in LDS.
#include "asmevo_hip.h"

constexpr int BM = 64, BN = 64, BK = 16, LDA = BK + 4, LDB = BN + 8;

extern "C" __global__ __launch_bounds__(256) void hgemm_nn_mfma32(const half* __restrict__ A,
                                                                   const half* __restrict__ B,
                                                                   half* __restrict__ C, int M, int N, int K) {
  __shared__ __attribute__((aligned(16))) half As[BM][LDA];
  __shared__ __attribute__((aligned(16))) half Bs[BK][LDB];
  int t = threadIdx_x(), wave = t / WAVE, l = lane_id();
  int m0 = blockIdx_y() * BM, n0 = blockIdx_x() * BN;
  int wm = (wave >> 1) * 32, wn = (wave & 1) * 32;
  int ar = t >> 2, ak = (t & 3) * 4;   // A tile: 64 rows x 4 groups of 4
  int bk = t >> 4, bc = (t & 15) * 4;  // B tile: 16 rows x 16 groups of 4
  float16_t acc = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    int gr = m0 + ar, gk = k0 + ak;
    if ((K & 3) == 0 && gr < M && gk + 3 < K) {
      *reinterpret_cast<half4_t*>(&As[ar][ak]) = *reinterpret_cast<const half4_t*>(A + (long)gr * K + gk);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) As[ar][ak + j] = (gr < M && gk + j < K) ? A[(long)gr * K + gk + j] : (half)0;
    }
    int gkb = k0 + bk, gc = n0 + bc;
    if ((N & 3) == 0 && gkb < K && gc + 3 < N) {
      *reinterpret_cast<half4_t*>(&Bs[bk][bc]) = *reinterpret_cast<const half4_t*>(B + (long)gkb * N + gc);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) Bs[bk][bc + j] = (gkb < K && gc + j < N) ? B[(long)gkb * N + gc + j] : (half)0;
    }
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < BK; ks += 8) {
      int kk = ks + (l >> 5) * 4;
      half4_t a = *reinterpret_cast<const half4_t*>(&As[wm + (l & 31)][kk]);
      half4_t b = {Bs[kk][wn + (l & 31)], Bs[kk + 1][wn + (l & 31)], Bs[kk + 2][wn + (l & 31)],
                   Bs[kk + 3][wn + (l & 31)]};
      acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, acc, 0, 0, 0);
    }
    __syncthreads();
  }
#pragma unroll
  for (int r = 0; r < 16; ++r) {
    int row = m0 + wm + 8 * (r >> 2) + 4 * (l >> 5) + (r & 3), col = n0 + wn + (l & 31);
    if (row < M && col < N) C[(long)row * N + col] = (half)acc[r];
  }
}
