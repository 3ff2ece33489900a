"""Launch specs (a public contract, JSON or YAML written by hand), input generation, and
`run_launch`, which runs a spec on any Device and reads every buffer back.

    {"kernel": "vadd", "grid": [16,1,1], "block": [256,1,1], "dynamic_lds": 0, "seed": 0,
     "args": [{"buffer": "a", "dtype": "float32", "shape": [4096], "init": "random"},
              {"buffer": "c", "dtype": "float32", "shape": [4096], "init": "zeros"},
              {"scalar": 4096, "dtype": "int32"}]}

`grid` counts workgroups (HIP convention), `block` work-items; both take 1-3 entries. `args`
follow the kernel's metadata order (hidden arguments excluded). A buffer name used again as
`{"buffer": "a"}` passes the same buffer (aliasing). `init`: `random` (uniform [-1, 1) for
floats, [-8, 8] for signed and [0, 16) for unsigned ints, 0/1 for bool), `normal` (standard
normal, floats), `zeros`, `ones`, `arange` (0, 1, 2, ... converted to the dtype; ints wrap),
or `file:PATH.npy` (relative to the spec file; its dtype must be the storage dtype). Random
inputs are seeded from (`seed`, buffer name). A scalar is a number, a list (an array or vector
by value) or, with a list of dtypes, a C struct.

`"probe": {"workgroups": N}` marks a launch too large for host memory (giant grids, index arithmetic
near 2^31): verification on the emulator then runs only N chosen workgroups on sparse memory whose
pages are generated when first touched (`asmevo.device.probe`); hardware runs the whole launch.

A `struct` arg lays out a packed host struct by explicit byte offsets, pointer fields naming buffers:

    {"struct": [{"offset": 0, "buffer": "T", "dtype": "int32", "shape": [64, 8], "init": "zeros"},
                {"offset": 48, "scalar": 64, "dtype": "uint32", "name": "batch"}], "size": 128}

Unlisted bytes (padding) are zero. It fills one `by_value` argument of exactly `size` bytes or, as a
spec's only arg, the kernel's whole explicit kernarg area (`KernargImage`: AITer-style kernels whose
host passes one packed `KernelArgs` buffer); there, each metadata pointer must be a buffer field at its
offset, or an 8-byte scalar (`{"scalar": 0, "dtype": "uint64"}` for a null pointer).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import yaml

from ..codeobj import CodeObject, Kernel
from ..errors import AsmEvoError, LaunchSpecError
from .base import BUFFER_ALIGNMENT, Buffer, Device, DeviceError, LaunchResult, Module, run_then_release
from .dtypes import DType, encode_scalar, get_dtype
from .kernarg import (Geometry, KernargImage, Scalar, check_geometry, check_image, explicit_args,
                      make_geometry)

INITS = ("random", "normal", "zeros", "ones", "arange")
CHUNK = 1024  # elements per independently seeded piece of a lazily generated buffer
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
RESERVED_NAMES = {"report"}


@dataclass(frozen=True)
class BufferArg:
    """A device buffer: `init` is one of INITS or an absolute .npy path."""

    name: str
    dtype: DType
    shape: tuple[int, ...]
    init: str

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


@dataclass(frozen=True)
class ScalarArg:
    """A by-value argument as written in the spec, and its encoded bytes."""

    value: object
    dtype: object
    data: bytes

    @property
    def label(self) -> str:
        return f"scalar {self.value!r} ({self.dtype if isinstance(self.dtype, str) else 'struct'}, {len(self.data)} bytes)"


@dataclass(frozen=True)
class StructField:
    """One field of a struct arg: a pointer to `buffer` (8 bytes) or an encoded scalar."""

    offset: int
    data: bytes = b""
    buffer: BufferArg | None = None
    value: object = None
    name: str | None = None

    @property
    def size(self) -> int:
        return 8 if self.buffer is not None else len(self.data)


@dataclass(frozen=True)
class StructArg:
    """A packed by-value struct of `size` bytes; fields at explicit offsets, zero padding."""

    size: int
    fields: tuple[StructField, ...]

    @property
    def label(self) -> str:
        return f"struct ({self.size} bytes, {len(self.fields)} fields)"

    @property
    def scalar_values(self) -> dict[str, object]:
        """Named scalar fields' values (what a reference sees for this arg)."""
        return {f.name: f.value for f in self.fields if f.buffer is None and f.name}

    def encode(self, addresses: dict[str, int]) -> bytes:
        """The struct's bytes with each pointer field set to its buffer's address."""
        out = bytearray(self.size)
        for f in self.fields:
            data = addresses[f.buffer.name].to_bytes(8, "little") if f.buffer is not None else f.data
            out[f.offset:f.offset + len(data)] = data
        return bytes(out)

    def is_image_for(self, explicit: list[dict]) -> bool:
        """Whether this struct stands for the whole explicit kernarg area rather than one by-value arg."""
        return not (len(explicit) == 1 and explicit[0][".value_kind"] == "by_value"
                    and explicit[0][".size"] == self.size)


@dataclass(frozen=True)
class LaunchSpec:
    """A parsed, self-consistent launch spec (not yet checked against a kernel: see `check`)."""

    kernel: str
    geometry: Geometry
    seed: int
    args: tuple[BufferArg | ScalarArg | StructArg, ...]
    base_dir: Path
    probe: int = 0  # workgroups a probe launch runs on the emulator (0: not a probe)

    @property
    def grid(self) -> tuple[int, int, int]:
        return self.geometry.grid

    @property
    def block(self) -> tuple[int, int, int]:
        return self.geometry.block

    @property
    def dynamic_lds(self) -> int:
        return self.geometry.dynamic_lds

    @property
    def buffers(self) -> dict[str, BufferArg]:
        """Distinct buffers by name, in order of first use (struct pointer fields included)."""
        out: dict[str, BufferArg] = {}
        for a in self.args:
            if isinstance(a, BufferArg):
                out.setdefault(a.name, a)
            elif isinstance(a, StructArg):
                for f in a.fields:
                    if f.buffer is not None:
                        out.setdefault(f.buffer.name, f.buffer)
        return out

    @classmethod
    def load(cls, path: str | Path) -> "LaunchSpec":
        """Read a .json, .yaml or .yml spec; errors name the file."""
        p = Path(path)
        try:
            text = p.read_text()
        except FileNotFoundError:
            raise LaunchSpecError(f"launch spec {p}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise LaunchSpecError(f"launch spec {p}: cannot read ({exc})") from None
        is_yaml = p.suffix in (".yaml", ".yml")
        try:
            data = yaml.safe_load(text) if is_yaml else json.loads(text)
        except (yaml.YAMLError, json.JSONDecodeError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise LaunchSpecError(f"launch spec {p}: not valid {'YAML' if is_yaml else 'JSON'} ({first})") from None
        try:
            return cls.from_dict(data, p.resolve().parent)
        except LaunchSpecError as exc:
            raise LaunchSpecError(f"launch spec {p}: {exc}") from None

    @classmethod
    def from_dict(cls, d: object, base_dir: str | Path = ".") -> "LaunchSpec":
        """Parse a spec mapping; `file:` paths are resolved against `base_dir` and must exist."""
        if not isinstance(d, dict):
            raise LaunchSpecError("a launch spec must be a mapping with kernel, grid, block and args")
        # "tolerance" is the K0-vs-K1 comparison policy; asmevo.verify reads it, launches ignore it.
        _keys(d, {"kernel", "grid", "block", "args"}, {"dynamic_lds", "seed", "tolerance", "probe"}, "spec")
        if not isinstance(d["kernel"], str) or not d["kernel"]:
            raise LaunchSpecError(f"kernel must be a kernel name, got {d['kernel']!r}")
        seed = d.get("seed", 0)
        if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
            raise LaunchSpecError(f"seed must be a non-negative integer, got {seed!r}")
        geometry = make_geometry(d["grid"], d["block"], d.get("dynamic_lds", 0))
        if not isinstance(d["args"], list):
            raise LaunchSpecError("args must be a list")
        base = Path(base_dir)
        args: list[BufferArg | ScalarArg | StructArg] = []
        seen: dict[str, BufferArg] = {}
        for i, raw in enumerate(d["args"]):
            try:
                arg = _parse_struct(raw, base, seen) if isinstance(raw, dict) and "struct" in raw else \
                    _parse_arg(raw, base, seen)
            except LaunchSpecError as exc:
                raise LaunchSpecError(f"args[{i}]: {exc}") from None
            if isinstance(arg, BufferArg):
                seen[arg.name] = arg
            args.append(arg)
        return cls(d["kernel"], geometry, seed, tuple(args), base, _parse_probe(d.get("probe")))

    def check(self, kernel: Kernel, processor: str = "gfx942") -> None:
        """Reject the spec if it disagrees with the kernel's metadata (or the LDS `processor` offers), with
        the reason."""
        meta = kernel.metadata
        explicit = explicit_args(meta)
        if self.is_image(explicit):
            _check_image(kernel, self.args[0], explicit)
            check_geometry(meta, self.geometry, processor)
            return
        if len(explicit) != len(self.args):
            raise LaunchSpecError(f"kernel {kernel.name} takes {len(explicit)} arguments "
                                  f"({', '.join(_kind(a) for a in explicit)}), spec gives {len(self.args)}")
        for i, (m, a) in enumerate(zip(explicit, self.args)):
            kind, size, where = m[".value_kind"], m[".size"], f"args[{i}]"
            if kind == "global_buffer" and isinstance(a, ScalarArg):
                raise LaunchSpecError(f"{where}: kernel {kernel.name} expects a pointer here, spec gives {a.label}")
            if kind == "global_buffer" and isinstance(a, StructArg):
                raise LaunchSpecError(f"{where}: kernel {kernel.name} expects a pointer here, spec gives {a.label}")
            if kind == "by_value" and isinstance(a, StructArg):
                if a.size != size:
                    raise LaunchSpecError(f"{where}: kernel {kernel.name} expects a {size}-byte value, "
                                          f"spec gives {a.label}")
                continue
            if kind == "by_value" and isinstance(a, BufferArg):
                raise LaunchSpecError(f"{where}: kernel {kernel.name} expects a {size}-byte value here, "
                                      f"spec gives buffer {a.name!r}")
            if kind == "by_value" and len(a.data) != size:
                raise LaunchSpecError(f"{where}: kernel {kernel.name} expects a {size}-byte value, spec gives {a.label}")
            if kind not in ("global_buffer", "by_value"):
                raise LaunchSpecError(f"{where}: kernel argument kind {kind} is not supported by launch specs")
        check_geometry(meta, self.geometry, processor)


    def is_image(self, explicit: list[dict]) -> bool:
        """True when the spec's only arg is a struct standing for the whole explicit kernarg area."""
        return len(self.args) == 1 and isinstance(self.args[0], StructArg) and self.args[0].is_image_for(explicit)


def _check_image(kernel: Kernel, struct: StructArg, explicit: list[dict]) -> None:
    check_image(kernel.metadata, struct.size)
    pointers = {f.offset for f in struct.fields if f.size == 8}
    for arg in explicit:
        if arg[".value_kind"] == "global_buffer" and arg[".offset"] not in pointers:
            raise LaunchSpecError(f"kernel {kernel.name} has pointer {arg.get('.name', '?')} at kernarg offset "
                                  f"{arg['.offset']}, the struct has no buffer (or 8-byte null) field there")


def _kind(arg: dict) -> str:
    return "pointer" if arg[".value_kind"] == "global_buffer" else f"{arg['.size']}-byte {arg['.value_kind']}"


def _keys(d: dict, required: set[str], optional: set[str], what: str) -> None:
    missing = sorted(required - d.keys())
    if missing:
        raise LaunchSpecError(f"{what} is missing {', '.join(missing)}")
    unknown = sorted(set(d) - required - optional)
    if unknown:
        raise LaunchSpecError(f"{what} has unknown key(s) {', '.join(map(str, unknown))}")


def _parse_probe(raw: object) -> int:
    if raw is None:
        return 0
    if not isinstance(raw, dict):
        raise LaunchSpecError(f'probe must be a mapping like {{"workgroups": 32}}, got {raw!r}')
    _keys(raw, {"workgroups"}, set(), "probe")
    n = raw["workgroups"]
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise LaunchSpecError(f"probe workgroups must be a positive integer, got {n!r}")
    return n


def _parse_arg(raw: object, base: Path, seen: dict[str, BufferArg]) -> BufferArg | ScalarArg:
    if not isinstance(raw, dict) or ("buffer" in raw) == ("scalar" in raw):
        raise LaunchSpecError('each arg is a mapping with either "buffer" or "scalar"')
    if "scalar" in raw:
        _keys(raw, {"scalar", "dtype"}, set(), "scalar arg")
        return ScalarArg(raw["scalar"], raw["dtype"], encode_scalar(raw["scalar"], raw["dtype"]))
    name = raw["buffer"]
    if not isinstance(name, str) or not NAME_RE.match(name) or name in RESERVED_NAMES:
        raise LaunchSpecError(f"buffer name {name!r} must match {NAME_RE.pattern} and not be 'report'")
    if name in seen and set(raw) == {"buffer"}:
        return seen[name]
    _keys(raw, {"buffer", "dtype", "shape", "init"}, set(), f"buffer {name!r}")
    dtype = get_dtype(raw["dtype"])
    shape = raw["shape"]
    if not isinstance(shape, list) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
        raise LaunchSpecError(f"buffer {name!r}: shape must be a list of non-negative integers, got {shape!r}")
    arg = BufferArg(name, dtype, tuple(shape), _parse_init(raw["init"], dtype, base))
    if name in seen and seen[name] != arg:
        raise LaunchSpecError(f"buffer {name!r} is redefined differently (reuse it as {{\"buffer\": \"{name}\"}})")
    return arg


def _parse_struct(raw: dict, base: Path, seen: dict[str, BufferArg]) -> StructArg:
    _keys(raw, {"struct", "size"}, set(), "struct arg")
    size = raw["size"]
    if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
        raise LaunchSpecError(f"struct size must be a positive integer, got {size!r}")
    if not isinstance(raw["struct"], list) or not raw["struct"]:
        raise LaunchSpecError("struct must be a non-empty list of fields")
    fields: list[StructField] = []
    for i, f in enumerate(raw["struct"]):
        where = f"struct field {i}"
        if not isinstance(f, dict) or not isinstance(f.get("offset"), int) or isinstance(f["offset"], bool) \
                or f["offset"] < 0:
            raise LaunchSpecError(f"{where} needs a non-negative integer offset")
        rest = {k: v for k, v in f.items() if k != "offset"}
        if "buffer" in rest:
            buffer = _parse_arg(rest, base, seen)
            seen[buffer.name] = buffer
            field = StructField(f["offset"], buffer=buffer)
        else:
            _keys(rest, {"scalar", "dtype"}, {"name"}, where)
            if "name" in rest and not (isinstance(rest["name"], str) and NAME_RE.match(rest["name"])):
                raise LaunchSpecError(f"{where}: name {rest['name']!r} must match {NAME_RE.pattern}")
            field = StructField(f["offset"], encode_scalar(rest["scalar"], rest["dtype"]), value=rest["scalar"],
                                name=rest.get("name"))
        if field.offset + field.size > size:
            raise LaunchSpecError(f"{where} (offset {field.offset}, {field.size} bytes) runs past the "
                                  f"{size}-byte struct")
        for other in fields:
            if field.offset < other.offset + other.size and other.offset < field.offset + field.size:
                raise LaunchSpecError(f"{where} at offset {field.offset} overlaps the field at offset {other.offset}")
        fields.append(field)
    return StructArg(size, tuple(fields))


def _parse_init(init: object, dtype: DType, base: Path) -> str:
    if isinstance(init, str) and init.startswith("file:"):
        path = (base / init[5:]).resolve()
        if not path.is_file():
            raise LaunchSpecError(f"init {init!r}: no such file {path}")
        return str(path)
    if init not in INITS:
        raise LaunchSpecError(f"unknown init {init!r} (valid: {', '.join(INITS)}, file:PATH.npy)")
    if init == "normal" and dtype.kind != "float":
        raise LaunchSpecError(f"init 'normal' needs a float dtype, not {dtype.name}")
    return init


def _rng(seed: int, name: str) -> np.random.Generator:
    salt = int.from_bytes(hashlib.blake2b(name.encode(), digest_size=8).digest(), "little")
    return np.random.default_rng(np.random.SeedSequence([seed, salt]))


def _values(buf: BufferArg, rng: np.random.Generator, first: int, n: int) -> np.ndarray:
    """Elements [first, first + n) of a generated (not file) init, in storage dtype; random inits
    draw from `rng`."""
    t = buf.dtype
    if buf.init == "zeros":
        return t.encode(np.zeros(n))
    if buf.init == "ones":
        return t.encode(np.ones(n))
    if buf.init == "arange":
        return t.encode(np.arange(first, first + n))
    if t.kind == "float":
        return t.encode(rng.standard_normal(n) if buf.init == "normal" else rng.uniform(-1.0, 1.0, n))
    if t.kind == "int":
        return t.encode(rng.integers(-8, 8, n, endpoint=True))
    if t.kind == "uint":
        return t.encode(rng.integers(0, 16, n))
    return t.encode(rng.integers(0, 2, n))


def _generate(buf: BufferArg, seed: int) -> np.ndarray:
    if buf.init not in INITS:
        return _from_file(buf)
    return _values(buf, _rng(seed, buf.name), 0, int(np.prod(buf.shape, dtype=np.int64))).reshape(buf.shape)


def lazy_fill(buf: BufferArg, seed: int) -> Callable[[int, int], np.ndarray]:
    """`fill(lo, hi)` -> the uint8 bytes [lo, hi) of the buffer's initial contents, generated on
    demand for sparse memory: random inits are drawn per CHUNK elements, each piece seeded from
    (`seed`, buffer name, piece), so any piece is reproducible alone (the values differ from
    `make_inputs`'s; the distribution is the same). File inits are memory-mapped."""
    if buf.init not in INITS:
        data = _from_file(buf, mmap=True).reshape(-1).view(np.uint8)
        return lambda lo, hi: data[lo:hi]
    step = CHUNK * buf.dtype.itemsize

    def fill(lo: int, hi: int) -> np.ndarray:
        first, last = lo // step, (hi - 1) // step
        pieces = [_values(buf, _rng(seed, f"{buf.name}#{c}"), c * CHUNK, CHUNK) for c in range(first, last + 1)]
        return np.concatenate(pieces).view(np.uint8)[lo - first * step:hi - first * step]
    return fill


def _from_file(buf: BufferArg, mmap: bool = False) -> np.ndarray:
    try:
        arr = np.load(buf.init, allow_pickle=False, mmap_mode="r" if mmap else None)
    except (OSError, ValueError) as exc:
        raise LaunchSpecError(f"buffer {buf.name!r}: cannot load {buf.init} ({exc})") from None
    _check_array(buf, arr, f"file {buf.init}")
    return arr


def _check_array(buf: BufferArg, arr: object, what: str) -> None:
    if not isinstance(arr, np.ndarray) or arr.dtype != buf.dtype.storage or arr.shape != buf.shape:
        got = f"{arr.dtype}{list(arr.shape)}" if isinstance(arr, np.ndarray) else type(arr).__name__
        raise LaunchSpecError(f"buffer {buf.name!r}: {what} is {got}, expected "
                              f"{buf.dtype.storage}{list(buf.shape)} ({buf.dtype.name})")


def max_launch_bytes() -> int:
    """The largest total buffer size a launch may have on this host: `ASMEVO_MAX_LAUNCH_BYTES`, else an
    eighth of physical memory (inputs, device copies, outputs and K0's reference copies all coexist)."""
    raw = os.environ.get("ASMEVO_MAX_LAUNCH_BYTES")
    if raw is None:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 8
    try:
        return int(raw)
    except ValueError:
        raise LaunchSpecError(f"ASMEVO_MAX_LAUNCH_BYTES must be a byte count, got {raw!r}") from None


def check_launch_size(spec: LaunchSpec) -> None:
    """Refuse a launch whose buffers would not fit in host memory, before allocating anything."""
    total, limit = sum(b.nbytes for b in spec.buffers.values()), max_launch_bytes()
    if total > limit and spec.probe:
        raise LaunchSpecError(f"launch of {spec.kernel} is a probe ({total / 2**30:.2f} GiB of buffers, more than "
                              f"the {limit / 2**30:.2f} GiB this host allows): only the emulator's verification runs "
                              f"it, as {spec.probe} workgroups on sparse memory")
    if total > limit:
        raise LaunchSpecError(f"launch of {spec.kernel} needs {total / 2**30:.2f} GiB of buffers, more than the "
                              f"{limit / 2**30:.2f} GiB allowed on this host: use a smaller shape (suite 'bench' "
                              f"shapes are for GPUs) or raise ASMEVO_MAX_LAUNCH_BYTES")


def make_inputs(spec: LaunchSpec, overrides: dict[str, np.ndarray] | None = None, *,
                seed: int | None = None) -> dict[str, np.ndarray]:
    """Every buffer's initial contents (storage dtype, spec shape), deterministic for a seed.
    `seed` replaces the spec's seed (e.g. one per verification trial); `overrides` replace buffers."""
    check_launch_size(spec)
    overrides = overrides or {}
    buffers = spec.buffers
    unknown = sorted(set(overrides) - set(buffers))
    if unknown:
        raise LaunchSpecError(f"overrides name unknown buffer(s) {', '.join(unknown)}")
    out = {}
    for name, buf in buffers.items():
        if name in overrides:
            _check_array(buf, overrides[name], "override")
            out[name] = np.array(overrides[name], copy=True)
        else:
            out[name] = _generate(buf, spec.seed if seed is None else seed)
    return out


def launch_args(spec: LaunchSpec, kernel: Kernel, buffers: dict) -> list:
    """The explicit args `Device.launch` takes for `spec`, given its allocated `buffers` by name (objects
    with `.address`): buffers, `Scalar`s (structs encoded with the buffers' addresses), or one
    `KernargImage` when a lone struct stands for the whole explicit kernarg area. Every buffer must be
    aligned to `BUFFER_ALIGNMENT` (rewrite operators rely on it), else DeviceError."""
    addresses = {name: buf.address for name, buf in buffers.items()}
    misaligned = sorted(name for name, address in addresses.items() if address % BUFFER_ALIGNMENT)
    if misaligned:
        raise DeviceError(f"buffer {misaligned[0]} at 0x{addresses[misaligned[0]]:x} is not aligned to "
                          f"{BUFFER_ALIGNMENT} bytes")
    if spec.is_image(explicit_args(kernel.metadata)):
        return [KernargImage(spec.args[0].encode(addresses), spec.args[0].label)]
    return [buffers[a.name] if isinstance(a, BufferArg) else
            Scalar(a.encode(addresses), a.label) if isinstance(a, StructArg) else
            Scalar(a.data, a.label) for a in spec.args]


def run_launch(device: Device, code_object: str | Path | bytes, spec: LaunchSpec,
               inputs: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], LaunchResult]:
    """Allocate and fill every buffer, launch, and read every buffer back; the module is unloaded and
    the buffers freed afterwards, even when a step fails. After a failed launch on a device that is not
    sandboxed (hardware) nothing is read back: the outputs are empty."""
    data = code_object if isinstance(code_object, bytes) else CodeObject.from_path(code_object).data
    module = device.load(data)
    cleanup = [lambda: device.unload(module)]

    def body() -> tuple[dict[str, np.ndarray], LaunchResult]:
        allocated = _fill(device, module, spec, inputs, cleanup)
        args = launch_args(spec, module.kernel(spec.kernel), allocated)
        result = device.launch(module, spec.kernel, spec.grid, spec.block, spec.dynamic_lds, args)
        if not result.ok and not device.sandboxed:
            return {}, result
        return {name: device.read(allocated[name], buf.dtype.storage, buf.shape)
                for name, buf in spec.buffers.items()}, result

    return run_then_release(body, cleanup)


def run_launches(devices: list[Device], code_object: bytes, spec: LaunchSpec,
                 inputs: list[dict[str, np.ndarray]]) -> list[tuple[dict[str, np.ndarray], LaunchResult] | AsmEvoError]:
    """`run_launch(devices[i], code_object, spec, inputs[i])` for every i, with the error a launch
    raises returned in its place. Launches on emulator devices with the same settings (`wide_key`)
    run as one wide emulated launch (`asmevo.emu.run_kernel_wide`): the same outcomes, one pass of
    the emulator over all of them."""
    from ..emu import WideLaunch, run_kernel_wide
    from .emu import launch_outcome

    out: list = [None] * len(devices)
    keys = {d.wide_key() for d in devices}
    if len(devices) < 2 or len(keys) != 1 or None in keys:
        for i, (device, given) in enumerate(zip(devices, inputs)):
            try:
                out[i] = run_launch(device, code_object, spec, given)
            except AsmEvoError as exc:
                out[i] = exc
        return out
    seen: set[int] = set()
    devices = [d.copy() if id(d) in seen or seen.add(id(d)) else d for d in devices]  # one memory per launch
    cleanup: list[Callable[[], None]] = []
    ready: list[tuple[int, Module, Kernel, Geometry, bytes, dict[str, Buffer], set[str]]] = []

    def body() -> None:
        for i, (device, given) in enumerate(zip(devices, inputs)):
            module = device.load(code_object)
            cleanup.append(lambda d=device, mod=module: d.unload(mod))
            try:
                kernel, geometry, kernarg, allocated = _prepare(device, module, spec, given, cleanup)
            except AsmEvoError as exc:
                out[i] = exc
                continue
            ready.append((i, module, kernel, geometry, kernarg, allocated, set(device.memory.guard_violations())))
        if not ready:
            return
        first, geometry = devices[ready[0][0]], ready[0][3]
        start = time.perf_counter()
        try:
            reports = run_kernel_wide(ready[0][1].code_object, ready[0][2].name,
                                      [WideLaunch(kernarg, devices[i].memory, devices[i].budget)
                                       for i, _, _, _, kernarg, _, _ in ready],
                                      grid=geometry.grid, block=geometry.block, dynamic_lds=geometry.dynamic_lds,
                                      checked=first.checked, faithful=first.faithful)
        except AsmEvoError as exc:  # the launch itself is refused: each of them would raise it
            reports = [exc] * len(ready)
        wall = time.perf_counter() - start
        for (i, _, kernel, geometry, _, allocated, earlier), report in zip(ready, reports):
            if isinstance(report, AsmEvoError):
                out[i] = report
                continue
            findings, ok = launch_outcome(report, devices[i].memory, earlier)
            result = LaunchResult(kernel.name, geometry, ok, wall, findings, report)
            out[i] = ({name: devices[i].read(allocated[name], buf.dtype.storage, buf.shape)
                       for name, buf in spec.buffers.items()}, result)

    run_then_release(body, cleanup)
    return out


def _prepare(device: Device, module: Module, spec: LaunchSpec, inputs: dict[str, np.ndarray],
             cleanup: list[Callable[[], None]]) -> tuple[Kernel, Geometry, bytes, dict[str, Buffer]]:
    """`run_launch`'s steps before the launch: check, allocate and fill, pack the kernargs."""
    allocated = _fill(device, module, spec, inputs, cleanup)
    args = launch_args(spec, module.kernel(spec.kernel), allocated)
    kernel, geometry, kernarg = device.prepare(module, spec.kernel, spec.grid, spec.block, spec.dynamic_lds, args)
    return kernel, geometry, kernarg, allocated


def _fill(device: Device, module: Module, spec: LaunchSpec, inputs: dict[str, np.ndarray],
          cleanup: list[Callable[[], None]]) -> dict[str, Buffer]:
    """Check `spec` against its kernel, allocate every buffer and copy its input in (each free is
    added to `cleanup`)."""
    spec.check(module.kernel(spec.kernel), module.code_object.target.processor)
    buffers = spec.buffers
    missing = sorted(set(buffers) - set(inputs))
    if missing:
        raise LaunchSpecError(f"no input for buffer(s) {', '.join(missing)}")
    allocated = {}
    for name, buf in buffers.items():
        _check_array(buf, inputs[name], "input")
        allocated[name] = device.alloc(buf.nbytes, name)
        cleanup.append(lambda b=allocated[name]: device.free(b))
        device.copy_in(allocated[name], inputs[name])
    return allocated
