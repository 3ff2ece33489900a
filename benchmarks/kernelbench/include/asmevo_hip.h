// asmevo_hip.h - minimal HIP device-side shim for clang-19 without ROCm headers or device libs.
// Provides the CUDA/HIP keywords, thread indexing, barriers, wave (64-lane) shuffles and
// reductions built on DPP / ds_bpermute, and math helpers from clang builtins only.
#pragma once

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __host__ __attribute__((host))
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))
#define __forceinline__ inline __attribute__((always_inline))
#define DEVFN static __device__ __forceinline__

typedef _Float16 half;
typedef __bf16 bf16;
typedef float float4_t __attribute__((ext_vector_type(4)));
typedef float float16_t __attribute__((ext_vector_type(16)));
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef _Float16 half8_t __attribute__((ext_vector_type(8)));
typedef short short4_t __attribute__((ext_vector_type(4)));
typedef short short8_t __attribute__((ext_vector_type(8)));

#define WAVE 64

// ---- indexing (x/y/z); blockDim reads the implicit kernarg segment, prefer compile-time sizes
DEVFN unsigned threadIdx_x() { return __builtin_amdgcn_workitem_id_x(); }
DEVFN unsigned threadIdx_y() { return __builtin_amdgcn_workitem_id_y(); }
DEVFN unsigned blockIdx_x() { return __builtin_amdgcn_workgroup_id_x(); }
DEVFN unsigned blockIdx_y() { return __builtin_amdgcn_workgroup_id_y(); }
DEVFN unsigned blockIdx_z() { return __builtin_amdgcn_workgroup_id_z(); }
DEVFN unsigned blockDim_x() { return __builtin_amdgcn_workgroup_size_x(); }
DEVFN unsigned lane_id() { return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }

// ---- synchronisation
DEVFN void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// ---- lane shuffles
DEVFN int as_int(float v) { return __builtin_bit_cast(int, v); }
DEVFN float as_float(int v) { return __builtin_bit_cast(float, v); }

// __shfl_xor equivalent through ds_bpermute (crosses 16-lane rows).
DEVFN float shfl_xor(float v, int mask) {
  int src = (int)(lane_id() ^ (unsigned)mask) << 2;
  return as_float(__builtin_amdgcn_ds_bpermute(src, as_int(v)));
}
DEVFN int shfl_xor_i(int v, int mask) {
  return __builtin_amdgcn_ds_bpermute((int)(lane_id() ^ (unsigned)mask) << 2, v);
}

// DPP controls (gfx9): quad_perm, row_shr, row_mirror, row_half_mirror, row_bcast15/31.
#define DPP_QUAD_XOR1 0xB1      // quad_perm:[1,0,3,2]
#define DPP_QUAD_XOR2 0x4E      // quad_perm:[2,3,0,1]
#define DPP_ROW_SHR(n) (0x110 + (n))
#define DPP_ROW_MIRROR 0x140
#define DPP_ROW_HALF_MIRROR 0x141
#define DPP_ROW_BCAST15 0x142
#define DPP_ROW_BCAST31 0x143

#define DPP_F(v, ctrl) as_float(__builtin_amdgcn_update_dpp(0, as_int(v), ctrl, 0xF, 0xF, false))

// All-reduce over the 64-lane wave: DPP inside 16-lane rows, ds_bpermute across rows.
DEVFN float wave_sum(float v) {
  v += DPP_F(v, DPP_QUAD_XOR1);
  v += DPP_F(v, DPP_QUAD_XOR2);
  v += DPP_F(v, DPP_ROW_HALF_MIRROR);
  v += DPP_F(v, DPP_ROW_MIRROR);
  v += shfl_xor(v, 16);
  v += shfl_xor(v, 32);
  return v;
}
DEVFN float wave_max(float v) {
  v = __builtin_fmaxf(v, DPP_F(v, DPP_QUAD_XOR1));
  v = __builtin_fmaxf(v, DPP_F(v, DPP_QUAD_XOR2));
  v = __builtin_fmaxf(v, DPP_F(v, DPP_ROW_HALF_MIRROR));
  v = __builtin_fmaxf(v, DPP_F(v, DPP_ROW_MIRROR));
  v = __builtin_fmaxf(v, shfl_xor(v, 16));
  v = __builtin_fmaxf(v, shfl_xor(v, 32));
  return v;
}

// Inclusive prefix sum over the wave (row_shr within rows, row_bcast across rows).
DEVFN float wave_inclusive_scan(float v) {
  v += DPP_F(v, DPP_ROW_SHR(1));
  v += DPP_F(v, DPP_ROW_SHR(2));
  v += DPP_F(v, DPP_ROW_SHR(4));
  v += DPP_F(v, DPP_ROW_SHR(8));
  v += as_float(__builtin_amdgcn_update_dpp(0, as_int(v), DPP_ROW_BCAST15, 0xA, 0xF, false));
  v += as_float(__builtin_amdgcn_update_dpp(0, as_int(v), DPP_ROW_BCAST31, 0xC, 0xF, false));
  return v;
}

// Block-wide sum for NT threads (NT/64 waves); `scratch` holds NT/64 floats. Result in all lanes.
template <int NT>
DEVFN float block_sum(float v, float* scratch) {
  v = wave_sum(v);
  unsigned w = threadIdx_x() / WAVE;
  if (lane_id() == 0) scratch[w] = v;
  __syncthreads();
  float t = 0.f;
#pragma unroll
  for (int i = 0; i < NT / WAVE; ++i) t += scratch[i];
  __syncthreads();
  return t;
}
template <int NT>
DEVFN float block_max(float v, float* scratch) {
  v = wave_max(v);
  unsigned w = threadIdx_x() / WAVE;
  if (lane_id() == 0) scratch[w] = v;
  __syncthreads();
  float t = scratch[0];
#pragma unroll
  for (int i = 1; i < NT / WAVE; ++i) t = __builtin_fmaxf(t, scratch[i]);
  __syncthreads();
  return t;
}

// ---- math (no ocml): clang builtins lower to v_exp_f32 / v_log_f32 / v_sqrt_f32 / v_rsq_f32
DEVFN float expf_(float x) { return __builtin_expf(x); }
DEVFN float logf_(float x) { return __builtin_logf(x); }
DEVFN float sqrtf_(float x) { return __builtin_sqrtf(x); }
DEVFN float rsqrtf_(float x) { return __builtin_amdgcn_rsqf(x); }
DEVFN float fmaxf_(float a, float b) { return __builtin_fmaxf(a, b); }
DEVFN float tanhf_(float x) {
  float a = __builtin_fabsf(x);
  float e = __builtin_expf(-2.f * a);
  float t = (1.f - e) / (1.f + e);
  return __builtin_copysignf(t, x);
}
// erf via Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7).
DEVFN float erff_(float x) {
  float a = __builtin_fabsf(x);
  float t = 1.f / __builtin_fmaf(0.3275911f, a, 1.f);
  float p = __builtin_fmaf(__builtin_fmaf(__builtin_fmaf(__builtin_fmaf(1.061405429f, t, -1.453152027f), t,
                                                         1.421413741f), t, -0.284496736f), t, 0.254829592f) * t;
  float r = 1.f - p * __builtin_expf(-a * a);
  return __builtin_copysignf(r, x);
}

// ---- atomics
DEVFN void atomic_add_f32(float* p, float v) {
  __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
