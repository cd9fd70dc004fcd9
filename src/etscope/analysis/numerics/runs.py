"""Which run of the candidate is compared with which run of the reference, and per method.

An LLM's runs are prefill and decode steps: comparing run k with run k holds only while both sides
ran the same schedule; so when the LLM analysis (``analysis.llm``: the phase split of the runs and
its per-run series: decode step, token position, tokens) finds phases on both sides, runs pair by
what they computed, not by index:

* the k-th prefill with the k-th prefill of the other side (a generation is a prefill and the
  decode runs after it), when both prompts have the same token count (else: different prompts,
  said, and that prefill is not compared);
* each decode run with the other side's decode run of the same generation at the same token
  position (positions only one side ran, e.g. after different prompts, are said and not compared);
  when a side's positions are unknown, the k-th decode step with the k-th.

Each pair carries its phase, decode step and position. Without phases on both sides, runs pair in
order.

An ETDump holding runs of several methods (``profile.MethodSplit``) is compared method by method
(each with the other side's runs of the method of the same name), every method unless ``--method``
chose one.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from etscope.profile import Profile


@dataclass(frozen=True)
class RunPairing:
    ref_to_cand: dict[int, int]          # reference run -> candidate run it is compared with
    phase: dict[int, str | None]         # candidate run -> its phase (LLM), None without phases
    by_phase: bool
    notes: tuple[str, ...] = ()
    step: dict[int, int] = field(default_factory=dict)       # candidate decode run -> step since its prefill (1, 2...)
    position: dict[int, int] = field(default_factory=dict)   # candidate decode run -> token position (when known)
    by_position: bool = False            # decode runs paired by token position (both sides' positions known)


@dataclass(frozen=True)
class RunSchedule:
    """Per execute run of one side, from the LLM analysis' series: phase, decode step since the last
    prefill, token position of a decode run, tokens the run took (None: unknown)."""

    phase: tuple[str | None, ...]
    step: tuple[int | None, ...]
    position: tuple[int | None, ...]
    tokens: tuple[int | None, ...]


def run_schedule(p: Profile) -> RunSchedule | None:
    """The runs' LLM schedule, None when the LLM analysis finds no phases (one group of alike runs,
    or a failure: then runs pair in order). A profile narrowed to one phase (``--phase decode``, a
    look-alike ``--method``) is that phase's runs, in order; their steps and positions are those
    of the whole file, which the narrowed profile no longer holds: unknown."""
    sel = getattr(p, "phase", None)
    if sel is not None and sel.name in ("prefill", "decode") and p.n_runs > 0:
        none = (None,) * p.n_runs
        return RunSchedule((sel.name,) * p.n_runs, none, none, none)
    if p.n_runs < 2:
        return None
    from etscope.analysis.llm import llm_report
    from etscope.analysis.views.report import run_phases
    from etscope.analysis.results import is_llm

    try:
        report = llm_report(p)
    except Exception:  # noqa: BLE001 - no phase split: runs are paired in order (said in the notes)
        return None
    phases = run_phases(report, p.n_runs) if is_llm(report) else None
    if phases is None:
        return None
    series = report.llm.series

    def col(name):
        v = getattr(series, name) or ()
        ok = len(v) == p.n_runs
        return tuple(int(x) if ok and isinstance(x, int) and not isinstance(x, bool) else None
                     for x in (v if ok else [None] * p.n_runs))

    return RunSchedule(tuple(phases), col("step"), col("position"), col("tokens"))


def run_phase_labels(p: Profile) -> list[str | None] | None:
    """Phase name per execute run (``run_schedule``), None without LLM phases."""
    s = run_schedule(p)
    return list(s.phase) if s is not None else None


def pair_schedules(n_cand: int, n_ref: int, sc: RunSchedule | None, sr: RunSchedule | None) -> RunPairing:
    """Prefill with prefill, decode with the decode at the same token position (module doc); by
    phase and order (``pair_runs``) when positions are unknown; in order without phases."""
    if sc is None or sr is None:
        return pair_runs(n_cand, n_ref, None, None)
    known = all(sch.position[r] is not None for sch in (sc, sr) for r in range(len(sch.phase))
                if sch.phase[r] == "decode")
    if not known or "decode" not in sc.phase or "decode" not in sr.phase:
        out = pair_runs(n_cand, n_ref, list(sc.phase), list(sr.phase))
        steps = {c: sc.step[c] for c in out.phase if sc.step[c] is not None}
        return RunPairing(out.ref_to_cand, out.phase, out.by_phase,
                          out.notes + (("decode runs paired by step: a side's token positions are unknown",)
                                       if "decode" in sc.phase and "decode" in sr.phase else ()), step=steps)
    keys_c, keys_r = _run_keys(sc), _run_keys(sr)
    ref_of = {k: r for r, k in keys_r.items()}
    ref_to_cand, phase, step, pos, notes = {}, {}, {}, {}, []
    prompts = {}      # generation -> (candidate tokens, reference tokens) when they differ
    for c, k in keys_c.items():
        r = ref_of.get(k)
        if r is None:
            continue
        if k[1] == "prefill" and sc.tokens[c] != sr.tokens[r]:
            prompts[k[0]] = (sc.tokens[c], sr.tokens[r])
            continue
        ref_to_cand[r] = c
        phase[c] = sc.phase[c]
        if k[1] == "decode":
            step[c], pos[c] = sc.step[c], sc.position[c]
    notes.append("runs paired by LLM phase and token position (the k-th prefill with the k-th prefill, each decode "
                 "run with the other side's decode run at the same token position)")
    for g, (tc, tr) in sorted(prompts.items()):
        notes.append(f"different prompts: prefill {g} takes {_n(tc)} token(s) on the candidate, {_n(tr)} on the "
                     "reference: not compared; only decode runs at equal positions are")
    for side, keys, other in (("candidate", keys_c, set(keys_r.values())), ("reference", keys_r, set(keys_c.values()))):
        lone = [k[2] for k in keys.values() if k[1] == "decode" and k not in other]
        if lone:
            notes.append(f"decode position(s) only the {side} ran, not compared: {_span(lone)}")
    return RunPairing(ref_to_cand, phase, True, tuple(notes), step=step, position=pos, by_position=True)


def _run_keys(s: RunSchedule) -> dict[int, tuple]:
    """Run -> (generation, "prefill", k) or (generation, "decode", position); generation: prefills
    so far. Runs of other phases (or a repeated key) are left out."""
    out: dict[int, tuple] = {}
    seen: set[tuple] = set()
    gen = -1
    for r, ph in enumerate(s.phase):
        if ph == "prefill":
            gen += 1
            k = (gen, "prefill", 0)
        elif ph == "decode":
            k = (gen, "decode", s.position[r])
        else:
            continue
        if k not in seen:
            seen.add(k)
            out[r] = k
    return out


def _n(x: int | None) -> str:
    return "an unknown number of" if x is None else str(x)


def _span(xs: list[int]) -> str:
    xs = sorted(set(xs))
    return ", ".join(map(str, xs[:8])) + (f" and {len(xs) - 8} more" if len(xs) > 8 else "")


def pair_runs(n_cand: int, n_ref: int, phases_c: list[str | None] | None,
              phases_r: list[str | None] | None) -> RunPairing:
    """The k-th run of each phase with the k-th of that phase on the other side when both sides
    have phases, else run k with run k."""
    if phases_c is None or phases_r is None:
        n = min(n_cand, n_ref)
        notes = () if n_cand == n_ref else (
            f"the candidate has {n_cand} execute run(s), the reference {n_ref}: runs paired in order, "
            f"the first {n} compared",)
        return RunPairing({k: k for k in range(n)}, {k: None for k in range(n)}, False, notes)
    runs_c: dict[str, list[int]] = {}
    runs_r: dict[str, list[int]] = {}
    for side, phases in ((runs_c, phases_c), (runs_r, phases_r)):
        for run, ph in enumerate(phases):
            if ph is not None:
                side.setdefault(ph, []).append(run)
    ref_to_cand, phase, notes = {}, {}, []
    for ph, rc in runs_c.items():
        rr = runs_r.get(ph, [])
        for c, r in zip(rc, rr):
            ref_to_cand[r] = c
            phase[c] = ph
        if len(rc) != len(rr):
            notes.append(f"phase {ph}: the candidate has {len(rc)} run(s), the reference {len(rr)}: "
                         f"the first {min(len(rc), len(rr))} of each compared, in order")
    for ph in runs_r.keys() - runs_c.keys():
        notes.append(f"phase {ph}: only the reference has it ({len(runs_r[ph])} run(s)), not compared")
    notes.insert(0, "runs paired by LLM phase (the k-th " + " / ".join(sorted(runs_c)) + " run with the "
                    "k-th of the same phase on the other side)")
    return RunPairing(ref_to_cand, phase, True, tuple(notes))


def method_pairs(pc: Profile, pr: Profile) -> tuple[list[tuple[str | None, Profile, Profile]], list[str]]:
    """(method, candidate profile, reference profile) for each method to compare, and notes: every
    method of a several-method ETDump (unless --method chose one), paired by name."""
    split = pc.method_split
    if split is None or split.explicit or len(split.names) < 2:
        return [(pc.method, pc, reference_of(pr, pc.method, strict=False))], []
    out, notes = [], []
    for m in split.names:
        ref = reference_of(pr, m, strict=True)
        if ref is None:
            notes.append(f"method {m}: the reference has no run of it, not compared")
            continue
        out.append((m, split.profiles[m], ref))
    return out, notes


def reference_of(pr: Profile, method: str | None, strict: bool) -> Profile | None:
    """The reference's profile of ``method``; not strict (one method compared): the reference
    itself when it has no run of that name (e.g. two exports naming their method differently)."""
    if pr.method_split is not None and method in pr.method_split.profiles:
        return pr.method_split.profiles[method]
    return pr if pr.method == method or not strict else None
