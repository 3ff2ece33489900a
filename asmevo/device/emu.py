"""The emulator device: launches run on the strict CPU emulator (`asmevo.emu`)."""
from __future__ import annotations

import time

import numpy as np

from ..codeobj import Kernel, parsed
from ..emu import RunReport, run_kernel
from ..emu.memory import LAYOUTS, Memory
from ..emu.state import PRIVATE_APERTURE_HI, SHARED_APERTURE_HI
from .base import Buffer, Device, DeviceError, LaunchResult, Module
from .kernarg import Apertures, Geometry


class EmuDevice(Device):
    """One emulated device with its own memory. `budget` caps executed instructions per launch;
    `checked` turns on the emulator's extra strictness checks; `layout` is the memory layout
    (`asmevo.emu.memory.LAYOUTS`: packed, or crossing with buffers across 4 GiB boundaries);
    `faithful` gives half of the f32 transcendental results the other neighbour of the exact value
    (hardware rounds them only faithfully; `asmevo.emu.valu.faithful`)."""

    name = "emu"
    timing_unit = "model_us"  # the timing model's prediction (asmevo.model)
    sandboxed = True
    apertures = Apertures(PRIVATE_APERTURE_HI, SHARED_APERTURE_HI)
    supports_probes = True

    def __init__(self, *, budget: int = 50_000_000, checked: bool = False, layout: str = "packed",
                 faithful: bool = False):
        self.memory = Memory(layout=layout)
        self.budget = budget
        self.checked = checked
        self.layout = layout
        self.faithful = faithful
        self._live: dict[int, Buffer] = {}

    def _with(self, **changes) -> "EmuDevice":
        options = {"budget": self.budget, "checked": self.checked, "layout": self.layout, "faithful": self.faithful}
        return EmuDevice(**{**options, **changes})

    def verifying(self) -> "EmuDevice":
        """Checked mode: uninitialized register, LDS and private-memory reads are findings too."""
        return self if self.checked else self._with(checked=True)

    def for_input_set(self, n_set: int) -> tuple["EmuDevice", str]:
        """Even sets use the packed memory layout and odd sets the crossing one (every buffer
        straddles a 4 GiB boundary, with distinct high and low address bits); sets 2, 3, 6, 7, ...
        round f32 transcendentals faithfully instead of correctly, as hardware does (a deleted
        refinement step shows)."""
        layout, faithful = LAYOUTS[n_set % len(LAYOUTS)], n_set // 2 % 2 == 1
        dev = self if (self.layout, self.faithful) == (layout, faithful) else self._with(layout=layout, faithful=faithful)
        return dev, f", {layout} memory" + (", faithful transcendentals" if faithful else "")

    def bounded(self, instructions: int) -> "EmuDevice":
        return self._with(budget=instructions)

    def wide_key(self) -> tuple[bool, bool]:
        """Emulator settings a wide launch shares (layouts and budgets may differ per launch)."""
        return self.checked, self.faithful

    def copy(self) -> "EmuDevice":
        """The same settings with a memory of its own."""
        return self._with()

    def load(self, code_object: bytes) -> Module:
        return Module(parsed(code_object))

    def alloc(self, nbytes: int, name: str) -> Buffer:
        buf = Buffer(name, self.memory.alloc(nbytes, name), nbytes)
        self._live[buf.address] = buf
        return buf

    def free(self, buf: Buffer) -> None:
        """Forget the buffer; once none is live the memory is replaced by a fresh one (the
        emulator's Memory cannot free single buffers)."""
        self._check_live(buf)
        del self._live[buf.address]
        if not self._live:
            self.memory = Memory(layout=self.layout)

    def copy_in(self, buf: Buffer, array: np.ndarray) -> None:
        self._check_live(buf)
        self.memory.write(buf.address, self._host_bytes(buf, array).tobytes())

    def copy_out(self, buf: Buffer) -> bytes:
        self._check_live(buf)
        return self.memory.read(buf.address, buf.nbytes)

    def _check_live(self, buf: Buffer) -> None:
        if self._live.get(buf.address) != buf:
            raise DeviceError(f"buffer {buf.name} is not allocated on this emu device")

    def _launch(self, module: Module, kernel: Kernel, geometry: Geometry, kernarg: bytes) -> LaunchResult:
        earlier = set(self.memory.guard_violations())
        start = time.perf_counter()
        report = run_kernel(module.code_object, kernel.name, grid=geometry.grid, block=geometry.block,
                            dynamic_lds=geometry.dynamic_lds, kernarg=kernarg, memory=self.memory,
                            budget=self.budget, checked=self.checked, faithful=self.faithful)
        wall = time.perf_counter() - start
        findings, ok = launch_outcome(report, self.memory, earlier)
        return LaunchResult(kernel.name, geometry, ok, wall, findings, report)


def launch_outcome(report: RunReport, memory: Memory, earlier: set[str] = frozenset()) -> tuple[list[dict], bool]:
    """(a run's findings as dicts (kind, pc, wave, message), then the guard bands it overwrote
    (kind `guard`; violations in `earlier` were there before the launch); whether none occurred)."""
    findings = [{"kind": f.kind, "pc": f.pc, "wave": f.wave, "message": f.message} for f in report.findings]
    guards = [{"kind": "guard", "pc": None, "wave": None, "message": m}
              for m in memory.guard_violations() if m not in earlier]
    return findings + guards, bool(report.ok) and not guards
