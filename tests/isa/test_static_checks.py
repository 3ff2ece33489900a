"""The combined static check: one-line findings, hook for further checks."""
from asmevo import static_checks
from asmevo.static_checks import StaticFinding, check_code_object, register_check, run_static_checks
import corpus
from isatools import program


def test_findings_are_one_line_and_ordered():
    ins, labels = program("""
        global_load_dword v0, v[2:3], off
        v_readfirstlane_b32 s4, v0
        global_load_dword v1, v2, s[4:5]
        s_endpgm
    """)
    findings = run_static_checks(ins, labels=labels)
    assert {f.check for f in findings} == {"hazard", "waitcnt"}
    assert [f.index for f in findings] == sorted(f.index for f in findings)
    assert all("\n" not in str(f) for f in findings)


def test_registered_check_runs(monkeypatch):
    monkeypatch.setattr(static_checks, "_EXTRA_CHECKS", {})
    register_check("abi", lambda ins, desc: [StaticFinding("abi", "demo", 0, None, "demo finding")])
    ins, labels = program("s_endpgm")
    assert [f.check for f in run_static_checks(ins, labels=labels)] == ["abi"]


def test_compiled_code_objects_are_clean(corpus_kernels):
    assert check_code_object(corpus.build_hip()) == []
    for path in corpus.build_triton():
        assert check_code_object(path) == []
