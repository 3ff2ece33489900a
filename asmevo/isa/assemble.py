"""Batched assembler / linker calls: per-line encodings, object assembly and linking.

Every helper makes one assembler call for a whole list of lines or a whole source, never one per
instruction. Who assembles is `find_assembler(target.processor)`: Triton's LLVM in its resident
worker (`asmevo.triton_llvm`), or the toolchain's tools run per call: llvm-mc, or clang's integrated
assembler (`clang -cc1as`, the same MC layer and output) where the toolchain ships no llvm-mc (the
PyPI one), and ld.lld.
"""
from __future__ import annotations

import functools
import io
import re
import tempfile

from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from ..errors import ToolchainError
from ..target import TargetId
from ..toolchain import Toolchain, find_assembler, find_toolchain
from ..triton_llvm import TritonLLVM

TRIPLE = "amdgcn-amd-amdhsa"
LINK_ARGS = ["--no-undefined"]  # beside `-shared --threads=1`, which both linkers are given
_ENC_RE = re.compile(r";\s*encoding:\s*\[([^\]]*)\]")
_ERR_RE = re.compile(r"^<stdin>:(\d+):\d+: error: (.*)$")
_TRITON_ERR_RE = re.compile(r"^[^:\n]+:(\d+):\d+: error: (.*)$", re.MULTILINE)
_LINE_LABEL = "__asmevo_line_{}"


def _features(target: TargetId) -> list[str]:
    return [f"{'+' if state == 'on' else '-'}{name}"
            for name, state in (("sramecc", target.sramecc), ("xnack", target.xnack)) if state in ("on", "off")]


def assembler_command(target: TargetId, *, obj: bool) -> tuple[Toolchain, str, list[str]]:
    """(toolchain, tool, arguments) that assemble stdin for `target` with the toolchain's own tools:
    an object on stdout when `obj`, else the listing with `; encoding: [...]` per instruction."""
    tc = find_toolchain(target.processor)
    feats = _features(target)
    if "llvm-mc" in tc.paths:
        args = [f"-triple={TRIPLE}", f"-mcpu={target.processor}"] + ([f"-mattr={','.join(feats)}"] if feats else [])
        return tc, "llvm-mc", args + (["-filetype=obj", "-o", "-", "-"] if obj else ["-show-encoding"])
    args = ["-cc1as", "-triple", TRIPLE, "-target-cpu", target.processor]
    args += [arg for feat in feats for arg in ("-target-feature", feat)]
    return tc, "clang", args + (["-filetype", "obj"] if obj else ["-filetype", "asm", "-show-encoding"]) + ["-o", "-", "-"]


def encode_lines(lines: list[str], target: TargetId) -> tuple[list[bytes | None], dict[int, str]]:
    """Encode each line (one instruction each, no labels) with one assembler call.

    Returns the encoding per line (None where the assembler rejected the line, or where the encoding
    needs a fixup) and the error message per rejected line index.
    """
    backend = find_assembler(target.processor)
    if isinstance(backend, TritonLLVM):
        return _encode_lines_triton(backend, lines, target)
    source = "\n".join(lines) + "\n"
    tc, tool, args = assembler_command(target, obj=False)
    proc = tc.run_unchecked(tool, args, input=source.encode())
    errors: dict[int, str] = {}
    for ln in proc.stderr.decode(errors="replace").splitlines():
        m = _ERR_RE.match(ln)
        if m:
            errors.setdefault(int(m.group(1)) - 1, m.group(2))
    encs = []
    for ln in proc.stdout.decode(errors="replace").splitlines():
        m = _ENC_RE.search(ln)
        if m:
            items = m.group(1).split(",") if m.group(1) else []
            encs.append(None if any(not x.startswith("0x") for x in items) else bytes(int(x, 16) for x in items))
    ok = [i for i in range(len(lines)) if i not in errors]
    if len(encs) != len(ok):
        raise ToolchainError(f"{tool} printed {len(encs)} encodings for {len(ok)} accepted lines")
    out: list[bytes | None] = [None] * len(lines)
    for i, enc in zip(ok, encs):
        out[i] = enc
    return out, errors


def _encode_lines_triton(triton: TritonLLVM, lines: list[str], target: TargetId
                         ) -> tuple[list[bytes | None], dict[int, str]]:
    """`encode_lines` through an object: each kept line follows a label of its own (the j-th kept line
    is line 2j + 3 of the assembled source), so its bytes are the text between its label and the next;
    a relocation in that range means it needs a fixup. Rejected lines are dropped and the rest
    assembled again (parse errors come first, fixup errors only once everything parses)."""
    errors: dict[int, str] = {}
    keep = list(range(len(lines)))
    for _ in range(3):
        body = "".join(f"{_LINE_LABEL.format(k)}:\n{lines[k]}\n" for k in keep)
        obj, diagnostics = triton.assemble(f".text\n{body}{_LINE_LABEL.format('end')}:\n", target.processor,
                                           ",".join(_features(target)))
        if obj is not None:
            return _object_encodings(obj, keep, len(lines)), errors
        rejected = [(keep[(int(m.group(1)) - 3) // 2], m.group(2)) for m in _TRITON_ERR_RE.finditer(diagnostics)
                    if 3 <= int(m.group(1)) < 3 + 2 * len(keep)]
        if not rejected:
            break
        for k, message in rejected:
            errors.setdefault(k, message)
        keep = [k for k in keep if k not in errors]
    raise ToolchainError(f"Triton's assembler failed: {_first_error(diagnostics)}")


def _object_encodings(obj: bytes, keep: list[int], count: int) -> list[bytes | None]:
    elf = ELFFile(io.BytesIO(obj))
    text = elf.get_section_by_name(".text")
    data = text.data()
    where = {sym.name: sym["st_value"] for sym in elf.get_section_by_name(".symtab").iter_symbols()
             if sym.name.startswith("__asmevo_line_")}
    relocated = [rel["r_offset"] for sec in elf.iter_sections() if isinstance(sec, RelocationSection)
                 and elf.get_section(sec["sh_info"]).name == ".text" for rel in sec.iter_relocations()]
    out: list[bytes | None] = [None] * count
    for j, k in enumerate(keep):
        lo = where[_LINE_LABEL.format(k)]
        hi = where[_LINE_LABEL.format(keep[j + 1] if j + 1 < len(keep) else "end")]
        out[k] = None if any(lo <= r < hi for r in relocated) else data[lo:hi]
    return out


def _first_error(diagnostics: str) -> str:
    """The first error, located as llvm-mc locates it on stdin (`<stdin>:LINE:COL: error: ...`)."""
    m = _TRITON_ERR_RE.search(diagnostics)
    if m:
        return f"<stdin>{m.group(0)[m.group(0).index(':'):]}"
    lines = [ln.strip() for ln in diagnostics.splitlines() if ln.strip()]
    return next((ln for ln in lines if "error" in ln), lines[0] if lines else "no message")


def _backend_key(backend: Toolchain | TritonLLVM) -> str:
    return "triton" if isinstance(backend, TritonLLVM) else backend.origin


def assemble(source: str, target: TargetId) -> bytes:
    """Assemble a complete source into a relocatable object (bytes). The last results are
    cached (per assembler): a round trip assembles the same source to verify it and to rebuild."""
    return _assemble(source, target, _backend_key(find_assembler(target.processor)))


def link(obj: bytes, target: TargetId) -> bytes:
    """Link one relocatable object for `target` into a shared code object (last results cached)."""
    return _link(obj, target, _backend_key(find_assembler(target.processor)))


@functools.lru_cache(maxsize=2)
def _assemble(source: str, target: TargetId, backend_key: str) -> bytes:
    backend = find_assembler(target.processor)
    if isinstance(backend, TritonLLVM):
        obj, diagnostics = backend.assemble(source, target.processor, ",".join(_features(target)))
        if obj is None:
            raise ToolchainError(f"Triton's assembler failed: {_first_error(diagnostics)}")
        return obj
    tc, tool, args = assembler_command(target, obj=True)
    return tc.run(tool, args, input=source.encode())


@functools.lru_cache(maxsize=2)
def _link(obj: bytes, target: TargetId, backend_key: str) -> bytes:
    backend = find_assembler(target.processor)
    if isinstance(backend, TritonLLVM):
        return backend.link(obj, LINK_ARGS)
    with tempfile.NamedTemporaryFile(prefix="asmevo-ld-", suffix=".o") as src:
        src.write(obj)
        src.flush()
        return backend.run("ld.lld", ["-shared", *LINK_ARGS, "--threads=1", "-o", "-", src.name])
