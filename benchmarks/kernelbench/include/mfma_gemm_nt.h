// mfma_gemm_nt.h - C[m, n] = sum_k A[m, k] * B[n, k] for 16-bit A/B (fp16 or bf16), fp32 accumulation with
// v_mfma_f32_16x16x16{f16,bf16_1k}. 256 threads = 2x2 waves, block tile 64x64, wave tile 32x32 (2x2 MFMAs),
// K step 32 staged through LDS with 16-byte global loads (scalar fallback on edges / unaligned K).
#pragma once
#include "asmevo_hip.h"

namespace nt {
constexpr int BM = 64, BN = 64, BK = 32, LDK = BK + 8;

DEVFN float4_t mfma(half4_t a, half4_t b, float4_t c) { return __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, 0, 0, 0); }
DEVFN float4_t mfma(short4_t a, short4_t b, float4_t c) {
  return __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, 0, 0, 0);
}

// Stage a 64 x 32 tile of a row-major (rows, K) 16-bit matrix into LDS.
DEVFN void load_tile(unsigned short (*dst)[LDK], const unsigned short* src, int row0, int rows, int k0, int K) {
  int t = threadIdx_x();
  int r = t >> 2, kc = (t & 3) * 8;
  int gr = row0 + r, gk = k0 + kc;
  if ((K & 7) == 0 && gr < rows && gk + 7 < K) {
    short8_t v = *reinterpret_cast<const short8_t*>(src + (long)gr * K + gk);
    *reinterpret_cast<short8_t*>(&dst[r][kc]) = v;
  } else {
#pragma unroll
    for (int j = 0; j < 8; ++j) dst[r][kc + j] = (gr < rows && gk + j < K) ? src[(long)gr * K + gk + j] : 0;
  }
}

// Runs the main loop; acc[i][j] is the 16x16 tile (i, j) of this wave's 32x32 sub-tile.
template <typename V4>
DEVFN void mainloop(const unsigned short* A, const unsigned short* B, int M, int N, int K, float4_t acc[2][2]) {
  __shared__ __attribute__((aligned(16))) unsigned short As[BM][LDK];
  __shared__ __attribute__((aligned(16))) unsigned short Bs[BN][LDK];
  int wave = threadIdx_x() / WAVE, l = lane_id();
  int wm = (wave >> 1) * 32, wn = (wave & 1) * 32;
  int m0 = blockIdx_y() * BM, n0 = blockIdx_x() * BN;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) acc[i][j] = float4_t{0.f, 0.f, 0.f, 0.f};
  for (int k0 = 0; k0 < K; k0 += BK) {
    load_tile(As, A, m0, M, k0, K);
    load_tile(Bs, B, n0, N, k0, K);
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < BK; ks += 16) {
      int kk = ks + (l >> 4) * 4;
      V4 a[2], b[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        a[i] = *reinterpret_cast<const V4*>(&As[wm + i * 16 + (l & 15)][kk]);
        b[i] = *reinterpret_cast<const V4*>(&Bs[wn + i * 16 + (l & 15)][kk]);
      }
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) acc[i][j] = mfma(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
}

// Calls epi(row, col, value) for every in-range element this lane owns.
template <typename Epi>
DEVFN void epilogue(const float4_t acc[2][2], int M, int N, Epi epi) {
  int wave = threadIdx_x() / WAVE, l = lane_id();
  int m0 = blockIdx_y() * BM + (wave >> 1) * 32, n0 = blockIdx_x() * BN + (wave & 1) * 32;
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        int row = m0 + i * 16 + (l >> 4) * 4 + r, col = n0 + j * 16 + (l & 15);
        if (row < M && col < N) epi(row, col, acc[i][j][r]);
      }
}
}  // namespace nt
