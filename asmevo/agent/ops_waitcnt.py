"""Rewrite operators on `s_waitcnt`: relax a wait to the largest legal counts, sink it to the latest
legal point (splitting it per consumer), and hoist it to a dominating block so that waits after
stores stop waiting for the stores. Legality is the waitcnt analysis (isa/waitcnt.py): in-order
vmcnt/LDS lgkmcnt events, out-of-order SMEM; every result is checked against it."""
from __future__ import annotations

from ..isa.waitcnt import COUNTER_MAX, check_waitcnt, decode_waitcnt
from .body import Body, BodyItem, make_item

_ORDER = ("vmcnt", "expcnt", "lgkmcnt")


def wait_text(limits: dict[str, int]) -> str | None:
    """`s_waitcnt` text for counter limits (None when nothing is waited on)."""
    parts = [f"{c}({limits[c]})" for c in _ORDER if c in limits and limits[c] < COUNTER_MAX[c]]
    return "s_waitcnt " + " ".join(parts) if parts else None


def is_wait(item: BodyItem) -> bool:
    return item.ins is not None and item.ins.mnemonic == "s_waitcnt"


def _with_wait(body: Body, k: int, limits: dict[str, int]) -> Body:
    """`body` with the wait at item position k set to `limits` (removed when empty)."""
    if limits == decode_waitcnt(body.items[k].ins):
        return body
    text = wait_text(limits)
    items = list(body.items)
    if text is None:
        del items[k]
    else:
        items[k] = make_item(text)
    return body.replace(items)


def _legal(body: Body, budget: int, ignore: frozenset[int] = frozenset()) -> bool:
    """At most `budget` waitcnt violations, not counting those at instructions in `ignore` (ids)."""
    found = check_waitcnt(body.instructions, cfg=body.cfg, processor=body.processor)
    return sum(1 for v in found if id(body.instructions[v.index]) not in ignore) <= budget


def relax_at(body: Body, k: int, budget: int, ignore: frozenset[int] = frozenset()) -> Body:
    """Raise each counter of the wait at item k as far as the analysis allows (dropping counters,
    or the whole wait, when nothing needs them); violations at `ignore` instructions don't count."""
    limits = decode_waitcnt(body.items[k].ins)
    for counter in list(limits):
        lo, hi = limits[counter], COUNTER_MAX[counter]
        if _legal(_with_wait(body, k, {**limits, counter: hi}), budget, ignore):
            limits[counter] = hi
            continue
        # gallop up from the current count (most waits are tight or nearly so), then bisect
        step = 1
        while lo + step < hi:
            if not _legal(_with_wait(body, k, {**limits, counter: lo + step}), budget, ignore):
                hi = lo + step
                break
            lo += step
            step *= 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if _legal(_with_wait(body, k, {**limits, counter: mid}), budget, ignore):
                lo = mid
            else:
                hi = mid
        limits[counter] = lo
    return _with_wait(body, k, limits)


def relax_items(body: Body, waits: list[BodyItem], budget: int) -> Body:
    """`relax_at` at each of the wait items `waits` of `body`, first to last, each on the result so far."""
    for item in waits:
        body = relax_at(body, next(p for p, it in enumerate(body.items) if it is item), budget)
    return body


def recount_vmem(body: Body, items: list[BodyItem], fewer: int, budget: int) -> Body:
    """`body` with `items`, where some path issues `fewer` vector memory accesses than before (loads, or stores, which
    gfx9's vmcnt counts too): every vmcnt wait is lowered
    by that many (never later than it was), then raised as far as the waitcnt analysis allows (`budget`: the
    violations the parent had)."""
    items, lowered = list(items), []
    for p, it in enumerate(items):
        limits = decode_waitcnt(it.ins) if is_wait(it) else {}
        if limits.get("vmcnt", 0) > 0:
            items[p] = make_item(wait_text({**limits, "vmcnt": max(0, limits["vmcnt"] - fewer)}))
            lowered.append(items[p])
    return relax_items(body.replace(items), lowered, budget)


def relax(body: Body, k: int) -> Body | None:
    """Relax the wait at item k; None when it is already as late as legal."""
    new = relax_at(body, k, body.waitcnt_violations)
    return None if new.same_code(body) else new


def _is_end(item: BodyItem) -> bool:
    return item.ins is not None and (item.ins.is_branch or item.ins.ends_program)


def sink(body: Body, k: int) -> Body | None:
    """Remove the wait at item k and re-insert waits just before each consumer in its block that
    needs one (each relaxed; a wait still needed by later blocks goes to the block's end), so
    independent work after the wait overlaps the memory latency."""
    budget = body.waitcnt_violations
    limits = decode_waitcnt(body.items[k].ins)
    i = sum(1 for it in body.items[:k] if it.ins is not None)
    blk = body.cfg.blocks[body.cfg.block_of[i]]
    after = [id(x) for x in body.instructions[i + 1:blk.end]]
    cur = body.replace(body.items[:k] + body.items[k + 1:])
    for _ in range(16):
        found = check_waitcnt(cur.instructions, cfg=cur.cfg, processor=cur.processor)
        if len(found) <= budget:
            break
        where = {id(ins): p for ins, p in zip(cur.instructions, cur.pos)}
        inside = [where[id(cur.instructions[v.index])] for v in found if id(cur.instructions[v.index]) in after]
        later: frozenset[int] = frozenset()
        if inside:
            at = min(inside)
            later = frozenset(x for x in after if where[x] > at)
        elif after:
            last = where[after[-1]]
            at = last if _is_end(cur.items[last]) else last + 1
        else:
            at = k
        items = list(cur.items)
        items.insert(at, make_item(wait_text(limits)))
        before = cur
        inserted = cur.replace(items)
        cur = relax_at(inserted, at, budget, later)
        if cur.same_code(before):
            return None
    else:
        return None
    if not _legal(cur, budget) or cur.same_code(body):
        return None
    return cur


def _block_end_position(body: Body, b: int) -> int:
    """BodyItem position at the end of block b (before its branch or s_endpgm)."""
    last = body.pos[body.cfg.blocks[b].end - 1]
    return last if _is_end(body.items[last]) else last + 1


def _next_waits(body: Body, b: int, after: int) -> set[int]:
    """Ids of the first wait on every path leaving block b from instruction index `after` on."""
    instrs = body.instructions
    found: set[int] = set()

    def stop(j: int) -> bool:
        if instrs[j].mnemonic == "s_waitcnt":
            found.add(id(instrs[j]))
            return True
        return False

    body.walk_forward(b, after, stop)
    return found


def _insert_and_relax(body: Body, k: int, blocks: list[int]) -> Body | None:
    """Insert a copy of the wait at item k at the end of each of `blocks`, then relax (or drop) the
    first wait on every path leaving them, following paths past waits that disappear."""
    text = wait_text(decode_waitcnt(body.items[k].ins))
    items = list(body.items)
    inserted = []
    for at in sorted({_block_end_position(body, b) for b in blocks}, reverse=True):
        item = make_item(text)
        items.insert(at, item)
        inserted.append(item)
    cur = body.replace(items)
    budget = body.waitcnt_violations
    pending: set[int] = set()
    for b in blocks:
        pending |= _next_waits(body, b, body.cfg.blocks[b].end)
    done: set[int] = set()
    while pending:
        wid = pending.pop()
        done.add(wid)
        p = next((q for q, it in enumerate(cur.items) if it.ins is not None and id(it.ins) == wid), None)
        if p is None:
            continue
        size = len(cur.items)
        cur = relax_at(cur, p, budget)
        if len(cur.items) < size:  # removed: the paths continue to the next waits
            n = sum(1 for it in cur.items[:p] if it.ins is not None)
            if n < len(cur.instructions):
                pending |= _next_waits(cur, cur.cfg.block_of[n], n) - done
    for p in range(len(cur.items) - 1, -1, -1):
        if any(cur.items[p] is it for it in inserted):
            cur = relax_at(cur, p, budget)
    if not _legal(cur, budget) or cur.same_code(body):
        return None
    return cur


def _block_of_item(body: Body, k: int) -> int:
    return body.cfg.block_of[sum(1 for it in body.items[:k] if it.ins is not None)]


def hoist_to_dominator(body: Body, k: int, depth: int = 1) -> Body | None:
    """Copy the wait at item k to the end of its `depth`-th dominator block, then relax or remove
    the waits after it. Worth it when waits sit after stores they would otherwise also wait for."""
    dom = body.cfg.dominators()
    b = _block_of_item(body, k)
    if b not in dom:
        return None
    for _ in range(depth):
        strict = [d for d in dom[b] if d != b]
        if not strict:
            return None
        b = max(strict, key=lambda d: len(dom[d]))
    return _insert_and_relax(body, k, [b])


def hoist_to_predecessors(body: Body, k: int) -> Body | None:
    """Copy the wait at item k to the end of every forward predecessor of its block, then relax or
    remove the waits after them (a wait per incoming path instead of one behind the merge)."""
    b = _block_of_item(body, k)
    dom = body.cfg.dominators()
    preds = [p for p in body.cfg.blocks[b].preds if p in dom and b not in dom[p]]
    if not preds:
        return None
    return _insert_and_relax(body, k, preds)
