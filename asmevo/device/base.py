"""The Device interface everything above the runtime uses: load a code object, manage buffers,
launch a kernel (kernargs packed here, once, for every device). Timing is `asmevo.timing`'s."""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..codeobj import CodeObject, Kernel
from ..errors import AsmEvoError
from .kernarg import Apertures, Geometry, check_geometry, make_geometry, pack_kernargs


# Every pointer a launch passes is the start of its own device allocation (or null), aligned to at
# least this many bytes: the emulator's packed layout aligns to 256, its crossing layout to at least
# `asmevo.emu.memory.CROSS_MIN` (16), and `launch.launch_args` refuses a buffer of any device that
# is not (so on hardware it is checked, not assumed). Rewrite operators rely on it
# (`asmevo.agent.align`): a wide access at a pointer argument plus a multiple of 16 is aligned.
BUFFER_ALIGNMENT = 16


class DeviceError(AsmEvoError):
    """A device is unavailable, or a device operation failed."""


@dataclass(frozen=True)
class Buffer:
    """A device allocation: `address` is what a pointer argument receives."""

    name: str
    address: int
    nbytes: int


@dataclass
class Module:
    """A code object loaded on a device; `handle` is the device's own (None on the emulator)."""

    code_object: CodeObject
    handle: Any = None
    functions: dict[str, Any] = field(default_factory=dict)

    def kernel(self, name: str) -> Kernel:
        return self.code_object.kernel(name)


@dataclass
class LaunchResult:
    """One launch. `findings` are dicts (kind, pc, wave, message); `ok` is False when a finding or a
    device error made the launch fail. `report` is the emulator's RunReport (None on hardware)."""

    kernel: str
    geometry: Geometry
    ok: bool
    wall_time_s: float
    findings: list[dict] = field(default_factory=list)
    report: Any = None


class Device(ABC):
    """A place to run kernels. Subclasses implement memory, loading and `_launch` (the dispatch of
    an already packed kernarg segment); validation and packing are shared here.

    `sandboxed` says whether the device contains whatever a kernel does (the emulator: a wild access
    is a finding). Code runs on a device that is not sandboxed (hardware) only after the emulator
    verified it, and only in an isolated child process (`asmevo.device.isolated`)."""

    name: str = "device"
    timing_unit: str = "ms"
    sandboxed: bool = False
    apertures: Apertures = Apertures()
    supports_probes: bool = False  # can run a few workgroups of a giant launch (`asmevo.device.probe`)

    def verifying(self) -> "Device":
        """The device verification runs on (the emulator adds its checked mode)."""
        return self

    def for_input_set(self, n_set: int) -> tuple["Device", str]:
        """The device input set `n_set` of a verification runs on, and what it varies (a label
        suffix); devices that place buffers and round results themselves vary nothing."""
        return self, ""

    def bounded(self, instructions: int) -> "Device":
        """This device with a cap on executed wave-instructions per launch, where it counts them."""
        return self

    def wide_key(self) -> object:
        """Launches of one code object and spec on devices with the same key (not None) can run as
        one wide emulated launch (`asmevo.device.launch.run_launches`); None: one launch at a time."""
        return None

    @abstractmethod
    def load(self, code_object: bytes) -> Module:
        """Load a code object's bytes."""

    def unload(self, module: Module) -> None:
        """Release a loaded module; using it afterwards is an error. Devices holding nothing per
        module need not override this."""

    @abstractmethod
    def alloc(self, nbytes: int, name: str) -> Buffer:
        """Allocate `nbytes` of device memory (contents unspecified until copied in)."""

    @abstractmethod
    def free(self, buf: Buffer) -> None:
        """Release a buffer; using it afterwards is an error."""

    @abstractmethod
    def copy_in(self, buf: Buffer, array: np.ndarray) -> None:
        """Copy a host array of exactly `buf.nbytes` bytes to the buffer."""

    @abstractmethod
    def copy_out(self, buf: Buffer) -> bytes:
        """The buffer's current contents."""

    def read(self, buf: Buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        """The buffer's contents as a new array of `dtype` and `shape` (exactly `buf.nbytes` bytes)."""
        return np.frombuffer(self.copy_out(buf), dtype=dtype).reshape(shape).copy()

    @abstractmethod
    def _launch(self, module: Module, kernel: Kernel, geometry: Geometry, kernarg: bytes) -> LaunchResult:
        """Run one dispatch with a packed kernarg segment and wait for it."""

    def prepare(self, module: Module, kernel: str, grid, block, dynamic_lds: int,
                args: list) -> tuple[Kernel, Geometry, bytes]:
        """Validate a launch against the kernel's metadata and pack its kernarg segment."""
        k = module.kernel(kernel)
        geometry = make_geometry(grid, block, dynamic_lds)
        check_geometry(k.metadata, geometry, module.code_object.target.processor)
        return k, geometry, pack_kernargs(k.metadata, list(args), geometry, self.apertures)

    def launch(self, module: Module, kernel: str, grid, block, dynamic_lds: int, args: list) -> LaunchResult:
        """Launch `kernel` with explicit `args` (Buffers for pointers, kernarg.Scalar for values)."""
        k, geometry, kernarg = self.prepare(module, kernel, grid, block, dynamic_lds, args)
        return self._launch(module, k, geometry, kernarg)

    @staticmethod
    def _host_bytes(buf: Buffer, array: np.ndarray) -> np.ndarray:
        data = np.ascontiguousarray(array)
        if data.nbytes != buf.nbytes:
            raise DeviceError(f"buffer {buf.name} holds {buf.nbytes} bytes, got an array of {data.nbytes}")
        return data


def run_then_release(body: Callable[[], object], cleanup: list[Callable[[], None]]) -> object:
    """`body()`, then every clean-up step in reverse order even when one fails. A clean-up failure is
    raised after all steps ran, unless `body` failed: its error is the one that propagates."""
    try:
        result = body()
    except BaseException:
        _release(cleanup, strict=False)
        raise
    _release(cleanup, strict=True)
    return result


def _release(cleanup: list[Callable[[], None]], *, strict: bool) -> None:
    first = None
    for step in reversed(cleanup):
        try:
            step()
        except AsmEvoError as exc:
            first = first or exc
    if first is not None and strict:
        raise first
