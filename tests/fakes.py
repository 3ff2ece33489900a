"""A scripted Device for verdict tests: each code object's bytes map to a numpy behaviour."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from asmevo.codeobj import CodeObject
from asmevo.device import Buffer, Device, LaunchResult, Module

REPO = Path(__file__).resolve().parents[1]
RELU_CO = REPO / "benchmarks" / "kernelbench" / "19_ReLU" / "kernel.co"
RELU_SPEC = {"kernel": "relu_f32", "grid": [2], "block": [256], "seed": 1,
             "args": [{"buffer": "x", "dtype": "float32", "shape": [2048], "init": "random"},
                      {"buffer": "y", "dtype": "float32", "shape": [2048], "init": "zeros"},
                      {"scalar": 2048, "dtype": "int32"}]}


def variant(tag: int) -> CodeObject:
    """The ReLU code object with `tag` trailing bytes: a distinct identity, same ABI."""
    data = RELU_CO.read_bytes()
    return CodeObject(data + b"\0" * tag)


class ScriptedDevice(Device):
    """`behaviours[sha256(code)] = fn(buffers) -> list[finding dicts]`; fn may raise EmulationError."""

    name = "scripted"
    sandboxed = True  # a stand-in for the emulator: verification runs on it directly

    def __init__(self):
        self.behaviours = {}
        self.bufs: dict[int, tuple[Buffer, np.ndarray]] = {}
        self.next = 0x1000
        self.launches = 0

    def script(self, co: CodeObject, fn) -> None:
        self.behaviours[hashlib.sha256(co.data).hexdigest()] = fn

    def load(self, code_object: bytes) -> Module:
        return Module(CodeObject(code_object))

    def alloc(self, nbytes: int, name: str) -> Buffer:
        buf = Buffer(name, self.next, nbytes)
        self.next += nbytes + 4096
        self.bufs[buf.address] = (buf, np.zeros(nbytes, np.uint8))
        return buf

    def free(self, buf: Buffer) -> None:
        del self.bufs[buf.address]

    def copy_in(self, buf: Buffer, array: np.ndarray) -> None:
        self.bufs[buf.address][1][:] = np.frombuffer(np.ascontiguousarray(array).tobytes(), np.uint8)

    def copy_out(self, buf: Buffer) -> bytes:
        return self.bufs[buf.address][1].tobytes()

    def _launch(self, module, kernel, geometry, kernarg) -> LaunchResult:
        self.launches += 1
        named = {b.name: raw for b, raw in self.bufs.values()}
        views = {"x": named["x"].view(np.float32), "y": named["y"].view(np.float32)}
        fn = self.behaviours[hashlib.sha256(module.code_object.data).hexdigest()]
        findings = fn(views) or []
        return LaunchResult(kernel.name, geometry, not findings, 0.0, findings)


def relu(b):
    b["y"][:] = np.maximum(b["x"], np.float32(0))
