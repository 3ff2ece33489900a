"""Compiled HIP kernels (clang-19 for gfx942) run on the emulator and match numpy (Triton kernels:
test_triton_kernels.py)."""
from __future__ import annotations

import numpy as np

from emutools import hip, launch

RNG = np.random.default_rng(11)

VADD = """
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
  int i = bid() * __builtin_amdgcn_workgroup_size_x() + tid();
  if (i < n) c[i] = a[i] + b[i];
}"""

REDUCE = """
static __attribute__((device)) inline float dpp_sum(float v) {
  v += __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, __builtin_bit_cast(int, v), 0xB1, 0xF, 0xF, false));
  v += __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, __builtin_bit_cast(int, v), 0x4E, 0xF, 0xF, false));
  v += __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, __builtin_bit_cast(int, v), 0x141, 0xF, 0xF, false));
  v += __builtin_bit_cast(float, __builtin_amdgcn_update_dpp(0, __builtin_bit_cast(int, v), 0x140, 0xF, 0xF, false));
  unsigned lane = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
  v += __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((lane ^ 16) << 2, __builtin_bit_cast(int, v)));
  v += __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((lane ^ 32) << 2, __builtin_bit_cast(int, v)));
  return v;
}
extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(1, 256)))
void reduce(const float* x, float* out, int n) {
  __shared__ float part[4];
  float v = 0.f;
  for (int i = bid() * 256 + tid(); i < n; i += 256 * __builtin_amdgcn_grid_size_x() / 256) v += x[i];
  v = dpp_sum(v);
  if ((tid() & 63) == 0) part[tid() / 64] = v;
  sync();
  if (tid() == 0) out[bid()] = part[0] + part[1] + part[2] + part[3];
}
extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(1, 256)))
void softmax(const float* x, float* y, int cols) {
  __shared__ float red[4];
  const float* xr = x + (long)bid() * cols;
  float* yr = y + (long)bid() * cols;
  float m = -__builtin_inff();
  for (int i = tid(); i < cols; i += 256) m = __builtin_fmaxf(m, xr[i]);
  for (int o = 32; o; o >>= 1) {
    unsigned lane = __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u));
    m = __builtin_fmaxf(m, __builtin_bit_cast(float, __builtin_amdgcn_ds_bpermute((lane ^ o) << 2, __builtin_bit_cast(int, m))));
  }
  if ((tid() & 63) == 0) red[tid() / 64] = m;
  sync();
  m = __builtin_fmaxf(__builtin_fmaxf(red[0], red[1]), __builtin_fmaxf(red[2], red[3]));
  sync();
  float s = 0.f;
  for (int i = tid(); i < cols; i += 256) s += __builtin_expf(xr[i] - m);
  s = dpp_sum(s);
  if ((tid() & 63) == 0) red[tid() / 64] = s;
  sync();
  s = red[0] + red[1] + red[2] + red[3];
  for (int i = tid(); i < cols; i += 256) yr[i] = __builtin_expf(xr[i] - m) / s;
}
"""

TILED = """
extern "C" __global__ __attribute__((amdgpu_flat_work_group_size(1, 256)))
void matmul(const float* a, const float* b, float* c, int n) {
  __shared__ float ta[16][17], tb[16][17];
  int tx = tid() % 16, ty = tid() / 16;
  int row = __builtin_amdgcn_workgroup_id_y() * 16 + ty, col = bid() * 16 + tx;
  float acc = 0.f;
  for (int k0 = 0; k0 < n; k0 += 16) {
    ta[ty][tx] = a[row * n + k0 + tx];
    tb[ty][tx] = b[(k0 + ty) * n + col];
    sync();
    for (int k = 0; k < 16; ++k) acc += ta[ty][k] * tb[k][tx];
    sync();
  }
  c[row * n + col] = acc;
}
"""

MFMA = """
typedef __bf16 bf16x4 __attribute__((ext_vector_type(4)));
typedef short s4 __attribute__((ext_vector_type(4)));
extern "C" __global__ void mfma_f16(const half* a, const half* b, float* c) {
  half4_t av = *(const half4_t*)(a + tid() * 4), bv = *(const half4_t*)(b + tid() * 4);
  float16_t acc = {};
  acc = __builtin_amdgcn_mfma_f32_32x32x8f16(av, bv, acc, 0, 0, 0);
  for (int k = 0; k < 16; k++) c[tid() * 16 + k] = acc[k];
}
extern "C" __global__ void mfma_bf16(const short* a, const short* b, float* c) {
  s4 av = *(const s4*)(a + tid() * 4), bv = *(const s4*)(b + tid() * 4);
  float16_t acc = {};
  acc = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(av, bv, acc, 0, 0, 0);
  for (int k = 0; k < 16; k++) c[tid() * 16 + k] = acc[k];
}
"""

SPILL = """
extern "C" __global__ void spill(float* x, int n) {
  float buf[64];
  for (int k = 0; k < 64; k++) buf[k] = x[tid() + k * n];
  int j = tid() & 63;
  x[tid()] = buf[j] + buf[(j * 7) & 63];
}
"""


def test_hip_vadd_partial_last_block():
    n = 1000
    a, b = RNG.random(n, dtype=np.float32), RNG.random(n, dtype=np.float32)
    res = launch(hip(VADD), "vadd", (4,), (256,), [a, b, np.zeros(n, np.float32), np.int32(n)], outputs=[2])
    assert res.report.ok, res.report.findings
    np.testing.assert_array_equal(res.outputs[2], a + b)
    assert res.report.waves == 16


def test_hip_reduction_dpp_lds():
    x = RNG.random(4096, dtype=np.float32)
    res = launch(hip(REDUCE), "reduce", (4,), (256,), [x, np.zeros(4, np.float32), np.int32(4096)], outputs=[1])
    assert res.report.ok, res.report.findings
    # grid-stride loop: 1024 work-items, so block b's thread t sums x[b*256 + t + 1024*j] for j = 0..3
    per_block = x.astype(np.float64).reshape(4, 4, 256).sum(axis=(0, 2))
    np.testing.assert_allclose(res.outputs[1], per_block, rtol=1e-5)


def test_hip_softmax():
    x = RNG.standard_normal((6, 777)).astype(np.float32)
    res = launch(hip(REDUCE), "softmax", (6,), (256,), [x, np.zeros_like(x), np.int32(777)], outputs=[1])
    assert res.report.ok, res.report.findings
    e = np.exp(x.astype(np.float64) - x.max(1, keepdims=True))
    np.testing.assert_allclose(res.outputs[1], e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_hip_tiled_matmul_lds():
    n = 64
    a, b = RNG.standard_normal((n, n)).astype(np.float32), RNG.standard_normal((n, n)).astype(np.float32)
    res = launch(hip(TILED), "matmul", (n // 16, n // 16), (256,), [a, b, np.zeros((n, n), np.float32), np.int32(n)],
                 outputs=[2])
    assert res.report.ok, res.report.findings
    np.testing.assert_allclose(res.outputs[2], a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)


def _mfma_ref(a, b):
    A = np.zeros((32, 8))
    B = np.zeros((8, 32))
    for i in range(32):
        for k in range(8):
            A[i, k] = a[(i + 32 * (k // 4)) * 4 + k % 4]
            B[k, i] = b[(i + 32 * (k // 4)) * 4 + k % 4]
    return A @ B


def _mfma_unpack(c):
    got = np.zeros((32, 32))
    for lane in range(64):
        for r in range(16):
            got[8 * (r // 4) + 4 * (lane // 32) + r % 4, lane % 32] = c[lane * 16 + r]
    return got


def test_hip_mfma_f16_bf16():
    co = hip(MFMA)
    a = RNG.standard_normal(256).astype(np.float16)
    b = RNG.standard_normal(256).astype(np.float16)
    res = launch(co, "mfma_f16", (1,), (64,), [a, b, np.zeros(1024, np.float32)], outputs=[2])
    assert res.report.ok, res.report.findings
    np.testing.assert_allclose(_mfma_unpack(res.outputs[2]), _mfma_ref(a.astype(np.float64), b.astype(np.float64)),
                               rtol=1e-6, atol=1e-6)
    af = RNG.standard_normal(256).astype(np.float32)
    bf = RNG.standard_normal(256).astype(np.float32)
    abf = (af.view(np.uint32) >> 16).astype(np.uint16)
    bbf = (bf.view(np.uint32) >> 16).astype(np.uint16)
    res = launch(co, "mfma_bf16", (1,), (64,), [abf, bbf, np.zeros(1024, np.float32)], outputs=[2])
    assert res.report.ok, res.report.findings
    up = lambda h: (h.astype(np.uint32) << 16).view(np.float32).astype(np.float64)  # noqa: E731
    np.testing.assert_allclose(_mfma_unpack(res.outputs[2]), _mfma_ref(up(abf), up(bbf)), rtol=1e-6, atol=1e-6)


def test_hip_spill_to_scratch():
    co = hip(SPILL)
    assert co.kernel("spill").descriptor.private_segment_fixed_size > 0
    x = RNG.random(64 * 64, dtype=np.float32)
    res = launch(co, "spill", (1,), (64,), [x, np.int32(64)], outputs=[0])
    assert res.report.ok, res.report.findings
    j = np.arange(64)
    np.testing.assert_array_equal(res.outputs[0][:64], x[j + j * 64] + x[j + ((j * 7) & 63) * 64])
