"""The production suites (AITer binaries, vLLM/SGLang Triton kernels).

Some tests check the committed specs and references on synthetic inputs (no download, no emulator). The
others need the fetched wheels: the specs against each kernel's metadata, and every K0 against its reference
on the emulator, one test per shape (`asmevo suite check triton|aiter|aiter_gfx950`). They run when
benchmarks/.cache holds the wheels or the package index is reachable, and skip with the reason otherwise, unless
ASMEVO_REQUIRE_PRODUCTION=1 (set by .ci/run), which makes a missing wheel a failure.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from asmevo.codeobj import CodeObject
from asmevo.device.base import Buffer
from asmevo.device.kernarg import pack_kernargs
from asmevo.device.launch import LaunchSpec, launch_args
from asmevo.errors import LaunchSpecError
from asmevo.suites import load_suite
from asmevo.suites.check import check_shape, problem_inputs, spec_scalars
from asmevo.suites.manifest import CACHE_ROOT, REPO_ROOT
from asmevo.suites.refutil import shuffle_weight, unshuffle_weight
from kernargs import assert_packed, expected_kernargs, note_metadata
from prodcache import prepared_suite

SUITES = {name: load_suite(name) for name in ("aiter", "aiter_gfx950", "triton")}
CASES = [(s, p.name, sh.name) for s, suite in SUITES.items() for p in suite.problems for sh in p.shapes
         if sh.role != "bench"]
PROBLEMS = [(s, p.name) for s, suite in SUITES.items() for p in suite.problems]


def test_suites_resolve_under_production_and_cover_the_families():
    assert SUITES["aiter"].root == REPO_ROOT / "benchmarks" / "production" / "aiter"
    assert SUITES["triton"].root == REPO_ROOT / "benchmarks" / "production" / "triton"
    triton = json.loads((SUITES["triton"].root / "manifest.json").read_text())["problems"]
    assert len(triton) >= 12 and {e["package"] for e in triton.values()} == {"vllm", "sglang"}
    assert {"norm", "rotary", "activation", "softmax-topk", "decode-attention", "prefill-attention", "fused-moe",
            "fp8-quant", "lora"} <= {e["family"] for e in triton.values()}


@pytest.mark.parametrize("suite,problem", PROBLEMS)
def test_problem_layout(suite, problem):
    p = SUITES[suite].problem(problem)
    assert p.level == 0 and p.toolchain == ("triton" if suite == "triton" else "aiter-asm")
    assert str(p.code_object).startswith(str(CACHE_ROOT)) and "notes" in p.extra
    roles = [s.role for s in p.shapes]
    assert roles.count("heldout") == 1 and roles.count("bench") == 1 and roles.count("verify") >= 2


@pytest.mark.parametrize("suite,problem,shape", CASES)
def test_reference_on_synthetic_inputs(suite, problem, shape):
    """Spec parses, inputs build (generic inits + generate()), the reference returns every output buffer
    in its storage dtype and shape, and verify/heldout buffers stay emulator-sized."""
    p = SUITES[suite].problem(problem)
    s = p.shape(shape)
    spec = LaunchSpec.load(s.launch_path)
    assert spec.kernel == p.kernel
    inputs = problem_inputs(p, spec, p.launch(s))
    assert all(a.nbytes <= 1 << 18 for a in inputs.values()), "verify/heldout buffers must be emulator-sized"
    expected = p.reference_fn()(inputs, spec_scalars(spec))
    assert set(expected) == set(p.outputs)
    for name, arr in expected.items():
        assert arr.shape == inputs[name].shape and arr.dtype == inputs[name].dtype, name
        if arr.dtype.kind == "f":
            assert not np.isnan(arr).any(), name


def test_generators_are_deterministic():
    p = SUITES["triton"].problem("vllm_fused_moe")
    s = p.shapes_by_role("verify")[0]
    spec = LaunchSpec.load(s.launch_path)
    a, b = problem_inputs(p, spec, p.launch(s)), problem_inputs(p, spec, p.launch(s))
    assert all(np.array_equal(a[k], b[k]) for k in a)


@pytest.fixture(scope="module")
def prepared():
    return {name: prepared_suite(name) for name in SUITES}


def _without_a_pointer(raw: dict) -> tuple[dict, str]:
    """The spec with a pointer gone, and the refusal expected: in a struct image its first buffer field is
    dropped; otherwise its last buffer argument becomes an 8-byte scalar."""
    args = raw["args"]
    if len(args) == 1 and "struct" in args[0]:
        fields = args[0]["struct"]
        first = next(i for i, f in enumerate(fields) if "buffer" in f)
        return ({**raw, "args": [{**args[0], "struct": fields[:first] + fields[first + 1:]}]},
                "the struct has no buffer .* field there")
    last = max(i for i, a in enumerate(args) if "buffer" in a)
    return ({**raw, "args": args[:last] + [{"scalar": 0, "dtype": "int64"}] + args[last + 1:]},
            rf"args\[{last}\]: kernel .* expects a pointer here")


@pytest.mark.parametrize("suite,problem", PROBLEMS)
def test_specs_pack_the_layout_the_metadata_gives(prepared, suite, problem):
    """Every spec passes the loader's check and packs the kernarg bytes an independent reading of the metadata
    note gives (tests/kernargs.py); a spec missing a pointer is refused."""
    p = prepared[suite].problem(problem)
    co = CodeObject.from_path(p.code_object)
    kernel, processor = co.kernel(p.kernel), co.target.processor
    meta = note_metadata(p.code_object)[p.kernel]
    for s in p.shapes:
        spec = LaunchSpec.load(s.launch_path)
        spec.check(kernel, processor)
        addresses = {name: (i + 1) << 32 for i, name in enumerate(spec.buffers)}
        buffers = {name: Buffer(name, a, spec.buffers[name].nbytes) for name, a in addresses.items()}
        packed = pack_kernargs(kernel.metadata, launch_args(spec, kernel, buffers), spec.geometry)
        assert_packed(packed, expected_kernargs(p.launch(s), meta, addresses))
    broken, refusal = _without_a_pointer(p.launch(p.shapes[0]))
    with pytest.raises(LaunchSpecError, match=refusal):
        LaunchSpec.from_dict(broken, p.dir).check(kernel, processor)


def test_triton_build_is_reproducible(prepared, tmp_path):
    """build.py recompiles one kernel bit-identically (fresh private Triton cache)."""
    build = prepared["triton"].root / "build.py"
    co = CACHE_ROOT / "triton" / "co" / "vllm_rms_norm.co"
    before = co.read_bytes()
    co.unlink()
    proc = subprocess.run([sys.executable, str(build), "vllm_rms_norm"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert co.read_bytes() == before


CHECKED = [(s, p, sh) for s, p, sh in CASES if SUITES[s].problem(p).shape(sh).role in ("verify", "heldout")]


@pytest.mark.parametrize("suite,problem,shape", CHECKED)
def test_k0_matches_its_reference_on_the_emulator(prepared, suite, problem, shape):
    """`asmevo suite check`, one shape at a time: the upstream binary on the checked emulator against our
    reference (findings only of the kinds the problem lists in known_findings)."""
    p = prepared[suite].problem(problem)
    result = check_shape(p, p.shape(shape))
    assert result.ok, result.message


def test_aiter_families():
    families = {p.extra["notes"].split(":", 1)[0] for p in SUITES["aiter"].problems}
    assert {"softmax-topk", "norm", "bf16-gemm", "paged-attention-decode", "int8-gemm",
            "flash-attention-forward", "mla-decode", "fp8-blockscale-gemm"} <= families


def test_i8gemm_reference_undoes_aiters_weight_shuffle():
    """shuffle_weight(b, 32) is AITer's shuffle_weight(layout=(32, 16)) for int8 (view as [N/32, 32, K/32, 2, 16],
    permute (0, 2, 3, 1, 4)); unshuffle_weight inverts it, and the reference is the scaled int8 product."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("i8ref", SUITES["aiter"].root / "i8gemm" / "reference.py")
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    rng = np.random.default_rng(1)
    b = rng.integers(-128, 128, (64, 96)).astype(np.int8)
    sh = shuffle_weight(b, 32)
    assert sh[0, 16] == b[1, 0] and sh[0, 32] == b[2, 0] and sh[1, 0] == b[6, 0]  # 32x16 blocks, row-major
    np.testing.assert_array_equal(unshuffle_weight(sh, 32), b)
    a = rng.integers(-128, 128, (3, 96)).astype(np.int8)
    ones = np.ones(64, np.float32)
    out = ref.reference({"A": a, "B": sh, "a_scale": np.full(3, 1 / 1024, np.float32), "b_scale": ones,
                         "bias": np.zeros(64, np.float32)}, [{}])["C"]
    np.testing.assert_allclose(bf16_ref(out), (a.astype(np.int64) @ b.T.astype(np.int64)) / 1024, rtol=8e-3)


def bf16_ref(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def test_flatmm_reference_undoes_aiters_weight_shuffle_and_decodes_fp8():
    """unshuffle_weight(b, 16) inverts AITer's shuffle_weight(layout=(16, 16)) for 1-byte elements (view as
    [N/16, 16, K/32, 2, 16], permute (0, 2, 3, 1, 4)), also per expert; fp8_e4m3fnuz() decodes E4M3FNUZ codes."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("fmref", SUITES["aiter"].root / "flatmm_fp8" / "reference.py")
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    b = np.arange(32 * 64).reshape(32, 64)
    shuffled = b.reshape(2, 16, 2, 2, 16).transpose(0, 2, 3, 1, 4).reshape(32, 64)
    assert shuffled[0, 16] == b[1, 0] and shuffled[1, 0] == b[4, 0]  # 16-row x 16-byte blocks
    np.testing.assert_array_equal(unshuffle_weight(shuffled, 16), b)
    np.testing.assert_array_equal(shuffle_weight(np.stack([b, b + 1]), 16), np.stack([shuffled, shuffled + 1]))
    codes = np.array([0x00, 0x08, 0x40, 0x38, 0xC4, 0x7F, 0x01, 0x80], np.uint8)
    np.testing.assert_array_equal(ref.fp8_e4m3fnuz(codes)[:7], [0, 2 ** -7, 1, 0.5, -1.5, 240, 2 ** -10])
    assert np.isnan(ref.fp8_e4m3fnuz(codes)[7])


def test_generated_inputs_are_part_of_every_launch_verification_and_timing_run():
    """A problem's generate() fills its verify and held-out launches (what the agent's verification runs),
    and generate_bench() its bench launch (what timing runs): prefill attention's sequence lengths are not
    the spec's zeros, which would make every workgroup return at once."""
    from asmevo.device.launch import make_inputs
    from asmevo.launches import suite_launches, timing_launch

    p = SUITES["triton"].problem("vllm_prefill_attention")
    for vl in suite_launches(p, heldout=True):
        shape = p.shape(vl.label.split(":", 1)[1])
        expected = problem_inputs(p, LaunchSpec.load(shape.launch_path), p.launch(shape))
        inputs = make_inputs(vl.spec)
        assert inputs["seq_lens"].min() > 0 and inputs["seq_lens"].sum() == inputs["q"].shape[0]
        assert all(np.array_equal(inputs[k], expected[k]) for k in ("seq_lens", "start_loc"))
    bench, role = timing_launch(p)
    lens = np.load(bench.spec.buffers["seq_lens"].init)  # a bench launch is too large to build densely
    assert role == "bench" and lens.min() > 0 and lens.sum() == bench.spec.buffers["q"].shape[0]


def test_prefill_attention_grids_end_at_the_longest_sequence_as_vllm_launches_them():
    """vLLM launches prefill attention on cdiv(longest sequence, 128) query blocks: every shape's generated
    lengths fill its grid's last block (a grid sized for the packed rows instead left most bench workgroups
    with no rows), sum to the packed rows and are at least 1."""
    p = SUITES["triton"].problem("vllm_prefill_attention")
    for shape in p.shapes:
        launch = json.loads(shape.launch_path.read_text())
        lens = p.generator_fn(shape.role)(launch, np.random.default_rng(7))["seq_lens"]
        rows = next(a["shape"][0] for a in launch["args"] if a.get("buffer") == "q")
        assert -(-int(lens.max()) // 128) == launch["grid"][2], shape.name
        assert lens.min() >= 1 and lens.sum() == rows and len(lens) == launch["grid"][0]


def test_a_bench_launch_takes_only_what_generate_bench_draws():
    """int8 GEMM operands are values only (generate() draws them for verification); the bench launch keeps
    the spec's inits rather than materialising gigabytes of operands."""
    from asmevo.launches import timing_launch

    p = SUITES["aiter"].problem("i8gemm")
    assert p.generator_fn("verify") is not None and p.generator_fn("bench") is None
    assert p.launch_with_inputs(p.shapes_by_role("bench")[0]) == p.launch(p.shapes_by_role("bench")[0])
    assert not any(str(b.init).endswith(".npy") for b in timing_launch(p)[0].spec.buffers.values())


def test_committed_file_inputs_resolve_wherever_the_spec_runs(tmp_path):
    """The fused-MoE bench launches read routing from .npy files beside the spec; the launch a suite run
    stores names them by absolute path, so a stage running in another directory finds them."""
    from asmevo.launches import launch_from_dict

    p = SUITES["aiter"].problem("fmoe_1stage_fp8")
    data = p.launch_with_inputs(p.shapes_by_role("bench")[0])
    fields = {f["buffer"]: f["init"] for f in data["args"][0]["struct"] if "buffer" in f}
    assert fields["num_valid_ids"] == f"file:{p.dir / 'launch' / 'bench_num_valid_ids.npy'}"
    spec = launch_from_dict(data, tmp_path, "elsewhere").spec
    assert np.load(spec.buffers["num_valid_ids"].init)[0] > 0
