"""MFMA semantics and register layouts.

Layouts are checked three ways: hand-derived one-hot cases, numpy matmul on fragments built
by an independent per-element packer, and Triton's own MFMA linear layouts (the layouts its
gfx942 code generator relies on). Compiled HIP/Triton kernels confirm mnemonics, operand
sizes and Triton's operand order."""
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from asmevo.emu import mfma
from asmevo.emu import numeric as nm
from asmevo.errors import UnsupportedInstruction
from asmevo.isa.mnemonics import MFMA_ALIASES
from asmevo.isa.table import MfmaShape, instr_info, mnemonics

RNG = np.random.default_rng(7)
LLVM = Path("/usr/lib/llvm-19/bin")
ALL = sorted(b for b in mnemonics() if (s := instr_info(b).mfma) is not None and not s.sparse)


# ------------------------------------------------------------ independent fragment packing

def a_lane_elem(f: MfmaShape, b: int, i: int, k: int, rows: int) -> tuple[int, int]:
    """Lane/element of A[b][i][k] per the CDNA3 ISA guide, written out case by case."""
    e = rows * f.k * f.blocks // 64          # elements per lane
    kgroups = f.k // e                       # lane groups along k
    assert rows * f.blocks * kgroups == 64
    return b * rows + (k // e) * rows * f.blocks + i, k % e


def d_reg_lane(f: MfmaShape, b: int, i: int, j: int) -> tuple[int, int]:
    """Register/lane of D[b][i][j] per the ISA guide's tables (f64: low dword of the pair)."""
    if f.out_type == "f64":
        if f.m == 16:
            return 2 * (i // 4), 16 * (i % 4) + j
        return 0, 16 * i + 4 * b + j
    if f.m == 32:
        return 16 * b + 4 * (i // 8) + i % 4, 32 * ((i // 4) % 2) + j
    if f.m == 16:
        return 4 * b + i % 4, 16 * (i // 4) + j
    return i, 4 * b + j


def pack(f: MfmaShape, x: np.ndarray, typ: str, operand: str) -> np.ndarray:
    """Registers [1, nregs, 64] holding A [blocks, m, k] or B [blocks, k, n] given as raw bit
    codes (ints), one element at a time."""
    bits = mfma._BITS[typ]
    nregs = f.a_regs if operand == "a" else f.b_regs
    regs = np.zeros((1, nregs, 64), np.uint64)
    rows = f.m if operand == "a" else f.n
    for b in range(f.blocks):
        for r in range(rows):
            for k in range(f.k):
                code = int(x[b, r, k] if operand == "a" else x[b, k, r])
                lane, el = a_lane_elem(f, b, r, k, rows)
                if bits == 64:
                    regs[0, 2 * el, lane] = code & 0xFFFFFFFF
                    regs[0, 2 * el + 1, lane] = code >> 32
                else:
                    per = 32 // bits
                    regs[0, el // per, lane] |= code << (bits * (el % per))
    return regs.astype(np.uint32)


def unpack_d(f: MfmaShape, regs: np.ndarray) -> np.ndarray:
    out = np.zeros((f.blocks, f.m, f.n), np.float64 if f.out_type != "i32" else np.int64)
    for b in range(f.blocks):
        for i in range(f.m):
            for j in range(f.n):
                r, lane = d_reg_lane(f, b, i, j)
                if f.out_type == "f64":
                    out[b, i, j] = nm.pack_f64(regs[0, r, lane], regs[0, r + 1, lane])
                elif f.out_type == "i32":
                    out[b, i, j] = np.int32(regs[0, r, lane].view(np.int32))
                else:
                    out[b, i, j] = nm.as_f32(regs[0, r, lane])
    return out


def pack_d(f: MfmaShape, d: np.ndarray) -> np.ndarray:
    regs = np.zeros((1, f.cd_regs, 64), np.uint32)
    for b in range(f.blocks):
        for i in range(f.m):
            for j in range(f.n):
                r, lane = d_reg_lane(f, b, i, j)
                if f.out_type == "f64":
                    lo, hi = nm.unpack_f64(np.float64(d[b, i, j]))
                    regs[0, r, lane], regs[0, r + 1, lane] = lo, hi
                elif f.out_type == "i32":
                    regs[0, r, lane] = np.int64(d[b, i, j]) & 0xFFFFFFFF
                else:
                    regs[0, r, lane] = nm.as_u32(np.float32(d[b, i, j]))
    return regs


def random_codes(typ: str, shape) -> tuple[np.ndarray, np.ndarray]:
    """(bit codes, their float64/int64 values) of small exactly-representable numbers."""
    ints = RNG.integers(-8, 9, size=shape)
    if typ == "i8":
        return ints & 0xFF, ints
    vals = ints / 4.0
    if typ == "f16":
        codes = vals.astype(np.float16).view(np.uint16)
    elif typ == "bf16":
        codes = nm.f32_to_bf16(nm.as_u32(vals.astype(np.float32)))
    elif typ in ("fp8", "bf8"):
        table = nm.as_f32(nm.fp8_to_f32(np.arange(256, dtype=np.uint8), typ))
        lookup = {float(v): c for c, v in enumerate(table) if c != 0x80}
        codes = np.vectorize(lambda v: lookup[float(v)])(vals)
    elif typ == "f64":
        codes = vals.view(np.uint64)
    else:
        codes = nm.as_u32(vals.astype(np.float32))
    return codes.astype(np.uint64), vals


# --------------------------------------------------------------------------------- info

def test_info_register_counts():
    f = mfma.info("v_mfma_f32_32x32x8_f16")
    assert (f.m, f.n, f.k, f.blocks, f.a_regs, f.b_regs, f.cd_regs) == (32, 32, 8, 1, 2, 2, 16)
    assert mfma.info("v_mfma_f32_32x32x1_2b_f32").cd_regs == 32
    f = mfma.info("v_mfma_f64_4x4x4_4b_f64")
    assert (f.a_regs, f.cd_regs) == (2, 2)
    f = mfma.info("v_mfma_f32_16x16x32_bf8_fp8")
    assert (f.in_type, f.b_type, f.a_regs) == ("bf8", "fp8", 2)
    assert mfma.info("v_mfma_f32_32x32x8bf16_1k") == mfma.info("v_mfma_f32_32x32x8_bf16")
    with pytest.raises(UnsupportedInstruction):
        mfma.info("v_smfmac_f32_16x16x32_f16")
    with pytest.raises(UnsupportedInstruction):
        mfma.info("v_add_f32")


def _llvm_mc_roundtrip(lines: list[str], tmp: Path) -> list[str]:
    """Assemble for gfx942 and return the llvm-objdump-19 mnemonic of each line."""
    (tmp / "m.s").write_text("\n".join(lines) + "\n")
    subprocess.run([str(LLVM / "llvm-mc"), "-triple=amdgcn-amd-amdhsa", "-mcpu=gfx942",
                    "-filetype=obj", "-o", str(tmp / "m.o"), str(tmp / "m.s")], check=True)
    dis = subprocess.run([str(LLVM / "llvm-objdump"), "-d", "--mcpu=gfx942", str(tmp / "m.o")],
                         capture_output=True, text=True, check=True).stdout
    return re.findall(r"^\s+(v_mfma\S+)", dis, re.M)


def _operand_text(f: MfmaShape) -> str:
    def rng(base: int, n: int) -> str:
        return f"v{base}" if n == 1 else f"v[{base}:{base + n - 1}]"
    return f"{rng(0, f.cd_regs)}, {rng(40, f.a_regs)}, {rng(44, f.b_regs)}, {rng(0, f.cd_regs)}"


@pytest.mark.skipif(not (LLVM / "llvm-mc").exists(), reason="LLVM 19 not installed")
def test_mnemonics_and_sizes_match_llvm(tmp_path):
    """Every canonical name (and gfx90a alias) assembles for gfx942 with our register counts
    and disassembles to the canonical spelling."""
    names = ALL + sorted(MFMA_ALIASES)
    lines = [f"{n} {_operand_text(mfma.info(n))}" for n in names]
    assert _llvm_mc_roundtrip(lines, tmp_path) == [mfma.canonical(n) for n in names]


# ------------------------------------------------------------------------------ layouts

def test_one_hot_32x32x8_f16():
    """A = e(i=5, k=6), B = e(k=6, j=9): D has a single 1.0 at (5, 9).

    By the ISA guide: A[5][6] sits in lane 5 + 32*(6//4) = 37, element 6 % 4 = 2, i.e. the low
    half of register 1; B[6][9] in lane 9 + 32 = 41, low half of register 1; D[5][9] in
    register 4*(5//8) + 5%4 = 1, lane 32*((5//4)%2) + 9 = 41."""
    a = np.zeros((1, 2, 64), np.uint32)
    b = np.zeros((1, 2, 64), np.uint32)
    a[0, 1, 37] = 0x3C00
    b[0, 1, 41] = 0x3C00
    d = mfma.execute("v_mfma_f32_32x32x8_f16", a, b, np.zeros((1, 16, 64), np.uint32))
    expect = np.zeros((1, 16, 64), np.uint32)
    expect[0, 1, 41] = 0x3F800000
    assert np.array_equal(d, expect)


def test_one_hot_16x16x1_4b_f32_blocks():
    """Block 2: A[2][7][0] in lane 16*2+7 = 39, B[2][0][3] in lane 35; D[2][7][3] in
    register 4*2 + 7%4 = 11, lane 16*(7//4) + 3 = 19."""
    a = np.zeros((1, 1, 64), np.uint32)
    b = np.zeros((1, 1, 64), np.uint32)
    a[0, 0, 39] = 0x40000000                      # 2.0
    b[0, 0, 35] = 0x40400000                      # 3.0
    d = mfma.execute("v_mfma_f32_16x16x1_4b_f32", a, b, np.zeros((1, 16, 64), np.uint32))
    assert np.flatnonzero(d).tolist() == [11 * 64 + 19]
    assert d[0, 11, 19] == 0x40C00000             # 6.0


def test_one_hot_f64_4x4x4_4b():
    """A[b=1][i=2][k=3] in lane 2 + 4*1 + 16*3 = 54; B[1][3][j=0] in lane 52;
    D[1][2][0] in lane 16*2 + 4*1 + 0 = 36 of the register pair."""
    a = np.zeros((1, 2, 64), np.uint32)
    b = np.zeros((1, 2, 64), np.uint32)
    a[0, 1, 54] = 0x3FF00000
    b[0, 1, 52] = 0x40000000
    d = mfma.execute("v_mfma_f64_4x4x4_4b_f64", a, b, np.zeros((1, 2, 64), np.uint32))
    assert np.flatnonzero(d).tolist() == [64 + 36] and d[0, 1, 36] == 0x40000000


@pytest.mark.parametrize("name", ALL)
def test_matmul_against_numpy(name):
    f = mfma.info(name)
    a_codes, a_vals = random_codes(f.in_type, (f.blocks, f.m, f.k))
    b_codes, b_vals = random_codes(f.b_type, (f.blocks, f.k, f.n))
    c_vals = RNG.integers(-50, 50, (f.blocks, f.m, f.n)).astype(np.float64)
    want = np.einsum("bik,bkj->bij", a_vals, b_vals) + c_vals
    d = mfma.execute(name, pack(f, a_codes, f.in_type, "a"), pack(f, b_codes, f.b_type, "b"),
                     pack_d(f, c_vals))
    assert d.shape == (1, f.cd_regs, 64)
    assert np.array_equal(unpack_d(f, d), want)


def test_vectorised_over_waves():
    name = "v_mfma_f32_16x16x16_f16"
    f = mfma.info(name)
    a = RNG.integers(0, 2 ** 32, (3, f.a_regs, 64), dtype=np.uint64).astype(np.uint32) & \
        np.uint32(0x3BFF3BFF)
    b = RNG.integers(0, 2 ** 32, (3, f.b_regs, 64), dtype=np.uint64).astype(np.uint32) & \
        np.uint32(0x3BFF3BFF)
    c = nm.as_u32(RNG.standard_normal((3, f.cd_regs, 64)).astype(np.float32))
    whole = mfma.execute(name, a, b, c)
    for w in range(3):
        assert np.array_equal(whole[w:w + 1], mfma.execute(name, a[w:w + 1], b[w:w + 1],
                                                           c[w:w + 1]))


# ----------------------------------------------------------------------- modifiers

def test_cbsz_abid_broadcast_a_block():
    name = "v_mfma_f32_4x4x4_16b_f16"
    f = mfma.info(name)
    a_codes, a_vals = random_codes("f16", (16, 4, 4))
    b_codes, b_vals = random_codes("f16", (16, 4, 4))
    zero_c = np.zeros((1, f.cd_regs, 64), np.uint32)
    d = mfma.execute(name, pack(f, a_codes, "f16", "a"), pack(f, b_codes, "f16", "b"), zero_c,
                     cbsz=2, abid=3)
    src = (np.arange(16) // 4) * 4 + 3
    want = np.einsum("bik,bkj->bij", a_vals[src], b_vals)
    assert np.array_equal(unpack_d(f, d), want)


@pytest.mark.parametrize("blgp", range(8))
def test_blgp_lane_patterns(blgp):
    """B's lane L is read from lane src(L) (ISA guide BLGP table)."""
    src = {0: lambda l: l, 1: lambda l: l % 32, 2: lambda l: l % 32 + 32,
           3: lambda l: (l + 16) % 64, 4: lambda l: l % 16, 5: lambda l: 16 + l % 16,
           6: lambda l: 32 + l % 16, 7: lambda l: 48 + l % 16}[blgp]
    name = "v_mfma_f32_16x16x1_4b_f32"
    f = mfma.info(name)
    a = np.zeros((1, 1, 64), np.uint32)
    a[0, 0, :] = 0x3F800000                      # all-ones A: D[b][i][j] = B[b][0][j]
    b = nm.as_u32(np.arange(64, dtype=np.float32)).reshape(1, 1, 64)
    d = mfma.execute(name, a, b, np.zeros((1, 16, 64), np.uint32), blgp=blgp)
    got = unpack_d(f, d)
    for blk in range(4):
        for j in range(16):
            assert got[blk, 5, j] == src(16 * blk + j)


def test_f64_neg():
    name = "v_mfma_f64_16x16x4_f64"
    f = mfma.info(name)
    a_codes, a_vals = random_codes("f64", (1, 16, 4))
    b_codes, b_vals = random_codes("f64", (1, 4, 16))
    c = RNG.integers(-9, 9, (1, 16, 16)).astype(np.float64)
    d = mfma.execute(name, pack(f, a_codes, "f64", "a"), pack(f, b_codes, "f64", "b"),
                     pack_d(f, c), neg=(1, 0, 1))
    assert np.array_equal(unpack_d(f, d)[0], -(a_vals[0] @ b_vals[0]) - c[0])


@pytest.mark.parametrize("kw", [dict(cbsz=1), dict(abid=1), dict(neg=(1, 0, 0))])
def test_invalid_modifiers_rejected(kw):
    f = mfma.info("v_mfma_f32_32x32x8_f16")
    z = np.zeros((1, 2, 64), np.uint32)
    with pytest.raises(UnsupportedInstruction):
        mfma.execute("v_mfma_f32_32x32x8_f16", z, z, np.zeros((1, 16, 64), np.uint32), **kw)
    with pytest.raises(UnsupportedInstruction):
        mfma.execute("v_mfma_f64_16x16x4_f64", z, z, np.zeros((1, 8, 64), np.uint32), blgp=1)


# ---------------------------------------------------------------------- numerics

def test_f32_accumulation_single_rounding():
    """1 + 2**-30 products sum in float64 and round once: 2**24 + 1 + 1 -> 2**24 + 2."""
    name = "v_mfma_f32_32x32x2_f32"
    f = mfma.info(name)
    a = np.zeros((1, 1, 64), np.uint32)
    b = np.zeros((1, 1, 64), np.uint32)
    a[0, 0, [0, 32]] = 0x3F800000                 # A[0][0] = A[0][1] = 1
    b[0, 0, [0, 32]] = 0x3F800000                 # B[0][0] = B[1][0] = 1
    c = np.zeros((1, 16, 64), np.uint32)
    c[0, 0, 0] = nm.as_u32(np.float32(2 ** 24))
    d = mfma.execute(name, a, b, c)
    assert nm.as_f32(d[0, 0, 0]) == 2 ** 24 + 2   # sequential f32 adds would give 2**24


def test_f32_overflow_and_nan():
    name = "v_mfma_f32_16x16x4_f32"
    a = np.full((1, 1, 64), 0x7F000000, np.uint32)   # 2**127
    b = np.full((1, 1, 64), 0x40000000, np.uint32)   # 2
    d = mfma.execute(name, a, b, np.zeros((1, 4, 64), np.uint32))
    assert np.all(d == 0x7F800000)
    b[0, 0, 0] = 0x7FC00000
    d = mfma.execute(name, a, b, np.zeros((1, 4, 64), np.uint32))
    assert np.isnan(nm.as_f32(d[0, 0, 0])) and not np.isnan(nm.as_f32(d[0, 0, 1]))


def test_i8_wraps_to_int32():
    name = "v_mfma_i32_16x16x32_i8"
    f = mfma.info(name)
    a = np.full((1, 2, 64), 0x80808080, np.uint32)   # -128
    b = np.full((1, 2, 64), 0x80808080, np.uint32)
    c = np.full((1, 4, 64), 0x7FFFFFFF, np.uint32)
    d = mfma.execute(name, a, b, c)                  # 0x7fffffff + 32 * 16384 wraps
    assert np.all(d.view(np.int32) == np.int32((0x7FFFFFFF + 32 * 16384) - 2 ** 32))


def test_xf32_drops_low_mantissa_bits():
    name = "v_mfma_f32_16x16x8_xf32"
    a = np.zeros((1, 2, 64), np.uint32)
    b = np.zeros((1, 2, 64), np.uint32)
    a[0, 0, 0] = 0x3F801FFF                          # 1 + (2**-10 - 2**-23) -> 1 + 2**-10 - ...
    b[0, 0, 0] = 0x3F800000
    d = mfma.execute(name, a, b, np.zeros((1, 4, 64), np.uint32))
    assert d[0, 0, 0] == 0x3F800000


# ------------------------------------------------------------- Triton's MFMA layouts

@pytest.fixture(scope="module")
def triton_layout():
    """get(instr_shape, transposed, bitwidth, operand=None, k_width=1) -> (reg_bases,
    lane_bases) of Triton's gfx942 MFMA layout (the MLIR context lives for the module)."""
    gl = pytest.importorskip("triton.experimental.gluon.language")
    from triton._C.libtriton import gluon_ir, ir
    from triton.experimental.gluon.language import amd
    ctx = ir.context()
    ir.load_dialects(ctx)
    builder = gluon_ir.GluonOpBuilder(ctx)

    def get(instr, transposed, bitwidth, operand=None, k_width=1):
        layout = amd.AMDMFMALayout(version=3, instr_shape=list(instr), transposed=transposed,
                                   warps_per_cta=[1, 1], element_bitwidth=bitwidth)
        m, n, k = instr
        if operand is None:
            shape = [m, n]
        else:
            layout = gl.DotOperandLayout(operand, layout, k_width)
            shape = [m, k] if operand == 0 else [k, n]
        ll = builder.to_linear_layout(layout._to_ir(builder), shape)
        return ll.reg_bases, ll.lane_bases

    yield get
    del builder, ctx


def _apply(bases_reg, bases_lane, reg: int, lane: int) -> tuple[int, int]:
    x = y = 0
    for bit, (dx, dy) in enumerate(bases_reg):
        if reg >> bit & 1:
            x, y = x ^ dx, y ^ dy
    for bit, (dx, dy) in enumerate(bases_lane):
        if lane >> bit & 1:
            x, y = x ^ dx, y ^ dy
    return x, y


TRITON_CASES = [  # (mnemonic, Triton instrShape, kWidth)
    ("v_mfma_f32_32x32x8_f16", (32, 32, 8), 4), ("v_mfma_f32_16x16x16_f16", (16, 16, 16), 4),
    ("v_mfma_f32_32x32x8_bf16", (32, 32, 8), 4), ("v_mfma_f32_16x16x16_bf16", (16, 16, 16), 4),
    ("v_mfma_f32_32x32x2_f32", (32, 32, 2), 1), ("v_mfma_f32_16x16x4_f32", (16, 16, 4), 1),
    ("v_mfma_f32_32x32x4_xf32", (32, 32, 4), 2), ("v_mfma_f32_16x16x8_xf32", (16, 16, 8), 2),
    ("v_mfma_i32_32x32x16_i8", (32, 32, 16), 8), ("v_mfma_i32_16x16x32_i8", (16, 16, 32), 8),
    ("v_mfma_f32_32x32x16_fp8_fp8", (32, 32, 16), 8),
    ("v_mfma_f32_16x16x32_bf8_fp8", (16, 16, 32), 8),
    ("v_mfma_f64_16x16x4_f64", (16, 16, 4), 1),
]


@pytest.mark.parametrize("name,instr,k_width", TRITON_CASES)
def test_layouts_match_triton(name, instr, k_width, triton_layout):
    get = triton_layout
    f = mfma.info(name)
    bitwidth = 64 if f.out_type == "f64" else 32
    a_lane, a_el = mfma.input_layout(name, "a")
    b_lane, b_el = mfma.input_layout(name, "b")
    for operand, lane_of, el_of in ((0, a_lane, a_el), (1, b_lane, b_el)):
        reg_bases, lane_bases = get(instr, False, bitwidth, operand, k_width)
        for lane in range(64):
            for el in range(f.a_elems):
                x, y = _apply(reg_bases, lane_bases, el, lane)
                row, k = (x, y) if operand == 0 else (y, x)      # B is [k][n]
                assert (lane_of[0, row, k], el_of[0, row, k]) == (lane, el)
    d_reg, d_lane = mfma.output_layout(name)
    width = bitwidth // 32
    for transposed in (False, True):
        reg_bases, lane_bases = get(instr, transposed, bitwidth)
        for lane in range(64):
            for el in range(f.cd_regs // width):
                i, j = _apply(reg_bases, lane_bases, el, lane)
                if transposed:   # Triton swaps the operands: registers hold D^T
                    i, j = j, i
                assert (d_reg[0, i, j], d_lane[0, i, j]) == (el * width, lane)


def test_4x4_blocks_match_triton_4x64(triton_layout):
    """Triton's 4x64 tile is v_mfma_*_4x4x4_16b with block b as columns 4b..4b+3."""
    get = triton_layout
    name = "v_mfma_f32_4x4x4_16b_f16"
    d_reg, d_lane = mfma.output_layout(name)
    b_lane, b_el = mfma.input_layout(name, "b")
    reg_bases, lane_bases = get((4, 64, 4), False, 32)
    for lane in range(64):
        for reg in range(4):
            i, col = _apply(reg_bases, lane_bases, reg, lane)
            assert (d_reg[col // 4, i, col % 4], d_lane[col // 4, i, col % 4]) == (reg, lane)
    reg_bases, lane_bases = get((4, 64, 4), False, 32, 1, 4)
    for lane in range(64):
        for el in range(4):
            k, col = _apply(reg_bases, lane_bases, el, lane)
            assert (b_lane[col // 4, col % 4, k], b_el[col // 4, col % 4, k]) == (lane, el)


# ------------------------------------------------------------------- compiled code

HIP_SRC = """
#define __global__ __attribute__((global))
typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef short short4 __attribute__((ext_vector_type(4)));
typedef float float16 __attribute__((ext_vector_type(16)));
typedef float float4 __attribute__((ext_vector_type(4)));
/* Fragments loaded per README_mfma.md: A row-major [M][K], B row-major [K][N]. */
__global__ void k32x32x8f16(const _Float16 *A, const _Float16 *B, float *D) {
  int l = __builtin_amdgcn_workitem_id_x();
  half4 a, b;
  for (int r = 0; r < 4; ++r) { a[r] = A[(l % 32) * 8 + 4 * (l / 32) + r];
                                b[r] = B[(4 * (l / 32) + r) * 32 + l % 32]; }
  float16 d = {};
  d = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, d, 0, 0, 0);
  for (int v = 0; v < 16; ++v) D[(8 * (v / 4) + 4 * (l / 32) + v % 4) * 32 + l % 32] = d[v];
}
__global__ void k16x16x16f16(const _Float16 *A, const _Float16 *B, float *D) {
  int l = __builtin_amdgcn_workitem_id_x();
  half4 a, b;
  for (int r = 0; r < 4; ++r) { a[r] = A[(l % 16) * 16 + 4 * (l / 16) + r];
                                b[r] = B[(4 * (l / 16) + r) * 16 + l % 16]; }
  float4 d = {};
  d = __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, d, 0, 0, 0);
  for (int v = 0; v < 4; ++v) D[(4 * (l / 16) + v) * 16 + l % 16] = d[v];
}
__global__ void k16x16x16bf16(const short *A, const short *B, float *D) {
  int l = __builtin_amdgcn_workitem_id_x();
  short4 a, b;
  for (int r = 0; r < 4; ++r) { a[r] = A[(l % 16) * 16 + 4 * (l / 16) + r];
                                b[r] = B[(4 * (l / 16) + r) * 16 + l % 16]; }
  float4 d = {};
  d = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, d, 0, 0, 0);
  for (int v = 0; v < 4; ++v) D[(4 * (l / 16) + v) * 16 + l % 16] = d[v];
}
__global__ void k32x32x2f32(const float *A, const float *B, float *D) {
  int l = __builtin_amdgcn_workitem_id_x();
  float16 d = {};
  d = __builtin_amdgcn_mfma_f32_32x32x2f32(A[(l % 32) * 2 + l / 32], B[(l / 32) * 32 + l % 32],
                                           d, 0, 0, 0);
  for (int v = 0; v < 16; ++v) D[(8 * (v / 4) + 4 * (l / 32) + v % 4) * 32 + l % 32] = d[v];
}
"""


@pytest.mark.skipif(not (LLVM / "clang-19").exists(), reason="clang-19 not installed")
def test_hip_builtins_compile_to_expected_mfma(tmp_path):
    """The HIP builtins lower to the mnemonics and operand sizes `info` reports, and the
    4-element fragment is one 64-bit load (element r in register r//2, half r%2)."""
    (tmp_path / "k.hip").write_text(HIP_SRC)
    subprocess.run([str(LLVM / "clang-19"), "-x", "hip", "--offload-arch=gfx942", "-nogpulib",
                    "-nogpuinc", "--cuda-device-only", "--no-gpu-bundle-output", "-O3", "-c",
                    "-o", str(tmp_path / "k.o"), str(tmp_path / "k.hip")], check=True)
    dis = subprocess.run([str(LLVM / "llvm-objdump"), "-d", "--mcpu=gfx942",
                          str(tmp_path / "k.o")], capture_output=True, text=True,
                         check=True).stdout
    found = re.findall(r"^\s+(v_mfma\S+) (v\[[\d:]+\]|v\d+), (v\[[\d:]+\]|v\d+), "
                       r"(v\[[\d:]+\]|v\d+)", dis, re.M)
    assert [m[0] for m in found] == ["v_mfma_f32_32x32x8_f16", "v_mfma_f32_16x16x16_f16",
                                     "v_mfma_f32_16x16x16_bf16", "v_mfma_f32_32x32x2_f32"]

    def count(op: str) -> int:
        r = re.fullmatch(r"v\[(\d+):(\d+)\]", op)
        return int(r[2]) - int(r[1]) + 1 if r else 1

    for name, d, a, b in found:
        f = mfma.info(name)
        assert (count(d), count(a), count(b)) == (f.cd_regs, f.a_regs, f.b_regs)
    assert dis.count("global_load_dwordx2") == 3


def test_triton_dot_uses_transposed_32x32x8(tmp_path, monkeypatch):
    """Triton's fp16 tl.dot on gfx942 picks v_mfma_f32_32x32x8_f16 with isTransposed, i.e.
    tl.dot's B fragment is the instruction's src0 and A's is src1 (D^T in registers)."""
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    triton = pytest.importorskip("triton")
    import triton.language as tl
    from triton.backends.compiler import GPUTarget

    @triton.jit
    def dot_kernel(a_ptr, b_ptr, c_ptr, BM: tl.constexpr, BN: tl.constexpr,
                   BK: tl.constexpr):
        rm = tl.arange(0, BM)
        rn = tl.arange(0, BN)
        rk = tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * BK + rk[None, :])
        b = tl.load(b_ptr + rk[:, None] * BN + rn[None, :])
        tl.store(c_ptr + rm[:, None] * BN + rn[None, :], tl.dot(a, b))

    src = triton.compiler.ASTSource(
        fn=dot_kernel, signature={"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32",
                                  "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
        constexprs={"BM": 32, "BN": 32, "BK": 16})
    k = triton.compile(src, target=GPUTarget("hip", "gfx942", 64), options={"num_warps": 1})
    assert re.search(r"amd_mfma<\{version = 3, .*instrShape = \[32, 32, 8\], "
                     r"isTransposed = true", k.asm["ttgir"])
    ops = re.findall(r"^\s+(v_mfma\S+) v\[0:15\], (v\[\d+:\d+\]), (v\[\d+:\d+\])",
                     k.asm["amdgcn"], re.M)
    assert [o[0] for o in ops] == ["v_mfma_f32_32x32x8_f16"] * 2
    # A (a_ptr) goes through LDS and ds_read_b64 into src1 of the first MFMA.
    ds = re.findall(r"ds_read_b64 (v\[\d+:\d+\])", k.asm["amdgcn"])
    assert ops[0][2] in ds and ops[0][1] not in ds


def _in_order(av, bv, c64):
    acc = av[..., :, None, 0] * bv[..., None, :, 0]
    for k in range(1, av.shape[-1]):
        acc = acc + av[..., :, None, k] * bv[..., None, :, k]
    return acc + c64


@pytest.mark.parametrize("case", ["bf16", "fp4_scaled", "fp8_wide", "zeros", "huge"])
def test_the_matrix_product_path_is_bit_identical_to_the_in_order_sum(case):
    """`_exact_sum` answers only when its product equals the in-order float64 sum bit for bit, and
    declines (None) when the terms' magnitudes are too far apart; exact zeros keep the in-order sign."""
    from asmevo.emu.mfma import _exact_sum, small_float

    rng = np.random.default_rng(7)
    shape_a, shape_b, shape_c = (3, 1, 16, 32), (3, 1, 16, 32), (3, 1, 16, 16)
    if case == "bf16":
        av, bv = (rng.standard_normal(s).astype(np.float32).view(np.uint32) & 0xFFFF0000 for s in (shape_a, shape_b))
        av, bv = av.view(np.float32).astype(np.float64), bv.view(np.float32).astype(np.float64)
    elif case == "fp4_scaled":
        av = small_float(rng.integers(0, 16, shape_a), "fp4") * 2.0 ** rng.integers(-130, -120, (3, 1, 16, 1))
        bv = small_float(rng.integers(0, 16, shape_b), "fp4") * 2.0 ** rng.integers(-10, 0, (3, 1, 16, 1))
    elif case == "fp8_wide":
        av = rng.standard_normal(shape_a) * 2.0 ** rng.integers(-60, 60, shape_a)
        bv = rng.standard_normal(shape_b).astype(np.float32).astype(np.float64)
    elif case == "zeros":  # exact zeros of either sign: rows of -0 against +0, and cancelling pairs
        av = np.round(rng.standard_normal(shape_a) * 2)
        av[:, :, ::2] = -0.0
        av[:, :, 1::4, 1::2] = -av[:, :, 1::4, ::2]
        bv = np.ones(shape_b)
        bv[:, :, ::3] = 0.0
    else:
        av, bv = np.full(shape_a, 2.0 ** 600), np.full(shape_b, 2.0 ** 600)
    c64 = rng.standard_normal(shape_c).astype(np.float32).astype(np.float64)
    if case == "zeros":
        c64 = np.where(rng.integers(0, 2, shape_c), -0.0, 0.0)
    if case == "fp4_scaled":  # an accumulator of the products' magnitude
        c64 = c64 * 2.0 ** -128
    bits = {"bf16": (8, 8), "fp4_scaled": (2, 2), "fp8_wide": (53, 24), "zeros": (4, 1), "huge": (1, 1)}[case]
    fast = _exact_sum(av, bv, c64, *bits)
    with np.errstate(over="ignore", invalid="ignore"):
        slow = _in_order(av, bv, c64)
    if case in ("bf16", "fp4_scaled", "zeros"):
        assert fast is not None and (fast.view(np.uint64) == slow.view(np.uint64)).all()
        if case == "zeros":
            assert (slow == 0).any() and np.signbit(slow[slow == 0]).any() and not np.signbit(slow[slow == 0]).all()
    else:
        assert fast is None
