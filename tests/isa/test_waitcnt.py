"""s_waitcnt sufficiency: unit cases, zero false positives on the corpus, removed waits found."""
import pytest

from asmevo.isa.cfg import build_cfg
from asmevo.isa.instruction import parse_instruction
from asmevo.isa.waitcnt import check_waitcnt, decode_waitcnt
from isatools import program, remove

CASES = [
    # (program, expected violation counters)
    ("global_load_dword v0, v[2:3], off\nv_add_f32_e32 v1, v0, v0", ["vmcnt"]),
    ("global_load_dword v0, v[2:3], off\ns_waitcnt vmcnt(0)\nv_add_f32_e32 v1, v0, v0", []),
    ("global_load_dword v0, v[2:3], off\nglobal_load_dword v1, v[2:3], off\ns_waitcnt vmcnt(1)\n"
     "v_add_f32_e32 v4, v0, v0", []),
    ("global_load_dword v0, v[2:3], off\nglobal_load_dword v1, v[2:3], off\ns_waitcnt vmcnt(1)\n"
     "v_add_f32_e32 v4, v1, v1", ["vmcnt"]),
    ("global_load_dword v0, v[2:3], off\nglobal_store_dword v[2:3], v5, off\ns_waitcnt vmcnt(1)\n"
     "v_add_f32_e32 v4, v0, v0", []),
    ("global_load_dword v0, v[2:3], off\nv_mov_b32_e32 v0, 0", ["vmcnt"]),
    ("global_load_dword v0, v[2:3], off\nglobal_load_dword v0, v[4:5], off\ns_waitcnt vmcnt(0)", []),
    ("s_load_dword s4, s[0:1], 0x0\ns_load_dword s5, s[0:1], 0x4\ns_waitcnt lgkmcnt(1)\ns_add_u32 s6, s4, 1",
     ["lgkmcnt"]),
    ("s_load_dword s4, s[0:1], 0x0\ns_load_dword s5, s[0:1], 0x4\ns_waitcnt lgkmcnt(0)\ns_add_u32 s6, s4, s5", []),
    ("ds_read_b32 v0, v2\nds_read_b32 v1, v3\ns_waitcnt lgkmcnt(1)\nv_add_f32_e32 v4, v0, v0", []),
    ("ds_read_b32 v0, v2\ns_load_dword s4, s[0:1], 0x0\ns_waitcnt lgkmcnt(1)\nv_add_f32_e32 v4, v0, v0", ["lgkmcnt"]),
    ("flat_load_dword v0, v[2:3]\ns_waitcnt vmcnt(0)\nv_add_f32_e32 v4, v0, v0", ["lgkmcnt"]),
    ("flat_load_dword v0, v[2:3]\ns_waitcnt vmcnt(0) lgkmcnt(0)\nv_add_f32_e32 v4, v0, v0", []),
    ("buffer_load_dword off, s[4:7], 0 lds\nds_read_b32 v0, v1", ["vmcnt"]),
    ("buffer_load_dword off, s[4:7], 0 lds\ns_waitcnt vmcnt(0)\nds_read_b32 v0, v1", []),
    ("ds_write_b32 v0, v1\ns_barrier", ["lgkmcnt"]),
    ("ds_write_b32 v0, v1\ns_waitcnt lgkmcnt(0)\ns_barrier", []),
    ("global_atomic_add v0, v[2:3], v4, off sc0\nv_add_u32_e32 v1, v0, v0", ["vmcnt"]),
    ("global_atomic_add v[2:3], v4, off\nv_add_u32_e32 v1, v4, v4", []),
]


@pytest.mark.parametrize("text,counters", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_cases(text, counters):
    ins, labels = program(text + "\ns_endpgm")
    assert [v.counter for v in check_waitcnt(ins, labels)] == counters


def test_violation_names_register_and_pc():
    ins, labels = program("global_load_dwordx2 v[4:5], v[2:3], off\nv_add_f32_e32 v1, v5, v4\ns_endpgm")
    (v,) = check_waitcnt(ins, labels)
    assert v.index == 1 and v.register == "v[4:5]" and "vmcnt" in v.message


def test_loop_carried_load():
    ins, labels = program("""
        global_load_dword v0, v[2:3], off
        s_waitcnt vmcnt(0)
        top:
        v_add_f32_e32 v1, v0, v1
        global_load_dword v0, v[2:3], off
        s_cbranch_scc1 top
        s_endpgm
    """)
    v = check_waitcnt(ins, labels)
    assert [x.index for x in v] == [2]


def test_join_keeps_pending_from_one_path():
    ins, labels = program("""
        s_cbranch_scc1 skip
        global_load_dword v0, v[2:3], off
        skip:
        v_add_f32_e32 v1, v0, v0
        s_endpgm
    """)
    assert [x.index for x in check_waitcnt(ins, labels)] == [2]


DOUBLE_BUFFER = """
    buffer_load_dword off, s[4:7], 0 lds
    buffer_load_dword off, s[4:7], 0 offset:4 lds
    buffer_load_dword off, s[4:7], 0 offset:8 lds
    buffer_load_dword off, s[4:7], 0 offset:12 lds
    s_waitcnt vmcnt(2)
    s_barrier
    ds_read_b32 v0, v1
    s_endpgm
"""


def test_lds_dma_loads_are_reported_per_load():
    """Double buffering: the first two LDS-DMA loads fill the buffer read, the last two the other one. The
    analysis does not know which bytes each writes, so the read is reported once per load that may be pending:
    a wait leaving more of them in flight gives more findings."""
    ins, labels = program(DOUBLE_BUFFER)
    found = check_waitcnt(ins, labels)
    assert [(v.index, v.counter) for v in found] == [(6, "vmcnt"), (6, "vmcnt")]
    assert [v.register for v in found] == ["LDS (DMA load at #2)", "LDS (DMA load at #3)"]
    ins, labels = program(DOUBLE_BUFFER.replace("s_waitcnt vmcnt(2)", "s_waitcnt vmcnt(3)"))
    assert len(check_waitcnt(ins, labels)) == 3


def test_decode_waitcnt():
    assert decode_waitcnt(parse_instruction("s_waitcnt vmcnt(0) lgkmcnt(3)")) == {"vmcnt": 0, "lgkmcnt": 3}
    assert decode_waitcnt(parse_instruction("s_waitcnt 0")) == {"vmcnt": 0, "expcnt": 0, "lgkmcnt": 0}
    assert decode_waitcnt(parse_instruction("s_waitcnt lgkmcnt(15)")) == {}


def test_corpus_has_no_false_positives(corpus_kernels):
    assert len(corpus_kernels) >= 10
    for name, ins in corpus_kernels.items():
        assert check_waitcnt(ins) == [], name


def test_corpus_every_compiler_wait_is_needed(corpus_kernels):
    removed = 0
    for name, ins in corpus_kernels.items():
        cfg = build_cfg(ins)
        live = set(cfg.reachable())
        for i, x in enumerate(ins):
            if x.mnemonic == "s_waitcnt" and cfg.block_of[i] in live:
                assert check_waitcnt(remove(ins, i)), f"{name}: removing #{i} {x.text()} went unnoticed"
                removed += 1
    assert removed >= 50
