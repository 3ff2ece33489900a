"""Verification runs input sets as wide emulated launches (`asmevo.verify._Launches`); its verdicts must
be exactly those of one launch at a time: kind, reason, evidence and the rounds counted, for an
equivalent candidate, a wrong one, and a K0 with tolerated findings, with and without K0's cached
results."""
from __future__ import annotations

import pytest

from asmevo.codeobj import CodeObject
from asmevo.device.emu import EmuDevice
from asmevo.launches import suite_launches
from asmevo.rebuild import rebuild_source
from asmevo.recover import recover
from asmevo.suites import load_suite
from asmevo.verify import ReferenceCache, verify


class OneAtATime(EmuDevice):
    """The emulator device without wide launches."""

    def wide_key(self):
        return None

    def _with(self, **changes) -> "OneAtATime":
        options = {"budget": self.budget, "checked": self.checked, "layout": self.layout, "faithful": self.faithful}
        return OneAtATime(**{**options, **changes})


def _fields(verdict) -> tuple:
    return verdict.kind, verdict.reason, verdict.evidence, verdict.trials, verdict.launches


def _edited(problem, old: str, new: str) -> CodeObject:
    rec = recover(problem.code_object)
    assert old in rec.source
    return CodeObject(rebuild_source(rec.source.replace(old, new, 1), rec.info).data, "k1.co")


@pytest.mark.parametrize("name, edit, expected", [
    ("19_ReLU", None, "equivalent"),
    ("19_ReLU", ("v_max_f32_e32 v7, 0, v1", "v_min_f32_e32 v7, 0, v1"), "trial 0"),
    ("19_ReLU", ("v_max_f32_e32 v7, 0, v1",  # clamps at 1e30: right until a later launch's `large` set
                 "v_min_f32_e32 v7, 0x7149f2ca, v1\n\tv_max_f32_e32 v7, 0, v7"), "v_5x250 (special large"),
    ("67_conv_standard_1D", None, "equivalent"),  # K0 reads never-written lanes in checked mode
])
def test_wide_verdicts_are_the_one_at_a_time_verdicts(name, edit, expected):
    problem = load_suite("kernelbench").problem(name)
    launches = suite_launches(problem)
    k0 = CodeObject.from_path(problem.code_object)
    k1 = _edited(problem, *edit) if edit else CodeObject(k0.data + b"\0" * 4, "k1.co")
    alone = verify(k0, k1, launches, device=OneAtATime())
    reference = ReferenceCache()
    wide = verify(k0, k1, launches, device=EmuDevice(), reference=reference)
    again = verify(k0, k1, launches, device=EmuDevice(), reference=reference)  # K0 from the cache
    assert _fields(wide) == _fields(alone) == _fields(again)
    assert expected in alone.summary()
