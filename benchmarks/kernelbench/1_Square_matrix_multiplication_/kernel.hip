// 1_Square_matrix_multiplication_: C = A @ B for square (N, N) fp32. 64x64 block tile, BK = 16 staged in LDS
// (A transposed on store), 4x4 outputs per thread strided by 16 for conflict-free LDS reads.
#include "asmevo_hip.h"

constexpr int BM = 64, BN = 64, BK = 16;

extern "C" __global__ __launch_bounds__(256) void sgemm_nn_f32(const float* __restrict__ A, const float* __restrict__ B,
                                                                float* __restrict__ C, int N) {
  __shared__ __attribute__((aligned(16))) float As[BK][BM + 4];
  __shared__ __attribute__((aligned(16))) float Bs[BK][BN + 4];
  int t = threadIdx_x(), tx = t & 15, ty = t >> 4;
  int m0 = blockIdx_y() * BM, n0 = blockIdx_x() * BN;
  int ar = t >> 2, ak = (t & 3) * 4;   // A tile: 64 rows x 16 k
  int bk = t >> 4, bc = (t & 15) * 4;  // B tile: 16 k x 64 cols
  bool vec = (N & 3) == 0;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < N; k0 += BK) {
    int gr = m0 + ar, gk = k0 + ak;
    float4_t va;
    if (vec && gr < N && gk + 3 < N) {
      va = *reinterpret_cast<const float4_t*>(A + (long)gr * N + gk);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) va[j] = (gr < N && gk + j < N) ? A[(long)gr * N + gk + j] : 0.f;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) As[ak + j][ar] = va[j];
    int gkb = k0 + bk, gc = n0 + bc;
    float4_t vb;
    if (vec && gkb < N && gc + 3 < N) {
      vb = *reinterpret_cast<const float4_t*>(B + (long)gkb * N + gc);
    } else {
#pragma unroll
      for (int j = 0; j < 4; ++j) vb[j] = (gkb < N && gc + j < N) ? B[(long)gkb * N + gc + j] : 0.f;
    }
    *reinterpret_cast<float4_t*>(&Bs[bk][bc]) = vb;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) { a[i] = As[kk][ty + 16 * i]; b[i] = Bs[kk][tx + 16 * i]; }
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = __builtin_fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      int row = m0 + ty + 16 * i, col = n0 + tx + 16 * j;
      if (row < N && col < N) C[(long)row * N + col] = acc[i][j];
    }
}
