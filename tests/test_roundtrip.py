"""Round trip (recover + rebuild, no edit) on code objects compiled here, and bad inputs."""
from __future__ import annotations

import json
import resource

import pytest

from asmevo.cli import main
from asmevo.isa.assemble import assemble, link
from asmevo.roundtrip import roundtrip

from cotools import KINDS

ALL_KINDS = sorted(KINDS) + ["triton"]


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_roundtrip_identical(code_object, kind):
    result = roundtrip(code_object(kind))
    assert result.status == "identical", result.reason


def test_roundtrip_cli_json_and_exit_code(code_object, tmp_path, capsys):
    out = tmp_path / "rt.json"
    rc = main(["roundtrip", str(code_object("hip-O3")), str(code_object("ocl-O2")), "--json", str(out)])
    assert rc == 0
    data = json.loads(out.read_text())
    assert [d["status"] for d in data] == ["identical", "identical"]
    assert "2 identical, 0 patch-only, 0 failed" in capsys.readouterr().out


def test_roundtrip_failed_input_exit_code(code_object, tmp_path, capsys):
    bad = tmp_path / "bad.co"
    bad.write_bytes(b"not an elf at all")
    rc = main(["roundtrip", str(code_object("hip-O3")), str(bad)])
    assert rc == 1
    out = capsys.readouterr().out
    assert "failed" in out and "not an ELF file" in out


def _cpu() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def test_roundtrip_is_fast(code_object):
    """CPU time (ours and the LLVM tools') of a round trip of the largest fixture (~20 kB):
    three tool runs, no per-instruction subprocesses. CPU time, not wall time, so that a busy
    machine does not make the test flaky."""
    path = code_object("hip-O0")
    assemble.cache_clear()
    link.cache_clear()
    start = _cpu()
    assert roundtrip(path).status == "identical"
    assert _cpu() - start < 1.0


def test_patch_only_when_rebuild_is_not_exact(code_object, monkeypatch):
    """A rebuild that cannot be exact (simulated: llvm-mc rejects the source) leaves the file
    `patch-only` with the reason, after checking an in-place patch reproduces K0."""
    import asmevo.roundtrip as rt
    from asmevo.errors import RebuildError

    def refuse(*args, **kwargs):
        raise RebuildError("simulated: descriptor not expressible")

    monkeypatch.setattr(rt, "rebuild_source", refuse)
    result = roundtrip(code_object("hip-O3"))
    assert result.status == "patch-only"
    assert "simulated: descriptor not expressible" in result.reason
