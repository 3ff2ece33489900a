"""LDS (DS) instructions, the lane crossbar ops (ds_bpermute/permute/swizzle), LDS bounds and
inter-wave race detection.

Race rule: within one workgroup, between two barriers (an "epoch"), a byte of LDS written by one
wave must not be read or written by another wave (atomics excepted). Tracking is per byte: the
last writer and its epoch, and the reader(s) and their epoch.
"""
from __future__ import annotations

import numpy as np

from ..errors import UnsupportedInstruction
from ..isa.instruction import Instruction
from .atomics import _combine
from .ops import Context, Op

U32, I64 = np.uint32, np.int64
_ALL_WRITTEN = U32(0x01010101)  # the four written-flags (bools) of a dword, viewed as one word
_READ = {"b32": 4, "b64": 8, "b96": 12, "b128": 16, "u8": 1, "i8": 1, "u16": 2, "i16": 2,
         "u8_d16": 1, "i8_d16": 1, "u16_d16": 2, "u8_d16_hi": 1, "i8_d16_hi": 1, "u16_d16_hi": 2}
_WRITE = {"b8": 1, "b16": 2, "b32": 4, "b64": 8, "b96": 12, "b128": 16, "b8_d16_hi": 1, "b16_d16_hi": 2}
_ATOMIC = {"add_u32": "add", "sub_u32": "sub", "min_i32": "smin", "max_i32": "smax", "min_u32": "umin",
           "max_u32": "umax", "and_b32": "and", "or_b32": "or", "xor_b32": "xor", "inc_u32": "inc",
           "dec_u32": "dec", "add_f32": "add_f32", "wrxchg_rtn_b32": "swap", "cmpst_b32": "cmpswap",
           "pk_add_f16": "pk_add_f16", "pk_add_bf16": "pk_add_bf16", "add_u64": "add", "max_u64": "umax",
           "min_u64": "umin", "cmpst_b64": "cmpswap", "wrxchg_rtn_b64": "swap", "add_f64": "add_f64"}


class _RaceState:
    """Per LDS unit: last writer wave and its epoch, reader wave (-2: several) and epoch, and a
    scratch array. The unit is a dword while every access so far covered whole aligned dwords (every
    byte of a dword then has the same state, so checking dwords is checking bytes), a byte after."""

    def __init__(self, nbytes: int):
        self.unit = 4
        self.arrays = [np.full(nbytes // 4, -1, np.int32) for _ in range(5)]

    def to_bytes(self) -> None:
        self.unit = 1
        self.arrays = [np.repeat(a, 4) for a in self.arrays]


def _race_state(m) -> _RaceState:
    if m.lds_track is None:
        m.lds_track = _RaceState(len(m.lds))  # LDS is allocated in multiples of 16 bytes per workgroup
    return m.lds_track


def _track(m, g, ins, wv: np.ndarray, base: np.ndarray, size: int, write: bool) -> None:
    """Race check and bookkeeping for `size` bytes from each LDS byte address in `base`, accessed by
    batch-local waves `wv` (one per address)."""
    state = _race_state(m)
    if state.unit == 4 and (size % 4 or (base & 3).any()):
        state.to_bytes()
    n = size // state.unit
    unit = ((base if state.unit == 1 else base >> 2)[:, None] + np.arange(n)).ravel()
    wave = np.repeat(wv, n)
    w_wave, w_ep, r_wave, r_ep, scratch = state.arrays
    ep = m.lds_epoch[m.wg_of_wave[wave]]
    race = (w_ep[unit] == ep) & (w_wave[unit] != wave)
    if write:
        race |= (r_ep[unit] == ep) & (r_wave[unit] != wave)
    scratch[unit] = wave  # one of the accessing waves per unit survives: the others see a stranger
    shared = scratch[unit] != wave  # accesses to a unit another wave of this instruction also accesses
    if race.any() or (write and shared.any()):
        if race.any():
            i = int(np.nonzero(race)[0][0])
            other = int(w_wave[unit[i]] if w_ep[unit[i]] == ep[i] else r_wave[unit[i]])
        else:
            i = int(np.nonzero(shared)[0][0])
            other = int(scratch[unit[i]])
        b = int(unit[i]) * state.unit  # the first byte of the unit: the first such byte of the access
        who = f"wave {int(m.wave_ids[other])}" if other >= 0 else "another wave"
        m.find("lds_race", ins.address, wave[i],
               f"{ins.mnemonic}: LDS byte {b % m.lds_stride} {'written' if write else 'read'} while {who} "
               f"accessed it since the last barrier")
    if write:
        w_wave[unit] = wave
        w_ep[unit] = ep
    else:
        same = (r_ep[unit] == ep) & (r_wave[unit] != wave) & (r_wave[unit] != -1)
        r_wave[unit] = np.where(same, -2, wave)
        r_ep[unit] = ep
        if shared.any():
            r_wave[unit[shared]] = -2


def _dma_order(m, ins, wv: np.ndarray, byte: np.ndarray, size: int, dma_seq: np.ndarray | None) -> None:
    """LDS DMA bookkeeping. A DMA write (`dma_seq`: the issuing waves' vmcnt sequence numbers [G]) marks its
    bytes; any other access to a byte whose DMA its issuing wave has not yet retired by `s_waitcnt vmcnt`
    is a `waitcnt` finding."""
    if m.lds_dma is None:
        m.lds_dma = (np.zeros(len(m.lds), I64), np.zeros(len(m.lds), np.int32))
    seq, wave = m.lds_dma
    if dma_seq is not None:
        seq[byte] = np.repeat(dma_seq, size)
        wave[byte] = np.repeat(wv, size)
        return
    w = wave[byte]
    pending = seq[byte] > m.vm_retired[w]
    if pending.any():
        i = int(np.nonzero(pending)[0][0])
        m.find("waitcnt", ins.address, wv[i // size],
               f"{ins.mnemonic}: LDS byte {int(byte[i]) % m.lds_stride} is written by an LDS DMA load of wave "
               f"{int(m.wave_ids[int(w[i])])} not yet retired by s_waitcnt vmcnt")


def _check_written(m, ins, wave: np.ndarray, base: np.ndarray, size: int, write: bool) -> None:
    """Checked mode: a read (or atomic) of an LDS byte no wave of the workgroup has written is an
    `uninitialized` finding (hardware LDS holds whatever an earlier workgroup left). Accesses of whole
    aligned dwords test and set the four flags of a dword at once."""
    if size % 4 == 0 and not (base & 3).any():
        flags = m.lds_init.view(U32)
        dwords = _units(base >> 2, size // 4)
        if write or (flags[dwords] == _ALL_WRITTEN).all():
            flags[dwords] = _ALL_WRITTEN
            return
    byte = _units(base, size)
    if not write:
        unset = ~m.lds_init[byte]
        if unset.any():
            i = int(np.nonzero(unset)[0][0])
            m.find("uninitialized", ins.address, wave[i // size],
                   f"{ins.mnemonic}: LDS byte {int(byte[i]) % m.lds_stride} read before any write by its workgroup")
    m.lds_init[byte] = True


def _units(first: np.ndarray, n: int) -> np.ndarray:
    """`n` consecutive units from each of `first`, flattened."""
    return (first[:, None] + np.arange(n)).ravel()


def lds_access(m, g, ins, mask, off, size, data, atomic: tuple | None = None, dma_seq: np.ndarray | None = None):
    """Read (data None) or write LDS bytes [off, off+size) for active lanes; returns uint32
    [G,64,ndw] for reads/atomics. Lanes beyond the LDS allocation are flagged and dropped. `dma_seq`
    marks a write as an LDS DMA load's (see `_dma_order`)."""
    ok = (off >= 0) & (off + size <= m.lds_bytes)
    bad = mask & ~ok
    if bad.any():
        w = np.nonzero(bad)[0][0]
        m.find("lds_limit", ins.address, g.waves[w],
               f"{ins.mnemonic}: LDS address {int(off[bad][0])} + {size} beyond the {m.lds_bytes}-byte allocation")
    mask = mask & ok
    ndw = max(1, size // 4)
    wv = np.broadcast_to(g.waves[:, None], mask.shape)[mask]
    base = (m.wg_of_wave[wv] * m.lds_stride).astype(I64) + off[mask]
    if dma_seq is not None or m.lds_dma is not None:
        _dma_order(m, ins, wv, _units(base, size), size,
                   None if dma_seq is None else np.broadcast_to(dma_seq[:, None], mask.shape)[mask])
    if m.checked:
        _check_written(m, ins, wv, base, size, data is not None and atomic is None)
    if atomic is not None:
        return _lds_atomic(m, ins, mask, base, ndw, data, atomic)
    if m.wpg > 1 and len(base):
        _track(m, g, ins, wv, base, size, data is not None)
    aligned = size >= 4 and not (base & 3).any()
    if data is None:
        out = np.zeros(mask.shape + (ndw,), U32)
        if aligned:
            out[mask] = m.lds.view(U32)[_units(base >> 2, ndw).reshape(-1, ndw)]
        else:
            raw = m.lds[_units(base, size)].reshape(-1, size)
            if size >= 4:
                out[mask] = raw.view(U32).reshape(-1, ndw)
            else:
                v = raw[:, 0].astype(U32)
                if size == 2:
                    v |= raw[:, 1].astype(U32) << U32(8)
                out[mask] = v[:, None]
        return out
    d = data[mask]
    if aligned:
        m.lds.view(U32)[_units(base >> 2, ndw)] = np.ascontiguousarray(d, U32).ravel()
    elif size >= 4:
        m.lds[_units(base, size)] = np.ascontiguousarray(d, U32).view(np.uint8).ravel()
    else:
        m.lds[_units(base, size)] = (d[:, :1] >> (np.arange(size, dtype=U32) * 8)).astype(np.uint8).ravel()
    return None


def _lds_atomic(m, ins, mask, base, ndw, data, atomic):
    op, ret = atomic
    words = m.lds.view(np.uint64 if ndw == 2 else U32)
    idx = base // (4 * ndw)
    d = data[mask]
    old_all = np.zeros(len(idx), words.dtype)
    remaining = np.arange(len(idx))
    while len(remaining):
        _, pos = np.unique(idx[remaining], return_index=True)
        take = remaining[pos]
        old = words[idx[take]].copy()
        words[idx[take]] = _combine(op, old, d[take], ndw)
        old_all[take] = old
        remaining = np.setdiff1d(remaining, take, assume_unique=True)
    out = np.zeros(mask.shape + (ndw,), U32)
    if ndw == 2:
        out[mask] = np.stack([(old_all & np.uint64(0xFFFFFFFF)).astype(U32),
                              (old_all >> np.uint64(32)).astype(U32)], axis=-1)
    else:
        out[mask] = old_all[:, None].astype(U32)
    return out


def _two_address(what: str, off16: int) -> tuple[int, tuple[int, int]]:
    """(element size, the two byte offsets) of a read2/write2 form."""
    size = {"b32": 4, "b64": 8}[what.rsplit("_", 1)[1]]
    scale = size * (64 if "st64" in what else 1)
    return size, ((off16 & 0xFF) * scale, (off16 >> 8) * scale)


def ds_footprint(ins: Instruction) -> tuple[int, list[tuple[int, int]], bool]:
    """(operand index of the address VGPR, [(byte offset, size)] each lane accesses past its
    address, whether it writes) of an LDS memory instruction; others raise UnsupportedInstruction."""
    what = ins.mnemonic[3:]
    off16 = int.from_bytes(ins.encoding[:2], "little")
    if what.startswith(("read2", "write2")):
        size, offs = _two_address(what, off16)
        return (1 if what.startswith("read") else 0), [(o, size) for o in offs], what.startswith("write")
    key = what.split("_", 1)[1] if what.startswith(("read_", "write_")) else ""
    if what.startswith("read_") and key in _READ:
        return 1, [(off16, _READ[key])], False
    if what.startswith("write_") and key in _WRITE:
        return 0, [(off16, _WRITE[key])], True
    key = what.replace("_rtn", "")
    if (_ATOMIC.get(key) or _ATOMIC.get(what)) is None:
        raise UnsupportedInstruction(ins.mnemonic, ins.address, "no LDS footprint model")
    return (1 if "_rtn_" in what else 0), [(off16, 8 if key.endswith("64") else 4)], True


def compile_ds(ins: Instruction, ctx: Context) -> Op:
    name = ins.mnemonic
    off16 = int.from_bytes(ins.encoding[:2], "little")
    ops = ins.operands
    what = name[3:]
    if what in ("bpermute_b32", "permute_b32", "swizzle_b32"):
        return _crossbar(ins, what, off16)
    if what == "nop":
        return Op(ins, lambda m, g: None)
    if what in ("read_b64_tr_b16", "read_b64_tr_b8") and ctx.processor == "gfx950":
        return _read_transposed(ins, 16 if what.endswith("16") else 8, off16)
    two = what.startswith(("read2", "write2"))
    if two:
        size, offs = _two_address(what, off16)
    if what.startswith("read"):
        key = what.split("_", 1)[1]
        size = size if two else _READ.get(key)
        if size is None:
            raise UnsupportedInstruction(name, ins.address)
        dst, addr = ops[0], ops[1]
        ndw = max(1, size // 4)
        signed = key.startswith("i")
        d16, hi = "d16" in key, key.endswith("_hi")
        dfile = "v" if dst.kind == "vgpr" else "a"

        def rd(m, g):
            mask, _, _ = g.exec_info(m)
            a = m.v[addr.index][g.sel].astype(I64)
            regs = getattr(m, dfile)
            if two:
                vals = [lds_access(m, g, ins, mask, a + o, size, None) for o in offs]
                val = np.concatenate(vals, axis=-1)
            else:
                val = lds_access(m, g, ins, mask, a + off16, size, None)
            if size < 4:
                v = val[..., 0]
                if signed:
                    sh = 32 - 8 * size
                    v = ((v << U32(sh)).view(np.int32) >> np.int32(sh)).view(U32)
                if d16:
                    cur = regs[dst.index][g.sel]
                    v = (cur & U32(0xFFFF)) | (v << U32(16)) if hi else (cur & U32(0xFFFF0000)) | (v & U32(0xFFFF))
                m.vwrite(g, regs, dst.index, v)
                return
            for j in range(val.shape[-1]):
                m.vwrite(g, regs, dst.index + j, val[..., j])
        total = (2 * ndw) if two else ndw
        return Op(ins, rd, loads=((dfile, dst.index, total),), counter="lds")
    if what.startswith("write"):
        key = what.split("_", 1)[1]
        size = size if two else _WRITE.get(key)
        if size is None:
            raise UnsupportedInstruction(name, ins.address)
        addr, datas = ops[0], ops[1:]
        ndw = max(1, size // 4)
        hi = key.endswith("_hi")

        def wr(m, g):
            mask, _, _ = g.exec_info(m)
            a = m.v[addr.index][g.sel].astype(I64)
            for k, dop in enumerate(datas):
                regs = m.v if dop.kind == "vgpr" else m.a
                data = np.stack([regs[dop.index + j][g.sel] for j in range(ndw)], axis=-1)
                if hi:
                    data = data >> U32(16)
                lds_access(m, g, ins, mask, a + (offs[k] if two else off16), size, data)
        return Op(ins, wr, counter="lds", is_store=True)
    ret = "_rtn_" in what
    key = what.replace("_rtn", "")
    op = _ATOMIC.get(key) or _ATOMIC.get(what)
    if op is None:
        raise UnsupportedInstruction(name, ins.address)
    ndw = 2 if key.endswith(("64",)) else 1
    if ret:
        dst, addr, datas = ops[0], ops[1], ops[2:]
    else:
        dst, addr, datas = None, ops[0], ops[1:]
    if op == "cmpswap":
        datas = [datas[1], datas[0]]  # DS order is (cmp, src); the combiner wants (src, cmp)

    def at(m, g):
        mask, _, _ = g.exec_info(m)
        a = m.v[addr.index][g.sel].astype(I64)
        parts = []
        for dop in datas:
            regs = m.v if dop.kind == "vgpr" else m.a
            parts += [regs[dop.index + j][g.sel] for j in range(ndw)]
        data = np.stack(parts, axis=-1)
        old = lds_access(m, g, ins, mask, a + off16, 4 * ndw, data, atomic=(op, ret))
        if dst is not None:
            for j in range(ndw):
                m.vwrite(g, m.v, dst.index + j, old[..., j])
    loads = (("v", dst.index, ndw),) if dst is not None else ()
    return Op(ins, at, loads=loads, counter="lds", is_store=dst is None)


def _read_transposed(ins: Instruction, width: int, off16: int) -> Op:
    """gfx950 `ds_read_b64_tr_b16` / `_b8`: each lane reads 8 bytes at its address, E = 64 / width
    elements; within each 16-lane group those rows form a tile (row r = the 16 / E lanes from
    r * 16 / E on, in lane order) and lane j receives column j, row r as its element r: element j % E
    of lane r * (16 / E) + j // E. (Modular's MAX docs for ds_read_tr16_b64: "each 16-lane row loads a
    4x16 tile ... each lane gets a column"; ds_read_tr8_b64: "two interleaved 8x8 byte transposes";
    checked end to end on Triton's gfx950 code for a transposed bf16 dot, tests/emu/test_cdna4.py.)
    Whole waves only (partial EXEC raises)."""
    dst, addr = ins.operands[0], ins.operands[1]
    per, rows_lanes = 64 // width, 16 // (64 // width)
    lane = np.arange(64)
    src_lane = (lane // 16 * 16)[None, :] + np.arange(per)[:, None] * rows_lanes + (lane % 16 // per)[None, :]
    src_el = np.broadcast_to(lane % per, (per, 64))
    shifts = (np.arange(per) * width).astype(np.uint64)
    elem_mask = np.uint64((1 << width) - 1)
    dfile = "v" if dst.kind == "vgpr" else "a"

    def rd(m, g):
        mask, _, _ = g.exec_info(m)
        if not mask.all():
            raise UnsupportedInstruction(ins.mnemonic, ins.address, "EXEC not all ones")
        val = lds_access(m, g, ins, mask, m.v[addr.index][g.sel].astype(I64) + off16, 8, None)
        raw = val[..., 0].astype(np.uint64) | (val[..., 1].astype(np.uint64) << np.uint64(32))
        elems = (raw[..., None] >> shifts) & elem_mask                   # [G, 64, per]
        rows = elems[:, src_lane, src_el]                                 # [G, per, 64]: row r of lane j
        out = np.bitwise_or.reduce(rows << shifts[None, :, None], axis=1)
        regs = getattr(m, dfile)
        m.vwrite(g, regs, dst.index, (out & np.uint64(0xFFFFFFFF)).astype(U32))
        m.vwrite(g, regs, dst.index + 1, (out >> np.uint64(32)).astype(U32))
    return Op(ins, rd, loads=((dfile, dst.index, 2),), counter="lds")


def _crossbar(ins: Instruction, what: str, off16: int) -> Op:
    ops = ins.operands
    dst = ops[0]
    lanes = np.arange(64)
    if what == "swizzle_b32":
        src = ops[1]
        if off16 & 0x8000:
            sel = (lanes & ~3) | ((off16 >> (2 * (lanes & 3))) & 3)
        else:
            and_m, or_m, xor_m = off16 & 0x1F, (off16 >> 5) & 0x1F, (off16 >> 10) & 0x1F
            sel = (lanes & 0x20) | ((((lanes & 0x1F) & and_m) | or_m) ^ xor_m)

        def swz(m, g):
            mask, _, _ = g.exec_info(m)
            data = np.where(mask, m.v[src.index][g.sel], U32(0))
            m.vwrite(g, m.v, dst.index, data[:, sel])
        return Op(ins, swz, loads=(("v", dst.index, 1),), counter="lds")
    addr, src = ops[1], ops[2]
    off = off16

    def perm(m, g):
        mask, _, _ = g.exec_info(m)
        data = np.where(mask, m.v[src.index][g.sel], U32(0))
        lane = ((m.v[addr.index][g.sel].astype(I64) + off) >> 2) & 63
        if what == "bpermute_b32":
            res = np.take_along_axis(data, lane, axis=1)
        else:
            res = np.zeros_like(data)
            rows = np.broadcast_to(np.arange(len(g))[:, None], lane.shape)
            res[rows[mask], lane[mask]] = data[mask]
        m.vwrite(g, m.v, dst.index, res)
    return Op(ins, perm, loads=(("v", dst.index, 1),), counter="lds")
