"""Rebuild a code object from a recovered (possibly edited) source and its recovery.json.

Before assembling, each kernel's code is rescanned and its register directives and metadata
counts are regenerated: never below what the code needs, and K0's larger values kept unless
`shrink` (or, for VGPRs, unless the source's `.amdhsa_next_free_vgpr` asks for fewer). The ABI is
frozen: kernel symbols, kernarg size/alignment/arguments, wavefront size and workgroup limits must
match recovery.json, or the rebuild is refused.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from .codeobj.descriptor import KernelDescriptor
from .codeobj.directives import clamp_allocation
from .codeobj.elf import CodeObject
from .target import TargetId
from .codeobj.metadata import decode_metadata, encode_metadata, metadata_to_yaml
from .abi import descriptor_differences, metadata_differences
from .errors import AbiChange, AsmEvoError, RebuildError, ToolchainError
from .isa.assemble import assemble, link
from .isa.resources import Allocation, choose, declared, required, scan_lines
from .source import SourceFile, digest, parse_source, scanned_lines, strip_comment

_RESOURCE_DIRECTIVES = (".amdhsa_next_free_vgpr", ".amdhsa_next_free_sgpr", ".amdhsa_accum_offset",
                        ".amdhsa_reserve_vcc")
_INT_RE = re.compile(r"^[-+]?(?:0x[0-9a-fA-F]+|\d+)$")


@dataclass
class Rebuilt:
    """A rebuilt code object (bytes and loaded) and what the rebuild decided per kernel."""

    data: bytes
    code_object: CodeObject
    allocations: dict[str, Allocation]
    warnings: list[str] = field(default_factory=list)


class _Str(str):
    """A scalar tagged `!str`: kept as a string."""


class _Loader(getattr(yaml, "CBaseLoader", yaml.BaseLoader)):
    """Reads every scalar as text; `_llvm_yaml` then types them as llvm-mc does."""


_Loader.add_constructor("!str", lambda loader, node: _Str(loader.construct_scalar(node)))
_YAML_TRUE = frozenset("y Y yes Yes YES true True TRUE on On ON".split())
_YAML_FALSE = frozenset("n N no No NO false False FALSE off Off OFF".split())


def _llvm_yaml(node):
    """Scalars typed the way llvm-mc's YAML reader types them (ints and booleans inferred)."""
    if isinstance(node, dict):
        return {k: _llvm_yaml(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_llvm_yaml(v) for v in node]
    if isinstance(node, _Str):
        return str(node)
    if node in _YAML_TRUE or node in _YAML_FALSE:
        return node in _YAML_TRUE
    if _INT_RE.match(node):
        return int(node, 0)
    return node


def _set_directive(lines: list[str], span: tuple[int, int], directive: str, value: int) -> None:
    start, end = span
    for i in range(start + 1, end):
        parts = strip_comment(lines[i]).split()
        if parts and parts[0] == directive:
            lines[i] = f"\t\t{directive} {value}"
            return
    lines.insert(end, f"\t\t{directive} {value}")


def _block_values(lines: list[str], span: tuple[int, int]) -> dict[str, int]:
    out = {}
    for i in range(span[0] + 1, span[1]):
        parts = strip_comment(lines[i]).split()
        if len(parts) == 2 and _INT_RE.match(parts[1]):
            out[parts[0]] = int(parts[1], 0)
    return out


def _check_metadata_abi(kernels: list[dict], meta: dict, origin: str) -> None:
    got = {k.get(".name"): k for k in meta.get("amdhsa.kernels", [])}
    want = {k["name"]: k["metadata"] for k in kernels}
    if set(got) != set(want):
        raise AbiChange(f"{origin}: kernels changed: metadata has {sorted(got)}, K0 has {sorted(want)}")
    for name, k0 in want.items():
        changes = metadata_differences(name, k0, got[name])
        if changes:
            raise AbiChange(f"{origin}: ABI change: {changes[0]}")


def rebuild_source(text: str, info: dict, *, shrink: bool = False, origin: str = "<source>") -> Rebuilt:
    """Rebuild from source text and the recovery info; returns the linked code object bytes."""
    target = TargetId(info["processor"], *_features(info["target"]))
    processor = target.processor
    kernels = info["kernels"]
    src = parse_source(text)
    lines = list(src.lines)
    warnings: list[str] = []
    if src.metadata is None:
        raise RebuildError(f"{origin}: no .amdgpu_metadata block")
    meta = _read_metadata(lines[src.metadata[0]:src.metadata[1] - 1], info, origin)
    _check_metadata_abi(kernels, meta, origin)
    kernel_names = {k["name"] for k in kernels}
    helpers = helper_lines(src, kernel_names)
    blocks = {name: (a - 1, b - 1) for name, (a, b) in src.blocks.items()}  # 0-based indices into `lines`
    allocations: dict[str, Allocation] = {}
    meta_by_name = {k[".name"]: k for k in meta["amdhsa.kernels"]}
    meta_changed = False
    # Edit from the last block backwards so earlier spans stay valid when lines are inserted.
    for k in sorted(kernels, key=lambda k: -blocks.get(k["name"], (-1, -1))[0]):
        name = k["name"]
        if name not in blocks:
            raise RebuildError(f"{origin}: no .amdhsa_kernel block for kernel {name}")
        if name not in src.functions:
            raise RebuildError(f"{origin}: kernel symbol {name} is not defined in .text")
        scanned = scanned_lines(src.instruction_lines(name), helpers)
        desc = _descriptor(k)
        need0 = Allocation(**k["k0_need"])
        if not shrink and digest(scanned) == k["k0_digest"]:
            need = need0  # unedited: K0's own scan
        else:
            use = scan_lines(scanned, processor)
            if use.scratch and not desc["enable_private_segment"]:
                raise AbiChange(f"{origin}: kernel {name} uses scratch but K0 enables no private segment")
            if use.lds and not desc.group_segment_fixed_size:
                warnings.append(f"kernel {name} uses LDS but K0 allocates none statically (dynamic LDS?)")
            need = required(use, desc, processor, dispatch_floor=shrink)
        span = blocks[name]
        values = _block_values(lines, span)
        alloc = choose(need, declared(desc, k["metadata"], processor), shrink, need0)
        alloc = _asked_vgprs(alloc, need, values.get(".amdhsa_next_free_vgpr"), scanned, f"{origin}: kernel {name}")
        allocations[name] = alloc
        if values.get(".amdhsa_kernarg_size") != desc.kernarg_size:
            raise AbiChange(f"{origin}: ABI change in kernel {name}: .amdhsa_kernarg_size is "
                               f"{values.get('.amdhsa_kernarg_size')}, K0 has {desc.kernarg_size}")
        eff = clamp_allocation(alloc, target)
        for directive, value in zip(_RESOURCE_DIRECTIVES, (eff.next_free_vgpr, eff.next_free_sgpr,
                                                           eff.accum_offset, int(eff.reserve_vcc))):
            if directive == ".amdhsa_accum_offset" and directive not in values:
                continue
            _set_directive(lines, span, directive, value)
        entry = meta_by_name[name]
        for key, value in ((".vgpr_count", alloc.vgpr_count), (".sgpr_count", alloc.sgpr_count),
                           (".agpr_count", alloc.agpr_count)):
            if key in entry and entry[key] != value:
                entry[key] = value
                meta_changed = True
    if meta_changed:
        m0, m1 = parse_source("\n".join(lines)).metadata
        lines[m0:m1 - 1] = metadata_to_yaml(meta).splitlines()
    try:
        data = bytearray(link(assemble("\n".join(lines) + "\n", target), target))
    except ToolchainError as exc:
        raise RebuildError(str(exc).replace("<stdin>", origin)) from None
    co = _finish(data, info, origin)
    return Rebuilt(co.data, co, allocations, warnings)


_INDIRECT_REGISTERS = ("s_set_gpr_idx", "v_movrel", "s_movrel")


def helper_lines(src: SourceFile, kernels: set[str]) -> list[str]:
    """Instruction lines of the source's functions that are not `kernels` (helpers a kernel's code may call)."""
    return [ln for name in src.functions if name not in kernels for ln in src.instruction_lines(name)]


def addresses_indirectly(scanned: list[str]) -> bool:
    """Whether code lines address registers through M0 (so the registers they name are not all they touch)."""
    return any(line.split(None, 1)[0].startswith(_INDIRECT_REGISTERS) for line in scanned if line.strip())


def _asked_vgprs(alloc: Allocation, need: Allocation, asked: int | None, scanned: list[str], where: str) -> Allocation:
    """`alloc` with fewer VGPRs when the source's `.amdhsa_next_free_vgpr` (`asked`) is below it (a
    declaration padded past what the code names, e.g. to cap occupancy, released): granted down to what
    the code needs (AGPRs then start where the code's VGPRs end), and refused when the code addresses
    registers through M0."""
    if asked is None or asked >= alloc.next_free_vgpr:
        return alloc
    if addresses_indirectly(scanned):
        raise RebuildError(f"{where}: .amdhsa_next_free_vgpr {asked} is below the declared {alloc.next_free_vgpr}, "
                           f"but the code addresses registers through M0; keep the declared value")
    granted = max(asked, need.next_free_vgpr)
    accum = alloc.accum_offset if alloc.accum_offset + need.agpr_count <= granted else need.accum_offset
    return replace(alloc, next_free_vgpr=granted, accum_offset=accum)


def shrinks(text: str, info: dict) -> bool:
    """Whether `text` should be rebuilt with the `shrink` policy: some kernel's code (with the helper
    functions it may call, all in the object) names fewer VGPRs, AGPRs or SGPRs than K0's code did (a
    register re-allocation lowered them), and no code addresses registers through M0 (so the registers
    it names are all it touches)."""
    src = parse_source(text)
    helpers = helper_lines(src, {k["name"] for k in info["kernels"]})
    processor = info["processor"]
    fewer = False
    for k in info["kernels"]:
        if k["name"] not in src.functions:
            return False
        scanned = scanned_lines(src.instruction_lines(k["name"]), helpers)
        if addresses_indirectly(scanned):
            return False
        need, need0 = required(scan_lines(scanned, processor), _descriptor(k), processor), Allocation(**k["k0_need"])
        fewer |= any(getattr(need, a) < getattr(need0, a) for a in ("next_free_vgpr", "agpr_count", "next_free_sgpr"))
    return fewer


def _read_metadata(yaml_lines: list[str], info: dict, origin: str) -> dict:
    """The `.amdgpu_metadata` block as llvm-mc will read it. When the block is the one recovery
    wrote (same digest) and YAML carries it exactly, that is recovery.json's metadata (a copy:
    the rebuild updates register counts in it); otherwise the YAML is parsed."""
    if info.get("metadata_digest") == digest(yaml_lines) and not info.get("metadata_lossy"):
        return decode_metadata(encode_metadata(info["metadata"]))
    try:
        meta = _llvm_yaml(yaml.load("\n".join(yaml_lines), Loader=_Loader))
    except yaml.YAMLError as exc:
        raise RebuildError(f"{origin}: metadata YAML does not parse: {str(exc).splitlines()[0]}") from None
    if not isinstance(meta, dict):
        raise RebuildError(f"{origin}: metadata YAML is not a map")
    return meta


def _features(target_id: str) -> tuple[str | None, str | None]:
    states = {"+": "on", "-": "off"}
    found = {part[:-1]: states[part[-1]] for part in target_id.split(":")[1:] if part[-1] in states}
    return found.get("sramecc", "any"), found.get("xnack", "any")


def _descriptor(k: dict) -> KernelDescriptor:
    return KernelDescriptor.decode(bytes.fromhex(k["descriptor_bytes"]))


def _finish(data: bytearray, info: dict, origin: str) -> CodeObject:
    """Write carried descriptor fields and check the frozen ABI on the linked object; returns
    it loaded (its kernels' descriptors are the written ones)."""
    try:
        co = CodeObject(bytes(data), origin)
    except AsmEvoError as exc:
        raise RebuildError(f"{origin}: rebuilt object is unreadable: {exc}") from None
    by_name = {k.name: k for k in co.kernels}
    for k in info["kernels"]:
        kernel = by_name.get(k["name"])
        if kernel is None:
            raise RebuildError(f"{origin}: kernel symbol {k['name']} missing from the rebuilt object")
        desc, k0 = kernel.descriptor, _descriptor(k)
        for name, value in k["carried_fields"].items():
            if name.startswith("granulated_"):
                value = max(value, desc.fields[name])
            desc.fields[name] = value
        desc.reserved = bytes.fromhex(k["descriptor_reserved"])
        changes = descriptor_differences(k["name"], k0, desc)
        if changes:
            raise AbiChange(f"{origin}: ABI change: {changes[0]}")
        off = co.address_to_offset(kernel.descriptor_address)
        data[off:off + 64] = desc.encode()
    co.data = bytes(data)
    return co


def load_info(source_path: Path) -> dict:
    info_path = source_path.parent / "recovery.json"
    try:
        return json.loads(info_path.read_text())
    except FileNotFoundError:
        raise RebuildError(f"{info_path}: missing (run `asmevo recover` first; the rebuild needs it)") from None
    except (OSError, ValueError) as exc:
        raise RebuildError(f"{info_path}: unreadable ({exc})") from None


def rebuild(source_path: str | Path, out_path: str | Path, *, shrink: bool = False) -> Rebuilt:
    """Rebuild `DIR/<name>.s` (with DIR/recovery.json) into `out_path`."""
    src = Path(source_path)
    try:
        text = src.read_text()
    except FileNotFoundError:
        raise RebuildError(f"{src}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RebuildError(f"{src}: cannot read ({exc})") from None
    result = rebuild_source(text, load_info(src), shrink=shrink, origin=str(src))
    try:
        Path(out_path).write_bytes(result.data)
    except OSError as exc:
        raise RebuildError(f"cannot write {out_path}: {exc.strerror}") from None
    return result
