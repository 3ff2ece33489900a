"""prefetch_loop_loads: a one-block K loop's global loads issued one iteration ahead, masked off in the last
iteration, the first iteration's in the preheader, the waits recounted; each refusal where the next
iteration's address or the value's register is not what the rewrite needs."""
from __future__ import annotations

from asmevo.agent.ops_prefetch import prefetch_loop_loads
from asmevo.agent.ops_sched import hoist_loads

from agenttools import body_of, code, evaluated, evaluator

# A K loop: the counter's compare at the top, one load per iteration staged through LDS, its pointer
# advanced by a constant at the bottom.
LOOP = ["s_mov_b64 s[2:3], 0x100", "s_mov_b32 s5, 0", ".Lloop:", "s_add_i32 s5, s5, 1", "s_cmp_lg_u32 s5, s10",
        "global_load_dword v4, v[0:1], off offset:8", "s_waitcnt vmcnt(0)", "ds_write_b32 v2, v4",
        "s_waitcnt lgkmcnt(0)", "s_barrier", "ds_read_b32 v5, v2", "s_waitcnt lgkmcnt(0)", "v_add_f32_e32 v6, v6, v5",
        "v_lshl_add_u64 v[0:1], v[0:1], 0, s[2:3]", "s_cbranch_scc1 .Lloop", "global_store_dword v[8:9], v6, off",
        "s_endpgm"]


def loop(**changes: str):
    return body_of([changes.get(x, x) for x in LOOP])


def site(body) -> int:
    return next(i for i, x in enumerate(body.instructions) if x.mnemonic == "global_load_dword")


def test_the_next_iterations_load_issues_after_the_last_read_of_this_ones():
    b = loop()
    new = prefetch_loop_loads(b, site(b))
    assert new is not None and new.no_worse(b)
    c = code(new)
    head = c.index("s_add_i32 s5, s5, 1")
    assert c[head - 2:head] == ["global_load_dword v4, v[0:1], off offset:8", ".Lloop:"]  # iteration 0's, in the preheader
    write = c.index("ds_write_b32 v2, v4")
    # the next iteration's: before the pointer advances, so its offset moves by the stride; no lanes when
    # the loop ends (SCC from the compare at the top: nothing in between writes it)
    assert c[write + 1:write + 5] == ["s_mov_b64 s[0:1], exec", "s_cselect_b64 exec, exec, 0",
                                      "global_load_dword v4, v[0:1], off offset:264", "s_mov_b64 exec, s[0:1]"]
    assert sum(1 for x in c if x.startswith("global_load")) == 2


def test_refused_where_the_next_address_or_the_value_is_not_known():
    b = loop()
    i = site(b)
    # a store in the loop: the early load could read what it writes
    assert prefetch_loop_loads(loop(**{"ds_write_b32 v2, v4": "global_store_dword v[8:9], v4, off"}), i) is None
    # a stride that is no constant, or one the 13-bit offset cannot take
    assert prefetch_loop_loads(loop(**{"s_mov_b64 s[2:3], 0x100": "s_mov_b64 s[2:3], s[6:7]"}), i) is None
    assert prefetch_loop_loads(loop(**{"s_mov_b64 s[2:3], 0x100": "s_mov_b64 s[2:3], 0x1000"}), i) is None
    # the pointer advanced twice, or the loaded value read in the next iteration too
    assert prefetch_loop_loads(loop(**{"v_add_f32_e32 v6, v6, v5": "v_lshl_add_u64 v[0:1], v[0:1], 0, s[2:3]"}),
                               i) is None
    around = loop(**{"s_mov_b32 s5, 0": "v_mov_b32_e32 v4, 0", "s_add_i32 s5, s5, 1": "v_add_f32_e32 v7, v7, v4"})
    assert prefetch_loop_loads(around, i) is None
    # the loop's EXEC changes, or the compare deciding the back edge comes after the last read
    assert prefetch_loop_loads(loop(**{"s_barrier": "s_mov_b64 exec, s[12:13]"}), i) is None
    moved = loop(**{"s_cmp_lg_u32 s5, s10": "v_add_f32_e32 v7, v7, v7", "v_add_f32_e32 v6, v6, v5":
                    "s_cmp_lg_u32 s5, s10"})
    new = prefetch_loop_loads(moved, i)  # still legal: the prefetch waits for the compare
    assert new is not None and code(new).index("s_cmp_lg_u32 s5, s10") < code(new).index("s_cselect_b64 exec, exec, 0")


def test_lora_shrink_prefetches_its_tiles_an_iteration_ahead():
    """vLLM's LoRA shrink at its bench shape: after `hoist_loads` its K loop issues four tiles of six
    `global_load_ushort`s at its top and then waits for them; issued in the iteration before (after each
    value's last read), the candidate verifies on every verify shape and the held-out one, and is faster."""
    ev = evaluator("vllm_lora_shrink", "triton", "mi300x")
    body = ev.body_of(0)
    i = next(k for k, x in enumerate(body.instructions) if x.text() == "global_load_ushort v44, v[16:17], off offset:512")
    hoisted = hoist_loads(body, i)
    first = evaluated(ev, body, hoisted, "hoist_loads")
    new = prefetch_loop_loads(hoisted, i)
    assert new is not None
    second = evaluated(ev, hoisted, new, "prefetch_loop_loads", parent=first.id)
    assert second.cycles < first.cycles * 0.97


def test_prefetches_share_one_exec_mask_and_each_offset_is_counted_where_it_lands():
    """The first value's prefetch joins the second's after the pointer has advanced (no barrier between), so
    its offset is the iteration's own: an offset fixed before the move would read two strides ahead."""
    lines = ["s_mov_b64 s[2:3], 0x100", ".Lloop:", "s_add_i32 s5, s5, 1", "s_cmp_lg_u32 s5, s10",
             "global_load_dword v4, v[0:1], off", "global_load_dword v5, v[0:1], off offset:4", "s_waitcnt vmcnt(0)",
             "ds_write_b32 v2, v4", "v_lshl_add_u64 v[0:1], v[0:1], 0, s[2:3]", "ds_write_b32 v2, v5 offset:4",
             "s_cbranch_scc1 .Lloop", "s_endpgm"]
    b = body_of(lines)
    new = prefetch_loop_loads(b, 4)
    assert new is not None
    c = code(new)
    at = c.index("ds_write_b32 v2, v5 offset:4")
    assert c[at + 1:at + 6] == ["s_mov_b64 s[0:1], exec", "s_cselect_b64 exec, exec, 0",
                                "global_load_dword v4, v[0:1], off", "global_load_dword v5, v[0:1], off offset:4",
                                "s_mov_b64 exec, s[0:1]"]
