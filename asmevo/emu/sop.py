"""Scalar ALU (SOP1, SOP2, SOPC, SOPK) and program control (SOPP) instructions."""
from __future__ import annotations

import re

import numpy as np

from ..errors import UnsupportedInstruction
from ..isa.instruction import Instruction
from ..isa.waitcnt import decode_waitcnt
from .access import scalar_reader, scalar_writer
from .float_mode import F32_DENORM, check_write
from .ops import BARRIER, BRANCH, END, JUMP, NORMAL, Context, Op
from .state import EXEC, M0, VCC
from .vskip import set_vskip

U32, U64, I32, I64 = np.uint32, np.uint64, np.int32, np.int64
M32 = 0xFFFFFFFF
NOPS = {"s_nop", "s_setprio", "s_sleep", "s_icache_inv", "s_dcache_wb", "s_dcache_inv", "s_incperflevel",
        "s_decperflevel", "s_ttracedata", "s_sethalt_nop"}


def _i(a, bits):
    return np.asarray(a, U64 if bits == 64 else U32).view(I64 if bits == 64 else I32)


def _u(a, bits):
    return np.asarray(a, U64 if bits == 64 else U32)


def popcount(x) -> np.ndarray:
    """Set bits of each uint64 (or narrower) element, as uint32."""
    x = np.asarray(x, U64)
    x = x - ((x >> U64(1)) & U64(0x5555555555555555))
    x = (x & U64(0x3333333333333333)) + ((x >> U64(2)) & U64(0x3333333333333333))
    x = (x + (x >> U64(4))) & U64(0x0F0F0F0F0F0F0F0F)
    return ((x * U64(0x0101010101010101)) >> U64(56)).astype(U32)


def _popcount(x, bits):
    return popcount(x)


def _ff1(x, bits: int) -> np.ndarray:
    """Index of the lowest set bit, or -1 (0xffffffff)."""
    x = np.asarray(x, U64)
    low = x & (~x + U64(1))
    return np.where(x == 0, M32, popcount(low - U64(1))).astype(U32)


def bit_length(x) -> np.ndarray:
    """Position of the highest set bit plus one (0 for zero), as int64."""
    y = np.asarray(x, U64).copy()
    for s in (1, 2, 4, 8, 16, 32):
        y |= y >> U64(s)
    return popcount(y).astype(np.int64)


def _flbit(x, bits: int) -> np.ndarray:
    """Count of leading zeros from the MSB, or -1 when zero."""
    x = np.asarray(x, U64)
    return np.where(x == 0, M32, bits - bit_length(x)).astype(U32)


def _brev(x, bits):
    x = np.atleast_1d(np.asarray(x, U64 if bits == 64 else U32))
    by = x.astype("<u8" if bits == 64 else "<u4").view(np.uint8).reshape(-1, bits // 8)
    rev = np.packbits(np.unpackbits(by, axis=1, bitorder="little")[:, ::-1], axis=1, bitorder="little")
    return rev.view("<u8" if bits == 64 else "<u4").reshape(-1)


def _bits(name: str) -> int:
    return 64 if name.endswith(("_b64", "_u64", "_i64")) else 32


def _setscc(m, g, v):
    m.scc[g.sel] = v


def compile_sop(ins: Instruction, ctx: Context) -> Op:
    name = ins.mnemonic
    nxt = ins.address + ins.size
    if name in NOPS:
        return Op(ins, lambda m, g: None)
    if name == "s_endpgm":
        return Op(ins, lambda m, g: None, kind=END)
    if name == "s_barrier":
        return Op(ins, lambda m, g: None, kind=BARRIER)
    if name == "s_waitcnt":
        return _waitcnt(ins)
    if name == "s_branch":
        return Op(ins, lambda m, g: None, kind=BRANCH, target=ins.target)
    if name.startswith("s_cbranch_"):
        return _cbranch(ins)
    if name in ("s_setpc_b64", "s_swappc_b64", "s_getpc_b64", "s_call_b64"):
        return _pc_ops(ins, nxt)
    if name in ("s_getreg_b32", "s_setreg_b32", "s_setreg_imm32_b32"):
        return _hwreg(ins)
    if name.startswith("s_set_gpr_idx_"):
        return _gpr_idx(ins)
    if name == "s_setvskip":
        return _setvskip(ins)
    if name.startswith(("s_cmp_", "s_cmpk_", "s_bitcmp")):
        return _cmp(ins)
    fn = _ALU.get(_key(name))
    if fn is None:
        raise UnsupportedInstruction(name, ins.address)
    return Op(ins, fn(ins, name))


def _key(name: str) -> str:
    if name.startswith("s_flbit_i32") and not name.endswith("_b32") and not name.endswith("_b64"):
        return name + "_signed"  # s_flbit_i32/_i64 (leading sign bits) are not implemented
    for suffix in ("_b32", "_b64", "_i32", "_u32", "_i64", "_u64"):
        if name.endswith(suffix) and name[:-4] in _ALU:
            return name[:-4]
    return name


def _waitcnt(ins: Instruction) -> Op:
    limits = decode_waitcnt(ins)
    vm, lgkm = limits.get("vmcnt"), limits.get("lgkmcnt")

    def fn(m, g):
        sel = g.sel
        if vm is not None:
            m.vm_retired[sel] = np.maximum(m.vm_retired[sel], m.vm_issued[sel] - vm)
        if lgkm is not None:
            m.lds_retired[sel] = np.maximum(m.lds_retired[sel], m.lds_issued[sel] - lgkm)
            if lgkm == 0:
                m.smem_retired[sel] = m.smem_issued[sel]
    return Op(ins, fn)


def _gpr_idx(ins: Instruction) -> Op:
    """VGPR index mode state in M0: index in bits 7:0, operand mask in bits 15:12 (on/off is static, gpridx.py)."""
    name = ins.mnemonic
    if name == "s_set_gpr_idx_off":
        return Op(ins, lambda m, g: None)
    if name == "s_set_gpr_idx_mode":
        mode = U32((int.from_bytes(ins.encoding[:2], "little") & 0xF) << 12)
        return Op(ins, lambda m, g: m.swrite(g, M0, (m.s[g.sel, M0] & U32(0xFFFF0FFF)) | mode))
    src = scalar_reader(ins.operands[0])
    if name == "s_set_gpr_idx_idx":
        return Op(ins, lambda m, g: m.swrite(g, M0, (m.s[g.sel, M0] & U32(0xFFFFFF00)) | (src(m, g) & U32(0xFF))))
    if name != "s_set_gpr_idx_on":
        raise UnsupportedInstruction(name, ins.address)
    mode = U32((ins.encoding[1] & 0xF) << 12)
    return Op(ins, lambda m, g: m.swrite(g, M0, (m.s[g.sel, M0] & U32(0xFFFF0F00)) | (src(m, g) & U32(0xFF)) | mode))


def _cbranch(ins: Instruction) -> Op:
    cond = ins.mnemonic[len("s_cbranch_"):]
    if cond == "scc0":
        fn = lambda m, g: ~m.scc[g.sel]
    elif cond == "scc1":
        fn = lambda m, g: m.scc[g.sel]
    elif cond == "vccz":
        fn = lambda m, g: m.s64[g.sel, VCC // 2] == 0
    elif cond == "vccnz":
        fn = lambda m, g: m.s64[g.sel, VCC // 2] != 0
    elif cond == "execz":
        fn = lambda m, g: m.s64[g.sel, EXEC // 2] == 0
    elif cond == "execnz":
        fn = lambda m, g: m.s64[g.sel, EXEC // 2] != 0
    else:
        raise UnsupportedInstruction(ins.mnemonic, ins.address)
    return Op(ins, fn, kind=BRANCH, target=ins.target)


def _pc_ops(ins: Instruction, nxt: int) -> Op:
    name, ops = ins.mnemonic, ins.operands
    if name == "s_getpc_b64":
        wr = scalar_writer(ops[0], 64)
        return Op(ins, lambda m, g: wr(m, g, np.full(len(g), nxt, U64)))
    if name == "s_setpc_b64":
        rd = scalar_reader(ops[0], 64)
        return Op(ins, lambda m, g: np.asarray(rd(m, g), U64).copy(), kind=JUMP)
    if name == "s_swappc_b64":
        wr, rd = scalar_writer(ops[0], 64), scalar_reader(ops[1], 64)

        def swap(m, g):
            tgt = np.asarray(rd(m, g), U64).copy()
            wr(m, g, np.full(len(g), nxt, U64))
            return tgt
        return Op(ins, swap, kind=JUMP)
    # s_call_b64 sdst, label: simm16 relative like a branch
    wr = scalar_writer(ops[0], 64)
    simm = int.from_bytes(ins.encoding[:2], "little")
    simm = simm - 0x10000 if simm & 0x8000 else simm
    target = ins.address + 4 + 4 * simm

    def call(m, g):
        wr(m, g, np.full(len(g), nxt, U64))
        return np.full(len(g), target, U64)
    return Op(ins, call, kind=JUMP)


def _hwreg(ins: Instruction) -> Op:
    """MODE-register access, kept per wave: of the float bits only the f32 denormal field may change
    (float_mode.py); VSKIP takes effect (vskip.py)."""
    spec = next((o.text for o in ins.operands if o.text.startswith("hwreg(")), None)
    mm = re.match(r"hwreg\((\w+)(?:,\s*(\d+),\s*(\d+))?\)", spec or "")
    if not mm or mm.group(1) not in ("HW_REG_MODE", "1"):
        raise UnsupportedInstruction(ins.mnemonic, ins.address, spec or "hwreg")
    off, size = int(mm.group(2) or 0), int(mm.group(3) or 32)
    fmask = ((1 << size) - 1) << off
    if ins.mnemonic == "s_getreg_b32":
        wr = scalar_writer(ins.operands[0])

        def get(m, g):
            wr(m, g, (m.mode[g.sel] & U32(fmask)) >> U32(off))
        return Op(ins, get)
    rd = scalar_reader(ins.operands[1])

    def set_(m, g):
        val = (np.asarray(rd(m, g), U32) << U32(off)) & U32(fmask)
        before = m.mode[g.sel]
        after = (before & U32(~fmask & M32)) | val
        check_write(before, after, ins.mnemonic, ins.address)
        m.mode[g.sel] = after
        m.mode_written |= bool(fmask & F32_DENORM)
    return Op(ins, set_)


def _setvskip(ins: Instruction) -> Op:
    """VSKIP = S0[S1[4:0]] (CDNA3 ISA guide, S_SETVSKIP); SCC is not written. Effect: vskip.py."""
    rd0, rd1 = scalar_reader(ins.operands[0]), scalar_reader(ins.operands[1])

    def fn(m, g):
        set_vskip(m, g, (np.asarray(rd0(m, g), U32) >> (np.asarray(rd1(m, g), U32) & U32(31))) & U32(1))
    return Op(ins, fn)


_CMP = {"eq": np.equal, "lg": np.not_equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less,
        "le": np.less_equal}


def _cmp(ins: Instruction) -> Op:
    name = ins.mnemonic
    a, b = ins.operands[0], ins.operands[1]
    if name.startswith("s_bitcmp"):
        bits = _bits(name)
        ra, rb = scalar_reader(a, bits), scalar_reader(b)
        want = name.startswith("s_bitcmp1")
        dt = U64 if bits == 64 else U32

        def bitcmp(m, g):
            bit = (_u(ra(m, g), bits) >> (_u(rb(m, g), 32) & (bits - 1)).astype(dt)) & dt(1)
            _setscc(m, g, (bit == 1) if want else (bit == 0))
        return Op(ins, bitcmp)
    parts = name.split("_")
    rel, typ = parts[2], parts[3]
    bits = 64 if typ.endswith("64") else 32
    signed = typ.startswith("i")
    ra = scalar_reader(a, bits)
    if name.startswith("s_cmpk_"):
        k = int(b.value) & 0xFFFF
        k = (k - 0x10000 if k & 0x8000 else k) if signed else k
        kc = np.array(k & M32, U32)
        rb = lambda m, g: kc
    else:
        rb = scalar_reader(b, bits)
    op = _CMP[rel]

    def cmp(m, g):
        x, y = _u(ra(m, g), bits), _u(rb(m, g), bits)
        if signed:
            x, y = _i(x, bits), _i(y, bits)
        _setscc(m, g, op(x, y))
    return Op(ins, cmp)


# ---- ALU table: builders taking (ins, name) and returning fn(m, g) ------------------------------
def _binop(f, scc: str | None = "nz"):
    """Two-source op: f(a, b, bits, m, g) -> result; scc 'nz' sets SCC=result!=0, None leaves it."""
    def build(ins, name):
        bits = _bits(name)
        d = scalar_writer(ins.operands[0], bits)
        ra = scalar_reader(ins.operands[1], 32 if name == "s_bfm_b64" else bits)
        rb_bits = 32 if name.startswith(("s_lshl_", "s_lshr_", "s_ashr_", "s_bfe_", "s_bfm")) else bits
        rb = scalar_reader(ins.operands[2], rb_bits)

        def fn(m, g):
            res = f(_u(ra(m, g), bits), _u(rb(m, g), rb_bits), bits, m, g)
            if isinstance(res, tuple):
                res, c = res
                _setscc(m, g, c)
            else:
                res = _u(res, bits)
                if scc == "nz":
                    _setscc(m, g, res != 0)
            d(m, g, res)
        return fn
    return build


def _mask(bits):
    return (1 << bits) - 1


def _add(a, b, bits, m, g):
    s = a.astype(U64) + b.astype(U64)
    return (s & U64(M32)).astype(U32), s > M32


def _sub(a, b, bits, m, g):
    return (a - b).astype(U32), a < b


def _addi(a, b, bits, m, g):
    r = (a + b).astype(U32)
    sa, sb, sr = a >> U32(31), b >> U32(31), r >> U32(31)
    return r, (sa == sb) & (sr != sa)


def _subi(a, b, bits, m, g):
    r = (a - b).astype(U32)
    sa, sb, sr = a >> U32(31), b >> U32(31), r >> U32(31)
    return r, (sa != sb) & (sr != sa)


def _addc(a, b, bits, m, g):
    s = a.astype(U64) + b.astype(U64) + m.scc[g.sel].astype(U64)
    return (s & U64(M32)).astype(U32), s > M32


def _subb(a, b, bits, m, g):
    c = m.scc[g.sel].astype(U64)
    return (a.astype(U64) - b.astype(U64) - c).astype(U32), a.astype(U64) < b.astype(U64) + c


def _minmax(fn, signed):
    def f(a, b, bits, m, g):
        x, y = (_i(a, bits), _i(b, bits)) if signed else (a, b)
        r = fn(x, y)
        return _u(r.view(U32) if signed else r, bits), (x < y) if fn is np.minimum else (x > y)
    return f


def _shift(kind):
    def f(a, b, bits, m, g):
        dt = U64 if bits == 64 else U32
        sh = (b & U32(bits - 1)).astype(dt)
        if kind == "lshl":
            return a << sh
        if kind == "lshr":
            return a >> sh
        return (_i(a, bits) >> sh.astype(I64 if bits == 64 else I32)).view(dt)
    return f


def _bfe(signed):
    def f(a, b, bits, m, g):
        dt, it = (U64, I64) if bits == 64 else (U32, I32)
        off = (b & U32(bits - 1)).astype(np.int64)
        width = ((b >> U32(16)) & U32(0x7F)).astype(np.int64)
        width = np.minimum(width, bits)
        val = a.astype(U64) >> off.astype(U64) if bits == 32 else a >> off.astype(U64)
        keep = np.where(width >= 64, U64(0xFFFFFFFFFFFFFFFF), (U64(1) << width.astype(U64)) - U64(1))
        val = val & keep
        if signed:
            sh = (64 - width).astype(U64)
            v = np.where(width == 0, 0, ((val << sh).view(I64) >> sh.view(I64)).astype(I64))
            return v.astype(it).view(dt)
        return val.astype(dt)
    return f


def _lshl_add(n):
    def f(a, b, bits, m, g):
        s = (a.astype(U64) << U64(n)) + b.astype(U64)
        return (s & U64(M32)).astype(U32), s > M32
    return f


def _mulhi(signed):
    def f(a, b, bits, m, g):
        if signed:
            return ((a.view(I32).astype(I64) * b.view(I32).astype(I64)) >> 32).astype(U32)
        return ((a.astype(U64) * b.astype(U64)) >> U64(32)).astype(U32)
    return f


def _absdiff(a, b, bits, m, g):
    r = np.abs(a.view(I32).astype(I64) - b.view(I32).astype(I64)) & M32
    return r.astype(U32)


def _pack(lo_hi: str):
    def f(a, b, bits, m, g):
        x = a & U32(0xFFFF) if lo_hi[0] == "l" else a >> U32(16)
        y = b & U32(0xFFFF) if lo_hi[1] == "l" else b >> U32(16)
        return x | (y << U32(16))
    return f


def _cselect(ins, name):
    bits = _bits(name)
    d = scalar_writer(ins.operands[0], bits)
    ra, rb = scalar_reader(ins.operands[1], bits), scalar_reader(ins.operands[2], bits)
    return lambda m, g: d(m, g, np.where(m.scc[g.sel], ra(m, g), rb(m, g)).astype(U64 if bits == 64 else U32))


def _unop(f, scc: bool = False, src_bits=None):
    def build(ins, name):
        bits = _bits(name)
        sb = src_bits or bits
        if name.endswith("_b64") and name.startswith(("s_bcnt", "s_ff", "s_flbit")):
            sb, dbits = 64, 32
        else:
            dbits = bits
        d = scalar_writer(ins.operands[0], dbits)
        r = scalar_reader(ins.operands[1], sb)

        def fn(m, g):
            res = _u(f(_u(r(m, g), sb), sb, m, g), dbits)
            if scc:
                _setscc(m, g, res != 0)
            d(m, g, res)
        return fn
    return build


def _saveexec(kind):
    def build(ins, name):
        d = scalar_writer(ins.operands[0], 64)
        r = scalar_reader(ins.operands[1], 64)

        def fn(m, g):
            src = np.asarray(r(m, g), U64).copy()
            old = m.s64[g.sel, EXEC // 2].copy()
            new = {"and": src & old, "or": src | old, "xor": src ^ old, "andn2": src & ~old,
                   "orn2": src | ~old, "nand": ~(src & old), "nor": ~(src | old), "xnor": ~(src ^ old),
                   "andn1": ~src & old, "orn1": ~src | old}[kind]
            d(m, g, old)
            m.swrite64(g, EXEC, new)
            _setscc(m, g, new != 0)
        return fn
    return build


def _wrexec(kind):
    def build(ins, name):
        d = scalar_writer(ins.operands[0], 64)
        r = scalar_reader(ins.operands[1], 64)

        def fn(m, g):
            src = np.asarray(r(m, g), U64).copy()
            old = m.s64[g.sel, EXEC // 2].copy()
            new = (~src & old) if kind == "andn1" else (src & ~old)
            m.swrite64(g, EXEC, new)
            d(m, g, new)
            _setscc(m, g, new != 0)
        return fn
    return build


def _movk(ins, name):
    d = scalar_writer(ins.operands[0])
    k = int(ins.operands[1].value) & 0xFFFF
    k = (k - 0x10000) & M32 if k & 0x8000 else k
    c = np.array(k, U32)
    if name == "s_cmovk_i32":
        return lambda m, g: d(m, g, np.where(m.scc[g.sel], c, m.s[g.sel, ins.operands[0].index]))
    return lambda m, g: d(m, g, np.broadcast_to(c, (len(g),)))


def _addk_mulk(ins, name):
    r = ins.operands[0].index
    k = int(ins.operands[1].value) & 0xFFFF
    k = (k - 0x10000) & M32 if k & 0x8000 else k
    kc = np.array(k, U32)

    def fn(m, g):
        a = m.s[g.sel, r]
        if name == "s_addk_i32":
            res, c = _addi(a, kc, 32, m, g)
            _setscc(m, g, c)
        else:
            res = (a * kc).astype(U32)
        m.swrite(g, r, res)
    return fn


def _mov(ins, name):
    bits = _bits(name)
    d = scalar_writer(ins.operands[0], bits)
    r = scalar_reader(ins.operands[1], bits)
    if name.startswith("s_cmov"):
        dr = scalar_reader(ins.operands[0], bits)
        return lambda m, g: d(m, g, np.where(m.scc[g.sel], r(m, g), dr(m, g)))
    return lambda m, g: d(m, g, np.broadcast_to(r(m, g), (len(g),)).copy())


def _bitset(val):
    def build(ins, name):
        bits = _bits(name)
        dr = scalar_reader(ins.operands[0], bits)
        d = scalar_writer(ins.operands[0], bits)
        r = scalar_reader(ins.operands[1])
        dt = U64 if bits == 64 else U32

        def fn(m, g):
            bit = dt(1) << (np.asarray(r(m, g), U32) & U32(bits - 1)).astype(dt)
            cur = np.asarray(dr(m, g), dt)
            d(m, g, (cur | bit) if val else (cur & ~bit))
        return fn
    return build


def _sext(n):
    def f(a, bits, m, g):
        sh = U32(32 - n)
        return ((a << sh).view(I32) >> I32(32 - n)).view(U32)
    return f


def _abs(a, bits, m, g):
    return np.abs(a.view(I32).astype(I64)).astype(U32)


def _quadmask(a, bits, m, g):
    a = np.atleast_1d(np.asarray(a, U64))
    out = np.zeros(a.shape, U64)
    for q in range(bits // 4):
        nib = (a >> U64(4 * q)) & U64(0xF)
        out |= (nib != 0).astype(U64) << U64(q)
    return out


def _wqm(a, bits, m, g):
    return _quadmask_expand(_quadmask(a, bits, m, g), bits)


def _quadmask_expand(q, bits):
    out = np.zeros(q.shape, U64)
    for i in range(bits // 4):
        out |= np.where((q >> U64(i)) & U64(1), U64(0xF) << U64(4 * i), U64(0))
    return out


_LOGIC = {
    "and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b, "andn2": lambda a, b: a & ~b,
    "orn2": lambda a, b: a | ~b, "nand": lambda a, b: ~(a & b), "nor": lambda a, b: ~(a | b),
    "xnor": lambda a, b: ~(a ^ b),
}
_ALU: dict = {}
for _op, _f in _LOGIC.items():
    _ALU[f"s_{_op}"] = _binop(lambda a, b, bits, m, g, _f=_f: _f(a, b))
    _ALU[f"s_{_op}_saveexec"] = _saveexec(_op)
for _op in ("andn1", "orn1"):
    _ALU[f"s_{_op}_saveexec"] = _saveexec(_op)
_ALU.update({
    "s_andn1_wrexec": _wrexec("andn1"), "s_andn2_wrexec": _wrexec("andn2"),
    "s_add": None, "s_add_u32": _binop(_add), "s_sub_u32": _binop(_sub), "s_add_i32": _binop(_addi),
    "s_sub_i32": _binop(_subi), "s_addc_u32": _binop(_addc), "s_subb_u32": _binop(_subb),
    "s_min_i32": _binop(_minmax(np.minimum, True)), "s_min_u32": _binop(_minmax(np.minimum, False)),
    "s_max_i32": _binop(_minmax(np.maximum, True)), "s_max_u32": _binop(_minmax(np.maximum, False)),
    "s_lshl": _binop(_shift("lshl")), "s_lshr": _binop(_shift("lshr")), "s_ashr": _binop(_shift("ashr")),
    "s_mul_i32": _binop(lambda a, b, bits, m, g: (a * b).astype(U32), None),
    "s_mul_hi_u32": _binop(_mulhi(False), None), "s_mul_hi_i32": _binop(_mulhi(True), None),
    "s_bfe_u32": _binop(_bfe(False)), "s_bfe_i32": _binop(_bfe(True)), "s_bfe_u64": _binop(_bfe(False)),
    "s_bfe_i64": _binop(_bfe(True)),
    "s_bfm": _binop(lambda a, b, bits, m, g: (((U64(1) << (a & U32(bits - 1)).astype(U64)) - U64(1))
                                               << (b & U32(bits - 1)).astype(U64)).astype(
        U64 if bits == 64 else U32), None),
    "s_absdiff_i32": _binop(_absdiff),
    "s_lshl1_add_u32": _binop(_lshl_add(1)), "s_lshl2_add_u32": _binop(_lshl_add(2)),
    "s_lshl3_add_u32": _binop(_lshl_add(3)), "s_lshl4_add_u32": _binop(_lshl_add(4)),
    "s_pack_ll_b32_b16": _binop(_pack("ll"), None), "s_pack_lh_b32_b16": _binop(_pack("lh"), None),
    "s_pack_hh_b32_b16": _binop(_pack("hh"), None),
    "s_cselect": _cselect, "s_movk_i32": _movk, "s_cmovk_i32": _movk, "s_addk_i32": _addk_mulk,
    "s_mulk_i32": _addk_mulk, "s_mov": _mov, "s_cmov": _mov,
    "s_not": _unop(lambda a, bits, m, g: ~a, scc=True),
    "s_brev": _unop(lambda a, bits, m, g: _brev(a, bits)),
    "s_bcnt1_i32": _unop(lambda a, bits, m, g: _popcount(a, bits), scc=True),
    "s_bcnt0_i32": _unop(lambda a, bits, m, g: U32(bits) - _popcount(a, bits), scc=True),
    "s_ff1_i32": _unop(lambda a, bits, m, g: _ff1(a, bits)),
    "s_ff0_i32": _unop(lambda a, bits, m, g: _ff1(~np.asarray(a) & np.asarray(
        0xFFFFFFFFFFFFFFFF if bits == 64 else M32, a.dtype), bits)),
    "s_flbit_i32": _unop(lambda a, bits, m, g: _flbit(a, bits)),
    "s_sext_i32_i8": _unop(_sext(8)), "s_sext_i32_i16": _unop(_sext(16)),
    "s_bitset0": _bitset(0), "s_bitset1": _bitset(1), "s_abs_i32": _unop(_abs, scc=True),
    "s_quadmask": _unop(_quadmask, scc=True), "s_wqm": _unop(_wqm, scc=True),
})
del _ALU["s_add"]
