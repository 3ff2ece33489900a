"""Stage code versions: the sha256 over the source files a stage's modules run, found by following
their imports within their own top-level packages and `asmevo` (e.g. for `tasks.verify`: the
`tasks` glue plus everything under `asmevo` that `asmevo.verify` imports, transitively, with the
package `__init__` files on the way). Third-party packages are pinned by the environment."""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
from pathlib import Path

from asmevo.errors import AsmEvoError


FOLLOWED_PACKAGES = ("asmevo",)


class CodeVersionError(AsmEvoError):
    """A stage names a module whose source cannot be found."""


def _package_root(top: str) -> Path:
    spec = importlib.util.find_spec(top)
    if spec is None or not spec.submodule_search_locations:
        raise CodeVersionError(f"package {top!r} not found")
    return Path(next(iter(spec.submodule_search_locations))).parent


@functools.lru_cache(maxsize=16384)
def _module_file(root: Path, name: str) -> Path | None:
    """The source file of module `name` under `root` (None: not a module, e.g. an imported attribute);
    memoised, as every stage key looks up the same few hundred names."""
    base = root.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.lru_cache(maxsize=4096)
def _scan(path: Path, name: str, stamp: tuple[int, int]) -> tuple[str, frozenset[str]]:
    """(sha256 of the file, absolute names it imports), memoised on the file's mtime and size."""
    source = path.read_bytes()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return hashlib.sha256(source).hexdigest(), frozenset(found)


def _stamp(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_mtime_ns, st.st_size


def source_files(modules: tuple[str, ...]) -> dict[str, Path]:
    """Every module (name -> source file) the modules execute within their top-level packages."""
    files: dict[str, Path] = {}
    roots: dict[str, Path] = {}
    tops = {m.split(".")[0] for m in modules} | set(FOLLOWED_PACKAGES)
    todo = list(modules)
    while todo:
        name = todo.pop()
        top = name.split(".")[0]
        if top not in tops or name in files:
            continue
        if top not in roots:
            roots[top] = _package_root(top)
        root = roots[top]
        path = _module_file(root, name)
        if path is None:
            if name in modules:
                raise CodeVersionError(f"module {name!r} has no source under {root}")
            continue  # an attribute imported from a module, not a module itself
        files[name] = path
        parts = name.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        todo.extend(_scan(path, name, _stamp(path))[1])
    return dict(sorted(files.items()))


def code_version(modules: tuple[str, ...]) -> str:
    """sha256 over (module name, file sha256) of every module in `source_files(modules)`."""
    digest = hashlib.sha256()
    for name, path in source_files(modules).items():
        digest.update(f"{name}\0{_scan(path, name, _stamp(path))[0]}\0".encode())
    return digest.hexdigest()
