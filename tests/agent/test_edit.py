"""The precheck's one allowed directive: a copy of one of the kernel's `.long` raw-words instruction lines
(moving an instruction LLVM cannot re-encode keeps its bytes); any other raw words are refused."""
from __future__ import annotations

import pytest

from asmevo.agent.edit import Edit, Window, precheck
from asmevo.agent.source import KernelSource
from asmevo.codeobj import CodeObject
from asmevo.recover import recover


@pytest.fixture(scope="module")
def scaled(tmp_path_factory) -> tuple[KernelSource, CodeObject]:
    """cotools' gfx950 kernel, whose second scaled MFMA recovery keeps as `.long` words."""
    from cotools import gfx950_code_object
    co = CodeObject.from_path(gfx950_code_object(tmp_path_factory.mktemp("scaled") / "k.co"))
    return KernelSource(recover("k.co", code_object=co).source, "k"), co


def _line(src: KernelSource, start: str) -> int:
    return next(n for n in range(src.body[0], src.body[1] + 1) if src.line(n).strip().startswith(start))


def test_moving_raw_words_passes_writing_them_does_not(scaled):
    src, co = scaled
    raw, wait = _line(src, ".long"), _line(src, "s_waitcnt")
    assert wait == raw + 1
    window = Window(*src.body)
    moved = Edit(raw, wait, "\n".join([src.line(wait), src.line(raw)]))
    assert precheck(src, moved, window, co.target) is None
    words = src.line(raw).split(";")[0].strip()
    changed = Edit(raw, raw, words.replace("0xd3ac6000", "0xd3ac0000"))
    rejection = precheck(src, changed, window, co.target)
    assert rejection is not None and rejection.reason == "directive"
