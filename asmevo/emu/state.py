"""Architectural state of a batch of waves, held as numpy arrays indexed by wave.

VGPRs/AGPRs are stored register-major, `[nregs, waves, 64]` uint32, so one register of a group of
waves is a contiguous block; SGPRs are `[waves, 128]` uint32 (the gfx9 SGPR-file numbering, so vcc is
106, m0 124, exec 126) with a uint64 view for register pairs.
"""
from __future__ import annotations

import numpy as np

from ..target import processor
from .float_mode import COMPUTE_DEFAULT, DX10_CLAMP, IEEE
from .memory import Memory
from .report import Finding

_GFX942 = processor("gfx942")
LANE_IDS = np.arange(_GFX942.wave_size, dtype=np.uint32)
VCC, M0, EXEC, FLAT_SCRATCH = (_GFX942.special_sgprs[r] for r in ("vcc", "m0", "exec", "flat_scratch"))
SHARED_APERTURE_HI = _GFX942.shared_aperture_hi  # high dword of the LDS (shared) aperture in flat addresses
PRIVATE_APERTURE_HI = _GFX942.private_aperture_hi  # high dword of the scratch (private) aperture
MAX_FINDINGS = 200


def unpack_lanes(masks: np.ndarray) -> np.ndarray:
    """uint64 lane masks [G] -> bool [G,64] (bit i is lane i)."""
    raw = np.ascontiguousarray(masks, np.uint64).view(np.uint8).reshape(-1, 8)
    return np.unpackbits(raw, axis=1, bitorder="little").view(bool)


class Group:
    """Waves executing in lockstep at one PC. `sel` indexes wave axes: a slice when the waves are
    contiguous (views, no copies) or an index array."""

    __slots__ = ("pc", "waves", "sel", "counts", "_ver", "_mask", "_full", "_lanes", "_lver", "_per_launch")

    def __init__(self, pc: int, waves: np.ndarray, counts: np.ndarray | None = None):
        self.pc = pc
        self.waves = waves
        self.counts = counts  # wide runs: waves of each launch in the group
        n = len(waves)
        if n and int(waves[-1]) - int(waves[0]) + 1 == n:
            self.sel = slice(int(waves[0]), int(waves[0]) + n)
        else:
            self.sel = waves
        self._ver = -1
        self._lver = -1

    def __len__(self) -> int:
        return len(self.waves)

    def exec_info(self, m: "Machine") -> tuple[np.ndarray, bool, int]:
        """(lane mask [G,64] bool, all lanes active, active lane count), cached per EXEC version."""
        if self._ver != m.exec_version:
            ex = m.s64[self.sel, EXEC // 2]
            self._full = bool((ex == np.uint64(0xFFFFFFFFFFFFFFFF)).all())
            self._mask = unpack_lanes(ex)
            self._lanes = len(self) * 64 if self._full else int(self._mask.sum())
            self._ver = m.exec_version
        return self._mask, self._full, self._lanes

    def launch_lanes(self, m: "Machine") -> np.ndarray:
        """Wide runs: active lanes of each launch in the group, cached per EXEC version."""
        if self._lver != m.exec_version:
            mask, full, _ = self.exec_info(m)
            self._per_launch = self.counts * 64 if full else np.bincount(
                m.launch_of_wave[self.waves], weights=mask.sum(axis=1), minlength=m.launches).astype(np.int64)
            self._lver = m.exec_version
        return self._per_launch


class Machine:
    """State of `nwaves` waves (whole workgroups) executing one kernel together."""

    def __init__(self, *, nwaves: int, nvgpr: int, nagpr: int, waves_per_group: int, lds_bytes: int,
                 scratch_bytes: int, memory: Memory, checked: bool, wave_ids: np.ndarray, entry: int,
                 faithful: bool = False, launch_of_wave: np.ndarray | None = None,
                 float_mode: int = COMPUTE_DEFAULT):
        self.W = nwaves
        # Wide runs (several launches of one kernel as one batch, `run_kernel_wide`): the launch of
        # each wave; None for a single launch.
        self.launch_of_wave = launch_of_wave
        self.launches = 1 if launch_of_wave is None else int(launch_of_wave.max()) + 1
        self.memory = memory
        self.checked = checked
        self.faithful = faithful  # f32 transcendentals faithfully, not correctly, rounded (valu.faithful)
        self.wave_ids = wave_ids  # the launch-wide number of each wave (workgroup id x waves per group + index)
        self.entry = entry
        self.v = np.zeros((max(nvgpr, 1), nwaves, 64), np.uint32)
        self.a = np.zeros((max(nagpr, 1), nwaves, 64), np.uint32)
        self.s = np.zeros((nwaves, 128), np.uint32)
        self.s64 = self.s.view(np.uint64)
        self.scc = np.zeros(nwaves, bool)
        self.exec_version = 0
        self.clock = 0
        # the MODE register; its float bits (float_mode.py) start as the kernel descriptor sets them, and only
        # the f32 denormal field may change (`mode_written` once it has)
        self.mode = np.full(nwaves, float_mode, np.uint32)
        self.float_mode = float_mode
        self.mode_written = False
        self.ieee = bool(float_mode & IEEE)
        self.dx10_clamp = bool(float_mode & DX10_CLAMP)
        self.wpg = waves_per_group
        self.nwg = nwaves // waves_per_group
        self.wg_of_wave = np.arange(nwaves) // waves_per_group
        self.lds_bytes = lds_bytes
        self.lds_stride = max(-(-lds_bytes // 16) * 16, 16)
        self.lds = np.zeros(self.nwg * self.lds_stride, np.uint8)
        self.lds_epoch = np.zeros(self.nwg, np.int32)
        self.lds_track: tuple[np.ndarray, ...] | None = None
        self.lds_dma: tuple[np.ndarray, np.ndarray] | None = None  # LDS DMA: per byte (vm seq, wave)
        self.scratch_bytes = scratch_bytes
        self._scratch: np.ndarray | None = None
        self._scratch_init: np.ndarray | None = None
        # waitcnt bookkeeping: per-wave issue/retire sequence numbers per counter class
        self.vm_issued = np.zeros(nwaves, np.int64)
        self.vm_retired = np.zeros(nwaves, np.int64)
        self.lds_issued = np.zeros(nwaves, np.int64)
        self.lds_retired = np.zeros(nwaves, np.int64)
        self.lds_last_store = np.zeros(nwaves, np.int64)
        self.smem_issued = np.zeros(nwaves, np.int64)
        self.smem_retired = np.zeros(nwaves, np.int64)
        self.pend: dict[tuple[str, int], tuple[np.ndarray, np.ndarray]] = {}
        if checked:
            self.v_init = np.zeros(self.v.shape, bool)
            self.a_init = np.zeros(self.a.shape, bool)
            self.s_init = np.zeros(self.s.shape, bool)
            self.lds_init = np.zeros(self.lds.shape, bool)  # LDS bytes written by this workgroup
            self.written: set[tuple[str, int]] = set()  # registers written in every lane of every wave
        self.findings: list[Finding] = []
        self.finding_launch: list[int] = []  # wide runs: the launch of each finding
        self.tainted: set[int] = set()  # wide runs: launches whose findings a run of their own may change
        self.current: Group | None = None  # wide runs: the group executing
        self._seen: set[tuple[int, str, int]] = set()
        self._count = np.zeros(self.launches, np.int64)
        self.trace = None  # an asmevo.emu.trace.LaunchTrace when the launch is traced

    # ---- findings -----------------------------------------------------------------------------
    def find(self, kind: str, pc: int, waves, message: str, *, each: bool = False) -> None:
        """Record a finding once per (kind, pc); `waves` are batch-local wave indices, the first
        of them is named. In a wide run, `each` records it for the launch of each of `waves` (the
        caller passes every offending wave, and the message does not depend on which); otherwise the
        launches of the executing group are tainted: which lane a message names, or whether a
        launch's own lanes were reported at all, could differ in a run of its own."""
        w = np.asarray(waves).ravel()
        if self.launch_of_wave is None:
            self._record(0, kind, pc, int(w[0]) if w.size else 0, message)
        elif each and w.size:
            launches, first = np.unique(self.launch_of_wave[w], return_index=True)
            for launch, i in zip(launches.tolist(), first.tolist()):
                self._record(launch, kind, pc, int(w[i]), message)
        else:
            g = self.current
            self.tainted.update(range(self.launches) if g is None else np.unique(self.launch_of_wave[g.waves]).tolist())

    def _record(self, launch: int, kind: str, pc: int, wave: int, message: str) -> None:
        key = (launch, kind, pc)
        if key in self._seen or self._count[launch] >= MAX_FINDINGS:
            return
        self._seen.add(key)
        self._count[launch] += 1
        self.findings.append(Finding(kind, pc, int(self.wave_ids[wave]), message))
        self.finding_launch.append(launch)

    def launches_of(self, g: Group, lanes: np.ndarray | None = None, *, full: bool = False) -> np.ndarray | None:
        """Wide runs: the launch of each wave of `g` ([G]), of each lane of `lanes` ([G,64] mask, in
        mask order), or of every lane (`full`); None for a single launch (what `Memory.locate` takes)."""
        if self.launch_of_wave is None:
            return None
        per_wave = self.launch_of_wave[g.waves]
        if full:
            return np.repeat(per_wave, 64)
        return per_wave if lanes is None else np.broadcast_to(per_wave[:, None], lanes.shape)[lanes]

    # ---- scratch --------------------------------------------------------------------------------
    @property
    def scratch(self) -> np.ndarray:
        """Private memory of every lane: [waves * 64 * scratch_bytes] bytes, lane-major."""
        if self._scratch is None:
            self._scratch = np.zeros(max(self.W * 64 * self.scratch_bytes, 4), np.uint8)
        return self._scratch

    @property
    def scratch_init(self) -> np.ndarray:
        """Checked mode: which bytes of `scratch` their lane has written."""
        if self._scratch_init is None:
            self._scratch_init = np.zeros(self.scratch.shape, bool)
        return self._scratch_init

    # ---- register writes under EXEC -------------------------------------------------------------
    def vwrite(self, g: Group, file: np.ndarray, r: int, val, extra: np.ndarray | None = None) -> None:
        """Write `val` ([G,64] or broadcastable) to register r of `file` for active lanes of g."""
        mask, full, _ = g.exec_info(self)
        if extra is not None:
            mask, full = mask & extra, False
        dst = file[r]
        if full:
            dst[g.sel] = val
        elif isinstance(g.sel, slice):
            np.copyto(dst[g.sel], val, where=mask, casting="unsafe")
        else:
            dst[g.sel] = np.where(mask, val, dst[g.sel])
        if self.checked:
            init = self.v_init if file is self.v else self.a_init
            if full:
                init[r][g.sel] = True
            else:
                init[r][g.sel] |= mask

    def swrite(self, g: Group, r: int, val) -> None:
        """Write a 32-bit SGPR for every wave of g."""
        self.s[g.sel, r] = val
        if r in (EXEC, EXEC + 1):
            self.exec_version += 1
        if self.checked:
            self.s_init[g.sel, r] = True

    def swrite64(self, g: Group, r: int, val) -> None:
        """Write an aligned SGPR pair (r even) for every wave of g."""
        self.s64[g.sel, r // 2] = val
        if r == EXEC:
            self.exec_version += 1
        if self.checked:
            self.s_init[g.sel, r:r + 2] = True
