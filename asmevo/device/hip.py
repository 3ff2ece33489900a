"""The hardware device over hip-python (`pip install 'hip-python~=<your ROCm version>'` on a ROCm
machine; see docs/hardware.md).

Importing this module never needs ROCm. The device runs only inside an isolated child process
(`asmevo.device.isolated` sets ASMEVO_ISOLATED): a GPU memory fault makes ROCr abort the whole process
and a stuck kernel blocks it, so the callers (`asmevo.verify`, `asmevo.timing`, `asmevo.device.gpus`)
drive it from a child they can lose. hip-python is imported, and HIP initialised, at the first call;
a missing hip-python or HIP runtime, no GPU, or a hip-python built for another HIP version raise a
one-line DeviceError.

Every HIP call goes through `HIP_API`, which states the argument count and result shape the device
expects (the contract tests check it against each supported hip-python release). Launches go to the
device's own stream; kernargs come packed by the shared `kernarg` module and are passed whole through
hipModuleLaunchKernel's `extra` (HIP_LAUNCH_PARAM_BUFFER_POINTER), the HIP runtime rewriting the hidden
arguments itself. HIP's current device is per host thread, so every call first binds this device on
the calling thread.
"""
from __future__ import annotations

import ctypes
import inspect
import os
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..codeobj import CodeObject, Kernel
from ..target import TargetId
from ..errors import LaunchSpecError
from .base import Buffer, Device, DeviceError, LaunchResult, Module
from .isolated import ISOLATED_ENV
from .kernarg import Geometry, explicit_args

# hip-python's chip.pyx: HIP_LAUNCH_PARAM_BUFFER_POINTER = 1, BUFFER_SIZE = 2, END = 3.
HIP_LAUNCH_PARAM_BUFFER_POINTER = 0x01
HIP_LAUNCH_PARAM_BUFFER_SIZE = 0x02
HIP_LAUNCH_PARAM_END = 0x03
UNAVAILABLE = "hip device unavailable: {}"
INSTALL = "pip install 'hip-python~=X.Y.Z', X.Y.Z being your ROCm version; see docs/hardware.md"

# name -> (argument counts accepted, values returned after the hipError_t) for each HIP function the
# device calls; hipGetDeviceProperties is (prop, dev) -> (err,) up to hip-python 7.x and
# (dev) -> (err, prop) from 10.x.
HIP_API: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "hipInit": ((1,), (0,)),
    "hipGetDeviceCount": ((0,), (1,)),
    "hipSetDevice": ((1,), (0,)),
    "hipGetDeviceProperties": ((2, 1), (0, 1)),
    "hipDeviceGetPCIBusId": ((2,), (1,)),
    "hipRuntimeGetVersion": ((0,), (1,)),
    "hipDriverGetVersion": ((0,), (1,)),
    "hipModuleLoadData": ((1,), (1,)),
    "hipModuleGetFunction": ((2,), (1,)),
    "hipModuleUnload": ((1,), (0,)),
    "hipMalloc": ((1,), (1,)),
    "hipFree": ((1,), (0,)),
    "hipMemcpy": ((4,), (0,)),
    "hipMemsetAsync": ((4,), (0,)),
    "hipStreamCreate": ((0,), (1,)),
    "hipStreamDestroy": ((1,), (0,)),
    "hipStreamSynchronize": ((1,), (0,)),
    "hipEventCreate": ((0,), (1,)),
    "hipEventDestroy": ((1,), (0,)),
    "hipEventRecord": ((2,), (0,)),
    "hipEventSynchronize": ((1,), (0,)),
    "hipEventElapsedTime": ((2,), (1,)),
    "hipModuleLaunchKernel": ((11,), (0,)),
}
# Generic processors and the processors their code runs on (LLVM AMDGPUUsage, "Generic Processors").
GENERIC_TARGETS = {
    "gfx9-generic": frozenset({"gfx900", "gfx902", "gfx904", "gfx906", "gfx909", "gfx90c"}),
    "gfx9-4-generic": frozenset({"gfx940", "gfx941", "gfx942", "gfx950"}),
}


def _import_hip() -> Any:
    try:
        from hip import hip
    except Exception as exc:  # ImportError, or a broken install
        raise DeviceError(UNAVAILABLE.format(f"cannot import hip-python ({type(exc).__name__}: {exc}); {INSTALL}")) \
            from None
    return hip


def hip_python_versions() -> dict:
    """hip-python's own release and the HIP/ROCm release it was generated for (no HIP call)."""
    from importlib.metadata import PackageNotFoundError, version

    import hip as package
    try:
        release = version("hip-python")
    except PackageNotFoundError:
        release = getattr(package, "__version__", "unknown")
    hip_tuple = tuple(getattr(package, "HIP_VERSION_TUPLE", ())[:2])
    return {"hip_python": release, "built_for_rocm": getattr(package, "ROCM_VERSION_NAME", "unknown"),
            "built_for_hip": ".".join(map(str, hip_tuple)) or "unknown"}


def installed_rocm() -> str | None:
    """The ROCm release under $ROCM_PATH (default /opt/rocm), from its .info/version file."""
    info = Path(os.environ.get("ROCM_PATH", "/opt/rocm")) / ".info" / "version"
    try:
        return info.read_text().strip() or None
    except OSError:
        return None


def hip_version_name(encoded: int) -> str:
    """HIP_VERSION (major * 10^7 + minor * 10^5 + patch, hip_version.h) as `major.minor.patch`."""
    return f"{encoded // 10_000_000}.{encoded // 100_000 % 100}.{encoded % 100_000}"


def _text(value: Any) -> str:
    return (value.decode(errors="replace") if isinstance(value, bytes) else str(value)).rstrip("\0")


@dataclass(frozen=True)
class GpuProperties:
    """What the device needs to know about its GPU (from hipDeviceProp_t)."""

    index: int
    name: str
    arch: str  # gcnArchName with features, e.g. gfx942:sramecc+:xnack-
    pci_bus_id: str
    max_grid: tuple[int, int, int]
    memory_bytes: int
    compute_units: int
    clock_khz: int
    l2_bytes: int

    @property
    def processor(self) -> str:
        return self.arch.split(":")[0]

    @property
    def features(self) -> dict[str, str]:
        """Feature states from the target id: {"sramecc": "on"/"off", "xnack": ...}."""
        return {f[:-1]: "on" if f.endswith("+") else "off" for f in self.arch.split(":")[1:]}

    def to_json(self) -> dict:
        return asdict(self)


def target_fits(target: TargetId, gpu: GpuProperties) -> str | None:
    """Why a code object for `target` cannot load on `gpu` (None when it can): the processor (or a
    generic processor covering it) and every feature the code object pins on or off must match."""
    proc = gpu.processor
    if target.processor != proc and proc not in GENERIC_TARGETS.get(target.processor, ()):
        return f"code object targets {target.processor}, GPU {gpu.index} is {gpu.arch}"
    for feature in ("sramecc", "xnack"):
        wanted, have = getattr(target, feature), gpu.features.get(feature)
        if wanted in ("on", "off") and have is not None and wanted != have:
            return f"code object needs {feature}{'+' if wanted == 'on' else '-'}, GPU {gpu.index} is {gpu.arch}"
    return None


class _KernargBuffer:
    """A packed kernarg segment and the `extra` array pointing at it, kept alive together."""

    def __init__(self, kernarg: bytes):
        self.data = ctypes.create_string_buffer(kernarg, len(kernarg))
        self.size = ctypes.c_size_t(len(kernarg))
        self.extra = (ctypes.c_void_p * 5)(HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(self.data),
                                           HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(self.size),
                                           HIP_LAUNCH_PARAM_END)

    @property
    def address(self) -> int:
        return ctypes.addressof(self.extra)


class Dispatch:
    """One prepared launch (function, geometry, kernarg segment) that can be enqueued many times."""

    def __init__(self, device: "HipDevice", function: Any, kernel: Kernel, geometry: Geometry, kernarg: bytes):
        self.device = device
        # clr refuses an `extra` kernarg size != 0 for a kernel without explicit arguments
        # (hip_module.cpp: expectsArgs); HIP fills the hidden ones itself, so pass no `extra` then.
        self.packed = _KernargBuffer(kernarg) if explicit_args(kernel.metadata) else None
        self.args = (function, *geometry.grid, *geometry.block, geometry.dynamic_lds, device.stream, None,
                     self.packed.address if self.packed else None)

    def enqueue(self) -> None:
        """Enqueue the launch on the device's stream without waiting for it."""
        self.device.call("hipModuleLaunchKernel", *self.args)


class HipDevice(Device):
    """GPU `device_id` (HIP's numbering, after HIP_VISIBLE_DEVICES) through the HIP runtime, with its own
    stream. Outside an isolated child it only names a GPU for the library entry points to lease (None:
    the first free GPU of the pool, `asmevo.device.gpus`); there the first HIP call refuses."""

    name = "hip"
    timing_unit = "ms"

    def __init__(self, *, device_id: int | None = None):
        if device_id is not None and (not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0):
            raise DeviceError(f"hip device id must be a non-negative integer, got {device_id!r}")
        self.device_id = device_id
        self._hip: Any = None
        self._props: GpuProperties | None = None
        self._stream: Any = None
        self._bound = threading.local()
        self._pointers: dict[int, Any] = {}
        self._modules: set[int] = set()

    # -- HIP calls -------------------------------------------------------------------------------

    @property
    def hip(self) -> Any:
        """hip-python's `hip` module, initialised for this device on first use."""
        if self._hip is None:
            self._initialise()
        return self._hip

    def _initialise(self) -> None:
        if os.environ.get(ISOLATED_ENV) != "1" or self.device_id is None:
            raise DeviceError("the hip device runs kernels only in an isolated child process on a chosen GPU; use "
                              "asmevo.verify, asmevo.timing or asmevo.device.gpus, which start one")
        hip = _import_hip()
        try:
            result = hip.hipInit(0)
        except Exception as exc:  # hip-python dlopens libamdhip64.so here: RuntimeError when it is missing
            raise DeviceError(UNAVAILABLE.format(
                f"the HIP runtime cannot be loaded ({_text(exc).splitlines()[0]}); install ROCm, or put its lib "
                "directory (e.g. /opt/rocm/lib) on LD_LIBRARY_PATH")) from None
        if result[0] == hip.hipError_t.hipErrorNoDevice:
            raise DeviceError(UNAVAILABLE.format("no GPU is visible to HIP (hipInit: hipErrorNoDevice); check that "
                                                 "/dev/kfd and /dev/dri are accessible and HIP_VISIBLE_DEVICES"))
        self._hip = hip
        try:
            self._checked("hipInit", result)
        except DeviceError as exc:
            self._hip = None
            raise DeviceError(UNAVAILABLE.format(exc)) from None
        self._check_versions()
        count = self.call("hipGetDeviceCount")
        if self.device_id >= count:
            self._hip = None
            raise DeviceError(UNAVAILABLE.format(f"GPU {self.device_id} does not exist: HIP sees {count} GPU(s)"))
        self._props = self._properties(self.device_id)  # binds this thread to the GPU
        self._stream = self.call("hipStreamCreate")

    def _check_versions(self) -> None:
        runtime = self.call("hipRuntimeGetVersion")
        built = hip_python_versions()
        have = f"{runtime // 10_000_000}.{runtime // 100_000 % 100}"
        if built["built_for_hip"] != have:
            rocm = installed_rocm() or "<your ROCm version>"
            self._hip = None
            raise DeviceError(UNAVAILABLE.format(
                f"hip-python {built['hip_python']} is built for HIP {built['built_for_hip']} (ROCm "
                f"{built['built_for_rocm']}), the HIP runtime is {hip_version_name(runtime)}: "
                f"pip install 'hip-python~={rocm}'"))

    def _checked(self, name: str, result: Any) -> Any:
        """Check a hip-python result `(err, *values)` against HIP_API; return the value(s)."""
        counts = HIP_API[name][1]
        if not isinstance(result, tuple) or len(result) - 1 not in counts:
            raise DeviceError(f"{name} returned {type(result).__name__} {result!r:.80}, expected a tuple of "
                              f"hipError_t and {' or '.join(map(str, counts))} value(s): is hip-python supported?")
        err, values = result[0], result[1:]
        if err != self._hip.hipError_t.hipSuccess:
            raise DeviceError(f"{name} failed on GPU {self.device_id}: {getattr(err, 'name', err)}")
        return values[0] if len(values) == 1 else (values or None)

    def call(self, name: str, *args: Any) -> Any:
        """hip-python's `name(*args)`, checked: its value(s), or a one-line DeviceError."""
        hip = self.hip
        if name not in HIP_API:
            raise DeviceError(f"{name} is not in the hip device's HIP_API table")
        if name not in ("hipInit", "hipRuntimeGetVersion", "hipGetDeviceCount", "hipSetDevice") and \
                not getattr(self._bound, "ok", False):
            self._bind()
        try:
            result = getattr(hip, name)(*args)
        except Exception as exc:  # argument conversion (TypeError, OverflowError, ...) inside hip-python
            raise DeviceError(f"{name}: hip-python raised {type(exc).__name__}: {_text(exc).splitlines()[0]}") \
                from None
        return self._checked(name, result)

    def _bind(self) -> None:
        """Make this GPU the calling thread's current HIP device."""
        self.call("hipSetDevice", self.device_id)
        self._bound.ok = True

    def _properties(self, index: int) -> GpuProperties:
        hip = self.hip
        takes = len(inspect.signature(hip.hipGetDeviceProperties).parameters)
        if takes == 1:
            props = self.call("hipGetDeviceProperties", index)
        else:
            props = hip.hipDeviceProp_t()
            self.call("hipGetDeviceProperties", props, index)
        bus = self.call("hipDeviceGetPCIBusId", 64, index)
        return GpuProperties(index, _text(props.name), _text(props.gcnArchName), _text(bus),
                             tuple(int(v) for v in props.maxGridSize), int(props.totalGlobalMem),
                             int(props.multiProcessorCount), int(props.clockRate), int(props.l2CacheSize))

    @property
    def properties(self) -> GpuProperties:
        self.hip
        return self._props

    @property
    def stream(self) -> Any:
        self.hip
        return self._stream

    def describe(self) -> dict:
        """Runtime and GPU facts for provenance and `asmevo doctor`."""
        runtime, driver = self.call("hipRuntimeGetVersion"), self.call("hipDriverGetVersion")
        return {**hip_python_versions(), "hip_runtime": hip_version_name(runtime), "driver": driver,
                "rocm": installed_rocm(), "gpu": self.properties.to_json()}

    def gpus(self) -> list[GpuProperties]:
        """Every GPU HIP sees."""
        return [self._properties(i) for i in range(self.call("hipGetDeviceCount"))]

    def close(self) -> None:
        """Release the stream (modules and buffers are the caller's to release first)."""
        if self._stream is not None:
            stream, self._stream = self._stream, None
            self.call("hipStreamDestroy", stream)

    # -- Device interface ------------------------------------------------------------------------

    def load(self, code_object: bytes) -> Module:
        co = CodeObject(code_object)
        why = target_fits(co.target, self.properties)
        if why:
            raise DeviceError(why)
        handle = self.call("hipModuleLoadData", code_object)
        self._modules.add(id(handle))
        return Module(co, handle)

    def unload(self, module: Module) -> None:
        if id(module.handle) not in self._modules:
            raise DeviceError(f"module {module.code_object.path} is not loaded on GPU {self.device_id}")
        self._modules.discard(id(module.handle))
        module.functions.clear()
        self.call("hipModuleUnload", module.handle)

    def _function(self, module: Module, kernel: str) -> Any:
        if kernel not in module.functions:
            module.functions[kernel] = self.call("hipModuleGetFunction", module.handle, kernel.encode())
        return module.functions[kernel]

    def alloc(self, nbytes: int, name: str) -> Buffer:
        ptr = self.call("hipMalloc", max(nbytes, 1))
        buf = Buffer(name, int(ptr), nbytes)
        self._pointers[buf.address] = ptr
        return buf

    def free(self, buf: Buffer) -> None:
        ptr = self._pointer(buf)
        del self._pointers[buf.address]
        self.call("hipFree", ptr)

    def _pointer(self, buf: Buffer) -> Any:
        if buf.address not in self._pointers:
            raise DeviceError(f"buffer {buf.name} is not allocated on GPU {self.device_id}")
        return self._pointers[buf.address]

    def copy_in(self, buf: Buffer, array: np.ndarray) -> None:
        data = self._host_bytes(buf, array)
        self.call("hipMemcpy", self._pointer(buf), data, buf.nbytes, self.hip.hipMemcpyKind.hipMemcpyHostToDevice)

    def copy_out(self, buf: Buffer) -> bytes:
        return self.read(buf, np.dtype(np.uint8), (buf.nbytes,)).tobytes()

    def read(self, buf: Buffer, dtype: np.dtype, shape: tuple[int, ...]) -> np.ndarray:
        out = np.empty(shape, dtype)
        if out.nbytes != buf.nbytes:
            raise DeviceError(f"buffer {buf.name} holds {buf.nbytes} bytes, asked for {out.nbytes}")
        self.call("hipMemcpy", out, self._pointer(buf), buf.nbytes, self.hip.hipMemcpyKind.hipMemcpyDeviceToHost)
        return out

    def fill(self, buf: Buffer, value: int = 0) -> None:
        """Enqueue a device-side fill of the whole buffer on the stream (a ROCclr fill kernel)."""
        self.call("hipMemsetAsync", self._pointer(buf), value, buf.nbytes, self.stream)

    def event(self) -> Any:
        return self.call("hipEventCreate")

    def record(self, event: Any) -> None:
        self.call("hipEventRecord", event, self.stream)

    def elapsed_ms(self, start: Any, stop: Any) -> float:
        return float(self.call("hipEventElapsedTime", start, stop))

    def destroy(self, event: Any) -> None:
        self.call("hipEventDestroy", event)

    def synchronize(self) -> None:
        """Wait until everything enqueued on the stream has finished."""
        self.call("hipStreamSynchronize", self.stream)

    def prepare(self, module: Module, kernel: str, grid, block, dynamic_lds: int,
                args: list) -> tuple[Kernel, Geometry, bytes]:
        k, geometry, kernarg = super().prepare(module, kernel, grid, block, dynamic_lds, args)
        limit = self.properties.max_grid
        for axis, (g, most) in enumerate(zip(geometry.grid, limit)):
            if g > most:
                raise LaunchSpecError(f"grid {list(geometry.grid)} exceeds GPU {self.device_id}'s maxGridSize "
                                      f"{list(limit)} in dimension {'xyz'[axis]} (ROCm 6.x refuses y or z > 65536)")
        return k, geometry, kernarg

    def dispatch(self, module: Module, kernel: str, grid, block, dynamic_lds: int, args: list) -> Dispatch:
        """A validated, packed launch ready to be enqueued (for timing)."""
        k, geometry, kernarg = self.prepare(module, kernel, grid, block, dynamic_lds, args)
        return Dispatch(self, self._function(module, k.name), k, geometry, kernarg)

    def _launch(self, module: Module, kernel: Kernel, geometry: Geometry, kernarg: bytes) -> LaunchResult:
        start = time.perf_counter()
        try:
            Dispatch(self, self._function(module, kernel.name), kernel, geometry, kernarg).enqueue()
            self.synchronize()
        except DeviceError as exc:
            return LaunchResult(kernel.name, geometry, False, time.perf_counter() - start,
                                [{"kind": "hip", "pc": None, "wave": None, "message": str(exc)}])
        return LaunchResult(kernel.name, geometry, True, time.perf_counter() - start)
