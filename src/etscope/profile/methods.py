"""Runs of several methods of one program in one ETDump: each run matched to a method on the
instructions it executed, and one Profile per method (see model.MethodSplit)."""
from __future__ import annotations

import shlex

import numpy as np

from etscope.arrays import unique_chunked
from etscope.errors import MismatchError
from etscope.hashing import mix64, sum_u64
from etscope.profile.instructions import join_method
from etscope.profile.model import ROLE_DELEGATE_CALL, ROLE_KERNEL, ROLE_OPERATOR_CALL, MethodSplit, Profile
from etscope.profile.plans import fits_plan, method_names, method_plans, require_method
from etscope.profile.repeats import identical_runs
from etscope.profile.subset import run_subset

def assign_methods(profile: Profile, etrecord, pte) -> tuple[np.ndarray, list[str], list[str]] | None:
    """Method per Execute run when no single method of the .pte (or ETRecord) fits every run:
    (method index per run, method names in order of first run, notes on ambiguous runs). None
    when one method fits all runs, when some run fits no method (the join reports the mismatch)
    or when the program has one method."""
    program_methods = method_names(pte) if pte is not None else method_names(etrecord)
    if profile.n_runs == 0 or identical_runs(profile) is not None:
        return None             # runs that all logged the same events executed one method
    if not program_methods:
        return _methods_without_program(profile)
    if len(program_methods) < 2:
        return None
    group_of_run, group_codes = _instruction_sets(profile)
    plans = method_plans(etrecord, pte)
    names = list(plans)
    fits = np.array([[fits_plan(codes, plans[m]) for m in names] for codes in group_codes], dtype=bool)
    if fits.all(axis=0).any() or not fits.any(axis=1).all():
        return None
    runs_per_group = np.bincount(group_of_run, minlength=len(group_codes))
    choice = fewest_methods(fits, runs_per_group)
    method_of_run = choice[group_of_run]
    notes = []
    for g in np.nonzero(fits.sum(axis=1) > 1)[0]:
        alike = [names[m] for m in np.nonzero(fits[g])[0]]
        runs = np.nonzero(group_of_run == g)[0]
        notes.append(f"run(s) {_run_list(runs)} fit methods {', '.join(alike)} alike; "
                     f"counted as {names[choice[g]]}")
    method_of_run, used = _in_order_of_first_run(method_of_run, len(names))
    return method_of_run, [names[m] for m in used], notes


def _in_order_of_first_run(method_of_run: np.ndarray, n_methods: int) -> tuple[np.ndarray, np.ndarray]:
    """Methods renumbered in the order of their first run: (new index per run, old index of
    each new one)."""
    _, first = np.unique(method_of_run, return_index=True)
    used = method_of_run[np.sort(first)]
    rank = np.full(n_methods, -1, dtype=np.int64)
    rank[used] = np.arange(len(used))
    return rank[method_of_run].astype(np.int16), used
MAX_INSTRUCTION_SETS = 256     # more distinct sets than this: not told apart without the program


def _methods_without_program(profile: Profile) -> tuple[np.ndarray, list[str], list[str]] | None:
    """Without .pte or ETRecord: runs that contradict each other (an instruction id that is a
    delegate call in some runs and a CPU operator in others) executed different methods. Groups
    of runs with the same instructions, most runs first, join the first method they agree with;
    the methods, unnamed, are numbered in the order of their first run. None when all agree.
    Methods whose instructions agree in kind (e.g. the same graph exported for two shapes) stay
    together: only the program can tell them apart."""
    if not _some_id_of_both_kinds(profile):        # cheap test first: most ETDumps hold one method
        return None
    group_of_run, group_codes = _instruction_sets(profile)
    if len(group_codes) < 2 or len(group_codes) > MAX_INSTRUCTION_SETS:
        return None
    runs_per_group = np.bincount(group_of_run, minlength=len(group_codes))
    first_run = np.unique(group_of_run, return_index=True)[1]
    methods: list[tuple[np.ndarray, np.ndarray]] = []      # per method: its delegate ids, its CPU ids
    method_of_group = np.zeros(len(group_codes), dtype=np.int64)
    conflict = None
    for g in np.lexsort((first_run, -runs_per_group)):
        codes = group_codes[g]
        delegate, cpu = codes[(codes & 1) == 1] >> 1, codes[(codes & 1) == 0] >> 1
        for k, (m_delegate, m_cpu) in enumerate(methods):
            clash = np.union1d(np.intersect1d(delegate, m_cpu), np.intersect1d(cpu, m_delegate))
            if clash.size == 0:
                methods[k] = (np.union1d(m_delegate, delegate), np.union1d(m_cpu, cpu))
                method_of_group[g] = k
                break
            conflict = conflict if conflict is not None else (int(clash[0]), int(g))
        else:
            methods.append((delegate, cpu))
            method_of_group[g] = len(methods) - 1
    if len(methods) < 2:
        return None
    method_of_run, _ = _in_order_of_first_run(method_of_group[group_of_run], len(methods))
    instr, g = conflict
    where = np.nonzero(group_of_run == g)[0]
    note = (f"without the .pte or ETRecord the methods are unnamed (pass either to name them and join "
            f"their operators); told apart because instruction {instr} is a delegate call in some runs "
            f"and a CPU operator in others (e.g. run(s) {_run_list(where, 4)})")
    return method_of_run, [f"method #{k + 1}" for k in range(len(methods))], [note]


def _some_id_of_both_kinds(profile: Profile) -> bool:
    """Whether some instruction id is a DELEGATE_CALL in one place and a CPU operator in another."""
    ev = profile.events
    role, instr, execute = ev["role"], ev["instruction_id"], ev["execute"]

    def ids(sl, delegate: bool):
        r = role[sl]
        kind = (r == ROLE_DELEGATE_CALL) if delegate else ((r == ROLE_OPERATOR_CALL) | (r == ROLE_KERNEL))
        return instr[sl][kind & (execute[sl] >= 0) & (instr[sl] >= 0)]

    delegate = unique_chunked(lambda sl: ids(sl, True), len(role))
    cpu = unique_chunked(lambda sl: ids(sl, False), len(role))
    return bool(np.intersect1d(delegate, cpu, assume_unique=True).size)   # both sorted distinct already


def _instruction_sets(profile: Profile) -> tuple[np.ndarray, list[np.ndarray]]:
    """Runs grouped by the set of instructions they executed: group per run, and per group the
    sorted codes ``instruction_id * 2 + (1 if a DELEGATE_CALL else 0)``."""
    ev = profile.events
    role, instr, execute = ev["role"], ev["instruction_id"], ev["execute"]
    n = profile.n_runs

    def run_and_code(sl):
        r = role[sl]
        sel = ((r == ROLE_DELEGATE_CALL) | (r == ROLE_OPERATOR_CALL) | (r == ROLE_KERNEL)) & (
            execute[sl] >= 0) & (instr[sl] >= 0)
        code = instr[sl][sel].astype(np.int64) * 2 + (r[sel] == ROLE_DELEGATE_CALL)
        return (execute[sl][sel].astype(np.int64) << 32) | code

    pairs = unique_chunked(run_and_code, len(role))      # sorted by run, then code
    run = pairs >> 32
    code = pairs & 0xFFFFFFFF
    signature = sum_u64(run, mix64(code.astype(np.uint64)), n) ^ mix64(np.bincount(run, minlength=n))
    _, first, group = np.unique(signature, return_index=True, return_inverse=True)
    bounds = np.searchsorted(run, np.arange(n + 1))
    return group.reshape(-1), [code[bounds[r]:bounds[r + 1]] for r in first]


def fewest_methods(fits: np.ndarray, runs_per_group: np.ndarray) -> np.ndarray:
    """Method per group of runs (fits: groups x methods), using as few methods as possible:
    repeatedly the method fitting most of the runs still unassigned (ties: program order)."""
    choice = np.full(fits.shape[0], -1, dtype=np.int64)
    while (choice < 0).any():
        open_runs = np.where(choice < 0, runs_per_group, 0)
        m = int(np.argmax(open_runs @ fits))
        choice[(choice < 0) & fits[:, m]] = m
    return choice


def _run_list(runs: np.ndarray, limit: int = 8) -> str:
    shown = ", ".join(str(int(r)) for r in runs[:limit])
    return shown + (f" (+{len(runs) - limit} more)" if len(runs) > limit else "")


def split_by_method(profile: Profile, etrecord, pte, hint, method_of_run, names, notes):
    """Make ``profile`` hold the runs of one method (``hint``, else the one with most runs) and
    build one Profile per other method; all share a MethodSplit."""
    counts = np.bincount(method_of_run, minlength=len(names))
    if hint is None:
        chosen = names[int(np.argmax(counts))]          # ties: the method that ran first
    else:
        require_method(profile, method_names(pte) or method_names(etrecord), hint)
        if hint not in names:
            raise MismatchError(f"no run of the ETDump executed method {hint!r} (its runs executed: "
                                + ", ".join(f"{n} ({c})" for n, c in zip(names, counts)) + ")",
                                profile.sources.get("pte") or profile.sources.get("etrecord"))
        chosen = hint
    split = MethodSplit(names, method_of_run, dict.fromkeys(names), explicit=hint is not None,
                        file_events=profile.etdump.event_count)
    split.note = (f"the ETDump holds the runs of {len(names)} methods with different instructions, told "
                  "apart by the instructions each run executed (the ETDump does not name the method): "
                  + ", ".join(f"{n} {c} run(s)" for n, c in zip(names, counts))
                  + f"; this shows {chosen!r} only" + (" (most runs)" if hint is None else "")
                  + "; pass --method " + " or --method ".join(shlex.quote(n) for n in names if n != chosen)
                  + " for the others (etscope llm without --method reads them all)"
                  + "".join(f"; {t}" for t in notes))
    for k, name in enumerate(names):
        if name == chosen:
            continue
        data, events, runs = run_subset(profile, method_of_run == k)
        sub = Profile(etdump=data, strings=profile.strings, events=events, runs=runs, instructions={},
                      method=None, etrecord=etrecord, pte=pte, sources=dict(profile.sources),
                      warnings=list(profile.warnings), method_split=split)
        join_method(sub, etrecord, pte, name)
        split.profiles[name] = sub
    # The chosen method's runs last: the others were cut from the whole profile.
    data, events, runs = run_subset(profile, method_of_run == names.index(chosen))
    profile.etdump = data
    profile.events = events
    profile.runs = runs
    profile.method_split = split
    join_method(profile, etrecord, pte, chosen)
    profile.warnings.append(split.note)
    split.profiles[chosen] = profile
