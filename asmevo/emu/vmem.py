"""Vector memory: GLOBAL, FLAT, SCRATCH and MUBUF (buffer_*) loads, stores and atomics.

Each active lane computes an address; global accesses must lie wholly inside one allocated buffer
(else an `out_of_bounds` finding, the load lane reads 0 and the store lane is dropped). Raw and
structured buffer accesses are range-checked against the V#'s num_records first, exactly like gfx9
hardware: out-of-range loads return 0 and out-of-range stores are dropped without a finding.
Scratch accesses are per-lane offsets into private memory of `private_segment_fixed_size` bytes.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedInstruction
from ..isa.instruction import Instruction
from ..isa.operands import Operand
from ..isa.regs import is_lds_dma
from ..isa.table import instr_info
from .access import join64, scalar_reader, sgpr_index
from .atomics import ATOMIC_OPS, AtomicRequest, apply_atomic
from .ds import lds_access
from .ops import Context, Op
from .state import M0, PRIVATE_APERTURE_HI, SHARED_APERTURE_HI

U32, U64, I64 = np.uint32, np.uint64, np.int64


def compile_vmem(ins: Instruction, ctx: Context) -> Op:
    name = ins.mnemonic
    info = instr_info(name, ctx.processor)
    seg, kind, size = info.segment, info.memory, info.access_bytes
    if kind == "cache":
        return Op(ins, lambda m, g: None)
    what = info.base.split(f"_{kind}_", 1)[-1]
    if kind == "atomic":
        return _atomic(ins, seg, what, ctx)
    if is_lds_dma(ins, ctx.processor):
        return _lds_dma(ins, seg, size, ctx)
    if kind not in ("load", "store") or seg == "tbuffer" or "_format_" in name or name.endswith("_lds_dword"):
        raise UnsupportedInstruction(name, ins.address)
    store = kind == "store"
    ops = ins.operands
    data_op = ops[1] if store and seg != "buffer" else ops[0]
    if seg == "buffer":
        addr_ops = ops[1:]
    else:
        addr_ops = [ops[0], ops[2]] if store else ops[1:]
    address = _addresser(ins, seg, addr_ops, ctx)
    ndw = max(1, size // 4)
    if data_op.kind not in ("vgpr", "agpr"):
        raise UnsupportedInstruction(name, ins.address, "data operand")
    file, first = ("v" if data_op.kind == "vgpr" else "a"), data_op.index
    hi = what.endswith("_hi")
    d16 = "d16" in what
    signed = what.startswith(("sbyte", "sshort"))

    if store:
        def st(m, g):
            mask, full, _ = g.exec_info(m)
            regs = getattr(m, file)
            data = np.stack([regs[first + j][g.sel] for j in range(ndw)], axis=-1)
            if hi:
                data = data >> U32(16)
            address(m, g, mask, size, data)
        return Op(ins, st, counter=_counter(seg), is_store=True)

    def ld(m, g):
        mask, full, _ = g.exec_info(m)
        val = address(m, g, mask, size, None)  # uint32 [G,64,ndw]
        regs = getattr(m, file)
        if size < 4:
            v = val[..., 0]
            if signed:
                sh = U32(32 - 8 * size)
                v = ((v << sh).view(np.int32) >> np.int32(32 - 8 * size)).view(U32)
            if d16:
                cur = regs[first][g.sel]
                v = (cur & U32(0xFFFF)) | (v << U32(16)) if hi else (cur & U32(0xFFFF0000)) | (v & U32(0xFFFF))
            m.vwrite(g, regs, first, v)
            return
        for j in range(ndw):
            m.vwrite(g, regs, first + j, val[..., j])
    return Op(ins, ld, loads=((file, first, ndw),), counter=_counter(seg))


def _lds_dma(ins: Instruction, seg: str, size: int, ctx: Context) -> Op:
    """`buffer_load_* ... lds` / `global_load_lds_*`: each active lane's loaded bytes go to LDS at
    M0[17:2] * 4 + inst_offset + lane * size instead of a VGPR (out-of-range buffer lanes write 0);
    counted on vmcnt, with the written LDS bytes pending until the issuing wave retires the load.
    gfx950's 12- and 16-byte forms (dwordx3/x4) put lane l's bytes at lane * 16 (LLVM AMDGPUUsage,
    LDS DMA: "offset by 16 * lane_id bytes for larger sizes"; GCNSubtarget::hasLDSLoadB96_B128)."""
    wide = ctx.processor == "gfx950" and size in (12, 16)
    if (size not in (1, 2, 4) and not wide) or seg not in ("buffer", "global"):
        raise UnsupportedInstruction(ins.mnemonic, ins.address, "LDS DMA")
    address = _addresser(ins, seg, list(ins.operands), ctx)
    lane_off = np.arange(64, dtype=I64) * (16 if wide else size) + int(ins.modifier("offset") or "0", 0)

    def fn(m, g):
        mask, full, _ = g.exec_info(m)
        val = address(m, g, mask, size, None)
        off = (m.s[g.sel, M0] & U32(0x3FFFC)).astype(I64)[:, None] + lane_off
        lds_access(m, g, ins, mask, off, size, val, dma_seq=m.vm_issued[g.sel] + 1)
    return Op(ins, fn, counter="vm")


def _counter(seg: str) -> str:
    """FLAT may touch LDS, so it counts on both vmcnt and (out of order) lgkmcnt."""
    return "flat" if seg == "flat" else "vm"


def _addresser(ins: Instruction, seg: str, ops: list[Operand], ctx: Context):
    """Returns access(m, g, mask, size, store_data|None) -> loaded uint32 [G,64,ndw] (loads)."""
    imm = int(ins.modifier("offset") or "0", 0)
    if seg == "buffer":
        return _buffer_addresser(ins, ops, imm)
    vaddr, saddr = ops[0], ops[1] if len(ops) > 1 else Operand("special", "off", name="off")
    v64 = vaddr.kind == "vgpr" and vaddr.count == 2
    vi = vaddr.index if vaddr.kind == "vgpr" else None
    si = sgpr_index(saddr) if not (saddr.kind == "special" and saddr.name == "off") else None

    def lane_addr(m, g):
        if seg == "scratch":
            a = np.zeros((len(g), 64), U64)
            if vi is not None:
                a = a + m.v[vi][g.sel]
            if si is not None:
                a = a + m.s[g.sel, si].astype(U64)[:, None]
            return (a + U64(imm & 0xFFFFFFFF)) & U64(0xFFFFFFFF) if imm >= 0 else (a - U64(-imm)) & U64(0xFFFFFFFF)
        if si is not None:
            base = m.s64[g.sel, si // 2][:, None]
            a = base + m.v[vi][g.sel].astype(U64)
        else:
            a = join64(m.v[vi][g.sel], m.v[vi + 1][g.sel]) if v64 else None
        if imm == 0:
            return a
        return a + U64(imm) if imm > 0 else a - U64(-imm)

    def access(m, g, mask, size, data):
        a = lane_addr(m, g)
        if seg == "scratch":
            return _scratch(m, g, ins, mask, a.astype(I64), size, data)
        if seg == "flat":
            hi = a >> U64(32)
            lds = mask & (hi == U64(SHARED_APERTURE_HI))
            prv = mask & (hi == U64(PRIVATE_APERTURE_HI))
            if lds.any() or prv.any():
                return _flat_split(m, g, ins, mask, a, lds, prv, size, data)
        return global_access(m, g, ins, mask, a, size, data)
    return access


def global_access(m, g, ins, mask, a, size, data):
    """Gather/scatter global memory for lanes in mask; flags lanes outside every buffer."""
    exec_mask, exec_full, _ = g.exec_info(m)
    full = exec_full and (mask is exec_mask or bool(mask.all()))
    sel_a = a.reshape(-1) if full else a[mask]
    sel_off, ok = m.memory.locate(sel_a, size, m.launches_of(g, None if full else mask, full=full))
    all_ok = bool(ok.all())
    if m.trace is not None:
        rows = np.repeat(np.arange(mask.shape[0]), mask.shape[1]) if full else np.nonzero(mask)[0]
        inside, rows = (sel_off, rows) if all_ok else (sel_off[ok], rows[ok])
        m.trace.access(ins.address, m.memory.buffer_index(inside), inside, size, rows)
    if not all_ok:
        bad = np.nonzero(mask.reshape(-1))[0][np.nonzero(~ok)[0][0]] // 64
        m.find("out_of_bounds", ins.address, g.waves[bad],
               f"{ins.mnemonic} lane address 0x{int(sel_a[~ok][0]):x} is outside every buffer")
    ndw = max(1, size // 4)
    if isinstance(data, AtomicRequest):
        out = np.zeros(mask.shape + (ndw,), U32)
        sel = np.zeros((len(sel_off), ndw), U32)
        sel[ok] = apply_atomic(m, ins, sel_off[ok], data.op, ndw, data.data[mask][ok], data.ret)
        m.memory.atomic_writers.record(sel_off[ok], size, _workgroups(m, _lane_waves(g, mask, full))[ok], data.ret)
        out[mask] = sel
        return out
    if data is None:
        vals = m.memory.gather(sel_off if all_ok else np.where(ok, sel_off, 0), size)
        if not all_ok:
            vals[~ok] = 0
        if full:
            return vals.reshape(mask.shape + (ndw,))
        out = np.zeros(mask.shape + (ndw,), U32)
        out[mask] = vals
        return out
    d = data.reshape(-1, data.shape[-1]) if full else data[mask]
    clash = _conflicting_store(sel_off, size, d)
    if clash is not None:
        wave = g.waves[np.nonzero(mask.reshape(-1))[0][clash] // 64]
        m.find("store_conflict", ins.address, wave,
               f"{ins.mnemonic}: two lanes write different data to address 0x{int(sel_a[clash]):x} "
               "(which lane wins is undefined)")
    if m.memory.atomic_writers.pages:
        _check_workgroup_order(m, g, ins, mask, full, sel_off[ok], size, ok)
    if all_ok:
        m.memory.scatter(sel_off, size, d)
    else:
        m.memory.scatter(sel_off[ok], size, d[ok])
    return None


def _lane_waves(g, mask, full: bool) -> np.ndarray:
    """Batch-local wave of each lane in `mask` (in mask order)."""
    return np.repeat(g.waves, 64) if full else g.waves[np.nonzero(mask.reshape(-1))[0] // 64]


def _workgroups(m, waves: np.ndarray) -> np.ndarray:
    """Launch-wide workgroup ids of batch-local `waves`."""
    return m.wave_ids[waves] // m.wpg


def _check_workgroup_order(m, g, ins, mask, full: bool, off: np.ndarray, size: int, ok: np.ndarray) -> None:
    """`workgroup_order`: a store overwriting what another workgroup wrote by atomic earlier in the launch.
    Nothing orders workgroups (a kernel that zeroes an output other workgroups then accumulate into with
    atomics relies on running first), so the emulator's order is one of several hardware may produce."""
    waves = _lane_waves(g, mask, full)[ok]
    wg = _workgroups(m, waves)
    hit = m.memory.atomic_writers.overwritten(off, size, wg)
    if hit is not None:
        lane, other = hit
        m.find("workgroup_order", ins.address, waves[lane],
               f"{ins.mnemonic}: workgroup {int(wg[lane])} stores over global memory workgroup {other} updated by "
               f"atomic earlier in this launch; workgroups run in no guaranteed order, so on hardware the atomic "
               f"may land after the store (the emulator ran them in batches)")


def _conflicting_store(off: np.ndarray, size: int, data: np.ndarray) -> int | None:
    """Index of a lane whose bytes another lane of the same store also writes (hardware leaves the
    winner undefined); None when there is none. Lanes writing identical values to the same address
    are deterministic and allowed; partially overlapping writes always count."""
    if off.size < 2 or bool((np.diff(off) >= size).all()):
        return None
    order = np.argsort(off, kind="stable")
    so = off[order]
    hit = np.nonzero(so[1:] < so[:-1] + size)[0]
    if not hit.size:
        return None
    a, b = order[hit], order[hit + 1]
    keep = np.uint32(0xFFFFFFFF) if size >= 4 else np.uint32((1 << (8 * size)) - 1)
    differ = (so[hit] != so[hit + 1]) | ((data[a] & keep) != (data[b] & keep)).any(axis=-1)
    return int(b[np.argmax(differ)]) if differ.any() else None


def _flat_split(m, g, ins, mask, a, lds, prv, size, data):
    glob = mask & ~lds & ~prv
    lo = (a & U64(0xFFFFFFFF)).astype(I64)
    out = global_access(m, g, ins, glob, a, size, data) if glob.any() else None
    if lds.any():
        r = lds_access(m, g, ins, lds, lo, size, data)
        out = r if out is None else np.where(lds[..., None], r, out)
    if prv.any():
        r = _scratch(m, g, ins, prv, lo, size, data)
        out = r if out is None else np.where(prv[..., None], r, out)
    return out


def _scratch(m, g, ins, mask, off, size, data):
    """Per-lane private memory: offset must satisfy 0 <= off and off+size <= private size."""
    if isinstance(data, AtomicRequest):
        raise UnsupportedInstruction(ins.mnemonic, ins.address, "atomic on private memory")
    priv = m.scratch_bytes
    ok = (off >= 0) & (off + size <= priv)
    bad = mask & ~ok
    if bad.any():
        w = np.nonzero(bad)[0][0]
        m.find("scratch_limit", ins.address, g.waves[w],
               f"{ins.mnemonic} private offset {int(off[bad][0])} + {size} exceeds {priv} bytes")
    mask = mask & ok
    lane = (g.waves[:, None].astype(I64) * 64 + np.arange(64)) * priv
    idx = (lane + off)[mask]
    mem = m.scratch
    ndw = max(1, size // 4)
    if m.checked:
        byte = idx[:, None] + np.arange(size)
        unset = ~m.scratch_init[byte].all(axis=1)
        if data is None and unset.any():
            lane_waves = np.broadcast_to(g.waves[:, None], mask.shape)[mask]
            m.find("uninitialized", ins.address, lane_waves[unset][0],
                   f"{ins.mnemonic}: private memory read before its lane wrote it")
        m.scratch_init[byte] = True
    if data is None:
        out = np.zeros(mask.shape + (ndw,), U32)
        raw = mem[idx[:, None] + np.arange(size)]
        if size >= 4:
            out[mask] = raw.view(U32).reshape(-1, ndw)
        else:
            v = raw[:, 0].astype(U32)
            if size == 2:
                v |= raw[:, 1].astype(U32) << U32(8)
            out[mask] = v[:, None]
        return out
    d = data[mask]
    if size >= 4:
        raw = np.ascontiguousarray(d, U32).view(np.uint8).reshape(-1, size)
    else:
        raw = (d[:, :1] >> (np.arange(size, dtype=U32) * 8)).astype(np.uint8)
    mem[idx[:, None] + np.arange(size)] = raw
    return None


def _buffer_addresser(ins: Instruction, ops: list[Operand], imm: int):
    """MUBUF addressing with a V# in s[n:n+3]: raw (stride 0) or structured (idxen)."""
    vaddr, srsrc, soff = ops[0], ops[1], ops[2]
    idxen, offen = "idxen" in ins.modifiers, "offen" in ins.modifiers
    rsrc = sgpr_index(srsrc)
    soff_rd = scalar_reader(soff)
    vi = vaddr.index if vaddr.kind == "vgpr" else None

    def access(m, g, mask, size, data):
        desc = m.s[g.sel, rsrc:rsrc + 4]
        base = desc[:, 0].astype(U64) | ((desc[:, 1] & U32(0xFFFF)).astype(U64) << U64(32))
        stride = ((desc[:, 1] >> U32(16)) & U32(0x3FFF)).astype(I64)[:, None]
        num = desc[:, 2].astype(I64)[:, None]
        so = np.asarray(soff_rd(m, g), U32).astype(I64).reshape(-1, 1)
        k = 0
        index = np.zeros((len(g), 64), I64)
        voff = np.zeros((len(g), 64), I64)
        if idxen:
            index = m.v[vi][g.sel].astype(I64)
            k = 1
        if offen:
            voff = m.v[vi + k][g.sel].astype(I64)
        off = (voff + imm) & 0xFFFFFFFF  # the 32-bit buffer offset wraps
        if idxen:  # structured (gfx9: idxen); otherwise raw, whatever the stride
            in_range = (index < num) & (off < np.maximum(stride, 1) + (stride == 0) * (1 << 40))
            addr_off = index * stride + off + so
        else:
            in_range = off + so + size <= num
            addr_off = off + so
        a = base[:, None] + addr_off.astype(U64)
        ndw = max(1, size // 4)
        if ndw > 1 and not idxen:
            # per-dword range check of raw buffers: the partial tail of a wide access is dropped
            part = (off + so)[..., None] + 4 * np.arange(ndw) + 4 <= num[..., None]
        else:
            part = in_range[..., None] & np.ones(ndw, bool)
        live = mask & part.any(axis=-1)
        if isinstance(data, AtomicRequest):
            live = mask & part.all(axis=-1)
            return global_access(m, g, ins, live, a, size, data)
        if data is None:
            out = global_access(m, g, ins, live, a, size, None) if live.any() else np.zeros(
                mask.shape + (ndw,), U32)
            return np.where(part, out, U32(0))
        if live.any():
            if part[live].all():
                global_access(m, g, ins, live, a, size, data)
            else:
                for j in range(ndw):
                    lj = mask & part[..., j]
                    if lj.any():
                        global_access(m, g, ins, lj, a + U64(4 * j), 4, data[..., j:j + 1])
        return None
    return access


def _atomic(ins: Instruction, seg: str, what: str, ctx: Context) -> Op:
    op = what.removesuffix("_x2")
    wide = what.endswith("_x2") or what in ("add_f64", "min_f64", "max_f64")
    if op not in ATOMIC_OPS or seg == "scratch":
        raise UnsupportedInstruction(ins.mnemonic, ins.address)
    ret = "sc0" in ins.modifiers or "glc" in ins.modifiers
    ops = list(ins.operands)
    if seg == "buffer":
        data_op, addr_ops = ops[0], ops[1:]
        dst = data_op if ret else None
    else:
        dst = ops.pop(0) if ret else None
        data_op, addr_ops = ops[1], [ops[0]] + ops[2:]
    ndw = 2 if wide else 1
    ndata = 2 * ndw if op == "cmpswap" else ndw
    address = _addresser(ins, seg, addr_ops, ctx)
    dfile = "v" if data_op.kind == "vgpr" else "a"

    def fn(m, g):
        mask, full, _ = g.exec_info(m)
        regs = getattr(m, dfile)
        data = np.stack([regs[data_op.index + j][g.sel] for j in range(ndata)], axis=-1)
        old = address(m, g, mask, 4 * ndw, AtomicRequest(op, ndw, data, dst is not None))
        if dst is not None:
            dregs = m.v if dst.kind == "vgpr" else m.a
            for j in range(ndw):
                m.vwrite(g, dregs, dst.index + j, old[..., j])
    loads = (("v" if dst.kind == "vgpr" else "a", dst.index, ndw),) if dst is not None else ()
    return Op(ins, fn, loads=loads, counter=_counter(seg), is_store=dst is None)
