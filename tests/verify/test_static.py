"""Static checks on rebuilt candidates: a dropped s_waitcnt is rejected before anything runs; a
no-op rebuild passes."""
from asmevo.codeobj import CodeObject
from asmevo.rebuild import rebuild_source
from asmevo.recover import recover
from asmevo.suites import load_suite
from asmevo.launches import launch_from_dict
from asmevo.static_checks import static_differences
from asmevo.verify import verify

from fakes import RELU_CO, RELU_SPEC, ScriptedDevice

K0 = CodeObject.from_path(RELU_CO)


def rebuilt(edit=lambda lines: lines) -> CodeObject:
    r = recover(RELU_CO)
    return CodeObject(rebuild_source("\n".join(edit(r.source.splitlines())) + "\n", r.info).data)


def test_noop_rebuild_passes_static_checks():
    assert static_differences(K0, rebuilt()) == []


def test_dropped_waitcnt_is_a_static_failure():
    def drop(lines):
        i = next(n for n, ln in enumerate(lines) if "s_waitcnt vmcnt(0)" in ln)
        return lines[:i] + lines[i + 1:]
    k1 = rebuilt(drop)
    problems = static_differences(K0, k1)
    assert problems and all("waitcnt/vmcnt" in p for p in problems)
    dev = ScriptedDevice()
    v = verify(K0, k1, [launch_from_dict(RELU_SPEC)], device=dev)
    assert v.kind == "different" and v.evidence["stage"] == "static" and dev.launches == 0


def test_a_changed_kernarg_preload_preamble_is_an_abi_change():
    gelu = load_suite("kernelbench").problem("26_GELU_").code_object
    k0, r = CodeObject.from_path(gelu), recover(gelu)
    lines = r.source.splitlines()
    pad = next(n for n, ln in enumerate(lines) if ln.strip().startswith("s_nop 0"))  # preamble padding
    assert static_differences(k0, CodeObject(rebuild_source(r.source, r.info).data)) == []
    moved = "\n".join(lines[:pad] + ["\ts_mov_b32 s20, 0"] + lines[pad + 1:]) + "\n"  # same size, new bytes
    problems = static_differences(k0, CodeObject(rebuild_source(moved, r.info).data))
    assert any("preamble" in p for p in problems)
