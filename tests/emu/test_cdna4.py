"""The emulator on gfx950 (CDNA4) code: its processor selects the instruction table, the fp8/bf8
formats, the LDS size and the hazard rules; CDNA4-only instructions are checked against hand-derived
values and independent numpy oracles, and an instruction it does not model is a named error."""
from pathlib import Path

import numpy as np
import pytest

from asmevo.codeobj import CodeObject
from asmevo.device import get_device
from asmevo.device.launch import LaunchSpec, run_launch
from asmevo.emu import Memory, mfma, run_kernel
from asmevo.emu import numeric as nm
from asmevo.errors import UnsupportedInstruction
from asmevo.isa.table import instr_info
from asmevo.isa.waitcnt import check_waitcnt
from cotools import gfx950_code_object
from test_mfma import d_reg_lane

SPEC = {"kernel": "k", "grid": [1], "block": [64],
        "args": [{"buffer": "a", "dtype": "uint32", "shape": [128], "init": "zeros"}]}
STORE = """  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
BODY
  global_store_dword v10, v1, s[4:5]
  global_store_dword v10, v2, s[4:5] offset:256
  s_endpgm"""


def _run(tmp_path: Path, body: str) -> np.ndarray:
    """Run kernel `k` (one wave; v0 = lane id) after `body`, returning its stored v1 and v2 [2, 64]."""
    path = gfx950_code_object(tmp_path / "k.co", STORE.replace("BODY", body))
    out, result = run_launch(get_device("emu"), path, LaunchSpec.from_dict(SPEC), {"a": np.zeros(128, np.uint32)})
    assert result.ok, result.findings
    return out["a"].reshape(2, 64)


def test_permlane_swaps_trade_rows(tmp_path):
    """llvm.amdgcn.permlane16.swap: odd 16-lane rows of vdst <-> even rows of src0; permlane32.swap:
    rows 2-3 of vdst <-> rows 0-1 of src0."""
    lane = np.arange(64)
    v1, v2 = _run(tmp_path, "  v_mov_b32 v1, v0\n  v_add_u32 v2, 100, v0\n  s_nop 1\n  v_permlane16_swap_b32 v1, v2")
    odd = (lane // 16) % 2 == 1
    assert list(v1) == [l - 16 + 100 if o else l for l, o in zip(lane, odd)]
    assert list(v2) == [l + 100 if o else l + 16 for l, o in zip(lane, odd)]
    v1, v2 = _run(tmp_path, "  v_mov_b32 v1, v0\n  v_add_u32 v2, 100, v0\n  s_nop 1\n  v_permlane32_swap_b32 v1, v2")
    assert list(v1) == [l + 68 if l >= 32 else l for l in lane]
    assert list(v2) == [l + 32 if l < 32 else l + 100 for l in lane]


def test_cvt_pk_bf16_and_f16_round_to_nearest_even(tmp_path):
    """1 + 2^-8 is a bf16 tie (rounds to 1.0 = 0x3f80), 1 + 3*2^-8 rounds up to 0x3f82; f16 of
    65520 overflows to +inf (0x7c00), 1/3 -> 0x3555."""
    v1, v2 = _run(tmp_path, "  v_mov_b32 v3, 0x3f808000\n  v_mov_b32 v4, 0x3f818000\n"
                            "  v_cvt_pk_bf16_f32 v1, v3, v4\n"
                            "  v_mov_b32 v5, 0x477ff000\n  v_mov_b32 v6, 0x3eaaaaab\n  v_cvt_pk_f16_f32 v2, v5, v6")
    assert set(v1) == {0x3f82_3f80} and set(v2) == {0x3555_7c00}


def test_fp8_is_ocp_on_gfx950(tmp_path):
    """OCP formats (FNUZ values on gfx942 in brackets): fp8 0x7e is E4M3 448 (224), 0x80 is -0 (NaN);
    bf8 0x7b is E5M2 57344 (28672), 0x7c is +inf (57344)."""
    v1, v2 = _run(tmp_path, "  v_mov_b32 v3, 0x7e\n  v_mov_b32 v4, 0x7b\n  v_cvt_f32_fp8 v1, v3\n  v_cvt_f32_bf8 v2, v4")
    assert set(nm.as_f32(v1)) == {448.0} and set(nm.as_f32(v2)) == {57344.0}
    v1, v2 = _run(tmp_path, "  v_mov_b32 v3, 0x80\n  v_mov_b32 v4, 0x7c\n  v_cvt_f32_fp8 v1, v3\n  v_cvt_f32_bf8 v2, v4")
    assert set(v1) == {0x8000_0000} and set(nm.as_f32(v2)) == {np.inf}


def test_uncovered_gfx950_instructions_are_named_errors(tmp_path):
    """A CDNA4 instruction the emulator does not model raises at its address when executed, one the
    instruction table does not know says so; the kernel's earlier instructions ran."""
    for body, detail in (("  ds_read_b64_tr_b4 v[4:5], v10", "ds_read_b64_tr_b4"),
                         ("  v_prng_b32 v1, v0", "not a gfx950 instruction known to the instruction table")):
        path = gfx950_code_object(tmp_path / "u.co", STORE.replace("BODY", body))
        with pytest.raises(UnsupportedInstruction, match=detail) as exc:
            run_launch(get_device("emu"), path, LaunchSpec.from_dict(SPEC), {"a": np.zeros(128, np.uint32)})
        assert exc.value.pc == CodeObject.from_path(path).text["address"] + 8 + 4 + 4


def test_lds_limit_is_the_processors(tmp_path):
    """gfx950 workgroups may allocate 160 KiB of LDS (gfx942: 64 KiB)."""
    co = CodeObject.from_path(gfx950_code_object(tmp_path / "e.co", "  s_endpgm"))

    def run(lds: int):
        return run_kernel(co, "k", grid=(1, 1, 1), block=(64, 1, 1), dynamic_lds=lds, kernarg=bytes(8),
                          memory=Memory())
    assert run(160 * 1024).ok
    [finding] = run(160 * 1024 + 4).findings
    assert finding.kind == "lds_limit" and "gfx950's 163840" in finding.message


# ----------------------------------------------------------------------------------------- MFMA

def _pack(codes: np.ndarray, width: int, rows: int, k: int) -> np.ndarray:
    """Registers [1, nregs, 64] of an operand [rows, k] of `width`-bit codes: element k % e of lane
    i + rows * (k // e), packed from bit 0 of the register tuple (written out bit by bit)."""
    e = rows * k // 64
    nregs = -(-e * width // 32)
    bits = np.zeros((64, nregs * 32), np.uint8)
    for i in range(rows):
        for kk in range(k):
            lane, el = i + rows * (kk // e), kk % e
            for t in range(width):
                bits[lane, el * width + t] = (int(codes[i, kk]) >> t) & 1
    regs = (bits.reshape(64, nregs, 32).astype(np.uint64) << np.arange(32, dtype=np.uint64)).sum(axis=2)
    return regs.T[None].astype(np.uint32)


def _d_to_regs(d: np.ndarray, m: int, n: int, name: str) -> np.ndarray:
    f = instr_info(name, "gfx950").mfma
    regs = np.zeros((1, f.cd_regs, 64), np.uint32)
    for i in range(m):
        for j in range(n):
            r, lane = d_reg_lane(f, 0, i, j)
            regs[0, r, lane] = nm.as_u32(np.float32(d[i, j]))
    return regs


_FP4 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]          # OCP E2M1 magnitudes, codes 0-7
_FORMATS = {  # format: (bits, value of each code), hand-enumerated from the OCP MX spec's definitions
    "fp4": (4, [s * v for s in (1, -1) for v in _FP4]),
    "fp6": (6, [s * (m / 8 if e == 0 else 2.0 ** (e - 1) * (1 + m / 8)) for s in (1, -1) for e in range(4)
                for m in range(8)]),
    "bf6": (6, [s * (m / 4 * 2.0 ** -2 if e == 0 else 2.0 ** (e - 3) * (1 + m / 4)) for s in (1, -1)
                for e in range(8) for m in range(4)]),
}


def test_small_format_tables():
    """Spot values: E2M3 max 7.5, E3M2 max 28, E3M2 smallest denormal 2^-4; and the emulator agrees."""
    assert _FORMATS["fp6"][1][31] == 7.5 and _FORMATS["bf6"][1][31] == 28.0 and _FORMATS["bf6"][1][1] == 0.0625
    for fmt, (bits, values) in _FORMATS.items():
        assert list(mfma.small_float(np.arange(1 << bits), fmt)) == values


@pytest.mark.parametrize("name,typ", [("v_mfma_f32_16x16x32_f16", "f16"), ("v_mfma_f32_32x32x16_f16", "f16"),
                                      ("v_mfma_f32_16x16x32_bf16", "bf16"), ("v_mfma_f32_32x32x16_bf16", "bf16"),
                                      ("v_mfma_i32_16x16x64_i8", "i8"), ("v_mfma_i32_32x32x32_i8", "i8")])
def test_dense_double_k_mfma_matches_numpy(name, typ):
    f = instr_info(name, "gfx950").mfma
    rng = np.random.default_rng(7)
    if typ == "i8":
        a, b = rng.integers(-128, 128, (f.m, f.k)), rng.integers(-128, 128, (f.k, f.n))
        ac, bc, width = a & 0xFF, b & 0xFF, 8
    else:
        a, b = rng.integers(-8, 8, (f.m, f.k)) / 4.0, rng.integers(-8, 8, (f.k, f.n)) / 4.0
        enc = (lambda x: nm.as_u32(x.astype(np.float32)) >> 16) if typ == "bf16" else \
            (lambda x: x.astype(np.float16).view(np.uint16))
        ac, bc, width = enc(a), enc(b), 16
    c = rng.integers(-4, 4, (f.m, f.n))
    creg = _d_to_regs(c, f.m, f.n, name) if typ != "i8" else \
        _d_to_regs(np.zeros((f.m, f.n)), f.m, f.n, name) + 0
    if typ == "i8":
        for i in range(f.m):
            for j in range(f.n):
                r, lane = d_reg_lane(f, 0, i, j)
                creg[0, r, lane] = np.uint32(c[i, j] & 0xFFFFFFFF)
    d = mfma.execute(name, _pack(ac, width, f.m, f.k), _pack(bc.T, width, f.n, f.k), creg, processor="gfx950")
    want = a @ b + c
    for i in range(f.m):
        for j in range(f.n):
            r, lane = d_reg_lane(f, 0, i, j)
            got = d[0, r, lane].view(np.int32) if typ == "i8" else nm.as_f32(d[0, r, lane])
            assert got == want[i, j], (i, j)


def _codes(rng, fmt: str, shape) -> tuple[np.ndarray, np.ndarray]:
    if fmt in _FORMATS:
        bits, values = _FORMATS[fmt]
        codes = rng.integers(0, 1 << bits, shape)
        return codes, np.asarray(values)[codes]
    name = {"fp8": "e4m3fn", "bf8": "e5m2"}[fmt]
    codes = rng.integers(0, 256, shape)
    codes[(codes & 0x7F) >= (0x7F if fmt == "fp8" else 0x7C)] = 0x11           # no NaN / inf inputs
    return codes, nm.as_f32(nm.fp8_to_f32(codes.astype(np.uint8), name)).astype(np.float64)


@pytest.mark.parametrize("name", ["v_mfma_f32_16x16x128_f8f6f4", "v_mfma_scale_f32_32x32x64_f8f6f4"])
@pytest.mark.parametrize("fa,fb", [("fp4", "fp4"), ("fp8", "fp4"), ("fp6", "bf6"), ("bf8", "fp8")])
def test_f8f6f4_mfma_matches_numpy(name, fa, fb):
    """D = (A * 2^(sa - 127)) (B * 2^(sb - 127)) + C with one E8M0 scale per lane = per row (column) and
    32-element K block; the unscaled form is scale 1."""
    f = instr_info(name, "gfx950").mfma
    formats = ("fp8", "bf8", "fp6", "bf6", "fp4")
    rng = np.random.default_rng(hash((name, fa, fb)) % 2**32)
    (ac, a), (bc, b) = _codes(rng, fa, (f.m, f.k)), _codes(rng, fb, (f.n, f.k))
    c = rng.integers(-4, 4, (f.m, f.n)).astype(np.float64)
    kw = {}
    if "scale" in name:
        sa, sb = rng.integers(120, 134, 64), rng.integers(120, 134, 64)
        e = f.m * f.k // 64
        a = a * np.array([[2.0 ** (sa[i + f.m * (k // e)] - 127) for k in range(f.k)] for i in range(f.m)])
        b = b * np.array([[2.0 ** (sb[j + f.n * (k // e)] - 127) for k in range(f.k)] for j in range(f.n)])
        kw = {"scale_a": sa[None].astype(np.uint32), "scale_b": sb[None].astype(np.uint32)}
    wa, wb = (_FORMATS[t][0] if t in _FORMATS else 8 for t in (fa, fb))
    d = mfma.execute(name, _pack(ac, wa, f.m, f.k), _pack(bc, wb, f.n, f.k), _d_to_regs(c, f.m, f.n, name),
                     cbsz=formats.index(fa), blgp=formats.index(fb), processor="gfx950", **kw)
    want = (a @ b.T + c).astype(np.float32)
    for i in range(f.m):
        for j in range(f.n):
            r, lane = d_reg_lane(f, 0, i, j)
            assert nm.as_f32(d[0, r, lane]) == want[i, j], (i, j)


def test_e8m0_nan_scale_gives_nan():
    f = instr_info("v_mfma_scale_f32_16x16x128_f8f6f4", "gfx950").mfma
    ones = _pack(np.full((16, 128), 0x2), 4, 16, 128)                       # fp4 1.0
    scale = np.full((1, 64), 127, np.uint32)
    bad = scale.copy()
    bad[0, 5] = 0xFF                                                          # row 5 of A, K block 0
    name = "v_mfma_scale_f32_16x16x128_f8f6f4"
    d = mfma.execute(name, ones, ones, np.zeros((1, f.cd_regs, 64), np.uint32), cbsz=4, blgp=4, processor="gfx950",
                     scale_a=bad, scale_b=scale)
    for i in range(16):
        for j in range(16):
            r, lane = d_reg_lane(f, 0, i, j)
            v = nm.as_f32(d[0, r, lane])
            assert (np.isnan(v) if i == 5 else v == 128.0), (i, j)


def test_wide_lds_dma_puts_each_lane_16_bytes_apart(tmp_path):
    """gfx950's global_load_lds_dwordx4 / dwordx3 write lane l's 16 (12) bytes at M0 + 16 * l (LLVM
    AMDGPUUsage, LDS DMA); read back with ds_read_b128 / b96 and stored after the source."""
    body = """  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 4, v0
  s_mov_b32 m0, 0
  s_waitcnt lgkmcnt(0)
  global_load_lds_dwordx4 v1, s[4:5]
  s_mov_b32 m0, 0x400
  s_nop 0
  global_load_lds_dwordx3 v1, s[4:5]
  s_waitcnt vmcnt(0)
  v_add_u32 v8, 0x400, v1
  ds_read_b128 v[4:7], v1
  ds_read_b96 v[12:14], v8
  s_waitcnt lgkmcnt(0)
  global_store_dwordx4 v1, v[4:7], s[4:5] offset:1024
  global_store_dwordx3 v1, v[12:14], s[4:5] offset:2048
  s_endpgm"""
    path = gfx950_code_object(tmp_path / "dma.co", body)
    src = np.arange(768, dtype=np.uint32) * 7 + 1
    src[256:] = 0
    spec = dict(SPEC, dynamic_lds=2048, args=[{"buffer": "a", "dtype": "uint32", "shape": [768], "init": "zeros"}])
    out, result = run_launch(get_device("emu"), path, LaunchSpec.from_dict(spec), {"a": src.copy()})
    assert result.ok, result.findings
    a = out["a"]
    assert list(a[256:512]) == list(src[:256])
    x3 = a[512:768].reshape(64, 4)
    assert (x3[:, :3] == src[:256].reshape(64, 4)[:, :3]).all() and (x3[:, 3] == 0).all()


def _scale_byte_body() -> str:
    """fp4 A = B = 1.0, scale registers v40 = 0x807f7e7d (bytes 2^-2, 2^-1, 1, 2) and v41 = 0x8180 (bytes 2, 4);
    two scaled MFMAs pick different bytes; v1 and v2 hold one element of each result."""
    ones = "".join(f"  v_mov_b32 v{r}, 0x22222222\n" for r in range(32, 40))
    mfma_ = "  v_mfma_scale_f32_16x16x128_f8f6f4 v[{0}], v[32:35], v[36:39], 0, v40, v41 {1} cbsz:4 blgp:4\n"
    return (ones + "  v_mov_b32 v40, 0x807f7e7d\n  v_mov_b32 v41, 0x8180\n  s_nop 1\n"
            + mfma_.format("44:47", "op_sel:[1,0,0] op_sel_hi:[1,0,0]")
            + mfma_.format("48:51", "op_sel:[0,1,0] op_sel_hi:[0,0,0]")
            + "  s_nop 7\n  v_mov_b32 v1, v44\n  v_mov_b32 v2, v51")


def test_scaled_mfma_selects_the_scale_byte(tmp_path):
    """v_mfma_scale with fp4 A = B = 1.0: D = 128 * scale_a * scale_b, the scale byte being
    op_sel[i] | op_sel_hi[i] << 1 of the scale register."""
    v1, v2 = _run(tmp_path, _scale_byte_body())
    assert set(nm.as_f32(v1)) == {128 * 2.0 * 2.0} and set(nm.as_f32(v2)) == {128 * 0.25 * 4.0}


def _as_words(tmp_path: Path, body: str, dword0_or: int, dword1_or: int = 0) -> str:
    """`body` with each scaled MFMA written as `.long` words, its prefix's dword 0 / dword 1 OR-ed with the
    given bits (LLVM's syntax cannot set them)."""
    path = gfx950_code_object(tmp_path / "words.co", STORE.replace("BODY", body))
    scaled = [i for i in CodeObject.from_path(path).listing.instructions if i.mnemonic.startswith("v_mfma_scale")]
    lines = iter(scaled)
    out = []
    for line in body.splitlines():
        if line.strip().startswith("v_mfma_scale"):
            encoding = next(lines).encoding
            words = [int.from_bytes(encoding[i:i + 4], "little") for i in range(0, 16, 4)]
            words[0] |= dword0_or
            words[1] |= dword1_or
            line = "  .long " + ", ".join(f"{w:#010x}" for w in words)
        out.append(line)
    return "\n".join(out)


@pytest.mark.parametrize("bits", [0x2000, 0x4000, 0x6000])
def test_scaled_mfma_prefix_bits_0x6000_select_nothing(tmp_path, bits):
    """Bits 13-14 of the v_mfma_ld_scale prefix (op_sel / op_sel_hi of its absent third source; AITer's MXFP4
    kernels set them, and their f4gemm matches its reference with the bits ignored) change no scale byte."""
    body = _scale_byte_body()
    assert (_run(tmp_path, _as_words(tmp_path, body, bits)) == _run(tmp_path, body)).all()


DWORD0_FIELDS, DWORD1_FIELDS = "vdst, neg_hi or clamp", "src2 or neg"


@pytest.mark.parametrize("dword0,dword1,what", [(0x100, 0, DWORD0_FIELDS), (0x8000, 0, DWORD0_FIELDS),
                                                (0x01, 0, DWORD0_FIELDS), (0, 0x2000_0000, DWORD1_FIELDS),
                                                (0, 0x0004_0000, DWORD1_FIELDS)])
def test_scaled_mfma_prefix_fields_llvm_drops_are_a_named_error(tmp_path, dword0, dword1, what):
    """Other v_mfma_ld_scale prefix fields LLVM decodes without printing (neg_hi, clamp, vdst, neg, src2): no
    source says what they do, so the emulator refuses them."""
    body = _as_words(tmp_path, _scale_byte_body(), dword0, dword1)
    with pytest.raises(UnsupportedInstruction, match=f"v_mfma_ld_scale prefix sets {what}"):
        _run(tmp_path, body)


def test_scaled_mfma_scale_in_an_sgpr_is_a_named_error(tmp_path):
    """For SGPR / inline-constant scales the hardware reads bits [30:23] (LLVM allows VGPRs only, so the
    instruction is written as words: the VGPR form's scale A field 0x128 (v40) set to 4 (s4))."""
    body = "  .long 0xd3ac0000, 0x00025204, 0xd3ad0c2c, 0x82024920"
    path = gfx950_code_object(tmp_path / "s.co", STORE.replace("BODY", body))
    with pytest.raises(UnsupportedInstruction, match="scale operand not a VGPR"):
        run_launch(get_device("emu"), path, LaunchSpec.from_dict(SPEC), {"a": np.zeros(128, np.uint32)})


@pytest.fixture(scope="module")
def triton_v4():
    """get(instr_shape, operand, k_width) -> (reg_bases, lane_bases) of Triton's gfx950 MFMA layout
    (`AMDMFMALayout(version=4)`, what Triton's gfx950 backend generates code from); operand None: D."""
    gl = pytest.importorskip("triton.experimental.gluon.language")
    from triton._C.libtriton import gluon_ir, ir
    from triton.experimental.gluon.language import amd
    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)

    def get(instr, operand=None, k_width=1):
        layout = amd.AMDMFMALayout(version=4, instr_shape=list(instr), transposed=False, warps_per_cta=[1, 1],
                                   element_bitwidth=32)
        m, n, k = instr
        shape = [m, n]
        if operand is not None:
            layout, shape = gl.DotOperandLayout(operand, layout, k_width), ([m, k] if operand == 0 else [k, n])
        ll = builder.to_linear_layout(layout._to_ir(builder), shape)
        return ll.reg_bases, ll.lane_bases

    yield get
    del builder, ctx


@pytest.mark.parametrize("name,k_width", [("v_mfma_f32_16x16x32_f16", 8), ("v_mfma_f32_32x32x16_bf16", 8),
                                          ("v_mfma_i32_16x16x64_i8", 16), ("v_mfma_i32_32x32x32_i8", 16),
                                          ("v_mfma_f32_16x16x128_f8f6f4", 32), ("v_mfma_f32_32x32x64_f8f6f4", 32)])
def test_cdna4_layouts_match_triton(name, k_width, triton_v4):
    """Every (lane, element) of A and B, and every (register, lane) of D, against Triton's gfx950 layouts
    with the kWidth its gfx950 backend uses for the shape (all of a lane's elements contiguous in K)."""
    from test_mfma import _apply
    f = instr_info(name, "gfx950").mfma
    instr = (f.m, f.n, f.k)
    for operand, which in ((0, "a"), (1, "b")):
        lane_of, el_of = mfma.input_layout(name, which, "gfx950")
        reg_bases, lane_bases = triton_v4(instr, operand, k_width)
        for lane in range(64):
            for el in range(f.a_elems):
                x, y = _apply(reg_bases, lane_bases, el, lane)
                row, k = (x, y) if operand == 0 else (y, x)
                assert (lane_of[0, row, k], el_of[0, row, k]) == (lane, el)
    d_reg, d_lane = mfma.output_layout(name, "gfx950")
    reg_bases, lane_bases = triton_v4(instr)
    for lane in range(64):
        for el in range(f.cd_regs):
            i, j = _apply(reg_bases, lane_bases, el, lane)
            assert (d_reg[0, i, j], d_lane[0, i, j]) == (el, lane)


def test_buffer_atomic_pk_add_bf16(tmp_path):
    """Each bf16 half added separately and rounded: [lo 1.0, hi 2.0] + [lo 2.0, hi 1.0] = [3.0, 3.0]."""
    body = """  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  s_mov_b32 s8, s4
  s_and_b32 s9, s5, 0xffff
  s_mov_b32 s10, 512
  s_mov_b32 s11, 0x20000
  v_lshlrev_b32 v10, 2, v0
  v_mov_b32 v1, 0x3f804000
  buffer_atomic_pk_add_bf16 v1, v10, s[8:11], 0 offen
  s_endpgm"""
    path = gfx950_code_object(tmp_path / "atomic.co", body)
    init = np.full(128, 0x40003F80, np.uint32)
    out, result = run_launch(get_device("emu"), path, LaunchSpec.from_dict(SPEC), {"a": init})
    assert result.ok, result.findings
    assert set(out["a"][:64]) == {0x4040_4040} and set(out["a"][64:]) == {0x40003F80}


def test_cvt_scalef32_pk_fp4_f32(tmp_path):
    """Hand-derived: scale 2: 3.0 -> 1.5 (0x3), -7.0 -> -3.5, a tie between 3 (odd) and 4 -> -4 (0xE),
    into byte 1 (op_sel[2]) of 0x11223344; scale 0.5: 100 -> 200, saturated to 6 (0x7), -0.1 -> -0.2
    -> -0 (0x8), into byte 3 (op_sel[2:3]) of 0."""
    v1, v2 = _run(tmp_path, "  v_mov_b32 v1, 0x11223344\n  v_mov_b32 v3, 0x40400000\n  v_mov_b32 v4, 0xc0e00000\n"
                            "  v_mov_b32 v5, 0x40000000\n"
                            "  v_cvt_scalef32_pk_fp4_f32 v1, v3, v4, v5 op_sel:[0,0,1,0]\n"
                            "  v_mov_b32 v2, 0\n  v_mov_b32 v6, 0x42c80000\n  v_mov_b32 v7, 0xbdcccccd\n"
                            "  v_mov_b32 v8, 0x3f000000\n"
                            "  v_cvt_scalef32_pk_fp4_f32 v2, v6, v7, v8 op_sel:[0,0,1,1]")
    assert set(v1) == {0x1122E344} and set(v2) == {0x87000000}


@pytest.mark.parametrize("scale,value,what", [(0x40400000, 0x3f800000, "not a normal power of two"),
                                              (0x40000000, 0x7fc00000, "NaN/infinite input")])
def test_cvt_scalef32_pk_fp4_refuses_what_it_does_not_model(tmp_path, scale, value, what):
    body = (f"  v_mov_b32 v3, {value:#x}\n  v_mov_b32 v5, {scale:#x}\n"
            "  v_cvt_scalef32_pk_fp4_f32 v1, v3, v3, v5")
    path = gfx950_code_object(tmp_path / "f.co", STORE.replace("BODY", body))
    with pytest.raises(UnsupportedInstruction, match=what):
        run_launch(get_device("emu"), path, LaunchSpec.from_dict(SPEC), {"a": np.zeros(128, np.uint32)})


def test_fp4_rounding_table():
    """Every representable magnitude and every midpoint between neighbours (ties to even mantissa)."""
    vals = np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 1e9],
                    np.float32)
    want = [0, 0, 1, 2, 2, 2, 3, 4, 4, 4, 5, 6, 6, 6, 7, 7, 7]
    assert list(nm.f32_to_fp4(nm.as_u32(vals))) == want
    assert list(nm.f32_to_fp4(nm.as_u32(-vals))) == [8 | w for w in want]


# gfx950 keeps gfx9's counters: a DS read counts on lgkmcnt alone, a VMEM load on vmcnt alone, and a VGPR
# with one pending may be neither read nor overwritten by another instruction without the wait (LLVM
# SIInsertWaitcnts: determineWait(DS_CNT) for every VGPR operand, "RAW always needs an s_waitcnt", "WAW
# needs an s_waitcnt unless the previous write and this write are the same type of VMEM instruction").
# The shipped one-stage MoE kernels feed ds_read_b32 results to global_atomic_pk_add_bf16 with only vmcnt
# waits between, and overwrite a pending load's v44 with VALU scratch (asmevo/calibrate/fmoe_findings.py).
LDS_TO_ATOMIC = """  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
  ds_write_b32 v10, v0
  s_waitcnt lgkmcnt(0)
  ds_read_b32 v1, v10
  global_load_dword v2, v10, s[4:5]
  WAIT
  global_atomic_pk_add_bf16 v10, v1, s[4:5]
  s_waitcnt vmcnt(0) lgkmcnt(0)
  s_endpgm"""
VALU_OVER_LOAD = """  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v10, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v10, s[4:5]
  ds_read_b32 v3, v10
  WAIT
  v_lshrrev_b32 v2, 4, v0
  s_waitcnt vmcnt(0) lgkmcnt(0)
  s_endpgm"""


def _waitcnt_findings(tmp_path: Path, body: str) -> tuple[list[str], list]:
    """The emulator's waitcnt finding messages for kernel `k` = `body` (one wave, 256 bytes of LDS) and the
    static check's violations."""
    path = gfx950_code_object(tmp_path / "w.co", body)
    spec = LaunchSpec.from_dict(dict(SPEC, dynamic_lds=256))
    _, result = run_launch(get_device("emu"), path, spec, {"a": np.zeros(128, np.uint32)})
    static = check_waitcnt(CodeObject.from_path(path).kernel_instructions("k"), processor="gfx950")
    return [f["message"] for f in result.findings if f["kind"] == "waitcnt"], static


@pytest.mark.parametrize("wait,pending", [("", True), ("s_waitcnt vmcnt(0)", True), ("s_waitcnt lgkmcnt(0)", False)])
def test_an_atomic_reading_an_lds_read_needs_lgkmcnt(tmp_path, wait, pending):
    emulated, static = _waitcnt_findings(tmp_path, LDS_TO_ATOMIC.replace("WAIT", wait))
    assert emulated == (["global_atomic_pk_add_bf16 reads v1 while a load into it is outstanding "
                         "(missing s_waitcnt)"] if pending else [])
    assert [(v.register, v.counter) for v in static] == ([("v1", "lgkmcnt")] if pending else [])


@pytest.mark.parametrize("wait,pending", [("", True), ("s_waitcnt lgkmcnt(0)", True), ("s_waitcnt vmcnt(0)", False)])
def test_a_valu_write_over_a_pending_load_needs_vmcnt(tmp_path, wait, pending):
    emulated, static = _waitcnt_findings(tmp_path, VALU_OVER_LOAD.replace("WAIT", wait))
    assert emulated == (["v_lshrrev_b32_e32 overwrites v2 while a load into it is outstanding "
                         "(missing s_waitcnt)"] if pending else [])
    assert [(v.register, v.counter) for v in static] == ([("v2", "vmcnt")] if pending else [])
