"""Widening a run of 16-bit buffer loads, guarded by a fallback path. Triton's AMD backend loads each lane's K
consecutive bf16/f16 elements with K `buffer_load_ushort`s, each through its own offset register (the
element's byte offset, or an out-of-range sentinel where the element is out of bounds):

    buffer_load_ushort vD0, vO0, s[R:R+3], 0 offen
    ...
    buffer_load_ushort vD7, vO7, s[R:R+3], 0 offen

The lanes' runs lie 2K bytes apart, so each of the K loads touches every 128-byte line the wave's runs span: K
times the lines one `buffer_load_dwordx4` (K = 8; `dwordx2` for 4, `dword` for 2) at vO0 touches. The rewrite
checks, at the run's place, that every lane of the wave's EXEC has consecutive offsets (vOk = vO0 + 2k), vO0 a
multiple of 4, the whole run in range (vO0 + 2K <= num_records) and the V#'s base a multiple of 4, its stride,
swizzle and ADD_TID bits clear (so the raw buffer addresses base + offset byte for byte, as `asmevo.emu.vmem` models it):

    <the checks into F>
    s_andn2_b64 T, exec, F ; s_cbranch_scc1 .Lslow     (a lane fails: the narrow loads)
    buffer_load_dwordx4 Q, vO0, s[R:R+3], 0 offen       (Q[j] = element 2j | element 2j+1 << 16)
    s_branch .Ljoin
  .Lslow:
    <the K loads as they were> ; s_waitcnt vmcnt(0) ; v_lshl_or_b32 Q[j], vD(2j+1), 16, vD(2j)
  .Ljoin:

Every reader of a loaded value must be `v_lshlrev_b32_e32 vX, 16, vDk` (bf16 to f32), which now reads Q:
`v_lshlrev_b32_e32 vX, 16, Q[j]` for an even k (the high element shifts out), `v_and_b32_e32 vX, 0xffff0000,
Q[j]` for an odd one; so both paths give each reader its value, and the readers cost what they cost. Each
loaded value has that load as its only write (its web, `asmevo.agent.webs`); the run runs under the wave's
whole EXEC, with nothing between its loads, no load writing another's offset or the V#, and SCC dead before
it. Every vmcnt wait is lowered by the K-1 loads the fast path drops, then raised as far as the waitcnt
analysis allows (the wide load issues where the first narrow one did, so a wait covering any of them covers
it). Everything is re-checked by the static checks and every gate."""
from __future__ import annotations

from ..isa.operands import Operand, parse_operand
from ..isa.regs import operand_regs
from .body import Body, BodyItem, make_item
from .ops_rename import free_pairs, free_vgprs
from .ops_waitcnt import recount_vmem
from .webs import NotAnalysable, webs_of

NARROW = "buffer_load_ushort"
_WIDE = {2: "buffer_load_dword", 4: "buffer_load_dwordx2", 8: "buffer_load_dwordx4"}
_SCC = ("scc", 0)


def _run(body: Body, i: int) -> list[int] | None:
    """The contiguous run of narrow loads through instruction i with the same V#, soffset 0 and `offen` alone,
    when it has 2, 4 or 8 loads in one block."""
    ins = body.instructions

    def same(j: int) -> bool:
        x = ins[j]
        return x.mnemonic == NARROW and len(x.operands) == 4 and tuple(x.modifiers) == ("offen",) and \
            x.operands[3].text == "0" and x.operands[2].text == ins[i].operands[2].text and \
            x.operands[1].kind == "vgpr" and body.cfg.block_of[j] == body.cfg.block_of[i]

    if not same(i):
        return None
    lo, hi = i, i
    while lo > 0 and same(lo - 1):
        lo -= 1
    while hi + 1 < len(ins) and same(hi + 1):
        hi += 1
    run = list(range(lo, hi + 1))
    return run if len(run) in _WIDE else None


def _checks(offsets: list[Operand], rsrc: int, fmask: str, pair: str, temp: str) -> list[str]:
    """Instructions setting `fmask` to the lanes whose run is consecutive, dword-aligned and in range, and
    clearing it when the V# is not a plain raw buffer at a dword-aligned base."""
    o0, k = offsets[0].text, len(offsets)
    out = [f"v_add_u32_e32 {temp}, 2, {o0}", f"v_cmp_eq_u32_e64 {fmask}, {temp}, {offsets[1].text}"]
    for n, o in enumerate(offsets[2:], 2):
        out += [f"v_add_u32_e32 {temp}, {2 * n}, {o0}", f"v_cmp_eq_u32_e64 {pair}, {temp}, {o.text}",
                f"s_and_b64 {fmask}, {fmask}, {pair}"]
    out += [f"v_and_b32_e32 {temp}, 3, {o0}", f"v_cmp_eq_u32_e64 {pair}, 0, {temp}",
            f"s_and_b64 {fmask}, {fmask}, {pair}",
            f"v_cmp_le_u32_e64 {pair}, {o0}, s{rsrc + 2}", f"s_and_b64 {fmask}, {fmask}, {pair}",
            f"v_sub_u32_e32 {temp}, s{rsrc + 2}, {o0}", f"v_cmp_le_u32_e64 {pair}, {2 * k}, {temp}",
            f"s_and_b64 {fmask}, {fmask}, {pair}"]
    scratch = parse_operand(pair).index
    out += [f"s_bitcmp0_b32 s{rsrc}, 0", f"s_cselect_b64 {fmask}, {fmask}, 0",
            f"s_bitcmp0_b32 s{rsrc}, 1", f"s_cselect_b64 {fmask}, {fmask}, 0",
            f"s_lshr_b32 s{scratch}, s{rsrc + 1}, 16", f"s_cselect_b64 {fmask}, 0, {fmask}",
            f"s_bitcmp0_b32 s{rsrc + 3}, 23", f"s_cselect_b64 {fmask}, {fmask}, 0"]
    return out


def widen_buffer_loads(body: Body, i: int) -> Body | None:
    """Widen the run of 16-bit buffer loads through instruction i behind its checks (the module docstring)."""
    run = _run(body, i)
    if run is None:
        return None
    ins, infos = body.instructions, body.infos
    first, k = run[0], len(run)
    rsrc_op = ins[first].operands[2]
    offsets = [ins[j].operands[1] for j in run]
    held = operand_regs(rsrc_op).union(*(operand_regs(o) for o in offsets))
    if rsrc_op.kind != "sgpr" or rsrc_op.count != 4 or any(infos[j].defs & held for j in run) or \
            _SCC in body.live_after(first):
        return None
    try:
        webs = webs_of(body)
    except NotAnalysable:
        return None
    if not webs.exec_full[first]:
        return None
    values = [webs.def_web.get((j, infos[j].dst[0].index)) for j in run]
    if None in values or any(w.pinned or w.defs != {j} for w, j in zip(values, run)):
        return None
    for w, j in zip(values, run):  # every reader: v_lshlrev_b32_e32 vX, 16, vDk
        for u in w.uses:
            x = ins[u]
            if x.mnemonic != "v_lshlrev_b32_e32" or x.modifiers or x.operands[1].text != "16" or \
                    x.operands[2].text != ins[j].operands[0].text:
                return None
    quad, temp = free_vgprs(body, [k // 2, 1]) or (None, None)
    pairs = free_pairs(body)
    labels = body.index[1]
    slow, join = f".Lwbuf_slow_{first}", f".Lwbuf_join_{first}"
    if quad is None or len(pairs) < 3 or slow in labels or join in labels:
        return None
    fmask, pair, test = pairs[:3]
    q = [f"v{quad + n}" for n in range(k // 2)]
    wide_dst = q[0] if k == 2 else f"v[{quad}:{quad + k // 2 - 1}]"
    rsrc = rsrc_op.index
    wide = f"{_WIDE[k]} {wide_dst}, {offsets[0].text}, {rsrc_op.text}, 0 offen"
    checked = [make_item(t) for t in (*_checks(offsets, rsrc, fmask, pair, f"v{temp}"),
                                      f"s_andn2_b64 {test}, exec, {fmask}", f"s_cbranch_scc1 {slow}", wide,
                                      f"s_branch {join}")]
    dsts = [ins[j].operands[0].text for j in run]
    packs = [make_item(t) for t in ("s_waitcnt vmcnt(0)", *(f"v_lshl_or_b32 {q[n]}, {dsts[2 * n + 1]}, 16, {dsts[2 * n]}"
                                                             for n in range(k // 2)))]
    readers: dict[int, str] = {}
    for n, w in enumerate(values):
        for u in w.uses:
            dst = ins[u].operands[0].text
            readers[u] = (f"v_lshlrev_b32_e32 {dst}, 16, {q[n // 2]}" if n % 2 == 0 else
                          f"v_and_b32_e32 {dst}, 0xffff0000, {q[n // 2]}")
    items, pos_of = [], {p: n for n, p in enumerate(body.pos)}
    for p, it in enumerate(body.items):
        n = pos_of.get(p)
        if n == first:
            items += [*checked, BodyItem(f"{slow}:", label=slow)]
        items.append(make_item(readers[n]) if n in readers else it)
        if n == run[-1]:
            items += [*packs, BodyItem(f"{join}:", label=join)]
    new = recount_vmem(body, items, k - 1, body.waitcnt_violations)
    if not new.no_worse(body):
        return None
    # for predictions: the checks and the wide load run as often as the first narrow load did (its lines), the
    # fallback never (every lane passes where the launch's rows fill whole runs)
    fast = {id(it) for it in checked}
    fallback = {id(it) for it in packs} | {id(body.items[body.pos[j]]) for j in run}
    for n, p in enumerate(new.pos):
        item = new.items[p]
        if id(item) in fast:
            new.counts[n] = ((first, 1.0),)
            if item.ins.mnemonic == _WIDE[k]:
                new.traffic[n] = (first, 1.0)
        elif id(item) in fallback:
            new.counts[n] = ()
    return new

