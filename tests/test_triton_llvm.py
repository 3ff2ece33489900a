"""asmevo.triton_llvm: Triton's assembler and lld in a resident worker; bad input and crashes are one line."""
from __future__ import annotations

import re

import pytest

from asmevo.errors import ToolchainError
from asmevo.isa.assemble import assemble, encode_lines
from asmevo.target import TargetId
from asmevo.toolchain import find_assembler
from asmevo.triton_llvm import TritonLLVM, installed

pytestmark = pytest.mark.skipif(not installed(), reason="Triton is not installed (pip install 'asmevo[triton]')")

GFX942 = TargetId("gfx942", None, None)
HEAD = '.amdgcn_target "amdgcn-amd-amdhsa--gfx942"\n.text\n'


@pytest.fixture
def triton(monkeypatch) -> TritonLLVM:
    """This process's worker, made the assembler for gfx942."""
    monkeypatch.setenv("ASMEVO_ASSEMBLER", "triton")
    monkeypatch.delenv("ASMEVO_LLVM_BIN", raising=False)
    backend = find_assembler("gfx942")
    assert isinstance(backend, TritonLLVM)
    return backend


def test_worker_reports_its_llvm(triton):
    assert triton.info.major >= 21  # new enough for gfx950 (asmevo.target's min_llvm)
    assert triton.info.linker.startswith(f"{triton.info.major}.")


@pytest.mark.parametrize("line, message", [
    ("\x01 @@@ ((( garbage", "invalid character in input"),
    ("v_frobnicate v0, v1", "invalid instruction"),
    ("s_mov_b32 s0, 0x1ffffffff", "invalid operand for instruction"),
    ("v_mov_b32 v999, v0", "register index is out of range"),
])
def test_malformed_assembly_is_one_line_naming_the_line(triton, line, message):
    """The worker stays up; the error names the source line and LLVM's message."""
    with pytest.raises(ToolchainError) as exc:
        assemble(f"{HEAD}s_nop 0\n{line}\ns_endpgm\n", GFX942)
    assert re.fullmatch(rf"Triton's assembler failed: <stdin>:4:\d+: error: {message}", str(exc.value))
    assert assemble(f"{HEAD}s_nop 1\ns_endpgm\n", GFX942)  # the worker serves the next call


def test_encode_lines_maps_errors_and_fixups_to_their_lines(triton, monkeypatch):
    """Against llvm-mc -show-encoding (the toolchain's tools): the same encodings, rejected lines and
    messages, and None for the line that needs a relocation."""
    lines = ["s_nop 0", "v_frobnicate v0", "s_add_u32 s0, s0, sym@rel32@lo+4", "v_mov_b32 v1, v2",
             "s_mov_b32 s0, 0x1ffffffff", "v_mfma_f32_32x32x8_f16 a[0:15], v[0:1], v[2:3], a[0:15]", "s_endpgm"]
    encs, errors = encode_lines(lines, GFX942)
    assert errors == {1: "invalid instruction", 4: "invalid operand for instruction"}
    assert encs[0] == bytes.fromhex("000080bf") and encs[2] is None and len(encs[5]) == 8
    monkeypatch.setenv("ASMEVO_ASSEMBLER", "tools")
    assert encode_lines(lines, GFX942) == (encs, errors)


def test_a_crash_in_llvm_fails_the_call_and_the_next_call_gets_a_new_worker(triton):
    """LLVM's expression parser recurses per nesting level: a deep enough expression overflows the
    stack (llvm-mc 19 crashes the same way). The worker dies, never this process."""
    nested = "(" * 200000 + "1" + ")" * 200000
    with pytest.raises(ToolchainError, match=r"^Triton's LLVM assembler crashed \(signal SIG\w+\)"):
        assemble(f"{HEAD}s_mov_b32 s0, {nested}\n", GFX942)
    assert assemble(f"{HEAD}s_nop 2\ns_endpgm\n", GFX942)


def test_link_refuses_undefined_symbols(triton):
    obj = assemble(f"{HEAD}s_add_u32 s0, s0, missing@rel32@lo+4\n", GFX942)
    with pytest.raises(ToolchainError) as exc:
        triton.link(obj, ["--no-undefined"])
    assert str(exc.value) == "Triton's linker failed: ld.lld: error: undefined symbol: missing"
