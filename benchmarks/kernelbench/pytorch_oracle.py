"""KernelBench's own PyTorch definitions as the oracle of our numpy references.

For each of the 30 problems, KernelBench's problem module (`KernelBench/level{1,2}/<name>.py` at the
pinned commit: `Model`, `get_inputs`, `get_init_inputs`) runs with PyTorch on the CPU, in float32 as
KernelBench does, at every verify and held-out shape of our suite, on the inputs `asmevo suite check`
uses; its output, cast to our output dtype, must match `reference.py` within the problem's tolerance.

Per problem a mapping (`CASES`, ours) says which module constants our shape sets (KernelBench fixes
sizes such as `batch_size` and `dim` as module constants; `get_init_inputs()` and `get_inputs()` then
follow them), which of our buffers are the Model's inputs and parameters, which of our scalars must
equal a KernelBench value (a LeakyReLU slope, an eps, a divisor), and where our problem knowingly
differs from KernelBench (`deviation`). `get_inputs()` is called at the set constants only to check
that our inputs have KernelBench's shapes.

The module files come from `--kernelbench DIR` (a KernelBench checkout) or from benchmarks/.cache/kernelbench,
where they are downloaded from raw.githubusercontent.com at the pinned commit; either way each file must
have its pinned sha256. Needs the `oracle` extra (`pip install -e '.[oracle]'`: torch).

    python benchmarks/kernelbench/pytorch_oracle.py [--kernelbench DIR] [--problems A,B]

Prints one line per shape (agree / DISAGREE, the largest error as a share of the tolerance) and a summary;
exit 0 iff every shape agrees. Record: pytorch_oracle[-PROBLEMS].txt beside this script.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import shutil
import sys
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.device.launch import LaunchSpec  # noqa: E402
from asmevo.errors import AsmEvoError  # noqa: E402
from asmevo.compare import compare_to_reference  # noqa: E402
from asmevo.suites import Problem, Shape, load_suite  # noqa: E402
from asmevo.suites.check import problem_inputs, spec_scalars  # noqa: E402
from asmevo.suites.refutil import bf16_to_f32  # noqa: E402
from benchmarks import record  # noqa: E402

REPOSITORY = "ScalingIntelligence/KernelBench"
# main on 2026-03-05 ("update all legacy python commands to UV", #143)
COMMIT = "423217d9fda91e0c2d67e4a43bf62f96f6d104f1"
CACHE = ROOT / "benchmarks" / ".cache" / "kernelbench" / COMMIT
# sha256 of KernelBench/level{N}/<name>.py at COMMIT
SHA256 = {
    "1_Square_matrix_multiplication_": "7626d611b8f2c97a71ae40d731da8cb7ba067dc43cc2f3e8185ad85c68533f30",
    "2_Standard_matrix_multiplication_": "136a33c4d598d07cd7931ef8c0eff4e683c221af6fc43c2d89b6632d3f9902a0",
    "3_Batched_matrix_multiplication": "310fb3bdf4f69ea178a5b5868bf204e83196cba71e4750be3fbbcb68b78d37f7",
    "9_Tall_skinny_matrix_multiplication_": "06a133f60f0d704b70014b210031e3937d7a183c90ea11800357ce6b55c89c18",
    "17_Matmul_with_transposed_B": "00ef34b7e76d97b7cc95599fd2ff93d4d90f53c348fcc3c4cb657c2126f026b1",
    "19_ReLU": "cbbfc9409662168ee7a5d3e7f7a59bf56e0faf9d763197e7f6a41fb5942dd63a",
    "20_LeakyReLU": "5dea58d2392f446e0139e6cfb58bec3a1ac23cee90bb5c3e8a6ddab2909b7fbf",
    "21_Sigmoid": "8f3ae78284ddd70b5c2fff66e066e967780245dee262fbf8cd2432498833796a",
    "22_Tanh": "8d47a07cbd045c944bb0bbd613e9375ca8032f7062e36f7a5d3c427c30e88490",
    "23_Softmax": "c9fa418447f2d64d5aeb4763d817137c1cb5a6b411a580f0b6291a7b29301d75",
    "24_LogSoftmax": "2aa5cac0c12474ed17fad018fee6ccbb09ca7d200ece7981bb8a608200b81fb8",
    "26_GELU_": "6c08367ffb8a4153714fb8390ece47d8f0294f9e2152245840f3a9764ac8b69b",
    "29_Softplus": "dadaed23e8f0194fc4840b5af4d10d397f96f2034eca0e36653078b270ce8539",
    "31_ELU": "295e84c51758555d26571f14353c8c4a02a1c7eb213406129e6ea601385e6fd8",
    "33_BatchNorm": "0b7f5ca58d6ec76a6faef2f583fa84ab2c14c0bfd09e7faf8c6289187a56cfc4",
    "35_GroupNorm_": "e4462f85b3eaadd05bdce8655305f5bcddc49dd31ef0a3bba1b85a1cbb2d19bb",
    "36_RMSNorm_": "8f6ee1b9ee212f3cee1069eff2b7935482713c99596b1024801868065e5a2b1d",
    "40_LayerNorm": "8d975d7cee6946513dcfb6ba84c971e53a890f9d9c6f0a4fb828904941f25975",
    "42_Max_Pooling_2D": "615a5a6d6baa0d13774cc17b305dd0588625e13a829bdef16395f5cd101e06bc",
    "47_Sum_reduction_over_a_dimension": "537d2ff381740bdb54b5208f82187564f6733a30df918edbbf7a49d64bef17ab",
    "48_Mean_reduction_over_a_dimension": "5fedf7c91096731d6d0edf00ade5b31b835c07e39be159512446fb4479fd5b35",
    "49_Max_reduction_over_a_dimension": "12982f0f62a711d355a4f037edff6b92581032bec387e5b40f3e0d8c384f9b9f",
    "51_Argmax_over_a_dimension": "d6a2057c4c95a9737985b2b8ffda23595f812557c26a2263fec8edd594c61fbe",
    "67_conv_standard_1D": "d0ddb9f06cbe48f3930a31062b12514fb23eb9bb23500160f1085f795044b205",
    "89_cumsum": "24eea19436dc41aa36ae3364b422d784c4f20175903f894e06beeb9cff15c02d",
    "94_MSELoss": "1bc23c8534d817cd5acff184eb8d3849f43b96b6dffcde6ab78a1c71a8fe64f3",
    "95_CrossEntropyLoss": "4cdfaaf1c2118369987c7a0c24b4487fee4bb90fdce50f592bded59cf61ae9bd",
    "40_Matmul_Scaling_ResidualAdd": "333bf992fd77297a4c43f4287b44662dcc43c8036be69d486b28e7a9db7bffd5",
    "76_Gemm_Add_ReLU": "88e932ace4f16e0477574c5c99b8d5665393e02f82f664dc99f2e22a2674ea42",
    "86_Matmul_Divide_GELU": "d6fc788bd7aa852d0740320aa786189d89a6489ed9634ee0b28f488d809b335a",
}


class OracleError(AsmEvoError):
    """A module file is missing or not the pinned one, or a mapping does not fit KernelBench's module."""


@dataclass
class Case:
    """How one of our launches maps onto KernelBench's module.

    constants: module constants our shape sets (before get_init_inputs / get_inputs are called);
    inputs: our buffers, in the order of the Model's forward() arguments;
    state: our buffers by the Model's parameter or buffer name (every parameter must be set);
    scalars: our scalar values that must equal the Model's attribute (dotted name) they stand for;
    eval: call Model.eval() first; deviation: where and why our problem differs from KernelBench's;
    own_shapes: our input shapes need not be those get_inputs() gives at the set constants (explained in
    `deviation`)."""

    constants: dict
    inputs: list[str]
    state: dict[str, str] = field(default_factory=dict)
    scalars: dict[str, float] = field(default_factory=dict)
    eval: bool = False
    deviation: str = ""
    own_shapes: bool = False


Mapping = Callable[[dict[str, np.ndarray], list], Case]


def _elementwise(b, s, **extra) -> Case:
    rows, cols = b["x"].shape
    return Case({"batch_size": rows, "dim": cols}, ["x"], **extra)


def _norm(b, s, **extra) -> Case:
    n, c, h, w = b["x"].shape
    return Case({"batch_size": n, "features": c, "dim1": h, "dim2": w}, ["x"], **extra)


def _over_dim1(b, s) -> Case:
    n, r, c = b["x"].shape
    return Case({"batch_size": n, "dim1": r, "dim2": c}, ["x"])


def _linear(b, s, size_names: tuple[str, str], layer: str, **extra) -> Case:
    batch, k = b["x"].shape
    n = b["W"].shape[0]
    return Case({"batch_size": batch, size_names[0]: k, size_names[1]: n}, ["x"],
                {f"{layer}.weight": "W", f"{layer}.bias": "bias"}, **extra)


GEMM_SHAPE = ("the fp16/bf16 inputs are a dtype variant of KernelBench's fp32 ones (exact in fp32, which the "
              "Model computes in), and the output is rounded to our output dtype")
CASES: dict[str, Mapping] = {
    "1_Square_matrix_multiplication_": lambda b, s: Case({"N": b["A"].shape[0]}, ["A", "B"]),
    "2_Standard_matrix_multiplication_": lambda b, s: Case(
        {"M": b["A"].shape[0], "K": b["A"].shape[1], "N": b["B"].shape[1]}, ["A", "B"], deviation=GEMM_SHAPE),
    "3_Batched_matrix_multiplication": lambda b, s: Case(
        dict(zip(("batch_size", "m", "k"), b["A"].shape), n=b["B"].shape[2]), ["A", "B"], deviation=GEMM_SHAPE),
    "9_Tall_skinny_matrix_multiplication_": lambda b, s: Case(
        {"M": b["A"].shape[0], "N": b["A"].shape[1]}, ["A", "B"],
        deviation=GEMM_SHAPE + "; KernelBench's B is (N, M), so its C is square M x M; ours is (K, N) with its "
                  "own column count N (torch.matmul is the same function for both)", own_shapes=True),
    "17_Matmul_with_transposed_B": lambda b, s: Case(
        {"M": b["A"].shape[0], "K": b["A"].shape[1], "N": b["B"].shape[0]}, ["A", "B"],
        deviation="bf16 inputs (exact in fp32), fp32 output"),
    "19_ReLU": _elementwise,
    "20_LeakyReLU": lambda b, s: _elementwise(b, s, scalars={"negative_slope": s[1]}),
    "21_Sigmoid": _elementwise,
    "22_Tanh": _elementwise,
    "23_Softmax": _elementwise,
    "24_LogSoftmax": _elementwise,
    "26_GELU_": _elementwise,
    "29_Softplus": _elementwise,
    "31_ELU": lambda b, s: _elementwise(b, s, scalars={"alpha": s[1]}),
    "33_BatchNorm": lambda b, s: _norm(
        b, s, state={"bn.weight": "weight", "bn.bias": "bias", "bn.running_mean": "running_mean",
                     "bn.running_var": "running_var"},
        scalars={"bn.eps": s[2]}, eval=True,
        deviation="inference mode: our kernel normalises with the running statistics (inputs), so the Model "
                  "runs after eval(); KernelBench calls it in training mode, which normalises with the "
                  "batch's own statistics (a reduction kernel, not this one)"),
    "35_GroupNorm_": lambda b, s: Case(
        {**_norm(b, s).constants, "num_groups": s[2]}, ["x"], {"gn.weight": "weight", "gn.bias": "bias"},
        scalars={"gn.eps": s[3]}),
    "36_RMSNorm_": lambda b, s: _norm(b, s, scalars={"eps": s[2]}),
    "40_LayerNorm": lambda b, s: _norm(b, s, state={"ln.weight": "weight", "ln.bias": "bias"},
                                       scalars={"ln.eps": s[1]}),
    "42_Max_Pooling_2D": lambda b, s: Case(
        dict(zip(("batch_size", "channels", "height", "width"), b["x"].shape),
             kernel_size=s[4], stride=s[5], padding=s[6], dilation=s[7]), ["x"]),
    "47_Sum_reduction_over_a_dimension": _over_dim1,
    "48_Mean_reduction_over_a_dimension": _over_dim1,
    "49_Max_reduction_over_a_dimension": _over_dim1,
    "51_Argmax_over_a_dimension": _over_dim1,
    "67_conv_standard_1D": lambda b, s: Case(
        {"batch_size": b["x"].shape[0], "in_channels": b["x"].shape[1], "out_channels": b["weight"].shape[0],
         "kernel_size": b["weight"].shape[2], "length": b["x"].shape[2]}, ["x"], {"conv1d.weight": "weight"}),
    "89_cumsum": lambda b, s: Case({"batch_size": b["x"].shape[0], "input_shape": b["x"].shape[1:]}, ["x"]),
    "94_MSELoss": lambda b, s: Case(
        {"batch_size": b["predictions"].shape[0], "input_shape": b["predictions"].shape[1:]},
        ["predictions", "targets"]),
    "95_CrossEntropyLoss": lambda b, s: Case(
        {"batch_size": b["predictions"].shape[0], "num_classes": b["predictions"].shape[1],
         "input_shape": b["predictions"].shape[1:]}, ["predictions", "targets"]),
    "40_Matmul_Scaling_ResidualAdd": lambda b, s: _linear(
        b, s, ("in_features", "out_features"), "matmul", scalars={"scaling_factor": s[3]}, deviation=GEMM_SHAPE),
    "76_Gemm_Add_ReLU": lambda b, s: Case(
        {"batch_size": b["x"].shape[0], "in_features": b["x"].shape[1], "out_features": b["W"].shape[0],
         "bias_shape": b["bias"].shape}, ["x"], {"gemm.weight": "W", "bias": "bias"}, deviation=GEMM_SHAPE),
    "86_Matmul_Divide_GELU": lambda b, s: _linear(b, s, ("input_size", "output_size"), "linear",
                                                  scalars={"divisor": s[3]}),
}


def module_source(name: str, level: int, kernelbench: Path | None) -> Path:
    """The pinned module file: from `kernelbench` (copied into the cache), the cache, or downloaded."""
    rel = Path("KernelBench") / f"level{level}" / f"{name}.py"
    cached = CACHE / rel
    if kernelbench is not None:
        given = kernelbench / rel
        if not given.is_file():
            raise OracleError(f"{given}: no such file (is {kernelbench} a KernelBench checkout?)")
        _check_hash(name, given)
        cached.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(given, cached)
    elif not cached.is_file():
        url = f"https://raw.githubusercontent.com/{REPOSITORY}/{COMMIT}/{rel.as_posix()}"
        try:
            with urllib.request.urlopen(url, timeout=30) as resp:
                data = resp.read()
        except OSError as exc:
            raise OracleError(f"cannot download {url} ({exc}); pass --kernelbench DIR with a checkout of "
                              f"{REPOSITORY} at {COMMIT}") from None
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_bytes(data)
    _check_hash(name, cached)
    return cached


def _check_hash(name: str, path: Path) -> None:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != SHA256[name]:
        raise OracleError(f"{path} has sha256 {digest}, not the pinned {SHA256[name]} of {REPOSITORY}@{COMMIT[:12]}")


def load_module(path: Path, constants: dict):
    """A fresh copy of the module with `constants` set (each must exist in the module)."""
    spec = importlib.util.spec_from_file_location(f"kernelbench_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for key, value in constants.items():
        if not hasattr(mod, key):
            raise OracleError(f"{path.name} has no module constant {key}")
        setattr(mod, key, tuple(value) if isinstance(value, tuple) else value)
    return mod


def _to_torch(arr: np.ndarray, dtype: str):
    import torch
    if dtype == "bfloat16":
        arr = bf16_to_f32(arr)
    elif arr.dtype.kind == "f":
        arr = arr.astype(np.float32)
    return torch.from_numpy(np.ascontiguousarray(arr))


def _to_ours(out, like: np.ndarray, dtype: str) -> np.ndarray:
    import torch
    out = out.detach().reshape(like.shape)
    if dtype == "bfloat16":
        return out.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    return out.numpy().astype(like.dtype) if dtype != "float16" else out.to(torch.float16).numpy()


def tolerance_share(actual: np.ndarray, expected: np.ndarray, tolerance: dict, dtype: str) -> float:
    """The largest difference as a share of what the tolerance allows (exact: 0 or inf)."""
    a, e = (bf16_to_f32(x) if dtype == "bfloat16" else x for x in (actual, expected))
    if tolerance.get("exact") or a.dtype.kind != "f":
        return 0.0 if np.array_equal(a, e, equal_nan=a.dtype.kind == "f") else float("inf")
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    if "max_ulp" in tolerance:
        ulp = np.spacing(np.abs(e).astype(e.dtype)).astype(np.float64)
        return float(np.max(np.abs(a64 - e64) / ulp)) / tolerance["max_ulp"]
    allowed = tolerance.get("atol", 0.0) + tolerance.get("rtol", 0.0) * np.abs(e64)
    return float(np.max(np.abs(a64 - e64) / allowed))


@dataclass
class ShapeResult:
    """One shape: whether KernelBench's Model agrees with our reference (and our scalars with its values),
    the largest difference as a share of the tolerance, what disagrees, and the problem's known deviation."""

    problem: str
    shape: str
    agree: bool
    share: float
    message: str
    deviation: str


def check_shape(problem: Problem, shape: Shape, module_path: Path) -> ShapeResult:
    """Run KernelBench's module at `shape` on the suite's inputs for it and compare with reference.py."""
    import torch
    spec = LaunchSpec.load(shape.launch_path)
    bufs = problem_inputs(problem, spec, problem.launch(shape))
    scalars = spec_scalars(spec)
    dtypes = {name: buf.dtype.name for name, buf in spec.buffers.items()}
    case = CASES[problem.name](bufs, scalars)
    mod = load_module(module_path, case.constants)
    torch.manual_seed(0)
    model = mod.Model(*mod.get_init_inputs())
    kb_shapes = [tuple(t.shape) for t in mod.get_inputs()]
    ours = [tuple(bufs[n].shape) for n in case.inputs]
    issues = []
    if kb_shapes != ours and not case.own_shapes:
        issues.append(f"inputs {ours} but KernelBench's get_inputs() gives {kb_shapes}")
    named = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    unset = sorted(n for n, _ in model.named_parameters() if n not in case.state)
    if unset:
        raise OracleError(f"{problem.name}: the mapping leaves Model parameters {unset} unset")
    with torch.no_grad():
        for pname, buf in case.state.items():
            value = _to_torch(bufs[buf], dtypes[buf])
            if tuple(named[pname].shape) != tuple(value.shape):
                raise OracleError(f"{problem.name}: {pname} has shape {tuple(named[pname].shape)}, "
                                  f"our {buf} {tuple(value.shape)}")
            named[pname].copy_(value)
    for attr, value in case.scalars.items():
        theirs = model
        for part in attr.split("."):
            theirs = getattr(theirs, part)
        if np.float32(theirs) != np.float32(value):
            issues.append(f"our scalar {value!r} is not KernelBench's {attr} = {theirs!r}")
    if case.eval:
        model.eval()
    with torch.no_grad():
        out = model(*(_to_torch(bufs[n], dtypes[n]) for n in case.inputs))
    (name,) = problem.outputs
    got = {name: _to_ours(out, bufs[name], dtypes[name])}
    expected = problem.reference_fn()({k: v.copy() for k, v in bufs.items()}, scalars)
    ok, message = compare_to_reference(got, expected, problem.tolerance, problem.output_dtypes(shape))
    share = tolerance_share(got[name], expected[name], problem.tolerance, dtypes[name])
    issues += [] if ok else [message]
    return ShapeResult(problem.name, shape.name, not issues, share, "; ".join(issues) or "ok", case.deviation)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernelbench", type=Path, help=f"a checkout of {REPOSITORY} at {COMMIT[:12]}")
    ap.add_argument("--problems", help="comma-separated problem names (default: all 30)")
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        import torch
    except ImportError:
        raise SystemExit("error: torch is not installed (pip install -e '.[oracle]')") from None
    suite = load_suite("kernelbench")
    wanted = args.problems.split(",") if args.problems else [p.name for p in suite.problems]
    print(f"KernelBench {REPOSITORY}@{COMMIT}, torch {torch.__version__} on the CPU, float32; "
          f"tolerance share = largest difference / what the problem's tolerance allows")
    print(f"{'problem':<36} {'shape':<22} {'result':<9} {'share':>7}  message")
    results, deviations = [], {}
    try:
        for name in wanted:
            problem = suite.problem(name)
            path = module_source(name, problem.level, args.kernelbench)
            for shape in problem.shapes:
                if shape.role not in ("verify", "heldout"):
                    continue
                r = check_shape(problem, shape, path)
                results.append(r)
                if r.deviation:
                    deviations[r.problem] = r.deviation
                print(f"{r.problem:<36} {r.shape:<22} {'agree' if r.agree else 'DISAGREE':<9} {r.share:>7.3f}  "
                      f"{r.message}", flush=True)
    except AsmEvoError as exc:
        raise SystemExit(f"error: {exc}") from None
    print()
    for name, text in deviations.items():
        print(f"deviation {name}: {text}")
    problems = sorted({r.problem for r in results})
    bad = sorted({r.problem for r in results if not r.agree})
    print(f"\n{len(results) - sum(not r.agree for r in results)}/{len(results)} shapes agree; "
          f"{len(problems) - len(bad)}/{len(problems)} problems agree on every shape"
          + (f"; disagreeing: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, lambda argv: record.default_path(__file__, parse_args(argv).problems)))
