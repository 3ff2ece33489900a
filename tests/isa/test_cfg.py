"""CFG, dominators and loops on compiled and hand-written kernels."""
import pytest

from asmevo.errors import DisassemblyError
from asmevo.isa.cfg import build_cfg
from isatools import program


def test_corpus_cfgs_are_consistent(corpus_kernels):
    for name, ins in corpus_kernels.items():
        cfg = build_cfg(ins)
        assert cfg.blocks[0].start == 0 and cfg.blocks[-1].end == len(ins), name
        for b in cfg.blocks:
            for s in b.succs:
                assert b.index in cfg.blocks[s].preds, name
        dom = cfg.dominators()
        assert all(0 in d for d in dom.values()), name


@pytest.mark.parametrize("name", ["lds_reduce", "mfma_loop", "lds_tiled_matmul", "matmul_kernel", "rowsum_kernel"])
def test_loops_found_in_compiled_kernels(corpus_kernels, name):
    cfg = build_cfg(corpus_kernels[name])
    loops = cfg.loops()
    assert loops, name
    for loop in loops:
        assert loop.header in loop.blocks and all(l in loop.blocks for l in loop.latches)
        assert any(i.is_branch for b in loop.latches for i in
                   cfg.instructions[cfg.blocks[b].start:cfg.blocks[b].end]) or loop.header in loop.latches


def test_straight_line_kernel_has_no_loop(corpus_kernels):
    assert build_cfg(corpus_kernels["saxpy"]).loops() == []


def test_hand_written_nested_loops_and_indirect():
    ins, labels = program("""
        s_mov_b32 s0, 0
        outer:
        s_mov_b32 s1, 0
        inner:
        s_add_u32 s1, s1, 1
        s_cmp_lt_u32 s1, 4
        s_cbranch_scc1 inner
        s_add_u32 s0, s0, 1
        s_cmp_lt_u32 s0, 4
        s_cbranch_scc1 outer
        s_setpc_b64 s[2:3]
        s_endpgm
    """)
    cfg = build_cfg(ins, labels)
    loops = cfg.loops()
    assert len(loops) == 2
    inner = min(loops, key=lambda l: len(l.blocks))
    outer = max(loops, key=lambda l: len(l.blocks))
    assert inner.blocks < outer.blocks
    assert cfg.indirect == [cfg.block_of[8]]
    assert cfg.blocks[cfg.block_of[8]].succs == []
    assert cfg.block_of[9] not in cfg.reachable()


def test_unresolvable_branch_is_named_error():
    ins, _ = program("s_branch nowhere\ns_endpgm")
    with pytest.raises(DisassemblyError):
        build_cfg(ins, {})
