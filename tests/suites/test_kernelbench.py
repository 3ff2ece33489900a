"""The KernelBench suite: layout, launch specs vs. code-object metadata, manifest hashes, references,
the round trip of every code object, and every K0 against its reference on the emulator
(`asmevo suite check kernelbench`, one test per shape)."""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess

import numpy as np
import pytest

from asmevo.codeobj import CodeObject
from asmevo.compare import compare_to_reference
from asmevo.device.base import Buffer
from asmevo.device.kernarg import pack_kernargs
from asmevo.device.launch import LaunchSpec, launch_args
from asmevo.errors import AsmEvoError, LaunchSpecError
from asmevo.roundtrip import roundtrip
from asmevo.suites import SuiteError, load_suite
from asmevo.suites.check import check_shape
from asmevo.suites.refutil import bf16_to_f32, f32_to_bf16
from kernargs import assert_packed, expected_kernargs, note_metadata

SUITE = load_suite("kernelbench")
PROBLEMS = {p.name: p for p in SUITE.problems}
MANIFEST = json.loads((SUITE.root / "manifest.json").read_text())
SIZES = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4, "int64": 8, "uint8": 1}
STORAGE = {"float32": np.float32, "float16": np.float16, "bfloat16": np.uint16, "int32": np.int32,
           "int64": np.int64, "uint8": np.uint8}


def make_inputs(problem, spec: dict, seed: int = 0) -> tuple[dict[str, np.ndarray], list]:
    """Initial buffers (uniform [-1, 1) floats, per `init`) plus the problem's generate() overrides."""
    rng = np.random.default_rng(seed)
    bufs, scalars = {}, []
    for a in spec["args"]:
        if "scalar" in a:
            scalars.append(a["scalar"])
            continue
        shape, dt = tuple(a["shape"]), a["dtype"]
        if a["init"] == "random" and dt in ("float32", "float16", "bfloat16"):
            v = rng.uniform(-1, 1, size=shape).astype(np.float32)
            arr = f32_to_bf16(v) if dt == "bfloat16" else v.astype(STORAGE[dt])
        elif a["init"] == "random":
            arr = rng.integers(-8, 9, size=shape).astype(STORAGE[dt])
        else:
            arr = np.zeros(shape, STORAGE[dt])
        bufs[a["buffer"]] = arr
    gen = problem.generator_fn()
    if gen is not None:
        for name, arr in gen(spec, rng).items():
            assert name in bufs and arr.shape == bufs[name].shape and arr.dtype == bufs[name].dtype, name
            bufs[name] = arr
    return bufs, scalars


def test_suite_has_30_problems_and_both_toolchains():
    assert SUITE.name == "kernelbench"
    assert len(SUITE) == 30
    tc = [p.toolchain for p in SUITE.problems]
    assert 12 <= tc.count("triton") <= 18 and 12 <= tc.count("hip-clang19") <= 18
    assert {p.level for p in SUITE.problems} == {1, 2}
    for p in SUITE.problems:
        assert p.dir.name == p.name and p.source.exists() and p.code_object.exists()


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_roles_and_sizes(name):
    p = PROBLEMS[name]
    roles = [s.role for s in p.shapes]
    assert roles.count("verify") >= 3 and roles.count("heldout") == 1 and roles.count("bench") == 1
    for s in p.shapes:
        spec = p.launch(s)
        elems = max(int(np.prod(a["shape"])) for a in spec["args"] if "buffer" in a)
        assert ("probe" in spec) == (s.role == "probe"), s.name
        if s.role in ("bench", "probe"):
            assert elems > 65536
        else:
            assert elems <= 65536, (s.name, elems)


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_launch_specs_match_metadata(name):
    p = PROBLEMS[name]
    meta = note_metadata(p.code_object)
    assert p.kernel in meta, f"{p.kernel} not in {list(meta)}"
    km = meta[p.kernel]
    explicit = [a for a in km[".args"] if not a[".value_kind"].startswith("hidden_")]
    dyn = MANIFEST["problems"][name].get("dynamic_lds", 0)
    for s in p.shapes:
        spec = p.launch(s)
        assert spec["kernel"] == p.kernel
        assert len(spec["args"]) == len(explicit), s.name
        for i, (m, a) in enumerate(zip(explicit, spec["args"])):
            if m[".value_kind"] == "global_buffer":
                assert "buffer" in a and m[".size"] == 8, (s.name, i)
            else:
                assert m[".value_kind"] == "by_value" and "scalar" in a, (s.name, i)
                assert SIZES[a["dtype"]] == m[".size"], (s.name, i)
        assert spec["dynamic_lds"] == dyn
        assert int(np.prod(spec["block"])) <= km[".max_flat_workgroup_size"]
        assert all(g >= 1 for g in spec["grid"])
        assert set(p.outputs) <= {a["buffer"] for a in spec["args"] if "buffer" in a}


def packed_kernargs(spec: LaunchSpec, kernel) -> tuple[bytes, dict[str, int]]:
    """The kernarg segment asmevo packs for `spec`, with buffer i at address (i + 1) * 2^32."""
    addresses = {name: (i + 1) << 32 for i, name in enumerate(spec.buffers)}
    buffers = {name: Buffer(name, addr, spec.buffers[name].nbytes) for name, addr in addresses.items()}
    return pack_kernargs(kernel.metadata, launch_args(spec, kernel, buffers), spec.geometry), addresses


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_launch_specs_pack_the_layout_the_metadata_gives(name):
    """Every spec passes the device loader's check, and the kernarg bytes it packs are those an independent
    reading of the metadata note gives (tests/kernargs.py); specs that disagree with the kernel are refused."""
    p = PROBLEMS[name]
    kernel = CodeObject.from_path(p.code_object).kernel(p.kernel)
    meta = note_metadata(p.code_object)[p.kernel]
    for s in p.shapes:
        spec = LaunchSpec.load(s.launch_path)
        spec.check(kernel)
        packed, addresses = packed_kernargs(spec, kernel)
        assert len(packed) >= meta[".kernarg_segment_size"]
        assert_packed(packed, expected_kernargs(p.launch(s), meta, addresses))
    raw = p.launch(p.shapes[0])
    with pytest.raises(LaunchSpecError, match=r"args\[0\]: kernel .* expects a pointer here, spec gives scalar 0"):
        LaunchSpec.from_dict({**raw, "args": [{"scalar": 0, "dtype": "int64"}, *raw["args"][1:]]}).check(kernel)
    with pytest.raises(LaunchSpecError, match=rf"kernel {p.kernel} takes {len(raw['args'])} arguments"):
        LaunchSpec.from_dict({**raw, "args": raw["args"][:-1]}).check(kernel)


def test_manifest_hashes_match_committed_code_objects():
    assert set(MANIFEST["problems"]) == set(PROBLEMS)
    for name, entry in MANIFEST["problems"].items():
        co = PROBLEMS[name].dir / entry["code_object"]
        assert hashlib.sha256(co.read_bytes()).hexdigest() == entry["sha256"], name
        assert entry["toolchain"] == PROBLEMS[name].toolchain
        assert entry["compiler"] and entry["reproducible"] is True


MFMA_PROBLEMS = {"2_Standard_matrix_multiplication_": "v_mfma_f32_32x32x8_f16",
                 "3_Batched_matrix_multiplication": "v_mfma_f32_32x32x8_bf16",
                 "9_Tall_skinny_matrix_multiplication_": "v_mfma_f32_32x32x8_f16",
                 "17_Matmul_with_transposed_B": "v_mfma_f32_16x16x16_bf16",
                 "40_Matmul_Scaling_ResidualAdd": "v_mfma_f32_32x32x8_f16",
                 "76_Gemm_Add_ReLU": "v_mfma_f32_16x16x16_f16",
                 "86_Matmul_Divide_GELU": "v_mfma_f32_32x32x2_f32"}


@pytest.mark.parametrize("name", sorted(MFMA_PROBLEMS))
def test_mfma_kernels_use_mfma(name):
    objdump = shutil.which("llvm-objdump-19") or shutil.which("llvm-objdump")
    if objdump is None:
        pytest.skip("llvm-objdump not installed")
    asm = subprocess.run([objdump, "-d", str(PROBLEMS[name].code_object)], capture_output=True, text=True).stdout
    assert MFMA_PROBLEMS[name] in asm


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_reference_runs_with_right_shapes(name):
    """At every verify and held-out shape the reference returns each output in its storage dtype and shape,
    finite, and leaves its inputs alone. (Its values: tests/suites/test_kernelbench_references.py, and KernelBench's
    own PyTorch in benchmarks/kernelbench/pytorch_oracle.py.)"""
    p = PROBLEMS[name]
    ref = p.reference_fn()
    for s in p.shapes:
        if s.role in ("bench", "probe"):
            continue
        bufs, scalars = make_inputs(p, p.launch(s))
        given = {k: v.copy() for k, v in bufs.items()}
        out = ref(given, scalars)
        assert set(out) == set(p.outputs)
        for o in p.outputs:
            assert out[o].shape == bufs[o].shape and out[o].dtype == bufs[o].dtype, (s.name, o)
            vals = bf16_to_f32(out[o]) if p.output_dtypes(s)[o] == "bfloat16" else out[o].astype(np.float64)
            assert np.all(np.isfinite(vals)), (s.name, o)
        assert all(np.array_equal(given[k], bufs[k]) for k in bufs), f"{s.name}: the reference changed its inputs"


def _perturbed(value: float, delta: float, storage: np.dtype, bf16: bool) -> tuple[object, float]:
    """`value + delta` in the output's storage, and the difference that storage actually holds."""
    if bf16:
        bits = f32_to_bf16(np.float32(value + delta))
        return bits, float(bf16_to_f32(bits)) - value
    stored = np.asarray(value + delta, dtype=storage)
    return stored, float(stored) - value


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_tolerance_rejects_twice_its_bound_and_accepts_half(name):
    """One output element moved by twice what the declared tolerance allows is rejected, by half of it
    accepted (exact and integer outputs: one ulp or one unit is rejected)."""
    p = PROBLEMS[name]
    s = p.shapes_by_role("verify")[0]
    bufs, scalars = make_inputs(p, p.launch(s))
    expected = p.reference_fn()(bufs, scalars)
    o, dtypes, tol = p.outputs[0], p.output_dtypes(s), p.tolerance
    bf16 = dtypes[o] == "bfloat16"
    values = bf16_to_f32(expected[o]).astype(np.float64) if bf16 else expected[o].astype(np.float64)
    i = values.size // 2
    x = float(values.reshape(-1)[i])

    def compare(element) -> tuple[bool, str]:
        got = expected[o].copy()
        got.reshape(-1)[i] = element
        return compare_to_reference({o: got}, expected, tol, dtypes)

    if tol.get("exact") or expected[o].dtype.kind != "f" and not bf16:
        one_off = np.nextafter(expected[o].reshape(-1)[i], np.inf) if expected[o].dtype.kind == "f" \
            else expected[o].reshape(-1)[i] + 1
        ok, msg = compare(one_off)
        assert not ok and msg.startswith(f"{o}[") and "expected" in msg
        return
    if "max_ulp" in tol:
        ulp = float(np.spacing(np.float32(abs(x))))
        bound = tol["max_ulp"] * ulp
    else:
        bound = tol["atol"] + tol["rtol"] * abs(x)
    far, moved = _perturbed(x, 2 * bound, expected[o].dtype, bf16)
    assert moved > bound  # the storage kept the perturbation beyond the tolerance
    ok, msg = compare(far)
    assert not ok and msg.startswith(f"{o}[") and "expected" in msg
    near, moved = _perturbed(x, 0.5 * bound, expected[o].dtype, bf16)
    assert 0 < moved <= bound
    assert compare(near) == (True, "ok")


def test_reference_semantics_spot_checks():
    sm = PROBLEMS["23_Softmax"]
    bufs, sc = make_inputs(sm, sm.launch("v_3x257"))
    assert np.allclose(sm.reference_fn()(bufs, sc)["y"].sum(axis=1), 1.0, atol=1e-5)
    cs = PROBLEMS["89_cumsum"]
    bufs, sc = make_inputs(cs, cs.launch("v_2x2500"))
    y = cs.reference_fn()(bufs, sc)["y"]
    assert np.allclose(y[:, -1], bufs["x"].astype(np.float64).sum(axis=1), atol=1e-3)
    am = PROBLEMS["51_Argmax_over_a_dimension"]
    bufs, sc = make_inputs(am, am.launch("v_3x37x50"))
    x = bufs["x"]
    assert all(len(np.unique(x[b, :, c])) == x.shape[1] for b in range(x.shape[0]) for c in range(x.shape[2]))
    ce = PROBLEMS["95_CrossEntropyLoss"]
    bufs, sc = make_inputs(ce, ce.launch("v_8x100"))
    assert bufs["targets"].min() >= 0 and bufs["targets"].max() < 100
    mp = PROBLEMS["42_Max_Pooling_2D"]
    bufs, sc = make_inputs(mp, mp.launch("v_1x3x13x11_k3s2p1d2"))
    x, y = bufs["x"], mp.reference_fn()(bufs, sc)["y"]
    # output (0, 0) window rows/cols {-1, 1, 3} -> valid {1, 3}
    assert y[0, 0, 0, 0] == x[0, 0][np.ix_([1, 3], [1, 3])].max()


@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_code_object_round_trips_identical(name):
    result = roundtrip(PROBLEMS[name].code_object)
    assert result.status == "identical", result.reason


CHECKED = [(p.name, s.name) for p in SUITE.problems for s in p.shapes if s.role in ("verify", "heldout")]


@pytest.mark.parametrize("name,shape", CHECKED)
def test_k0_matches_its_reference_on_the_emulator(name, shape):
    """`asmevo suite check kernelbench`, one shape at a time: K0 on the checked emulator against reference.py."""
    result = check_shape(PROBLEMS[name], PROBLEMS[name].shape(shape))
    assert result.status == "ok" and result.message == "ok", result.message


def test_compare_modes():
    e = {"y": np.array([1.0, 2.0, np.nan], np.float32)}
    assert compare_to_reference({"y": e["y"].copy()}, e, {"exact": True})[0]
    a = {"y": np.array([1.0, np.nextafter(np.float32(2), np.float32(3)), np.nan], np.float32)}
    ok, msg = compare_to_reference(a, e, {"exact": True})
    assert not ok and msg.startswith("y[1]")
    assert compare_to_reference(a, e, {"max_ulp": 1})[0]
    assert compare_to_reference(a, e, {"atol": 0.0, "rtol": 1e-6})[0]
    assert not compare_to_reference({"y": np.array([1.0, 2.0, 0.0], np.float32)}, e, {"atol": 1, "rtol": 1})[0]
    assert not compare_to_reference({"y": np.zeros(2, np.float32)}, e, {"exact": True})[0]
    assert not compare_to_reference({}, e, {"exact": True})[0]


def test_malformed_suite_raises_suite_error(tmp_path):
    assert issubclass(SuiteError, AsmEvoError)
    with pytest.raises(SuiteError):
        load_suite(tmp_path / "nope")
    (tmp_path / "suite.yaml").write_text("name: x\nproblems: [p]\n")
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "problem.yaml").write_text("name: p\nlevel: 1\n")
    with pytest.raises(SuiteError, match="missing"):
        load_suite(tmp_path)
    (tmp_path / "suite.yaml").write_text(": : :\n")
    with pytest.raises(SuiteError):
        load_suite(tmp_path)


def test_suite_check_cli_reports_every_shape_and_the_total(capsys):
    from asmevo.cli import main
    assert main(["suite", "check", "kernelbench", "--problem", "19_ReLU"]) == 0
    out = capsys.readouterr().out.splitlines()
    shapes = [s.name for s in PROBLEMS["19_ReLU"].shapes if s.role in ("verify", "heldout")]
    assert [ln.split()[1] for ln in out[1:-1]] == shapes and all(ln.split()[3] == "ok" for ln in out[1:-1])
    assert out[-1] == f"{len(shapes)}/{len(shapes)} passed, 0 failed"
