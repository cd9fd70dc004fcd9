"""The axes of change of `etscope diff`, each with its own verdict.

A latency verdict alone misleads: two runs can take the same time while ops moved from a
delegate to the CPU, or differ by 80% because the second file is another model. So a comparison
says, apart: **latency** (the noise-aware verdict of ``diff.compare_runs``), **placement** (ops
that moved between a delegate and the CPU, partitions split or merged), **program** (what differs
in the programs: the executed method's instructions, its delegates and their blobs, the QNN
compile spec fields a .pte records) and **environment** (what the runs' conditions were: the HTP
clock estimate per side, the warm-up runs left out, the run and session counts).

Verdicts of the non-latency axes: ``changed``, ``no_change`` or ``unknown`` (the inputs cannot
tell, e.g. no .pte files for the program axis). The headline names every axis that changed, so
it never says "no change" while one did.
"""
from __future__ import annotations

import math
from collections import Counter

from etscope import profile as P
from etscope.analysis.diff.result import (
    Axes, AnyAxis, Axis, Comparability, DetailFact, Fact, FactsAxis, Latency, PlacementChange, ProgramAxis,
    ProgramIdentity, QnnPartitionChange,
)

CHANGED, NO_CHANGE, UNKNOWN = "changed", "no_change", "unknown"
AXES = ("latency", "placement", "program", "environment")
CLOCK_CHANGE_PCT = 5.0
# Two graphs sharing less than this share of their ops (op types with multiplicity, ETRecords) are
# different programs: a CNN and a ViT share 17-44% (synthetic QNN CNN vs ViT 44%, gen_cnn vs
# gen_llama 1%); a re-export, a fallback or a wider layer shares 80-100% (tests/fixtures/diff).
SAME_GRAPH_MIN_SHARE = 0.5   # HTP clock estimates further apart than this are a changed clock

# QNN compile spec fields compared between the sides (analysis.ops.program.QnnSpecView), in order.
QNN_FIELDS = ("soc_model", "htp_arch", "precision", "performance_mode", "profile_level", "vtcm_mb",
              "shared_buffer", "backend_type", "weight_sharing", "multi_contexts", "online_prepare")


def axes(verdict: str, latency: Latency, placement_changes: tuple[PlacementChange, ...], program: ProgramIdentity,
         qnn: tuple[QnnPartitionChange, ...] | None, base: P.Profile, new: P.Profile,
         clocks: dict | None = None) -> Axes:
    """The four axes of one comparison (by ``diff.compare_runs`` of ``base`` and ``new``, the first
    session of each side). ``clocks``: the HTP clock measured per side (runtrace)."""
    return Axes(latency=Axis(verdict, latency_fact(latency), ()), placement=placement_axis(placement_changes),
                program=program_axis(base, new, program),
                environment=environment_axis(latency, qnn, clocks, etdump_settings(base, new)))


def latency_fact(lat: Latency) -> str:
    """"p50 1.2 ms → 1.3 ms (+8.0%)": the latency change as a fact."""
    change = lat.change_pct
    return (f"p50 {_fmt_ms(lat.base_p50_ms)} → {_fmt_ms(lat.new_p50_ms)}"
            + (f" ({change:+.1f}%)" if isinstance(change, (int, float)) and math.isfinite(change) else ""))


def placement_axis(changes: tuple[PlacementChange, ...]) -> AnyAxis:
    """Ops that moved between a delegate and the CPU, partitions that changed (from
    ``diff_placement.placement_changes``). New or removed CPU ops that did not move are the
    program's business, not placement's; undecided ones make the axis ``unknown``."""
    facts: list[DetailFact] = []
    moved = Counter()
    for c in changes:
        if c.kind in ("moved_to_cpu", "moved_to_delegate"):
            moved[(c.from_ or "?", c.to or "?")] += int(c.count or 1)
            facts.append(DetailFact(what=c.kind.replace("_", " "), detail=f"{c.op_type}"
                                    + (f" ({c.source})" if c.source else "") + f" ×{c.count}",
                                    base=c.from_, new=c.to))
        elif c.kind == "partitions_changed":
            facts.append(DetailFact(what="partitions", detail=f"{c.backend}: {c.detail}",
                                    base=c.base_partitions, new=c.new_partitions))
    undecided = sum(int(c.count or 1) for c in changes if getattr(c, "undecided", None))
    if facts:
        parts = [f"{n} op(s) moved {a} → {b}" for (a, b), n in moved.items()]
        parts += [f"{f.detail} partitions {f.base} → {f.new}" for f in facts if f.what == "partitions"]
        return Axis(verdict=CHANGED, summary="; ".join(parts), facts=tuple(facts))
    if undecided:
        return FactsAxis(verdict=UNKNOWN, facts=(),
                         summary=f"{undecided} new CPU op(s) may have come off a delegate: the ETRecords tell")
    return Axis(verdict=NO_CHANGE, summary="the same ops ran on the CPU and in each delegate", facts=())


def program_axis(base: P.Profile, new: P.Profile, identity: ProgramIdentity | None) -> ProgramAxis:
    """What differs in the programs. With both .pte files: methods, the executed method's
    instructions and operators, delegates per backend, blob sizes and digests (``identity``,
    ``diff_noise.program_identity``), QNN compile spec fields. Without: the ETDumps' instructions
    (and the ETRecords' delegated op types)."""
    facts: list[Fact] = []

    def fact(what, a, b):
        if a != b:
            facts.append(Fact(what=what, base=a, new=b))

    if base.pte is not None and new.pte is not None:
        from etscope.analysis.ops.program import program_report

        ra, rb = program_report(base.pte), program_report(new.pte)
        fact("methods", sorted(m.name for m in ra.methods), sorted(m.name for m in rb.methods))
        ma, mb = _executed(ra, base), _executed(rb, new)
        if ma is not None and mb is not None:
            fact(f"instructions of {ma.name}", ma.instructions, mb.instructions)
            fact(f"instruction kinds of {ma.name}", dict(sorted(ma.mix.items())), dict(sorted(mb.mix.items())))
            fact(f"CPU operators of {ma.name}", dict(sorted(ma.operators.items())), dict(sorted(mb.operators.items())))
            fact(f"delegates of {ma.name}", dict(sorted(Counter(d.backend for d in ma.delegates).items())),
                 dict(sorted(Counter(d.backend for d in mb.delegates).items())))
            fact(f"delegate blob bytes of {ma.name}", [d.blob_bytes for d in ma.delegates],
                 [d.blob_bytes for d in mb.delegates])
            fact(f"inputs of {ma.name}", _jsonable(ma.inputs), _jsonable(mb.inputs))
        qa, qb = _qnn_spec(ra), _qnn_spec(rb)
        if qa is not None or qb is not None:
            for f in QNN_FIELDS:
                fact(f"QNN {f.replace('_', ' ')}", (qa or {}).get(f), (qb or {}).get(f))
        fact("program bytes", ra.program_bytes, rb.program_bytes)
        sdk_a, sdk_b = _qnn_sdk(base), _qnn_sdk(new)
        if sdk_a or sdk_b:         # the QNN SDK build the context binaries record, where they do
            fact("QNN SDK build (context binary)", sdk_a, sdk_b)
        basis = ".pte files"
    else:
        basis = "ETDump instructions" + (" and ETRecords" if _has_graph(base) and _has_graph(new) else "")
        fact("instructions", len(base.instructions), len(new.instructions))
        fact("delegate calls per backend", _calls(base), _calls(new))
        fact("CPU ops", len([i for i in base.instructions.values() if i.kind == "cpu"]),
             len([i for i in new.instructions.values() if i.kind == "cpu"]))
    identical = identity.identical if identity is not None else None
    if identical is False and not any(f.what.startswith("delegate blob") for f in facts):
        if "blob" in (identity.basis or ""):
            facts.append(Fact(what="delegate blobs", base="SHA-256 differs", new="SHA-256 differs"))
    if facts:
        verdict = CHANGED
        summary = "; ".join(_fact_text(f) for f in facts[:2]) + (f"; {len(facts) - 2} more" if len(facts) > 2 else "")
    elif identical:
        verdict, summary = NO_CHANGE, "identical: " + identity.basis
    else:
        verdict = UNKNOWN if base.pte is None or new.pte is None else NO_CHANGE
        summary = (f"no difference in the {basis}" + ("" if verdict == NO_CHANGE else
                   "; the delegate blobs are not in an ETDump (--pte-base/--pte-new compare them)"))
    return ProgramAxis(verdict=verdict, summary=summary, facts=tuple(facts), basis=basis)


def _qnn_sdk(p: P.Profile) -> list[str]:
    """The QNN SDK build ids the program's QNN context binaries record (``formats.qnn_context``)."""
    from etscope.formats.qnn_context import qnn_sdk_versions

    path = p.sources.get("pte")
    return qnn_sdk_versions(path, p.pte) if path else []


def etdump_settings(base: P.Profile, new: P.Profile) -> tuple[Fact, ...]:
    """What each side's ETDump was set to record, per run: intermediate outputs (debug events: the
    debug-buffer logging, which costs time) and the backends' per-op events (their profiling
    level). A setting turned on or off is a change of the runs' conditions."""
    def per_run(p: P.Profile, role: int) -> float:
        ev = p.events
        n = int(((ev["role"] == role) & (ev["execute"] >= 0)).sum()) if ev else 0
        return round(n / p.n_runs, 2) if p.n_runs else 0.0

    return tuple(Fact(what=what, base=per_run(base, role), new=per_run(new, role))
                 for what, role in (("debug events per run (intermediate outputs logged)", P.ROLE_DEBUG),
                                    ("backend per-op events per run (delegate profiling)",
                                     P.ROLE_DELEGATE_INTERNAL)))


def environment_axis(lat: Latency, qnn: tuple[QnnPartitionChange, ...] | None, measured: dict | None = None,
                     settings: tuple[Fact, ...] = ()) -> FactsAxis:
    """The runs' conditions per side: the HTP clock (measured, from a runtrace per side, else the
    estimate of the QNN partitions: cycles / time), what the ETDumps recorded (``etdump_settings``),
    warm-up (cold) runs left out, steady runs and sessions. A clock that moved and a recording
    turned on or off are changes; the counts are stated, since they set how sure the latency
    verdict can be."""
    facts = []
    toggled = [f for f in settings if (f.base > 0) != (f.new > 0)]
    clocks = []
    m = measured or {}
    if isinstance(m.get("base"), (int, float)) or isinstance(m.get("new"), (int, float)):
        a, b = m.get("base"), m.get("new")
        facts.append(Fact(what=f"HTP clock measured ({m.get('source') or 'given'}, MHz)", base=a, new=b))
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0:
            clocks.append(abs(b / a - 1) * 100)
        measured_only = True
    else:
        measured_only = False
    for q in qnn or ():
        a, b = q.clock_mhz_est.base, q.clock_mhz_est.new
        if isinstance(a, (int, float)) or isinstance(b, (int, float)):
            facts.append(Fact(what=f"HTP clock estimate, partition {q.partition} (MHz)", base=a, new=b))
            if not measured_only and isinstance(a, (int, float)) and isinstance(b, (int, float)) and a > 0:
                clocks.append(abs(b / a - 1) * 100)
    dropped = lat.warmup_runs_dropped
    facts.append(Fact(what="warm-up runs left out", base=sum(dropped.base), new=sum(dropped.new)))
    facts.append(Fact(what="steady runs", base=lat.base_runs, new=lat.new_runs))
    facts.append(Fact(what="sessions", base=lat.base_sessions, new=lat.new_sessions))
    facts += settings
    facts = tuple(facts)
    if toggled:
        return FactsAxis(verdict=CHANGED, facts=facts,
                         summary="the ETDump recorded differently: " + "; ".join(
                             f"{f.what.split(' per run')[0]} {'on' if f.new > 0 else 'off'} in new" for f in toggled))
    if any(c > CLOCK_CHANGE_PCT for c in clocks):
        worst = max(clocks)
        return FactsAxis(verdict=CHANGED, facts=facts,
                         summary=f"HTP clock {'measured' if measured_only else 'estimate'} moved by {worst:.0f}% "
                                 f"(beyond ±{CLOCK_CHANGE_PCT:g}%)")
    if clocks:
        return FactsAxis(verdict=NO_CHANGE, facts=facts,
                         summary=f"the same HTP clock {'measured' if measured_only else 'estimate'} on both sides")
    return FactsAxis(verdict=UNKNOWN, facts=facts,
                     summary="clock not known (no QNN cycle counts); " + ", ".join(
                         _fact_text(next(f for f in facts if f.what == w))
                         for w in ("steady runs", "warm-up runs left out")))


def comparability(base: P.Profile, new: P.Profile) -> Comparability:
    """Are these two runs of the same program (so per-op and placement verdicts make sense)?
    ``comparable``: False when the ETRecord graphs share less than SAME_GRAPH_MIN_SHARE of their
    ops (op types with multiplicity, wherever they ran: a fallback moves ops, it does not change
    the graph) or the .pte's executed methods take different inputs; None when neither tells."""
    ga, gb = _graph_ops(base), _graph_ops(new)
    if ga and gb:
        share = sum((ga & gb).values()) / max(sum(ga.values()), sum(gb.values()))
        basis = (f"the ETRecord graphs share {share:.0%} of their ops ({sum(ga.values())} in base, "
                 f"{sum(gb.values())} in new; op types with multiplicity)")
        if share < SAME_GRAPH_MIN_SHARE:
            return Comparability(comparable=False, share=share, basis=basis)
        return Comparability(comparable=True, share=share, basis=basis)
    if base.pte is not None and new.pte is not None:
        from etscope.analysis.ops.program import program_report

        ma, mb = _executed(program_report(base.pte), base), _executed(program_report(new.pte), new)
        if ma is not None and mb is not None and _jsonable(ma.inputs) != _jsonable(mb.inputs):
            return Comparability(comparable=False, share=None,
                                 basis=f"the executed methods take different inputs ({ma.name}: {ma.inputs} in "
                                       f"base, {mb.name}: {mb.inputs} in new)")
        if ma is not None and mb is not None:
            return Comparability(comparable=True, share=None, basis="the .pte's executed methods take the same inputs")
    return Comparability(comparable=None, share=None,
                         basis="no ETRecords or .pte files on both sides: whether these are one program is not known")


def _graph_ops(p: P.Profile) -> Counter:
    c: Counter = Counter()
    for i in p.instructions.values():
        c.update(i.op_types)
    return c


def runtrace_clock_mhz(rt) -> float | None:
    """The HTP clock a runtrace measured: the median MHz of its Graph Execute spans (else of every
    span with a clock); None without a runtrace or a clock in it."""
    if rt is None:
        return None
    import numpy as np

    v = rt.graph_execute_mhz()
    if not v.size:
        v = rt.mhz[np.isfinite(rt.mhz)]
    v = v[v > 0]
    return float(np.median(v)) if v.size else None


def changed_axes(ax: Axes) -> tuple[str, ...]:
    """The axes that changed: latency when its verdict is a regression or an improvement."""
    out = [name for name, a in ax.named()[1:] if a.verdict == CHANGED]
    if ax.latency.verdict in ("regression", "improvement"):
        out.insert(0, "latency")
    return tuple(out)


def headline(verdict: str, ax: dict[str, AnyAxis] | Axes, latency_part: str | None = None) -> str:
    """One line: the latency verdict and every other axis that changed, e.g. "regression; placement
    changed: 2 op(s) moved XnnpackBackend → cpu". Never "no change" alone while an axis changed."""
    named = dict(ax.named()) if isinstance(ax, Axes) else ax
    others = [f"{a} changed: {_first(named[a])}" for a in AXES[1:] if a in named and named[a].verdict == CHANGED]
    lead = latency_part or ("no latency change, but" if verdict == "no_change" and others
                            else verdict.replace("_", " "))
    if not others:
        return lead
    return lead + (" " if lead.endswith(", but") or lead.endswith("change, but") else "; ") + "; ".join(others)


def _first(axis: AnyAxis) -> str:
    """An axis' summary for a headline: its first fact, and how many more there are."""
    facts = axis.facts
    if len(facts) > 1 and "; " in axis.summary and axis.verdict == CHANGED and "moved" not in axis.summary:
        return f"{_fact_text(facts[0])} (+{len(facts) - 1} more)"
    return axis.summary


def _executed(report, profile: P.Profile):
    names = [m.name for m in report.methods]
    name = profile.method or (names[0] if len(names) == 1 else ("forward" if "forward" in names else None))
    return next((m for m in report.methods if m.name == name), None)


def _qnn_spec(report) -> dict | None:
    for m in report.methods:
        for d in m.delegates:
            if d.qnn is not None:
                return {f: getattr(d.qnn, f, None) for f in QNN_FIELDS}
    return None


def _has_graph(p: P.Profile) -> bool:
    return any(i.op_types for i in p.instructions.values())


def _calls(p: P.Profile) -> dict:
    return dict(sorted(Counter(i.backend for i in p.instructions.values() if i.kind == "delegate").items()))


def _jsonable(x):
    try:
        return [str(v) for v in x]
    except TypeError:
        return str(x)


def _fact_text(f: Fact | DetailFact) -> str:
    return f"{f.what} {_short(f.base)} → {_short(f.new)}"


def _short(v) -> str:
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {x}" for k, x in v.items()) + "}" if v else "none"
    if isinstance(v, list):
        s = ", ".join(str(x) for x in v[:6]) + (f", … ({len(v)})" if len(v) > 6 else "")
        return f"[{s}]"
    return "—" if v is None else str(v)


def _fmt_ms(v) -> str:
    from etscope.units import fmt_ms

    return fmt_ms(v) if isinstance(v, (int, float)) else "n/a"
