"""The evidence for ignoring bits 0x6000 of the `v_mfma_ld_scale` prefix of gfx950's scaled MFMAs
(asmevo/emu/README_mfma.md): where AITer's objects set them, and what AITer's MXFP4 GEMM computes with them
ignored against an independent numpy reference.

1. Census: every gfx950 code object of the pinned amd-aiter wheel: its scaled MFMAs, how many set bit 13
   (op_sel(2)) and bit 14 (op_sel_hi(2)) of the prefix's dword 0, whether any sets another prefix field the
   emulator refuses, and how many printed instructions (same operands and modifiers, so the same operation as far
   as LLVM's syntax goes) occur both with and without a bit.
2. f4gemm objects of several tiles on the emulator, at shapes whose K loop runs both unrolled halves, with the
   `aiter_gfx950` suite's f4gemm inputs (random fp4 bytes, four distinct random E8M0 codes per scale dword, AITer's
   scale and weight layouts) against the suite's float64 reference: the largest error relative to the largest
   output, the share of bf16-identical outputs, and the executed scaled MFMAs by prefix bits.
3. Controls on one shape, showing the comparison would see a wrong guess: the scales with their bytes swapped in
   pairs (byte ^ 1: the result if a set bit 13 flipped op_sel; byte ^ 2: op_sel_hi) and not shuffled at all.

    python benchmarks/production/f4gemm_scale_bits.py

Record: f4gemm_scale_bits.txt beside this script (benchmarks/record.py).
"""
from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from asmevo.calibrate.aiter_launches import f4gemm  # noqa: E402
from asmevo.calibrate.aiter_wheel import EXTRACT, extract, fetch_wheel  # noqa: E402
from asmevo.codeobj import parsed  # noqa: E402
from asmevo.compare import compare_to_reference  # noqa: E402
from asmevo.device import get_device  # noqa: E402
from asmevo.device.launch import LaunchSpec, make_inputs, run_launch  # noqa: E402
from asmevo.emu.vop3p import PREFIX_UNMODELLED  # noqa: E402
from asmevo.errors import AsmEvoError  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from benchmarks import record  # noqa: E402

# (tile M, tile N, M, N, K): every shipped BpreShuffle tile family's corner cases: M not a tile multiple, more
# than one workgroup in M or N, K of several loop iterations
RUNS = [(32, 128, 32, 128, 4096), (64, 256, 100, 256, 2048), (96, 128, 130, 256, 1536), (128, 256, 130, 256, 3072),
        (192, 128, 200, 384, 1024), (256, 256, 300, 512, 1024), (32, 1024, 96, 1024, 512), (64, 640, 64, 640, 1024)]
CONTROL = (32, 128, 32, 128, 4096)


def prefix_words(ins) -> tuple[int, int]:
    return int.from_bytes(ins.encoding[:4], "little"), int.from_bytes(ins.encoding[4:8], "little")


def census(files: list[Path]) -> None:
    per_dir: collections.Counter[str] = collections.Counter()
    mfmas = bit13 = bit14 = other = 0
    formats: collections.Counter[tuple[str, str]] = collections.Counter()
    mixed_objects = mixed_groups = 0
    for path in files:
        scaled = [i for i in parsed(path.read_bytes()).listing.instructions if i.mnemonic.startswith("v_mfma_scale")]
        if not scaled:
            continue
        per_dir[path.parent.relative_to(EXTRACT / "aiter_meta" / "hsa" / "gfx950").as_posix()] += 1
        groups: dict[str, set[int]] = collections.defaultdict(set)
        for ins in scaled:
            w0, w1 = prefix_words(ins)
            mfmas += 1
            bit13 += bool(w0 & 0x2000)
            bit14 += bool(w0 & 0x4000)
            other += any(w & mask for w, (mask, _) in zip((w0, w1), PREFIX_UNMODELLED))
            formats[(ins.modifier("cbsz") or "0", ins.modifier("blgp") or "0")] += 1
            groups[ins.text()].add(w0 & 0x6000)
        mixed = sum(len(bits) > 1 for bits in groups.values())
        mixed_groups += mixed
        mixed_objects += mixed > 0
    print(f"gfx950 code objects: {len(files)}; with scaled MFMAs: {sum(per_dir.values())} "
          f"({', '.join(f'{d} {n}' for d, n in sorted(per_dir.items()))})")
    print(f"scaled MFMAs: {mfmas}; prefix bit 13 set: {bit13}; bit 14 set: {bit14}; another prefix field set: {other}")
    print(f"formats (cbsz, blgp): {', '.join(f'{a},{b}: {n}' for (a, b), n in sorted(formats.items()))}")
    print(f"printed instructions occurring with different bits 0x6000: {mixed_groups}, in {mixed_objects} objects")


def launch(tm: int, tn: int, m: int, n: int, k: int) -> tuple[Path, dict]:
    """(code object, launch-spec mapping) of the BpreShuffle tm x tn object at M, N, K."""
    name = f"f4gemm_bf16_per1x32Fp4_BpreShuffle_{tm}x{tn}"
    grid, block, struct = f4gemm(m, n, k, tm, tn)
    spec = {"kernel": f"_ZN5aiter{len(name)}{name}E", "grid": grid, "block": block, "dynamic_lds": 0, "seed": 0,
            "args": [struct]}
    return EXTRACT / "aiter_meta" / "hsa" / "gfx950" / "f4gemm" / f"{name}.co", spec


def run(problem, tile: tuple, scale_bytes=None) -> tuple[dict, object, dict]:
    """(outputs, launch result, reference) of one f4gemm launch on the suite's generated inputs; `scale_bytes`
    rewrites the scale buffers the kernel sees (the reference keeps the true ones)."""
    path, d = launch(*tile)
    spec = LaunchSpec.from_dict(d)
    inputs = make_inputs(spec, {**make_inputs(spec), **problem.generator_fn()(d, np.random.default_rng(0))})
    given = dict(inputs)
    if scale_bytes is not None:
        given.update({n: scale_bytes(inputs[n]) for n in ("scale_A", "scale_B")})
    outputs, result = run_launch(get_device("emu"), path, spec, given)
    return outputs, result, problem.reference_fn()(inputs, [])


def row_major(stored: np.ndarray) -> np.ndarray:
    """The scale matrix e8m0_shuffle's layout holds, row-major: what the kernel reads if the host did not shuffle."""
    rows, cols = stored.shape
    return stored.reshape(rows // 32, cols // 8, 4, 16, 2, 2).transpose(0, 5, 3, 1, 4, 2).reshape(rows, cols)


def compare(problem, outputs: dict, expected: dict) -> str:
    got = outputs["D"].astype(np.uint32) << 16
    want = expected["D"].astype(np.uint32) << 16
    err = np.abs(got.view(np.float32).astype(np.float64) - want.view(np.float32))
    ok, _ = compare_to_reference(outputs, expected, problem.tolerance, {"D": "bfloat16"})
    outside = np.mean(~np.isclose(got.view(np.float32), want.view(np.float32), rtol=problem.tolerance["rtol"],
                                  atol=problem.tolerance["atol"]))
    return (f"max |err| / max |ref| {err.max() / np.abs(want.view(np.float32)).max():.2e}, bf16-identical "
            f"{np.mean(outputs['D'] == expected['D']):.4f}, outside tolerance {outside:.4f}, "
            f"{'matches' if ok else 'MISSES'} the reference")


def executed_bits(path: Path, result) -> str:
    by_address = parsed(path.read_bytes()).listing.by_address()
    counts: collections.Counter[int] = collections.Counter()
    for pc, n in result.report.pc_counts.items():
        ins = by_address[pc]
        if n and ins.mnemonic.startswith("v_mfma_scale"):
            counts[(prefix_words(ins)[0] >> 13) & 3] += n
    return ", ".join(f"{label} {counts[b]}" for b, label in ((3, "both bits"), (1, "bit 13 only"),
                                                            (2, "bit 14 only"), (0, "neither")))


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    try:
        files = extract(fetch_wheel(), "gfx950")
        problem = load_suite("aiter_gfx950").problem("f4gemm")
    except AsmEvoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    census(files)
    print("\nf4gemm (bits 0x6000 ignored) against the aiter_gfx950 suite's reference:")
    for tile in RUNS:
        tm, tn, m, n, k = tile
        outputs, result, expected = run(problem, tile)
        path, _ = launch(*tile)
        kinds = sorted({f["kind"] for f in result.findings})
        print(f"  {tm}x{tn} M={m} N={n} K={k}: {compare(problem, outputs, expected)}; findings {kinds}")
        print(f"    scaled MFMAs executed (wave-instructions): {executed_bits(path, result)}")
    print(f"\ncontrols at {CONTROL[0]}x{CONTROL[1]} M={CONTROL[2]} N={CONTROL[3]} K={CONTROL[4]} "
          "(the kernel sees altered scale bytes, the reference the true ones):")
    swap = {"bytes swapped in pairs (byte ^ 1, op_sel flipped)": 1, "byte ^ 2 (op_sel_hi flipped)": 2}
    for label, xor in swap.items():
        outputs, _, expected = run(problem, CONTROL, lambda s, x=xor: s.reshape(-1, 4)[:, np.arange(4) ^ x]
                                   .reshape(s.shape))
        print(f"  {label}: {compare(problem, outputs, expected)}")
    outputs, _, expected = run(problem, CONTROL, row_major)
    print(f"  scales not shuffled: {compare(problem, outputs, expected)}")
    return 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record.default_path(__file__)))
