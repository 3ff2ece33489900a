"""The hardware device over hip-python (`pip install 'asmevo[hip]'` on a ROCm machine).

Importing this module never needs ROCm: hip-python is imported at the first device call, which
raises a one-line DeviceError when it or the HIP runtime is unavailable. Kernargs come packed by
the shared `kernarg` module and are passed whole through hipModuleLaunchKernel's `extra`
(HIP_LAUNCH_PARAM_BUFFER_POINTER); the HIP runtime rewrites the hidden arguments itself.
"""
from __future__ import annotations

import ctypes
import time
from typing import Any

import numpy as np

from ..codeobj import CodeObject, Kernel
from .base import Buffer, Device, DeviceError, LaunchResult, Module
from .kernarg import Geometry

HIP_LAUNCH_PARAM_BUFFER_POINTER = 0x01
HIP_LAUNCH_PARAM_BUFFER_SIZE = 0x02
HIP_LAUNCH_PARAM_END = 0x03
UNAVAILABLE = "hip device unavailable: {} (needs ROCm and hip-python: pip install 'asmevo[hip]')"


def _import_hip() -> Any:
    try:
        from hip import hip
    except Exception as exc:  # ImportError, or the loader failing to find libamdhip64
        raise DeviceError(UNAVAILABLE.format(f"cannot import hip-python ({type(exc).__name__}: {exc})")) from None
    return hip


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


class HipDevice(Device):
    """GPU `device_id` through the HIP runtime; launches go to the null stream."""

    name = "hip"
    timing_unit = "ms"

    def __init__(self, *, device_id: int = 0):
        self.device_id = device_id
        self._hip: Any = None
        self._arch = ""
        self._pointers: dict[int, Any] = {}

    @property
    def hip(self) -> Any:
        """hip-python's `hip` module, initialised for this device on first use."""
        if self._hip is None:
            hip = _import_hip()
            try:
                self._call(hip, hip.hipInit(0), "hipInit")
            except DeviceError as exc:
                raise DeviceError(UNAVAILABLE.format(exc)) from None
            self._call(hip, hip.hipSetDevice(self.device_id), "hipSetDevice")
            props = hip.hipDeviceProp_t()
            self._call(hip, hip.hipGetDeviceProperties(props, self.device_id), "hipGetDeviceProperties")
            arch = props.gcnArchName
            self._arch = (arch.decode() if isinstance(arch, bytes) else str(arch)).split(":")[0]
            self._hip = hip
        return self._hip

    @staticmethod
    def _call(hip: Any, result: tuple, what: str) -> Any:
        """Check a hip-python result tuple `(err, *values)`; return the value(s)."""
        err, values = result[0], result[1:]
        if err != hip.hipError_t.hipSuccess:
            raise DeviceError(f"{what} failed: {getattr(err, 'name', err)}")
        return values[0] if len(values) == 1 else values

    def _check(self, result: tuple, what: str) -> Any:
        return self._call(self.hip, result, what)

    def load(self, code_object: bytes) -> Module:
        hip = self.hip
        co = CodeObject(code_object)
        if co.target.processor != self._arch:
            raise DeviceError(f"code object targets {co.target.processor}, device {self.device_id} is {self._arch}")
        handle = self._check(hip.hipModuleLoadData(code_object), "hipModuleLoadData")
        return Module(co, handle)

    def _function(self, module: Module, kernel: str) -> Any:
        if kernel not in module.functions:
            module.functions[kernel] = self._check(
                self.hip.hipModuleGetFunction(module.handle, kernel.encode()), f"hipModuleGetFunction({kernel})")
        return module.functions[kernel]

    def alloc(self, nbytes: int, name: str) -> Buffer:
        ptr = self._check(self.hip.hipMalloc(max(nbytes, 1)), f"hipMalloc({nbytes}) for {name}")
        buf = Buffer(name, int(ptr), nbytes)
        self._pointers[buf.address] = ptr
        return buf

    def free(self, buf: Buffer) -> None:
        self._check(self.hip.hipFree(self._pointer(buf)), f"hipFree({buf.name})")
        del self._pointers[buf.address]

    def _pointer(self, buf: Buffer) -> Any:
        if buf.address not in self._pointers:
            raise DeviceError(f"buffer {buf.name} is not allocated on hip device {self.device_id}")
        return self._pointers[buf.address]

    def copy_in(self, buf: Buffer, array: np.ndarray) -> None:
        data = self._host_bytes(buf, array)
        hip = self.hip
        self._check(hip.hipMemcpy(self._pointer(buf), data, buf.nbytes, hip.hipMemcpyKind.hipMemcpyHostToDevice),
                    f"hipMemcpy to {buf.name}")

    def copy_out(self, buf: Buffer) -> bytes:
        out = bytearray(buf.nbytes)
        hip = self.hip
        self._check(hip.hipMemcpy(out, self._pointer(buf), buf.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost),
                    f"hipMemcpy from {buf.name}")
        return bytes(out)

    def _dispatch(self, function: Any, geometry: Geometry, kernarg: _KernargBuffer) -> None:
        self._check(self.hip.hipModuleLaunchKernel(function, *geometry.grid, *geometry.block, geometry.dynamic_lds,
                                                   None, None, kernarg.address), "hipModuleLaunchKernel")

    def _timed(self, function: Any, geometry: Geometry, kernarg: _KernargBuffer) -> float:
        """Milliseconds between events recorded around one dispatch on the null stream."""
        hip = self.hip
        start = self._check(hip.hipEventCreate(), "hipEventCreate")
        stop = self._check(hip.hipEventCreate(), "hipEventCreate")
        try:
            self._check(hip.hipEventRecord(start, None), "hipEventRecord")
            self._dispatch(function, geometry, kernarg)
            self._check(hip.hipEventRecord(stop, None), "hipEventRecord")
            self._check(hip.hipEventSynchronize(stop), "kernel execution")
            return float(self._check(hip.hipEventElapsedTime(start, stop), "hipEventElapsedTime"))
        finally:
            hip.hipEventDestroy(start)
            hip.hipEventDestroy(stop)

    def _launch(self, module: Module, kernel: Kernel, geometry: Geometry, kernarg: bytes) -> LaunchResult:
        function = self._function(module, kernel.name)
        start = time.perf_counter()
        try:
            elapsed = self._timed(function, geometry, _KernargBuffer(kernarg))
        except DeviceError as exc:
            return LaunchResult(kernel.name, geometry, False, time.perf_counter() - start,
                                [{"kind": "hip", "pc": None, "wave": None, "message": str(exc)}])
        return LaunchResult(kernel.name, geometry, True, time.perf_counter() - start, elapsed_ms=elapsed)
