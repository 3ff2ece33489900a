"""Launch specs: parsing (JSON and YAML), validation against real metadata, input generation,
and run_launch's plumbing through a device that executes vadd from the packed kernargs."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest
import yaml

from asmevo.codeobj import CodeObject
from asmevo.device.base import Buffer, Device, DeviceError, LaunchResult, Module
from asmevo.device.dtypes import get_dtype
from asmevo.device.kernarg import pack_kernargs
from asmevo.device.launch import LaunchSpec, launch_args, make_inputs, run_launch
from asmevo.errors import LaunchSpecError
from kernargs import assert_packed, expected_kernargs, note_metadata

VADD = {"kernel": "vadd", "grid": [16, 1, 1], "block": [256, 1, 1], "dynamic_lds": 0, "seed": 0,
        "args": [{"buffer": "a", "dtype": "float32", "shape": [4096], "init": "random"},
                 {"buffer": "b", "dtype": "float32", "shape": [4096], "init": "random"},
                 {"buffer": "c", "dtype": "float32", "shape": [4096], "init": "zeros"},
                 {"scalar": 4096, "dtype": "int32"}]}


def spec_with(**changes) -> dict:
    d = json.loads(json.dumps(VADD))
    d.update(changes)
    return d


def vadd_kernel(kernels):
    return CodeObject.from_path(kernels["hip5"]).kernel("vadd")


def test_json_and_yaml_specs_agree(tmp_path):
    (tmp_path / "l.json").write_text(json.dumps(VADD))
    (tmp_path / "l.yaml").write_text(yaml.safe_dump(VADD))
    a, b = LaunchSpec.load(tmp_path / "l.json"), LaunchSpec.load(tmp_path / "l.yaml")
    assert a == b
    assert a.grid == (16, 1, 1) and a.block == (256, 1, 1) and list(a.buffers) == ["a", "b", "c"]
    short = LaunchSpec.from_dict(spec_with(grid=[16], block=[256]))
    assert short.geometry == a.geometry


def packed(spec: LaunchSpec, kernel, addresses: dict[str, int]) -> bytes:
    buffers = {n: Buffer(n, a, spec.buffers[n].nbytes) for n, a in addresses.items()}
    return pack_kernargs(kernel.metadata, launch_args(spec, kernel, buffers), spec.geometry)


@pytest.mark.parametrize("which", ["hip4", "hip5"])
def test_spec_matches_kernel(kernels, which):
    """A spec the loader accepts packs each argument at the offset and size the metadata note gives
    (read independently, tests/kernargs.py), and the grid and block into the hidden arguments."""
    kernel = CodeObject.from_path(kernels[which]).kernel("vadd")
    spec = LaunchSpec.from_dict(VADD)
    spec.check(kernel)
    addresses = {"a": 0x7F00_0000_1000, "b": 0x7F00_0000_2000, "c": 0x7F00_0000_3000}
    expected = expected_kernargs(VADD, note_metadata(kernels[which])["vadd"], addresses)
    assert sorted(expected)[:4] == [0, 8, 16, 24]  # three pointers, then n
    assert_packed(packed(spec, kernel, addresses), expected)


@pytest.mark.parametrize("change, message", [
    ({"args": VADD["args"][:3]}, r"kernel vadd takes 4 arguments \(pointer, pointer, pointer, 4-byte by_value\), spec gives 3"),
    ({"args": [VADD["args"][0], {"scalar": 1, "dtype": "int64"}] + VADD["args"][2:]},
     r"args\[1\]: kernel vadd expects a pointer here, spec gives scalar 1 \(int64, 8 bytes\)"),
    ({"args": VADD["args"][:3] + [VADD["args"][0]]}, r"args\[3\]: kernel vadd expects a 4-byte value here, spec gives buffer 'a'"),
    ({"args": VADD["args"][:3] + [{"scalar": 4096, "dtype": "int64"}]},
     r"args\[3\]: kernel vadd expects a 4-byte value, spec gives scalar 4096 \(int64, 8 bytes\)"),
    ({"block": [2048]}, "block \\[2048, 1, 1\\] has 2048 work-items; kernel vadd allows at most 1024"),
])
def test_spec_disagreeing_with_metadata(kernels, change, message):
    spec = LaunchSpec.from_dict(spec_with(**change))
    with pytest.raises(LaunchSpecError, match=message):
        spec.check(vadd_kernel(kernels))


MIXED = {"kernel": "mixed", "grid": [1], "block": [64], "args": [
    {"scalar": 1, "dtype": "int8"}, {"buffer": "p", "dtype": "float32", "shape": [64], "init": "zeros"},
    {"scalar": 2, "dtype": "int16"}, {"scalar": 3.0, "dtype": "float64"},
    {"scalar": [4, 5.0, 6.0], "dtype": ["int32", "float32", "float64"]},
    {"scalar": 7, "dtype": "int64"}, {"scalar": 8.0, "dtype": "float32"}]}


def test_struct_scalar_matches_mixed_kernel(kernels):
    kernel = CodeObject.from_path(kernels["hip4"]).kernel("mixed")
    spec = LaunchSpec.from_dict(MIXED)
    spec.check(kernel)
    # mixed(char, float*, short, double, struct S {int; float; double}, long long, float): C's natural
    # alignment puts them at 0, 8, 16, 24, 32 (S: 16 bytes), 48, 56
    expected = bytearray(64)
    struct.pack_into("<b", expected, 0, 1)
    struct.pack_into("<Q", expected, 8, 0x1234_0000)
    struct.pack_into("<h", expected, 16, 2)
    struct.pack_into("<d", expected, 24, 3.0)
    struct.pack_into("<ifd", expected, 32, 4, 5.0, 6.0)
    struct.pack_into("<q", expected, 48, 7)
    struct.pack_into("<f", expected, 56, 8.0)
    assert packed(spec, kernel, {"p": 0x1234_0000})[:60] == bytes(expected[:60])
    # a struct arg one byte short of S's 16
    short = {"struct": [{"offset": 0, "scalar": 4, "dtype": "int32"}, {"offset": 4, "scalar": 5.0, "dtype": "float32"}],
             "size": 15}
    refusal = r"args\[4\]: kernel mixed expects a 16-byte value, spec gives struct \(15 bytes"
    with pytest.raises(LaunchSpecError, match=refusal):
        LaunchSpec.from_dict({**MIXED, "args": MIXED["args"][:4] + [short] + MIXED["args"][5:]}).check(kernel)


@pytest.mark.parametrize("arg, message", [
    ({"buffer": "a", "dtype": "float128", "shape": [4], "init": "zeros"}, "args\\[0\\]: unknown dtype 'float128' \\(valid: float16, bfloat16"),
    ({"buffer": "a", "dtype": "float32", "shape": [4], "init": "randn"}, "unknown init 'randn' \\(valid: random, normal, zeros, ones, arange, file:PATH.npy\\)"),
    ({"buffer": "a", "dtype": "int32", "shape": [4], "init": "normal"}, "init 'normal' needs a float dtype, not int32"),
    ({"buffer": "a", "dtype": "float32", "shape": [4], "init": "file:nope.npy"}, "init 'file:nope.npy': no such file .*nope.npy"),
    ({"buffer": "a", "dtype": "float32", "shape": [-1], "init": "zeros"}, "shape must be a list of non-negative integers"),
    ({"buffer": "a", "dtype": "float32", "shape": [4]}, "buffer 'a' is missing init"),
    ({"buffer": "a", "dtype": "float32", "shape": [4], "init": "zeros", "fill": 1}, "buffer 'a' has unknown key\\(s\\) fill"),
    ({"buffer": "../x", "dtype": "float32", "shape": [4], "init": "zeros"}, "buffer name '../x' must match"),
    ({"scalar": 1 << 40, "dtype": "int32"}, "scalar 1099511627776 is out of range for int32"),
    ({"scalar": 1.5, "dtype": "int32"}, "scalar 1.5 is not an integer for dtype int32"),
    ({"scalar": [1, 2], "dtype": ["int32"]}, "struct scalar needs a list of 1 values, one per dtype"),
    ({"scalar": 1}, "scalar arg is missing dtype"),
    ({"pointer": 1}, 'each arg is a mapping with either "buffer" or "scalar"'),
])
def test_bad_args_are_rejected_with_reason(arg, message):
    with pytest.raises(LaunchSpecError, match=message):
        LaunchSpec.from_dict(spec_with(args=[arg]))


def test_bad_top_level(tmp_path):
    with pytest.raises(LaunchSpecError, match="spec is missing block"):
        LaunchSpec.from_dict({"kernel": "k", "grid": [1], "args": []})
    with pytest.raises(LaunchSpecError, match="spec has unknown key\\(s\\) grdi"):
        LaunchSpec.from_dict(spec_with(grdi=[1]))
    with pytest.raises(LaunchSpecError, match="seed must be a non-negative integer"):
        LaunchSpec.from_dict(spec_with(seed=-1))
    with pytest.raises(LaunchSpecError, match="buffer 'a' is redefined differently"):
        LaunchSpec.from_dict(spec_with(args=[VADD["args"][0], {**VADD["args"][0], "shape": [8]}]))
    (tmp_path / "bad.yaml").write_text("kernel: [unclosed\n")
    with pytest.raises(LaunchSpecError, match=r"launch spec .*bad.yaml: not valid YAML"):
        LaunchSpec.load(tmp_path / "bad.yaml")
    with pytest.raises(LaunchSpecError, match=r"launch spec .*none.json: no such file"):
        LaunchSpec.load(tmp_path / "none.json")
    (tmp_path / "l.json").write_text(json.dumps(spec_with(grid=[0])))
    with pytest.raises(LaunchSpecError, match=r"^launch spec .*l.json: grid must be"):
        LaunchSpec.load(tmp_path / "l.json")


def test_inputs_are_deterministic_per_seed():
    spec = LaunchSpec.from_dict(VADD)
    first, again = make_inputs(spec), make_inputs(spec)
    for name in "abc":
        assert np.array_equal(first[name], again[name]) and first[name].dtype == np.float32
    assert not np.array_equal(first["a"], first["b"])  # seeded per buffer name
    assert (first["a"] >= -1).all() and (first["a"] < 1).all() and not first["c"].any()
    other = make_inputs(spec, seed=1)
    assert not np.array_equal(first["a"], other["a"])
    assert np.array_equal(make_inputs(LaunchSpec.from_dict(spec_with(seed=1)))["a"], other["a"])


def test_launch_too_large_for_the_host_is_refused_before_allocating(monkeypatch):
    spec = LaunchSpec.from_dict(spec_with(args=[{"buffer": "a", "dtype": "float32", "shape": [1 << 40],
                                                 "init": "random"}] + VADD["args"][1:]))
    with pytest.raises(LaunchSpecError, match=r"needs 4096.00 GiB of buffers, more than the .* allowed"):
        make_inputs(spec)
    monkeypatch.setenv("ASMEVO_MAX_LAUNCH_BYTES", str(3 * 4096 * 4 - 1))
    with pytest.raises(LaunchSpecError, match=r"ASMEVO_MAX_LAUNCH_BYTES"):
        make_inputs(LaunchSpec.from_dict(VADD))
    monkeypatch.setenv("ASMEVO_MAX_LAUNCH_BYTES", str(3 * 4096 * 4))
    assert set(make_inputs(LaunchSpec.from_dict(VADD))) == {"a", "b", "c"}


def test_inputs_per_dtype(tmp_path):
    np.save(tmp_path / "x.npy", np.arange(6, dtype=np.int16).reshape(2, 3))
    args = [{"buffer": n, "dtype": t, "shape": [2, 3], "init": i} for n, t, i in [
        ("f16", "float16", "random"), ("bf", "bfloat16", "ones"), ("e4", "float8_e4m3fnuz", "random"),
        ("e5", "fp8_e5m2fnuz", "arange"), ("i8", "int8", "random"), ("u64", "uint64", "random"),
        ("flag", "bool", "random"), ("n", "float64", "normal"), ("ar", "int32", "arange"),
        ("f", "int16", "file:x.npy")]]
    (tmp_path / "l.yaml").write_text(yaml.safe_dump({"kernel": "k", "grid": [1], "block": [1], "args": args}))
    got = make_inputs(LaunchSpec.load(tmp_path / "l.yaml"))
    assert {k: v.dtype.name for k, v in got.items()} == {
        "f16": "float16", "bf": "uint16", "e4": "uint8", "e5": "uint8", "i8": "int8", "u64": "uint64",
        "flag": "bool", "n": "float64", "ar": "int32", "f": "int16"}
    assert all(v.shape == (2, 3) for v in got.values())
    assert (got["bf"] == 0x3F80).all()  # bfloat16 1.0
    assert np.array_equal(get_dtype("fp8_e5m2fnuz").decode(got["e5"]).ravel(), np.arange(6, dtype=np.float32))
    e4 = get_dtype("float8_e4m3fnuz").decode(got["e4"])
    assert (np.abs(e4) <= 1).all() and not np.isnan(e4).any()
    assert got["i8"].min() >= -8 and got["i8"].max() <= 8 and got["u64"].max() < 16
    assert np.array_equal(got["ar"].ravel(), np.arange(6)) and np.array_equal(got["f"], np.load(tmp_path / "x.npy"))


def test_file_init_and_overrides_are_checked(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros(4, np.float64))
    spec = LaunchSpec.from_dict({"kernel": "k", "grid": [1], "block": [1], "args": [
        {"buffer": "x", "dtype": "float32", "shape": [4], "init": "file:x.npy"}]}, tmp_path)
    with pytest.raises(LaunchSpecError, match=r"buffer 'x': file .*x.npy is float64\[4\], expected float32\[4\]"):
        make_inputs(spec)
    good = np.ones(4, np.float32)
    assert np.array_equal(make_inputs(spec, {"x": good})["x"], good)
    with pytest.raises(LaunchSpecError, match="overrides name unknown buffer\\(s\\) y"):
        make_inputs(spec, {"y": good})
    with pytest.raises(LaunchSpecError, match=r"override is int32\[4\], expected float32\[4\]"):
        make_inputs(spec, {"x": np.ones(4, np.int32)})


class VaddDevice(Device):
    """Host memory; `_launch` runs vadd by reading pointers and n back out of the kernarg segment."""

    name = "fake"

    def __init__(self):
        self.mem: dict[int, bytearray] = {}
        self.kernargs: list[bytes] = []

    def load(self, code_object):
        return Module(CodeObject(code_object))

    def alloc(self, nbytes, name):
        address = 0x1000 * (len(self.mem) + 1)
        self.mem[address] = bytearray(nbytes)
        return Buffer(name, address, nbytes)

    def free(self, buf):
        del self.mem[buf.address]

    def copy_in(self, buf, array):
        self.mem[buf.address][:] = self._host_bytes(buf, array).tobytes()

    def copy_out(self, buf):
        return bytes(self.mem[buf.address])

    def _launch(self, module, kernel, geometry, kernarg):
        self.kernargs.append(kernarg)
        pa, pb, pc, n = struct.unpack_from("<QQQi", kernarg)
        a, b = (np.frombuffer(self.mem[p], np.float32) for p in (pa, pb))
        self.mem[pc][:4 * n] = (a[:n] + b[:n]).tobytes()
        return LaunchResult(kernel.name, geometry, True, 0.0)


def test_run_launch_packs_copies_and_reads_back(kernels):
    spec = LaunchSpec.from_dict(VADD)
    inputs = make_inputs(spec)
    device = VaddDevice()
    outputs, result = run_launch(device, kernels["hip5"], spec, inputs)
    assert result.ok and set(outputs) == {"a", "b", "c"}
    assert np.array_equal(outputs["c"], inputs["a"] + inputs["b"]) and np.array_equal(outputs["a"], inputs["a"])
    assert struct.unpack_from("<3I3H", device.kernargs[0], 32) == (16, 1, 1, 256, 1, 1)
    assert device.mem == {}  # every buffer freed
    bad = LaunchSpec.from_dict(spec_with(args=VADD["args"][:3]))
    with pytest.raises(LaunchSpecError, match="takes 4 arguments"):
        run_launch(device, kernels["hip5"].read_bytes(), bad, inputs)
    with pytest.raises(LaunchSpecError, match="no input for buffer\\(s\\) c"):
        run_launch(device, kernels["hip5"], spec, {"a": inputs["a"], "b": inputs["b"]})


class MisalignedDevice(VaddDevice):
    """Allocations 4 bytes past a 16-byte boundary."""

    def alloc(self, nbytes, name):
        address = 0x1000 * (len(self.mem) + 1) + 4
        self.mem[address] = bytearray(nbytes)
        return Buffer(name, address, nbytes)


def test_buffers_below_the_promised_alignment_are_refused(kernels):
    spec = LaunchSpec.from_dict(VADD)
    device = MisalignedDevice()
    with pytest.raises(DeviceError, match="not aligned to 16 bytes"):
        run_launch(device, kernels["hip5"], spec, make_inputs(spec))
    assert device.mem == {}  # freed all the same


@pytest.mark.parametrize("layout", ["packed", "crossing"])
def test_emulator_buffers_meet_the_promised_alignment(layout):
    from asmevo.device.base import BUFFER_ALIGNMENT
    from asmevo.emu.memory import Memory
    memory = Memory(layout=layout)
    addresses = [memory.alloc(n, f"b{n}") for n in (1, 3, 17, 100, 4096, 12345)]
    assert all(a % BUFFER_ALIGNMENT == 0 for a in addresses)


class FlakyDevice(VaddDevice):
    """A hardware-like device (not sandboxed) that records unloads and reads, can fail its launch,
    and can fail to free the first buffer it is asked to free."""

    sandboxed = False

    def __init__(self, launch_ok=True, fail_free=False):
        super().__init__()
        self.launch_ok, self.fail_free, self.unloaded, self.reads = launch_ok, fail_free, 0, 0

    def unload(self, module):
        self.unloaded += 1

    def copy_out(self, buf):
        self.reads += 1
        return super().copy_out(buf)

    def free(self, buf):
        super().free(buf)
        if self.fail_free:
            self.fail_free = False
            raise DeviceError(f"hipFree({buf.name}) failed")

    def _launch(self, module, kernel, geometry, kernarg):
        if not self.launch_ok:
            return LaunchResult(kernel.name, geometry, False, 0.0, [{"kind": "hip", "message": "fault"}])
        return super()._launch(module, kernel, geometry, kernarg)


def test_run_launch_releases_everything_and_keeps_the_first_error(kernels):
    spec = LaunchSpec.from_dict(VADD)
    device = FlakyDevice(fail_free=True)
    with pytest.raises(DeviceError, match="hipFree\\(c\\) failed"):  # freed last-allocated first
        run_launch(device, kernels["hip5"], spec, make_inputs(spec))
    assert device.mem == {} and device.unloaded == 1  # the other frees and the unload still ran
    failed = FlakyDevice(launch_ok=False)
    outputs, result = run_launch(failed, kernels["hip5"], spec, make_inputs(spec))
    assert not result.ok and outputs == {} and failed.reads == 0  # nothing read back after a failed launch
    clobbered = FlakyDevice(fail_free=True)
    inputs = make_inputs(spec)
    inputs["b"] = inputs["b"][:-1]  # fails after `a` is allocated; freeing `a` fails too
    with pytest.raises(LaunchSpecError, match="buffer 'b'"):
        run_launch(clobbered, kernels["hip5"], spec, inputs)
    assert clobbered.mem == {} and clobbered.unloaded == 1
