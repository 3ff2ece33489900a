"""Every benchmark script and helper module imports: a name it takes from the project that was renamed or
removed fails here, not in a long run (the scripts' `main` runs only under `__main__`)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPTS = sorted(p for p in [*BENCHMARKS.glob("*.py"), *BENCHMARKS.glob("*/*.py")] if p.name != "__init__.py")


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(BENCHMARKS)))
def test_script_imports(script, monkeypatch):
    name = f"bench_{script.parent.name}_{script.stem}"
    spec = importlib.util.spec_from_file_location(name, script)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    assert module.__doc__, f"{script.name} has no docstring saying how to run it"
