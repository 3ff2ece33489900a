#!/usr/bin/env python3
"""Rebuild every KernelBench code object from source and record provenance in manifest.json.

    python benchmarks/kernelbench/build.py            # rebuild .co files in place, rewrite manifest.json
    python benchmarks/kernelbench/build.py --check    # rebuild into a temp dir, compare with committed files
    python benchmarks/kernelbench/build.py 19_ReLU    # only the named problems

HIP sources (`kernel.hip`) are compiled by clang-19 with fixed flags; Triton sources (`kernel.py`, exposing
KERNEL / SIGNATURE / CONSTEXPRS / OPTIONS) are compiled for gfx942 in a subprocess with a private, empty
TRITON_CACHE_DIR and TRITON_DEFAULT_FP_FUSION=1. --check exits 1 when any rebuilt object differs.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent
CLANG = shutil.which("clang-19") or "/usr/lib/llvm-19/bin/clang"
# -fuse-cuid=none: the default CUID is random per invocation and lands in a __hip_cuid_* symbol,
# which would make every rebuild differ.
HIP_FLAGS = ["-x", "hip", "--offload-arch=gfx942", "-nogpulib", "-nogpuinc", "--cuda-device-only",
             "--no-gpu-bundle-output", "-O3", "-fuse-cuid=none", "-I", "include"]
# No line info: debug sections would embed checkout paths and make builds path-dependent.
TRITON_ENV = {"TRITON_DEFAULT_FP_FUSION": "1", "TRITON_DISABLE_LINE_INFO": "1"}
TRITON_TARGET = {"backend": "hip", "arch": "gfx942", "warp_size": 64}
CODE_OBJECT = "kernel.co"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def problem_dirs(names: list[str]) -> list[Path]:
    suite = yaml.safe_load((ROOT / "suite.yaml").read_text())
    dirs = [ROOT / p for p in suite["problems"]]
    if names:
        dirs = [d for d in dirs if d.name in names]
    return dirs


def clang_version() -> str:
    return subprocess.run([CLANG, "--version"], capture_output=True, text=True, check=True).stdout.splitlines()[0]


def build_hip(src_dir: Path, out: Path) -> dict:
    """Compile kernel.hip; paths are relative to the suite root so the command is location independent."""
    cmd = [CLANG, *HIP_FLAGS, "-o", str(out), str((src_dir / "kernel.hip").relative_to(ROOT))]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"error: clang failed for {src_dir.name}: {proc.stderr.strip().splitlines()[-1]}")
    return {"toolchain": "hip-clang19", "compiler": clang_version(), "source": "kernel.hip",
            "command": ["clang-19", *HIP_FLAGS, "-o", CODE_OBJECT, f"{src_dir.name}/kernel.hip"]}


def _load_module(path: Path):
    spec = importlib.util.spec_from_file_location(f"kb_{path.parent.name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def triton_worker(jobs: list[tuple[str, str]]) -> None:
    """Runs in a subprocess (env prepared by build_triton): compile each (kernel.py, out.co); print JSON meta."""
    import triton
    from triton.backends.compiler import GPUTarget

    results = {}
    for src, out in jobs:
        mod = _load_module(Path(src))
        pointers = [i for i, t in enumerate(mod.SIGNATURE.values()) if t.startswith("*")]
        attrs = {(i,): [["tt.divisibility", 16]] for i in pointers}
        ast = triton.compiler.ASTSource(fn=mod.KERNEL, signature=mod.SIGNATURE, constexprs=mod.CONSTEXPRS,
                                        attrs=attrs)
        k = triton.compile(ast, target=GPUTarget(**TRITON_TARGET), options=mod.OPTIONS)
        Path(out).write_bytes(k.asm["hsaco"])
        results[src] = {"name": k.metadata.name, "shared": k.metadata.shared, "num_warps": k.metadata.num_warps,
                        "triton": triton.__version__}
    print(json.dumps(results))


def build_triton(jobs: list[tuple[Path, Path]]) -> dict[Path, dict]:
    if not jobs:
        return {}
    with tempfile.TemporaryDirectory(prefix="kb-triton-cache-") as cache:
        env = {**os.environ, **TRITON_ENV, "TRITON_CACHE_DIR": cache}
        payload = json.dumps([(str(s / "kernel.py"), str(o)) for s, o in jobs])
        proc = subprocess.run([sys.executable, __file__, "--triton-worker", payload], env=env, capture_output=True,
                              text=True)
    if proc.returncode != 0:
        raise SystemExit(f"error: triton compile failed: {proc.stderr.strip().splitlines()[-1]}")
    meta = json.loads(proc.stdout.strip().splitlines()[-1])
    out = {}
    for src_dir, _ in jobs:
        m = meta[str(src_dir / "kernel.py")]
        mod_src = _load_module(src_dir / "kernel.py")
        out[src_dir] = {"toolchain": "triton", "compiler": f"triton {m['triton']} (bundled LLVM, gfx942 target)",
                        "source": "kernel.py", "symbol": m["name"], "dynamic_lds": m["shared"],
                        "options": {**mod_src.OPTIONS, "constexprs": mod_src.CONSTEXPRS,
                                    "target": TRITON_TARGET, "env": TRITON_ENV,
                                    "pointer_divisibility": 16}}
    return out


def build_all(dirs: list[Path], out_dir: Path | None) -> dict[str, dict]:
    """Build into each problem dir (out_dir None) or into out_dir/<name>.co; return manifest entries."""
    def dest(d: Path) -> Path:
        return d / CODE_OBJECT if out_dir is None else out_dir / f"{d.name}.co"

    entries: dict[str, dict] = {}
    triton_jobs = []
    for d in dirs:
        if (d / "kernel.hip").exists():
            entries[d.name] = build_hip(d, dest(d))
        elif (d / "kernel.py").exists():
            triton_jobs.append((d, dest(d)))
        else:
            raise SystemExit(f"error: {d.name} has neither kernel.hip nor kernel.py")
    for d, meta in build_triton(triton_jobs).items():
        entries[d.name] = meta
    for d in dirs:
        entries[d.name].update({"code_object": CODE_OBJECT, "sha256": sha256(dest(d)), "reproducible": True})
    return {d.name: entries[d.name] for d in dirs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="rebuild into a temp dir and compare with committed objects")
    ap.add_argument("--triton-worker", help=argparse.SUPPRESS)
    ap.add_argument("problems", nargs="*")
    args = ap.parse_args(argv)
    if args.triton_worker:
        triton_worker(json.loads(args.triton_worker))
        return 0
    dirs = problem_dirs(args.problems)
    manifest_path = ROOT / "manifest.json"
    if args.check:
        with tempfile.TemporaryDirectory(prefix="kb-check-") as tmp:
            fresh = build_all(dirs, Path(tmp))
        bad = 0
        for d in dirs:
            committed = sha256(d / CODE_OBJECT) if (d / CODE_OBJECT).exists() else "missing"
            same = committed == fresh[d.name]["sha256"]
            bad += not same
            print(f"{'ok  ' if same else 'DIFF'} {d.name}")
        print(f"{len(dirs) - bad}/{len(dirs)} code objects rebuild bit-identically")
        return 1 if bad else 0
    entries = build_all(dirs, None)
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {"problems": {}}
    manifest["suite"] = "kernelbench"
    manifest["note"] = "Generated by build.py; sha256 is of <problem>/kernel.co."
    manifest["problems"].update(entries)
    manifest["problems"] = {d.name: manifest["problems"][d.name] for d in problem_dirs([])
                            if d.name in manifest["problems"]}
    manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=False) + "\n")
    print(f"built {len(entries)} code objects; manifest.json updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
