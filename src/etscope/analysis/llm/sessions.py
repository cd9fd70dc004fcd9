"""Several ETDumps given to ``etscope llm`` (sessions of one program, issue 34).

* ``duplicate_inputs``: an input holding the same run data as an earlier one (the same file given
  twice, or a copy) is counted once: its runs would otherwise be counted twice.
* ``join_phases``: each session's phases are found on its own runs (``phases.find_phases``); they
  are then joined by name, prefill with prefill and decode with decode. Other phases (a method's
  runs, a group of runs, all runs of a file with no prefill/decode split) join a phase of the same
  name only when they executed the same instructions; otherwise they stay apart, named after their
  file. A file whose runs could not be told into prefill and decode, beside files whose runs could,
  keeps a phase of its own and a warning names it (never silently merged into one of theirs).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

import numpy as np

from etscope.analysis.llm.result import Duplicate, FileSplit, PhaseSplit

SAME_INSTRUCTIONS = 0.9   # phases of two files executed the same instructions: this share in common
LLM_PHASES = ("prefill", "decode")
# Columns compared to tell that two inputs hold the same run data (names compared as strings).
_RUN_COLUMNS = ("start_ns", "latency_ns", "event_count")
_EVENT_COLUMNS = ("kind", "role", "execute", "instruction_id", "delegate_id_int", "unit", "value")
_NAME_COLUMNS = ("name", "delegate_id_str")


def duplicate_inputs(profiles) -> list[Duplicate]:
    """The inputs that repeat an earlier input's run data, each with the first input it repeats.

    Candidates share their run count, event count, method and the runs' start times and
    latencies (nanoseconds: two sessions never match on all of them); they are then compared event
    by event, so each input is compared in full only with inputs that already match that far."""
    out: list[Duplicate] = []
    kept: dict[tuple, list[int]] = {}
    for i, p in enumerate(profiles):
        key = _quick_key(p)
        same = next((j for j in kept.get(key, []) if _same_run_data(profiles[j], p)), None)
        if same is None:
            kept.setdefault(key, []).append(i)
            continue
        a, b = profiles[same].sources.get("etdump"), p.sources.get("etdump")
        out.append(Duplicate(i, same, "same file" if a is not None and a == b else "same run data"))
    return out


def _quick_key(p) -> tuple:
    h = hashlib.blake2b(digest_size=16)
    for col in _RUN_COLUMNS:
        h.update(np.ascontiguousarray(p.runs[col]).tobytes())
    return p.n_runs, p.n_events, p.method, h.hexdigest()


def _same_run_data(a, b) -> bool:
    """Every run and every event equal (event names compared as strings: each file has its own
    string table)."""
    if a is b:
        return True
    if (a.n_runs, a.n_events, a.method) != (b.n_runs, b.n_events, b.method):
        return False
    for col in _RUN_COLUMNS:
        if not np.array_equal(a.runs[col], b.runs[col]):
            return False
    for col in _EVENT_COLUMNS:
        if (col in a.events) != (col in b.events):
            return False
        if col in a.events and not np.array_equal(a.events[col], b.events[col], equal_nan=col == "value"):
            return False
    same_table = a.strings == b.strings
    if not same_table:
        code_in_a = {s: c for c, s in enumerate(a.strings)}
        to_a = np.array([code_in_a.get(s, -2) for s in b.strings] + [-1], dtype=np.int64)   # [-1]: absent
    for col in _NAME_COLUMNS:
        ca, cb = a.events[col], b.events[col]
        if not same_table:
            cb = to_a[np.where(cb >= 0, cb, len(to_a) - 1)]
        if not np.array_equal(ca, cb):
            return False
    return True


def short_names(profiles) -> list[str]:
    """Each input's name for people: its file name, or its path when two different paths share a
    file name."""
    paths = [p.sources.get("etdump") or f"ETDump #{i + 1}" for i, p in enumerate(profiles)]
    base = [os.path.basename(os.fspath(x).rstrip('/\\')) or x for x in paths]   # pathlib would cost every command its import
    paths_of: dict[str, set] = {}
    for b, x in zip(base, paths):
        paths_of.setdefault(b, set()).add(x)
    return [b if len(paths_of[b]) == 1 else x for b, x in zip(base, paths)]


@dataclass(frozen=True)
class Session:
    """One file's runs (a contiguous block of the stacked runs) and the phases found on them."""
    source: int                # the input's index
    start: int                 # its first run among all stacked runs
    assign: np.ndarray         # phase index (into names) per run of the file
    names: list[str]
    split: object              # phases.find_phases' account of how they were found (result.PhaseSplit)
    parts: list                # the file's parts (runs.FileRuns)
    file_of: np.ndarray        # per run of the file: its part's file_index
    local: np.ndarray          # per run of the file: its index inside its part

    def instructions(self, j: int) -> frozenset:
        """What phase ``j``'s runs executed: (instruction, kind, backend, kernel) of every
        instruction they called."""
        mask = self.assign == j
        out = set()
        for f in self.parts:
            mine = mask & (self.file_of == f.file_index)
            if not mine.any():
                continue
            rows = np.zeros(f.n, dtype=bool)
            rows[self.local[mine]] = True
            for iid in f.instructions_called(rows).tolist():
                ins = f.profile.instructions.get(int(iid))
                out.add((int(iid), None, None, None) if ins is None else (int(iid), ins.kind, ins.backend, ins.kernel))
        return frozenset(out)


def join_phases(sessions: list[Session], names: list[str], warnings: list[str]):
    """The sessions' phases joined by name: phase index per run over all sessions (in the order
    the runs are stacked), the joined phase names (in the order of their first run) and the
    account of how the phases were found (each file's own under ``files``)."""
    if len(sessions) == 1:
        s = sessions[0]
        return s.assign, list(s.names), s.split
    llm_found = any(n in LLM_PHASES for s in sessions for n in s.names)
    sets: dict[tuple[int, int], frozenset] = {}     # (session, phase) -> its instructions, once each

    def instructions(k: int, j: int) -> frozenset:
        if (k, j) not in sets:
            sets[(k, j)] = sessions[k].instructions(j)
        return sets[(k, j)]

    joined: list[str] = []
    first_of: dict[str, tuple[int, int]] = {}     # joined name -> (session, phase) it was first seen as
    assign = []
    files = []
    for k, s in enumerate(sessions):
        fname = names[s.source]
        if not len(s.assign):           # nothing to join: no phase of its own either
            warnings.append(f"{fname}: no Execute runs")
            files.append(FileSplit(file=s.source, etdump=fname, by=s.split.by, evidence=s.split.evidence, runs=0,
                                   phases=(), joined_as=(), runs_by_phase={}))
            continue
        to_joined = []
        for j, name in enumerate(s.names):
            target = name
            if llm_found and name not in LLM_PHASES and s.split.by == "none":
                target = f"{name} ({fname})"
                warnings.append(f"{fname}: its runs could not be told into prefill and decode "
                                f"({s.split.evidence}): kept as the phase '{target}', not joined "
                                "with the other files' phases")
            elif target in first_of:
                x, y = instructions(*first_of[target]), instructions(k, j)
                shared, total = len(x & y), len(x | y)
                other = names[sessions[first_of[target][0]].source]
                if name in LLM_PHASES:
                    if shared < SAME_INSTRUCTIONS * total:
                        warnings.append(f"{fname} and {other}: their {name} runs executed different instructions "
                                        f"({shared} of {total} in common); joined by name all the same: "
                                        "are they sessions of one program?")
                elif shared < SAME_INSTRUCTIONS * total:
                    target = f"{name} ({fname})"
            if target not in first_of:
                first_of[target] = (k, j)
                joined.append(target)
            to_joined.append(joined.index(target))
        assign.append(np.asarray(to_joined, dtype=np.int64)[s.assign] if len(s.assign) else s.assign)
        counts = np.bincount(s.assign, minlength=len(s.names)).tolist() if len(s.assign) else [0] * len(s.names)
        files.append(FileSplit(file=s.source, etdump=fname, by=s.split.by, evidence=s.split.evidence,
                               runs=int(len(s.assign)), phases=tuple(s.names),
                               joined_as=tuple(joined[q] for q in to_joined),
                               runs_by_phase={joined[q]: int(c) for q, c in zip(to_joined, counts)}))
    return np.concatenate(assign), joined, _joined_split(files)


def _joined_split(files: list) -> PhaseSplit:
    """How the phases of several files were found: each file's way, joined by name."""
    bys = list(dict.fromkeys(f.by for f in files if f.by != "none"))
    evidence = "each ETDump on its own, then joined by phase name: " + "; ".join(
        f"{f.etdump}: " + (f"{f.by} ({f.evidence})" if f.by != "none" else f.evidence) for f in files)
    return PhaseSplit(by=", ".join(bys) if bys else "none", evidence=evidence, files=tuple(files))


__all__ = ["Duplicate", "LLM_PHASES", "SAME_INSTRUCTIONS", "Session", "duplicate_inputs", "join_phases",
           "short_names"]
