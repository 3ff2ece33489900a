"""Sweep fp32 inputs through the mutation benchmark's 29_Softplus survivors, bit for bit.

Each survivor swaps the sources of one TwoSum subtraction on the path of one of the four elements
each thread computes: `v_sub_f32 v14, v12, v18` at 0x1d98 (seed 0; element 1, block .Lbb_1c2c,
guarded by the `s_and_saveexec` at 0x1c08) and `v_sub_f32 v4, v4, v9` at 0x1fac (seed 1; element 2,
guarded at 0x1c14, or at 0x1e2c after element 1). This runs every fp32 bit pattern of the given ranges through that
path of K0 and K1 on the emulator and compares the outputs. Both kernels get the same patch first:
the other elements' guards take the empty mask, so the time goes to the element under test; a
sample run checks that the patch leaves that element's results as the unpatched kernel computes
them.

With `--log1p` both kernels get a second common patch: the element's log1p input e (which the kernel
computes as exp(x)) is the loaded x itself, and the x > 20 bypass never fires, so the patterns swept
are the values of e. For x <= 20 the kernel's output is log1p(e) for e = exp(x) computed the same way
in K0 and K1, so agreement on every e a hardware exp can return (0 <= e <= e^20 within an ulp) shows
the survivor equivalent whatever exp's rounding. A sample run checks the patched path against
float64 log1p.

    python benchmarks/verification/softplus_sweep.py --range 0x3c800000:0x3f000000 [--range ...]
        [--mutation 0x1d98|0x1fac] [--chunk 2097152] [--faithful] [--log1p]

Prints per chunk how many patterns differ, then the total and the first differing inputs; exits 1
when any differs. Record: softplus_sweep-0xADDR[-log1p][-faithful]-RANGES.txt beside this script.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from asmevo.codeobj import CodeObject  # noqa: E402
from asmevo.device import get_device  # noqa: E402
from asmevo.device.launch import run_launch  # noqa: E402
from asmevo.recover import recover  # noqa: E402
from asmevo.suites import load_suite  # noqa: E402
from asmevo.launches import launch_from_dict  # noqa: E402
from benchmarks import record  # noqa: E402
from line_edits import build  # noqa: E402

# Guards (s_and_saveexec) of each element's block, as (address, original, empty-mask version).
GUARDS = {0: [(0x17bc, "s_and_saveexec_b64 s[6:7], s[8:9]", "s_and_saveexec_b64 s[6:7], 0")],
          1: [(0x1c08, "s_and_saveexec_b64 s[4:5], s[2:3]", "s_and_saveexec_b64 s[4:5], 0")],
          2: [(0x1c14, "s_and_saveexec_b64 s[2:3], s[0:1]", "s_and_saveexec_b64 s[2:3], 0"),
              (0x1e2c, "s_and_saveexec_b64 s[2:3], s[0:1]", "s_and_saveexec_b64 s[2:3], 0")],
          3: [(0x1c20, "s_and_saveexec_b64 s[0:1], vcc", "s_and_saveexec_b64 s[0:1], 0"),
              (0x2034, "s_and_saveexec_b64 s[0:1], vcc", "s_and_saveexec_b64 s[0:1], 0")]}
# address: (element, original, mutated)
MUTATIONS = {0x1d98: (1, "v_sub_f32_e32 v14, v12, v18", "v_sub_f32_e32 v14, v18, v12"),
             0x1fac: (2, "v_sub_f32_e32 v4, v4, v9", "v_sub_f32_e32 v4, v9, v4")}
# --log1p, per element: e = exp(x) (the final ldexp of elements 1 and 2's packed exp) becomes x
# (v2, v3), and the x > 20 threshold becomes +inf.
LOG1P_INPUT = {1: {0x1b28: ("v_ldexp_f32 v4, v4, v6", "v_mov_b32_e32 v4, v2"),
                   0x1ddc: ("s_mov_b32 s6, 0x41a00000", "s_mov_b32 s6, 0x7f800000")},
               2: {0x1b18: ("v_ldexp_f32 v5, v5, v6", "v_mov_b32_e32 v5, v3"),
                   0x1fe4: ("s_mov_b32 s4, 0x41a00000", "s_mov_b32 s4, 0x7f800000")}}
PER_GROUP = 1024  # elements per workgroup (256 threads x 4)


def run(dev, code: bytes, x: np.ndarray) -> np.ndarray:
    """The kernel's output bits for input x."""
    n = len(x)
    spec = launch_from_dict({
        "kernel": "softplus_kernel", "grid": [-(-n // PER_GROUP), 1, 1], "block": [256, 1, 1],
        "args": [{"buffer": "x", "dtype": "float32", "shape": [n], "init": "zeros"},
                 {"buffer": "y", "dtype": "float32", "shape": [n], "init": "zeros"},
                 {"scalar": n, "dtype": "int32"},
                 {"buffer": "global_scratch", "dtype": "uint8", "shape": [0], "init": "zeros"},
                 {"buffer": "profile_scratch", "dtype": "uint8", "shape": [0], "init": "zeros"}]}).spec
    inputs = {"x": x, "y": np.zeros_like(x), "global_scratch": np.zeros(0, np.uint8),
              "profile_scratch": np.zeros(0, np.uint8)}
    out, _ = run_launch(dev, code, spec, inputs)
    return out["y"].view(np.uint32)


def span(text: str) -> tuple[int, int]:
    lo, hi = text.split(":")
    return int(lo, 0), int(hi, 0)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--range", type=span, action="append", required=True, help="LO:HI bit patterns (HI excluded)")
    ap.add_argument("--chunk", type=int, default=1 << 21, help="patterns per launch")
    ap.add_argument("--faithful", action="store_true", help="faithfully rounded transcendentals")
    ap.add_argument("--mutation", type=lambda t: int(t, 0), choices=sorted(MUTATIONS), default=0x1d98,
                    help="the survivor's address (default 0x1d98)")
    ap.add_argument("--log1p", action="store_true", help="sweep log1p's input e instead of x")
    return ap.parse_args(argv)


def record_path(argv: list[str]) -> Path:
    """softplus_sweep-0xADDR[-log1p][-faithful]-LO_HI[...].txt"""
    args = parse_args(argv)
    return record.default_path(__file__, f"0x{args.mutation:x}", args.log1p and "log1p", args.faithful and "faithful",
                               *(f"0x{lo:x}_0x{hi:x}" for lo, hi in args.range))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    element, original, mutated = MUTATIONS[args.mutation]
    common = {a: (old, new) for k, guards in GUARDS.items() if k != element for a, old, new in guards}
    if args.log1p:
        common.update(LOG1P_INPUT[element])
    problem = load_suite("kernelbench").problem("29_Softplus")
    rec = recover(problem.code_object)
    lines = rec.source.splitlines()
    k0 = build(lines, rec.info, common)
    k1 = build(lines, rec.info, {**common, args.mutation: (original, mutated)})
    dev = get_device("emu", faithful=args.faithful)
    rng = np.random.default_rng(0)
    if args.log1p:
        sample = np.exp(rng.uniform(-20, 20, 4 * PER_GROUP)).astype(np.float32)
        got = run(dev, k0, sample)[element::4].view(np.float32).astype(np.float64)
        want = np.log1p(sample[element::4].astype(np.float64))
        if not np.allclose(got, want, rtol=1e-6, atol=0):
            raise SystemExit(f"the --log1p patch does not compute log1p of element {element}'s input")
    else:
        sample = (rng.standard_normal(4 * PER_GROUP) * 4).astype(np.float32)
        unpatched = run(dev, CodeObject.from_path(problem.code_object).data, sample)
        if not (run(dev, k0, sample)[element::4] == unpatched[element::4]).all():
            raise SystemExit(f"the patch changed element {element}'s results")
    start, compared, differing = time.perf_counter(), 0, []
    for lo_all, hi_all in args.range:
        for lo in range(lo_all, hi_all, args.chunk):
            hi = min(hi_all, lo + args.chunk)
            x = np.zeros(4 * (hi - lo), np.uint32)
            x[element::4] = np.arange(lo, hi, dtype=np.uint64).astype(np.uint32)  # one element per thread
            y0 = run(dev, k0, x.view(np.float32))[element::4]
            y1 = run(dev, k1, x.view(np.float32))[element::4]
            bad = np.flatnonzero(y0 != y1)
            differing += [(lo + int(i), int(y0[i]), int(y1[i])) for i in bad]
            compared += hi - lo
            print(f"[0x{lo:08x}, 0x{hi:08x}): {len(bad)} differ; {compared} compared, "
                  f"{time.perf_counter() - start:.0f} s", flush=True)
    for pattern, a, b in differing[:10]:
        print(f"DIFFER x=0x{pattern:08x}: K0 0x{a:08x}, K1 0x{b:08x}")
    rounding = "faithfully" if args.faithful else "correctly"
    what = "log1p inputs" if args.log1p else "fp32 patterns"
    print(f"{compared} {what} through element {element} (0x{args.mutation:x}), {len(differing)} differing, "
          f"transcendentals {rounding} rounded, {time.perf_counter() - start:.0f} s")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(record.main_recorded(main, record_path))
