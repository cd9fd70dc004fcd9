"""Placement changes between two runs for `etscope diff`: ops that moved between a delegate and the
CPU, and partitions that split, merged, appeared or went.

With ETRecords the graph says which op types and source lines each delegate held. Without them,
a CPU op that appeared is matched to per-op delegate events of the same op kind that disappeared
(:mod:`etscope.analysis.ops.kinds`); when nothing tells, the entry is ``undecided`` and says the
ETRecords are needed.
"""
from __future__ import annotations

from collections import Counter, defaultdict

from etscope import profile as P
from etscope.analysis.diff.result import CpuOpChanged, OpMoved, OpMovedByEvents, PartitionsChanged, PlacementChange
from etscope.analysis.ops import kinds as op_kinds


def _delegated_op_types(profile: P.Profile) -> Counter:
    c: Counter = Counter()
    for ins in profile.instructions.values():
        if ins.kind == "delegate":
            for t in ins.op_types:
                c[(t, ins.backend)] += 1
    return c


def _delegated_sources(profile: P.Profile) -> dict[str, str]:
    """Source line -> backend, for graph nodes inside delegate calls. An op that moves to the CPU
    often changes type (linear delegated, addmm + permute on the CPU) but keeps its source line."""
    out: dict[str, str] = {}
    for ins in profile.instructions.values():
        if ins.kind == "delegate":
            for src in ins.sources:
                out.setdefault(src, ins.backend)
    return out


def _cpu_ops(profile: P.Profile) -> Counter:
    return Counter((ins.op_type or ins.kernel or "?", ins.source or "") for ins in profile.instructions.values()
                   if ins.kind == "cpu")


def _delegate_event_kinds(samples: dict[tuple, dict]) -> dict[tuple[str, str], list[str]]:
    """(op kind, backend) -> names of the delegate-internal per-op events of that kind (one per
    op: XNNPACK numbers repeated operators #1, #2 ...; QNN names every node)."""
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for key, info in samples.items():
        if info["role"] == "delegate_internal":
            kind = op_kinds.kind_of_delegate_event(key[4], backend=info["placement"])
            if kind:
                out[(kind, key[1])].append(info["name"])
    return out


def _events_gone(before: dict, after: dict) -> dict[tuple[str, str], list[str]]:
    """Per (kind, backend), the per-op events of ``before`` that ``after`` has fewer of."""
    out = {}
    for key, names in before.items():
        n = len(names) - len(after.get(key, []))
        if n > 0:
            out[key] = names[-n:]
    return out


def placement_changes(base: P.Profile, new: P.Profile, samples_base: dict,
                      samples_new: dict) -> tuple[PlacementChange, ...]:
    """Ops that moved between a delegate and the CPU, and partitions that split or merged.

    With ETRecords the graph says which op types and source lines each delegate held. Without one,
    a CPU op that appeared is matched to per-op events of the same op kind that disappeared from a
    delegate (XNNPACK ``Convolution (NHWC, F32) IGEMM #1`` <-> ``aten.convolution.out``); when
    neither tells, the entry says so (``undecided``) instead of calling it a new op."""
    out = []
    cb, cn = _cpu_ops(base), _cpu_ops(new)
    delegated_base = {t for t, _ in _delegated_op_types(base)}
    delegated_new = {t for t, _ in _delegated_op_types(new)}
    backend_of_base = {t: b for t, b in _delegated_op_types(base)}
    backend_of_new = {t: b for t, b in _delegated_op_types(new)}
    src_base, src_new = _delegated_sources(base), _delegated_sources(new)
    kinds_base, kinds_new = _delegate_event_kinds(samples_base), _delegate_event_kinds(samples_new)
    gone_from_delegates = _events_gone(kinds_base, kinds_new)   # candidates for moved_to_cpu
    new_in_delegates = _events_gone(kinds_new, kinds_base)      # candidates for moved_to_delegate
    for key in sorted(set(cb) | set(cn)):
        nb, nn = cb.get(key, 0), cn.get(key, 0)
        op_type, source = key
        if nn > nb:
            frm = backend_of_base.get(op_type) if op_type in delegated_base else src_base.get(source)
            if frm:
                out.append(OpMoved(kind="moved_to_cpu", op_type=op_type, source=source or None, count=nn - nb,
                                   from_=frm, to="cpu",
                                   matched_by="op type" if op_type in delegated_base else "source line"))
                continue
            out += _match_by_events(op_type, source, nn - nb, gone_from_delegates, "moved_to_cpu", "new_cpu_op",
                                    _undecided(base, "base"))
        elif nb > nn:
            to = backend_of_new.get(op_type) if op_type in delegated_new else src_new.get(source)
            if to:
                out.append(OpMoved(kind="moved_to_delegate", op_type=op_type, source=source or None,
                                   count=nb - nn, from_="cpu", to=to,
                                   matched_by="op type" if op_type in delegated_new else "source line"))
                continue
            out += _match_by_events(op_type, source, nb - nn, new_in_delegates, "moved_to_delegate",
                                    "removed_cpu_op", _undecided(new, "new"))
    calls_b = Counter(i.backend for i in base.instructions.values() if i.kind == "delegate")
    calls_n = Counter(i.backend for i in new.instructions.values() if i.kind == "delegate")
    for backend in sorted(set(calls_b) | set(calls_n)):
        if calls_b.get(backend, 0) != calls_n.get(backend, 0):
            a, b = calls_b.get(backend, 0), calls_n.get(backend, 0)
            out.append(PartitionsChanged(kind="partitions_changed", backend=backend, base_partitions=a,
                                         new_partitions=b, detail=("split" if b > a else "merged") if a and b else
                                         ("added" if b else "removed")))
    # Moved-to-CPU first: it is what people look for.
    order = {"moved_to_cpu": 0, "partitions_changed": 1, "moved_to_delegate": 2, "new_cpu_op": 3, "removed_cpu_op": 4}
    return tuple(sorted(out, key=lambda c: order[c.kind]))


def _undecided(profile: P.Profile, side: str) -> str | None:
    """Why a CPU op that appeared (base side) or disappeared (new side) may still have moved, or
    None when the inputs settle it (the ETRecord lists what the delegates held, or there is no
    delegate)."""
    delegates = [i for i in profile.instructions.values() if i.kind == "delegate"]
    if not delegates or any(i.op_types for i in delegates):
        return None
    return (f"may have run inside {', '.join(sorted({i.backend for i in delegates}))} in {side}: no per-op "
            "delegate event of this op kind tells (fused ops log none), and without the ETRecords "
            "(--etrecord-base/--etrecord-new) the graph cannot say")


def _match_by_events(op_type: str, source: str, count: int, pool: dict, moved_kind: str, plain_kind: str,
                     undecided: str | None) -> list[PlacementChange]:
    """Pair ``count`` CPU ops of ``op_type`` with per-op delegate events of the same kind that
    appeared/disappeared (taken from ``pool``); the rest stay ``plain_kind``."""
    out = []
    kind = op_kinds.kind_of_op_type(op_type)
    for (k, backend), names in list(pool.items()):
        if k != kind or not names or count == 0:
            continue
        m = min(count, len(names))
        taken, pool[(k, backend)] = names[:m], names[m:]
        to_cpu = moved_kind == "moved_to_cpu"
        out.append(OpMovedByEvents(kind=moved_kind, op_type=op_type, source=source or None, count=m,
                                   from_=backend if to_cpu else "cpu", to="cpu" if to_cpu else backend,
                                   matched_by="delegate events of the same op kind " + ("gone" if to_cpu else "added"),
                                   evidence=tuple(taken)))
        count -= m
    if count:
        to_cpu = moved_kind == "moved_to_cpu"
        out.append(CpuOpChanged(kind=plain_kind, op_type=op_type, source=source or None, count=count,
                                from_=None if to_cpu else "cpu", to="cpu" if to_cpu else None, matched_by=None,
                                undecided=undecided))
    return out
