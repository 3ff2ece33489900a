"""Stage code versions follow a stage's imports within its package, and nothing else."""
from __future__ import annotations

import sys

import pytest

from tasks.versions import CodeVersionError, code_version, source_files


@pytest.fixture
def package(tmp_path, monkeypatch):
    pkg = tmp_path / "verpkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "stage.py").write_text("from .sub import helper\nimport json\n\ndef run():\n    return helper.f()\n")
    (pkg / "sub" / "helper.py").write_text("def f():\n    return 1\n")
    (pkg / "unrelated.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield pkg
    for name in [m for m in sys.modules if m.startswith("verpkg")]:
        del sys.modules[name]


def test_closure_follows_relative_imports_and_parents(package):
    assert list(source_files(("verpkg.stage",))) == ["verpkg", "verpkg.stage", "verpkg.sub", "verpkg.sub.helper"]


def test_version_changes_with_a_used_module_only(package):
    before = code_version(("verpkg.stage",))
    (package / "unrelated.py").write_text("X = 2\n")
    assert code_version(("verpkg.stage",)) == before
    (package / "sub" / "helper.py").write_text("def f():\n    return 2\n")
    assert code_version(("verpkg.stage",)) != before


def test_missing_module_is_an_error(package):
    with pytest.raises(CodeVersionError):
        code_version(("verpkg.nope",))


def test_real_stage_versions_cover_their_asmevo_modules():
    files = source_files(("tasks.verify",))
    assert {"asmevo.verify", "asmevo.device", "tasks.policy", "tasks.inputs"} <= set(files)
    assert "asmevo.recover" not in files
