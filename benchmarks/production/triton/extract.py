"""Extract one `@triton.jit` kernel from a wheel's source, by AST, into a standalone module.

    source = extract(read, "vllm/lora/ops/triton_ops/lora_shrink_op.py", "_lora_shrink_kernel")

The result holds the kernel, every jit helper it calls (followed through `from pkg.mod import name` into
other files of the same wheel) and the module-level constants it reads, in dependency order, plus the
`triton` imports they use. Decorators are reduced to a bare `@triton.jit` (autotune / heuristics are
replaced by the explicit constexprs the build passes). Nothing of the wheel is imported or executed.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable

# How the projects alias Triton; a name imported from their own wrapper modules maps to these.
TRITON_ALIASES = {
    "triton": "import triton",
    "tl": "import triton.language as tl",
    "libdevice": "from triton.language.extra import libdevice",
    "tldevice": "from triton.language.extra import libdevice as tldevice",
}
KEPT_DECORATORS = ("constexpr_function",)


class ExtractError(RuntimeError):
    """The kernel or something it needs cannot be found or is not extractable."""


@dataclass
class _Module:
    member: str
    defs: dict[str, ast.stmt] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # name -> (module, orig or None)


def _resolve(module: str, level: int, current: str) -> str:
    """Dotted module name of an (optionally relative) import inside `current` (a wheel member path)."""
    if level == 0:
        return module
    parts = current[:-3].split("/")[:-level]
    return ".".join(parts + ([module] if module else []))


def _index(member: str, text: str) -> _Module:
    mod = _Module(member)
    for node in ast.parse(text, filename=member).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            mod.defs[node.name] = node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            mod.defs[node.targets[0].id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            mod.defs[node.target.id] = node
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(node.module or "", node.level, member)
            for a in node.names:
                mod.imports[a.asname or a.name] = (source, a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                mod.imports[a.asname or a.name.split(".")[0]] = (a.name if a.asname else a.name.split(".")[0], None)
    return mod


def _free_names(node: ast.AST) -> list[str]:
    """Global names read in `node` (parameters and assigned locals excluded), in first-use order."""
    local = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    if isinstance(node, ast.FunctionDef):
        a = node.args
        local |= {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs} | {x.arg for x in (a.vararg, a.kwarg) if x}
    seen: dict[str, None] = {}
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in local:
            seen.setdefault(n.id, None)
    return list(seen)


def _is_jit(dec: ast.expr) -> bool:
    target = dec.func if isinstance(dec, ast.Call) else dec
    return isinstance(target, ast.Attribute) and target.attr == "jit" or isinstance(target, ast.Name) and target.id == "jit"


def _decorator_name(dec: ast.expr) -> str:
    target = dec.func if isinstance(dec, ast.Call) else dec
    return target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")


class _Extractor:
    def __init__(self, read: Callable[[str], str | None], root_package: str):
        self.read = read
        self.root = root_package
        self.modules: dict[str, _Module] = {}
        self.imports: dict[str, str] = {}          # bound name -> import line
        self.emitted: dict[str, tuple[str, str]] = {}  # bound name -> (member, code)
        self.active: set[tuple[str, str]] = set()

    def module(self, dotted: str) -> _Module:
        for member in (dotted.replace(".", "/") + ".py", dotted.replace(".", "/") + "/__init__.py"):
            if member in self.modules:
                return self.modules[member]
            text = self.read(member)
            if text is not None:
                self.modules[member] = _index(member, text)
                return self.modules[member]
        raise ExtractError(f"module {dotted} is not in the {self.root} wheel")

    def bind(self, mod: _Module, name: str, as_name: str) -> None:
        """Make `as_name` in the output refer to `name` as `mod` sees it."""
        key = (mod.member, name)
        if key in self.active:
            return
        self.active.add(key)
        if name in mod.defs:
            self._emit_def(mod, name, mod.defs[name])
            if as_name != name:
                self._emit(as_name, mod.member, f"{as_name} = {name}")
        elif name in mod.imports:
            source, orig = mod.imports[name]
            top = source.split(".")[0]
            if top == "triton":
                line = f"import {source} as {as_name}" if orig is None and source != as_name else (
                    f"import {source}" if orig is None else
                    f"from {source} import {orig}" + (f" as {as_name}" if orig != as_name else ""))
                self._import(as_name, line)
            elif top == self.root and orig is not None:
                target = self.module(source)
                if orig not in target.defs and orig not in target.imports and orig in TRITON_ALIASES:
                    self._import(as_name, TRITON_ALIASES[orig] if orig == as_name else
                                 f"{TRITON_ALIASES[orig]}\n{as_name} = {orig}")
                else:
                    self.bind(target, orig, as_name)
            elif name in TRITON_ALIASES:
                self._import(as_name, TRITON_ALIASES[name])
            else:
                raise ExtractError(f"{mod.member}: {name} comes from {source}, which is neither Triton nor {self.root}")
        elif name in TRITON_ALIASES:
            self._import(as_name, TRITON_ALIASES[name])
        self.active.discard(key)

    def _emit_def(self, mod: _Module, name: str, node: ast.stmt) -> None:
        if isinstance(node, ast.ClassDef):
            raise ExtractError(f"{mod.member}: kernel code uses class {name}")
        if isinstance(node, ast.FunctionDef):
            kept = [d for d in node.decorator_list if _decorator_name(d) in KEPT_DECORATORS]
            if not kept and not any(_is_jit(d) for d in node.decorator_list):
                raise ExtractError(f"{mod.member}: {name} is called from kernel code but is not @triton.jit")
            node = ast.FunctionDef(name=node.name, args=node.args, body=node.body, returns=node.returns,
                                   type_comment=None, type_params=[],
                                   decorator_list=kept or [ast.Attribute(ast.Name("triton", ast.Load()), "jit",
                                                                         ast.Load())])
            self._import("triton", TRITON_ALIASES["triton"])
        for dep in _free_names(node):
            if dep != name:
                self.bind(mod, dep, dep)
        self._emit(name, mod.member, ast.unparse(ast.fix_missing_locations(node)))

    def _emit(self, name: str, member: str, code: str) -> None:
        prev = self.emitted.get(name)
        if prev is not None and prev[1] != code:
            raise ExtractError(f"name clash: {name} is defined differently in {prev[0]} and {member}")
        self.emitted.setdefault(name, (member, code))

    def _import(self, name: str, line: str) -> None:
        prev = self.imports.get(name)
        if prev is not None and prev != line:
            raise ExtractError(f"name clash: {name} is imported as {prev!r} and {line!r}")
        self.imports[name] = line


def _drop_defaults(node: ast.FunctionDef, fixed: set[str]) -> None:
    """Defaults of parameters in `fixed` (always passed by the build) become None: they may name
    host-side globals (e.g. `torch.finfo(...)`) that kernel code never needs."""
    a = node.args
    positional = a.posonlyargs + a.args
    for i, default in enumerate(a.defaults):
        if positional[len(positional) - len(a.defaults) + i].arg in fixed:
            a.defaults[i] = ast.Constant(None)
    a.kw_defaults = [ast.Constant(None) if d is not None and p.arg in fixed else d
                     for p, d in zip(a.kwonlyargs, a.kw_defaults)]


def extract(read: Callable[[str], str | None], member: str, function: str, fixed: set[str] = frozenset()) -> str:
    """Standalone module source defining `function` from wheel file `member` (`read(member)` -> text);
    `fixed` names parameters the caller always passes (their defaults are dropped)."""
    root = member.split("/")[0]
    ex = _Extractor(read, root)
    mod = ex.module(member[:-3].replace("/", "."))
    if not isinstance(mod.defs.get(function), ast.FunctionDef):
        raise ExtractError(f"{member} defines no function {function}")
    _drop_defaults(mod.defs[function], set(fixed))
    ex.bind(mod, function, function)
    header = f'"""{function} from {member}, extracted for gfx942 compilation (generated; do not edit)."""'
    imports = sorted(set(ex.imports.values()), key=lambda line: (not line.startswith("import"), line))
    body = [code for _, code in ex.emitted.values()]
    return "\n\n\n".join([header, "\n".join(imports), *body]) + "\n"
