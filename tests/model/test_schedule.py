"""`edge_schedules`: one schedule per taken edge, loop back edges carrying outstanding work."""
from asmevo.isa.cfg import build_cfg
from asmevo.model import DEFAULT_LATENCIES
from asmevo.model.costs import cost
from asmevo.model import schedule
from asmevo.model.schedule import ENTRY, edge_schedules

from modeltools import program

LOOP = """
    v_mov_b32 v0, 0
  loop:
    s_waitcnt vmcnt(0)
    v_add_f32 v2, v1, v1
    global_load_dword v1, v[4:5], off
    s_cbranch_scc1 loop
    s_endpgm
"""


def _schedules():
    instrs = program(LOOP)
    cfg = build_cfg(instrs)
    edges = {(ENTRY, 0): 1, (0, 1): 1, (1, 1): 9, (1, 2): 1}
    return edge_schedules(cfg, edges, lambda ins: cost(ins, DEFAULT_LATENCIES))


def test_the_back_edge_schedule_waits_for_the_load_the_previous_iteration_issued():
    schedules = _schedules()
    first, again = schedules[(0, 1)], schedules[(1, 1)]
    assert first.slots[0].stall == 0            # entered from the preheader: nothing outstanding
    assert again.slots[0].cause == "waitcnt vmem_load"
    assert again.slots[0].stall > 0.5 * DEFAULT_LATENCIES.hbm
    assert again.length > first.length


def test_the_second_pass_schedules_again_only_the_edges_a_back_edge_changed(monkeypatch):
    """Pass one schedules all four edges; pass two only the back edge (it now starts from the loop's end
    state) and the exit (the loop's end state changed with it): the preheader and the loop entry start
    from the same states as before, so their schedules stand."""
    calls = []
    real = schedule.schedule_block

    def counted(body, entry, *args, **kwargs):
        calls.append(body[0].address)
        return real(body, entry, *args, **kwargs)

    monkeypatch.setattr(schedule, "schedule_block", counted)
    schedules = _schedules()
    assert set(schedules) == {(ENTRY, 0), (0, 1), (1, 1), (1, 2)}
    assert len(calls) == 6
