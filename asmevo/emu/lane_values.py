"""Per-lane constant propagation over one kernel's CFG, with the emulator's instruction semantics.

For one block shape, each register of each lane of a workgroup's waves is either *known* — the same
32-bit value on every execution reaching that point, whatever the kernel's arguments, memory
contents and workgroup id — or unknown. At the entry only the packed work-item ids in v0 and EXEC
(the launch's lanes) are known. An ALU instruction (SALU, VALU, VOPC, packed math) is executed by
the emulator's own implementation on the known values; its result is known where every input it
reads is known (per lane for lane-local VALU, per wave for cross-lane reads: DPP, readlane,
readfirstlane, permlane), and a VGPR write keeps a lane's old value where EXEC is known to be off
there (lanes where EXEC is unknown stay known only when old and new values agree). Scalar AND/OR/
XOR-family masks (including the EXEC save/restore instructions) track known *bits*, so restoring a
saved EXEC after a data-dependent branch gives back a known EXEC. Everything else (memory, MFMA,
AGPRs, hardware registers) makes its destinations unknown. Paths merge to what they agree on.

Kernels that set MODE, index registers or jump indirectly raise `UnsupportedInstruction`: their
values would need semantics this analysis does not model. Float instructions run in LLVM's compute default
MODE (`float_mode.COMPUTE_DEFAULT`, f32 denormals kept), whatever the kernel descriptor says.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..errors import UnsupportedInstruction
from ..isa.cfg import CFG, build_cfg
from ..isa.instruction import Instruction
from ..isa.operands import Operand
from ..isa.regs import SCC, Reg, reg_info
from .dispatch import waves_per_group, work_items
from .memory import Memory
from .ops import Context
from .program import compile_instruction
from .state import EXEC, Group, Machine

_PURE = frozenset({"salu", "valu", "vopc"})
_OPAQUE = re.compile(r"^(s_getreg|s_getpc|s_memtime|s_memrealtime|s_sendmsg|v_mfma|v_smfmac|v_accvgpr)")
_UNSUPPORTED = re.compile(r"^(s_setreg|s_movrel|v_movrel|s_set_gpr_idx|s_setpc|s_swappc|s_call|s_rfe|"
                          r"s_cbranch_(join|g_fork|i_fork))")
_CROSS_LANE = re.compile(r"^v_(readlane|readfirstlane|writelane|permlane|mov_b32_dpp)")
ALL = np.uint32(0xFFFFFFFF)
_EXEC_OPERAND = Operand(kind="special", text="exec", count=2, name="exec")
# Bitwise scalar ops -> the AND/OR/XOR they compute after negating the second source (andn2, orn2),
# the first (andn1, orn1) or the result (nand, nor, xnor).
_LOGIC = {"and": "and", "or": "or", "xor": "xor", "andn2": "and", "orn2": "or", "nand": "and", "nor": "or",
          "xnor": "xor", "andn1": "and", "orn1": "or"}


@dataclass
class LaneState:
    """Values and knowledge of every register of one workgroup's W waves.

    A VGPR lane is *known* (`vk`) when its value holds whatever EXEC is, or *known under EXEC*
    (`ck`) when it holds provided the lane is enabled in the EXEC that instruction `ce` (per wave)
    last wrote — the case of a value computed under a data-dependent mask and used under the same
    mask. `epoch` is the index + 1 of the instruction that last wrote EXEC (0: the entry's EXEC; a
    negative number: paths with different last writers met at that block, a new EXEC on every
    arrival). Writing an epoch again (the same writer running again) drops what was known under it."""

    v: np.ndarray      # [nv, W, 64] uint32
    vk: np.ndarray     # [nv, W, 64] bool
    ck: np.ndarray     # [nv, W, 64] bool
    ce: np.ndarray     # [nv, W] int64
    s: np.ndarray      # [W, 128] uint32
    sk: np.ndarray     # [W, 128] uint32: known bits
    scc: np.ndarray    # [W] bool
    scck: np.ndarray   # [W] bool
    epoch: np.ndarray  # [W] int64

    def copy(self) -> "LaneState":
        return LaneState(*(x.copy() for x in (self.v, self.vk, self.ck, self.ce, self.s, self.sk, self.scc,
                                              self.scck, self.epoch)))

    def merge(self, o: "LaneState", join: int) -> bool:
        """Keep what `o` agrees with (`join` is the epoch of differing EXEC writers); whether
        anything was forgotten."""
        same = self.v == o.v
        vk = self.vk & o.vk & same
        ck = self.ck & o.ck & same & (self.ce == o.ce)[..., None]
        sk = self.sk & o.sk & ~(self.s ^ o.s)
        scck = self.scck & o.scck & (self.scc == o.scc)
        epoch = np.where(self.epoch == o.epoch, self.epoch, join)
        ck &= ~((self.ce == join) & (epoch == join))[..., None]  # a join is a new EXEC each time it happens
        changed = any(bool((a != b).any()) for a, b in ((vk, self.vk), (ck, self.ck), (sk, self.sk),
                                                          (scck, self.scck), (epoch, self.epoch)))
        self.vk, self.ck, self.sk, self.scck, self.epoch = vk, ck, sk, scck, epoch
        return changed

    def exec_known(self) -> tuple[np.ndarray, np.ndarray]:
        """(EXEC bit known on, known off) per lane, [W, 64] bool."""
        bits = (np.uint64(1) << np.arange(64, dtype=np.uint64))
        val = self.s[:, EXEC].astype(np.uint64) | (self.s[:, EXEC + 1].astype(np.uint64) << np.uint64(32))
        known = self.sk[:, EXEC].astype(np.uint64) | (self.sk[:, EXEC + 1].astype(np.uint64) << np.uint64(32))
        on = (val[:, None] & known[:, None] & bits) != 0
        off = (~val[:, None] & known[:, None] & bits) != 0
        return on, off

    def usable(self, r: int) -> np.ndarray:
        """[W, 64] lanes of VGPR r whose value holds wherever the current EXEC enables them."""
        return self.vk[r] | (self.ck[r] & (self.ce[r] == self.epoch)[:, None])


def entry_state(block: tuple[int, int, int], nv: int) -> LaneState:
    """The state at a kernel's entry for one workgroup of shape `block`: v0 and EXEC known."""
    W = waves_per_group(block)
    st = LaneState(np.zeros((nv, W, 64), np.uint32), np.zeros((nv, W, 64), bool), np.zeros((nv, W, 64), bool),
                   np.zeros((nv, W), np.int64), np.zeros((W, 128), np.uint32), np.zeros((W, 128), np.uint32),
                   np.zeros(W, bool), np.zeros(W, bool), np.zeros(W, np.int64))
    st.v[0], mask = work_items(block)
    st.vk[0] = True
    st.s[:, EXEC] = (mask & np.uint64(ALL)).astype(np.uint32)
    st.s[:, EXEC + 1] = (mask >> np.uint64(32)).astype(np.uint32)
    st.sk[:, EXEC:EXEC + 2] = ALL  # the entry SGPRs (arguments, workgroup ids) are all unknown
    return st


def _pair(st: LaneState, op: Operand, wide: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """(value, known bits) per wave of a scalar operand as uint64, or None when not modelled."""
    full = 0xFFFFFFFFFFFFFFFF if wide else 0xFFFFFFFF
    if op.kind == "imm":
        if wide and not -16 <= op.value <= 64:
            return None  # a 32-bit literal in a 64-bit operand: left to the emulator's extension rule
        W = st.s.shape[0]
        return np.full(W, op.value & full, np.uint64), np.full(W, full, np.uint64)
    span = op.sgpr_range()
    if span is None or len(span) != (2 if wide else 1):
        return None
    val = st.s[:, span[0]].astype(np.uint64)
    known = st.sk[:, span[0]].astype(np.uint64)
    if wide:
        val |= st.s[:, span[1]].astype(np.uint64) << np.uint64(32)
        known |= st.sk[:, span[1]].astype(np.uint64) << np.uint64(32)
    return val, known


def _combine(kind: str, a, b, wide: bool):
    """Known bits of `a kind b` for pairs (value, known)."""
    full = np.uint64(0xFFFFFFFFFFFFFFFF if wide else 0xFFFFFFFF)
    (av, ak), (bv, bk) = a, b
    if kind == "and":
        one = av & ak & bv & bk
        zero = (ak & ~av) | (bk & ~bv)
    elif kind == "or":
        one = (av & ak) | (bv & bk)
        zero = ak & ~av & bk & ~bv
    else:
        one = (av ^ bv) & ak & bk
        zero = ~(av ^ bv) & ak & bk
    return one & full, (one | zero) & full


def _logic(base: str, srcs: tuple[Operand, ...], st: LaneState):
    """Known bits of a bitwise scalar op's result, EXEC's new value for the saveexec family, or None.
    Returns (result, new EXEC or None, whether the destination gets the old EXEC)."""
    m = re.match(r"^s_(\w+?)(_saveexec|_wrexec)?_b(32|64)$", base)
    if not m or m[1] not in _LOGIC and m[1] not in ("not", "mov"):
        return None
    wide = m[3] == "64"
    full = np.uint64(0xFFFFFFFFFFFFFFFF if wide else 0xFFFFFFFF)
    ops = [_pair(st, o, wide) for o in srcs]
    if any(o is None for o in ops):
        return None
    if m[2]:
        ops.append(_pair(st, _EXEC_OPERAND, True))
    if m[1] == "mov":
        return ops[0], None, False
    if m[1] == "not":
        return (~ops[0][0] & full, ops[0][1]), None, False
    a, b = ops[0], ops[1]
    if m[1] in ("andn2", "orn2"):
        b = (~b[0], b[1])
    if m[1] in ("andn1", "orn1"):
        a = (~a[0], a[1])
    val, known = _combine(_LOGIC[m[1]], a, b, wide)
    if m[1] in ("nand", "nor", "xnor"):
        val = ~val & known
    if m[2]:
        return (val, known), (val, known), m[2] == "_saveexec"
    return (val, known), None, False


class LaneValues:
    """Known per-lane values before each instruction of one kernel, for one block shape."""

    def __init__(self, instructions: list[Instruction], block: tuple[int, int, int], cfg: CFG | None = None):
        for ins in instructions:
            if _UNSUPPORTED.match(ins.mnemonic):
                raise UnsupportedInstruction(ins.mnemonic, ins.address, "lane values do not model it")
        self.instructions = instructions
        self.infos = [reg_info(i) for i in instructions]
        nv = 1 + max((r[1] for info in self.infos for r in info.defs | info.uses if r[0] == "v"), default=0)
        self.cfg = cfg or build_cfg(instructions)
        ctx = Context("")
        self.ops = [compile_instruction(i, ctx) if self.infos[k].family in _PURE else None
                    for k, i in enumerate(instructions)]
        entry = entry_state(block, nv)
        self.W = entry.s.shape[0]
        self.machine = Machine(nwaves=self.W, nvgpr=nv, nagpr=1, waves_per_group=self.W, lds_bytes=0,
                               scratch_bytes=0, memory=Memory(), checked=False, wave_ids=np.arange(64), entry=0)
        self.group = Group(0, np.arange(self.W))
        self.block_in: dict[int, LaneState] = {0: entry}
        self._solve()

    def _solve(self) -> None:
        order = self.cfg.reachable()
        work = list(order)
        while work:
            b = work.pop(0)
            st = self.block_in[b].copy()
            blk = self.cfg.blocks[b]
            for k in range(blk.start, blk.end):
                self.step(k, st)
            for s in blk.succs:
                if s not in self.block_in:
                    self.block_in[s] = st.copy()
                elif not self.block_in[s].merge(st, -1 - s):
                    continue
                if s not in work:
                    work.append(s)

    def before(self, indices: set[int]) -> dict[int, LaneState]:
        """States before the given instruction indices (reachable ones)."""
        out = {}
        for b, st0 in self.block_in.items():
            blk = self.cfg.blocks[b]
            if not any(blk.start <= k < blk.end for k in indices):
                continue
            st = st0.copy()
            for k in range(blk.start, blk.end):
                if k in indices:
                    out[k] = st.copy()
                self.step(k, st)
        return out

    def step(self, k: int, st: LaneState) -> None:
        """Apply instruction k to `st`."""
        info = self.infos[k]
        self._apply(k, st)
        if EXEC in (r[1] for r in info.defs if r[0] == "s"):  # a new EXEC: knowledge under the old one
            st.epoch[:] = k + 1                                   # of this writer is stale
            st.ck &= (st.ce != k + 1)[..., None]

    def _apply(self, k: int, st: LaneState) -> None:
        ins, info, op = self.instructions[k], self.infos[k], self.ops[k]
        defs = info.defs
        if op is None or _OPAQUE.match(ins.mnemonic) or any(r[0] == "a" for r in defs | info.uses):
            _forget(st, defs)
            return
        m = self.machine
        m.v[:st.v.shape[0]] = st.v
        m.s[:] = st.s
        m.s[:, EXEC:EXEC + 2] = st.s[:, EXEC:EXEC + 2] | ~st.sk[:, EXEC:EXEC + 2]  # unknown lanes run
        m.scc[:] = st.scc
        m.exec_version += 1
        with np.errstate(all="ignore"):
            op.fn(m, self.group)
        sreads = [r[1] for r in info.uses if r[0] == "s" and r[1] not in (EXEC, EXEC + 1)]
        waves_known = np.all(st.sk[:, sreads] == ALL, axis=1) if sreads else np.ones(self.W, bool)
        if SCC in info.uses:
            waves_known &= st.scck
        on, off = st.exec_known()
        exec_full_known = np.all(on | off, axis=1)
        if any(EXEC in (o.sgpr_range() or ()) for o in info.srcs):  # EXEC read as data
            waves_known &= exec_full_known
        if info.family == "salu":
            self._scalar_result(info, st, waves_known)
            return
        vreads = [r[1] for r in info.uses if r[0] == "v"]
        if info.encoding == "dpp" or _CROSS_LANE.match(ins.mnemonic):  # other lanes' values, whatever EXEC
            wave_ok = exec_full_known & np.all([st.vk[r].all(axis=1) for r in vreads] or [True], axis=0)
            ok = np.repeat(wave_ok[:, None], 64, axis=1)
        else:
            ok = np.all([st.usable(r) for r in vreads] or [np.ones((self.W, 64), bool)], axis=0)
        ok &= waves_known[:, None]
        for f, r in sorted(defs):
            if f == "v" and ins.mnemonic.startswith("v_writelane"):  # writes its lane whatever EXEC is
                new = m.v[r]
                st.vk[r] &= ok & (st.v[r] == new)
                st.ck[r] = st.vk[r]
                st.v[r] = new.copy()
            elif f == "v":
                new = m.v[r]
                st.vk[r] = np.where(on, ok, np.where(off, st.vk[r], st.vk[r] & ok & (st.v[r] == new)))
                st.ck[r] = ok | off
                st.ce[r] = st.epoch
                st.v[r] = new.copy()
            elif f == "s":  # compare results, readfirstlane, carry-outs: every active lane counts
                known = exec_full_known & np.all(ok | off, axis=1)
                st.s[:, r] = m.s[:, r]
                st.sk[:, r] = np.where(known, ALL, np.uint32(0))

    def _scalar_result(self, info, st: LaneState, waves_known: np.ndarray) -> None:
        m = self.machine
        exec_known = np.all(st.sk[:, EXEC:EXEC + 2] == ALL, axis=1)
        sdefs = sorted(r[1] for r in info.defs if r[0] == "s")
        logic = _logic(info.base, info.srcs, st)
        if logic is None:
            if any(r[1] in (EXEC, EXEC + 1) for r in info.uses if r[0] == "s"):
                waves_known = waves_known & exec_known
            for r in sdefs:
                st.s[:, r] = m.s[:, r]
                st.sk[:, r] = np.where(waves_known, ALL, np.uint32(0))
            if SCC in info.defs:
                st.scc[:], st.scck[:] = m.scc, waves_known
            return
        (val, known), new_exec, saves_old = logic
        wide = info.base.endswith("_b64")
        old_exec = (st.s[:, EXEC].copy(), st.sk[:, EXEC].copy(), st.s[:, EXEC + 1].copy(), st.sk[:, EXEC + 1].copy())
        dst = [r for r in sdefs if r not in (EXEC, EXEC + 1)] if new_exec is not None else sdefs
        if new_exec is not None:
            _put(st, EXEC, new_exec, True)
        if dst:
            if saves_old:
                st.s[:, dst[0]], st.sk[:, dst[0]], st.s[:, dst[-1]], st.sk[:, dst[-1]] = old_exec
            else:
                _put(st, dst[0], (val, known), wide)
        if SCC in info.defs:
            full = np.uint64(0xFFFFFFFFFFFFFFFF if wide else 0xFFFFFFFF)
            st.scc[:] = (val & known) != 0
            st.scck[:] = st.scc | (known == full)


def _put(st: LaneState, r: int, pair, wide: bool) -> None:
    val, known = pair
    st.s[:, r] = (val & np.uint64(ALL)).astype(np.uint32)
    st.sk[:, r] = (known & np.uint64(ALL)).astype(np.uint32)
    if wide:
        st.s[:, r + 1] = (val >> np.uint64(32)).astype(np.uint32)
        st.sk[:, r + 1] = (known >> np.uint64(32)).astype(np.uint32)


def _forget(st: LaneState, defs: frozenset[Reg]) -> None:
    for f, r in defs:
        if f == "v":
            st.vk[r] = st.ck[r] = False
        elif f == "s":
            st.sk[:, r] = 0
        elif f == "scc":
            st.scck[:] = False
