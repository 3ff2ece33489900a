"""Per-lane known values, barrier phases and static LDS race freedom."""
import numpy as np
import pytest

from asmevo.emu.lane_values import LaneValues, entry_state
from asmevo.emu.lds_order import lds_conflicts
from asmevo.isa.barrier_phases import barrier_phases, lds_phases
from asmevo.isa.cfg import build_cfg
from emutools import asm

BLOCK = (128, 1, 1)  # two waves


def code(body: str):
    co = asm(body + "\n  s_endpgm", lds=2048)
    return co.kernel_instructions("k")


def index_of(instructions, text: str) -> int:
    return next(i for i, x in enumerate(instructions)
                if x.text().replace("_e32", "").replace("_e64", "").startswith(text))


def test_work_item_arithmetic_is_known_and_loads_are_not():
    ins = code("""  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  v_readfirstlane_b32 s6, v0
  v_add_u32 v2, s6, v1
  s_waitcnt lgkmcnt(0)
  global_load_dword v3, v1, s[4:5]
  v_add_u32 v4, s4, v1
  s_waitcnt vmcnt(0)
  v_mov_b32 v5, v3""")
    end = index_of(ins, "v_mov_b32 v5")
    st = LaneValues(ins, BLOCK).before({end})[end]
    tid = np.arange(128).reshape(2, 64)
    assert st.vk[1].all() and (st.v[1] == 4 * tid).all()
    assert st.vk[2].all() and (st.v[2] == 4 * tid + 64 * np.arange(2)[:, None]).all()  # + first lane's id
    assert not st.vk[3].any() and not st.vk[4].any()  # memory, and a kernarg pointer


def test_values_written_under_a_data_dependent_mask_hold_under_that_mask():
    ins = code("""  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  global_load_dword v1, v0, s[4:5]
  s_waitcnt vmcnt(0)
  v_cmp_gt_u32 vcc, 5, v1
  v_mov_b32 v2, 7
  s_and_saveexec_b64 s[8:9], vcc
  v_lshlrev_b32 v2, 3, v0
  v_add_u32 v3, 1, v2
  s_or_b64 exec, exec, s[8:9]
  v_mov_b32 v4, v3""")
    inside, after = index_of(ins, "v_add_u32 v3"), index_of(ins, "v_mov_b32 v4")
    states = LaneValues(ins, BLOCK).before({inside, after})
    st = states[inside]
    assert not st.vk[2].any() and st.usable(2).all()  # 8 * tid where EXEC enables the lane
    st = states[after]
    on, off = st.exec_known()
    assert on.all()  # the saved EXEC restored: every lane again
    assert not st.usable(2).any() and not st.usable(3).any()  # 7 or 8 * tid, depending on the data


def test_an_exec_write_drops_knowledge_under_its_previous_instance():
    # in a loop, a value computed under the mask of one trip's `s_and_b64 exec` must not count as
    # known under the next trip's
    ins = code("""  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  global_load_dword v1, v0, s[4:5]
  s_waitcnt vmcnt(0)
  v_cmp_gt_u32 vcc, 5, v1
  s_and_b64 exec, exec, vcc
  v_lshlrev_b32 v2, 2, v0""")
    lv = LaneValues(ins, BLOCK)
    k = index_of(ins, "s_and_b64")
    st = lv.before({k + 1})[k + 1]
    lv.step(k + 1, st)
    assert st.usable(2).all()  # under this mask
    lv.step(k, st)              # the mask written again
    assert not st.usable(2).any()


def test_barrier_phases_count_barriers_and_refuse_loops():
    ins = code("""  s_barrier
  v_mov_b32 v1, 0
  s_barrier
  v_mov_b32 v2, 0""")
    cfg = build_cfg(ins)
    phases = barrier_phases(cfg)
    assert phases[index_of(ins, "v_mov_b32 v1")] == {1} and phases[index_of(ins, "v_mov_b32 v2")] == {2}
    assert barrier_phases(cfg, frozenset({0}))[index_of(ins, "v_mov_b32 v2")] == {1}
    looped = code(""".Ltop:
  s_barrier
  s_cbranch_scc1 .Ltop""")
    assert barrier_phases(build_cfg(looped)) is None


def test_an_lds_access_in_flight_at_a_barrier_belongs_to_the_next_phase():
    ins = code("""  v_lshlrev_b32 v1, 2, v0
  ds_read_b32 v2, v1
  s_barrier
  s_waitcnt lgkmcnt(0)
  ds_read_b32 v3, v1
  s_waitcnt lgkmcnt(0)
  s_barrier""")
    cfg = build_cfg(ins)
    phases = barrier_phases(cfg)
    assert lds_phases(cfg, index_of(ins, "ds_read_b32 v2"), phases) == {0, 1}
    assert lds_phases(cfg, index_of(ins, "ds_read_b32 v3"), phases) == {1}


EXCHANGE = """  v_lshlrev_b32 v1, 2, v0
  v_xor_b32 v2, 0x100, v1
  ds_write_b32 v1, v0
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_read_b32 v3, {read}
  s_waitcnt lgkmcnt(0)
  s_barrier
  ds_write_b32 v1, v3
  s_waitcnt lgkmcnt(0)"""


@pytest.mark.parametrize("read,skip,races", [
    ("v2", None, False),                   # barriers order the exchange
    ("v2", "s_barrier", True),             # without the first: read the other wave's slot too early
    ("v1", "s_barrier", False),            # own slot: nothing to order
])
def test_lds_conflicts(read, skip, races):
    ins = code(EXCHANGE.format(read=read))
    skipped = frozenset({index_of(ins, skip)}) if skip else frozenset()
    found = lds_conflicts(ins, BLOCK, skipped)
    assert bool(found) == races, found
    if races:
        assert "may touch the same LDS bytes in one phase" in found[0]


def test_lds_address_from_memory_is_not_proved():
    ins = code("""  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_waitcnt lgkmcnt(0)
  global_load_dword v1, v0, s[4:5]
  s_waitcnt vmcnt(0)
  ds_write_b32 v1, v0""")
    assert "not known per work-item" in lds_conflicts(ins, BLOCK)[0]


def test_writelane_of_an_unknown_value_is_unknown_even_in_disabled_lanes():
    ins = code("""  s_load_dword s4, s[0:1], 0x0
  v_mov_b32 v1, 0
  s_mov_b64 exec, 1
  s_waitcnt lgkmcnt(0)
  v_writelane_b32 v1, s4, 5
  s_mov_b64 exec, -1
  v_mov_b32 v2, v1""")
    use = index_of(ins, "v_mov_b32 v2")
    st = LaneValues(ins, BLOCK).before({use})[use]
    assert not st.vk[1][0, 5]  # the loaded value, though EXEC never enabled lane 5


def test_a_join_of_different_exec_writers_is_a_new_exec():
    # knowledge recorded under an earlier arrival at the same join (an outer loop's previous trip)
    # must not hold under this arrival's EXEC
    a = entry_state(BLOCK, 4)
    a.ck[1], a.ce[1], a.epoch[:] = True, -3, 5
    b = a.copy()
    b.epoch[:] = 7
    a.merge(b, -3)
    assert (a.epoch == -3).all() and not a.usable(1).any()
