"""Which run of the candidate is compared with which run of the reference, and per method.

An LLM's runs are prefill and decode steps: comparing run k with run k holds only while both sides
ran the same schedule; so when the LLM analysis (``analysis.llm``: the phase split of the runs)
finds phases on both sides, the k-th run of a phase is paired with the k-th run of the same phase
on the other side (prefill with prefill), and each pair carries its phase label. Otherwise runs are
paired in order.

An ETDump holding runs of several methods (``profile.MethodSplit``) is compared method by method
(each with the other side's runs of the method of the same name), every method unless ``--method``
chose one.
"""
from __future__ import annotations

from dataclasses import dataclass

from etscope.profile import Profile


@dataclass(frozen=True)
class RunPairing:
    ref_to_cand: dict[int, int]          # reference run -> candidate run it is compared with
    phase: dict[int, str | None]         # candidate run -> its phase (LLM), None without phases
    by_phase: bool
    notes: tuple[str, ...] = ()


def run_phase_labels(p: Profile) -> list[str | None] | None:
    """Phase name per execute run from the LLM analysis' phase split, None when it finds no
    LLM phases (one group of alike runs, or a failure: then runs pair in order)."""
    if p.n_runs < 2:
        return None
    from etscope.analysis.llm import llm_report
    from etscope.analysis.report_view import run_phases
    from etscope.analysis.results import is_llm

    try:
        llm = llm_report(p)["llm"]
    except Exception:  # noqa: BLE001 - no phase split: runs are paired in order (said in the notes)
        return None
    return run_phases(llm, p.n_runs) if is_llm(llm) else None


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
