#!/usr/bin/env python3
"""Build the suite's code objects: fetch the pinned wheels, extract each kernel by AST, compile it with
Triton for gfx942, and check it against manifest.json.

    python benchmarks/production/triton/build.py            # build what is missing, verify sha256
    python benchmarks/production/triton/build.py --update   # rebuild all, rewrite manifest.json

Outputs go to benchmarks/.cache/triton/{src,co}/<problem>.{py,co} (gitignored). Compilation runs in a
subprocess with a fresh private TRITON_CACHE_DIR and TRITON_DEFAULT_FP_FUSION=1, as KernelBench's build does,
so a rebuild is bit-identical; `prepare()` (the suite's prepare hook) fails when an object differs from the
sha256 recorded in the committed manifest.json.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from extract import extract  # noqa: E402
from kernels import RECIPES, Recipe  # noqa: E402
from wheels import CACHE, WHEELS, read_source  # noqa: E402

SRC_DIR = CACHE / "src"
CO_DIR = CACHE / "co"
MANIFEST = HERE / "manifest.json"
# No line info: debug sections would embed checkout paths and make builds path-dependent.
TRITON_ENV = {"TRITON_DEFAULT_FP_FUSION": "1", "TRITON_DISABLE_LINE_INFO": "1"}
TARGET = {"backend": "hip", "arch": "gfx942", "warp_size": 64}


class BuildError(RuntimeError):
    """A kernel could not be extracted or compiled, or differs from the manifest."""


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_source(name: str, recipe: Recipe) -> Path:
    """The extracted standalone module for `name` (rewritten only when its text changes)."""
    text = extract(lambda member: read_source(recipe.package, member), recipe.member, recipe.function,
                   set(recipe.signature))
    path = SRC_DIR / f"{name}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path


def _constexpr(value: object):
    import triton.language as tl
    return getattr(tl, value[3:]) if isinstance(value, str) and value.startswith("tl.") else value


def worker(jobs: list[str]) -> None:
    """Subprocess body: compile each named recipe from its extracted source; print JSON metadata."""
    import triton
    from triton.backends.compiler import GPUTarget

    out = {}
    for name in jobs:
        r = RECIPES[name]
        spec = importlib.util.spec_from_file_location(f"prod_triton_{name}", SRC_DIR / f"{name}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        params = list(r.signature)
        attrs = {(params.index(p),): [["tt.divisibility", 16]] for p, t in r.signature.items() if t.startswith("*")}
        src = triton.compiler.ASTSource(fn=getattr(mod, r.function), signature=r.signature, attrs=attrs,
                                        constexprs={k: _constexpr(v) for k, v in r.constexprs.items()})
        k = triton.compile(src, target=GPUTarget(**TARGET), options=dict(r.options))
        (CO_DIR / f"{name}.co").write_bytes(k.asm["hsaco"])
        out[name] = {"symbol": k.metadata.name, "dynamic_lds": k.metadata.shared,
                     "num_warps": k.metadata.num_warps, "triton": triton.__version__}
    print(json.dumps(out))


def compile_all(names: list[str]) -> dict[str, dict]:
    if not names:
        return {}
    CO_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="prod-triton-cache-") as cache:
        env = {**os.environ, **TRITON_ENV, "TRITON_CACHE_DIR": cache}
        proc = subprocess.run([sys.executable, __file__, "--worker", json.dumps(names)], env=env,
                              capture_output=True, text=True)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines() or ["no output"]
        raise BuildError(f"triton compile failed: {' | '.join(lines[-3:])}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _entry(name: str, meta: dict) -> dict:
    r = RECIPES[name]
    w = WHEELS[r.package]
    return {"family": r.family, "package": r.package, "version": w.version, "wheel": w.filename,
            "wheel_sha256": w.sha256, "file": r.member, "function": r.function, "symbol": meta["symbol"],
            "compiler": f"triton {meta['triton']} (bundled LLVM, gfx942 target)", "dynamic_lds": meta["dynamic_lds"],
            "num_warps": meta["num_warps"], "options": r.options, "constexprs": r.constexprs,
            "target": TARGET, "env": TRITON_ENV, "pointer_divisibility": 16,
            "code_object": f"cache:triton/co/{name}.co", "sha256": sha256(CO_DIR / f"{name}.co")}


def load_manifest() -> dict:
    return json.loads(MANIFEST.read_text()) if MANIFEST.exists() else {"problems": {}}


def prepare(names: list[str] | None = None) -> None:
    """Fetch, extract and compile whatever is missing; every object must match manifest.json."""
    problems = load_manifest()["problems"]
    names = names or list(RECIPES)
    missing = [n for n in names if n not in problems]
    if missing:
        raise BuildError(f"manifest.json has no entry for {', '.join(missing)} (run build.py --update)")
    for n in names:
        write_source(n, RECIPES[n])
    stale = [n for n in names if not (CO_DIR / f"{n}.co").exists() or sha256(CO_DIR / f"{n}.co") != problems[n]["sha256"]]
    compile_all(stale)
    for n in stale:
        got = sha256(CO_DIR / f"{n}.co")
        if got != problems[n]["sha256"]:
            raise BuildError(f"{n}: rebuilt code object has sha256 {got}, manifest.json records "
                             f"{problems[n]['sha256']} (toolchain differs? run build.py --update to accept)")


def update(names: list[str]) -> None:
    for n in names:
        write_source(n, RECIPES[n])
    meta = compile_all(names)
    manifest = load_manifest()
    manifest["suite"] = "triton"
    manifest["note"] = "Generated by build.py --update; code objects are built into benchmarks/.cache/triton/co."
    manifest["problems"].update({n: _entry(n, meta[n]) for n in names})
    manifest["problems"] = {n: manifest["problems"][n] for n in RECIPES if n in manifest["problems"]}
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--update", action="store_true", help="rebuild and rewrite manifest.json")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("problems", nargs="*", help="only these problems")
    args = ap.parse_args(argv)
    if args.worker:
        worker(json.loads(args.worker))
        return 0
    names = args.problems or list(RECIPES)
    unknown = sorted(set(names) - set(RECIPES))
    if unknown:
        ap.error(f"unknown problems: {', '.join(unknown)}")
    try:
        update(names) if args.update else prepare(names)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{len(names)} code objects {'rebuilt, manifest.json updated' if args.update else 'ready'} in {CO_DIR}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
