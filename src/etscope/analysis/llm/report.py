"""The ``etscope llm`` result (schema ``etscope.llm/1``): the runs of every part stacked in the order
they ran (input after input), their phases (found per input, joined by name), warm-up, per-phase
tables, rates, drift, series and findings."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.analysis.llm.drift import decode_drift, positions, warmup_runs
from etscope.analysis.llm.findings import plain_findings
from etscope.analysis.llm.phases import find_phases, user_phases
from etscope.analysis.llm.partitions import phase_shards, qnn_series_by_part
from etscope.analysis.llm.result import LeftOut, LlmReport, LlmRuns, Series, TokensUnknown
from etscope.analysis.llm.runs import MAX_TABLE_CELLS_BASE, MAX_TABLE_CELLS_PER_EVENT, FileRuns, stack
from etscope.analysis.llm.sessions import Session, duplicate_inputs, join_phases, short_names
from etscope.analysis.llm.tables import phase_row

SCHEMA = "etscope.llm/1"
AR_LEN_METHOD = "get_ar_len"     # a static LLM's constant method: tokens its decode method takes per run


@dataclass
class _Stacked:
    """Per-run arrays of one input's parts (or of all inputs, joined), in the order the runs ran."""
    file_of: np.ndarray        # the part (index into files) each run comes from
    local: np.ndarray          # the run's index inside its part
    latency: np.ndarray        # ms
    tokens: np.ndarray         # tokens per run, -1 for all of an input's runs when any is unknown
    etdump_run: np.ndarray     # the run's RunData index in its ETDump
    token_evidence: list[str]
    source: int = -1           # the input (one input's runs only)
    start: int = 0             # its first run among all runs
    perm: np.ndarray | None = None   # position of each run among its parts' runs, stacked part after part
    files: list | None = None  # its parts


def llm_report(profiles, prompt_runs: list[int] | None = None, phases: str = "auto", top: int = 8,
               all_methods: bool = False, prompt_tokens: int | None = None,
               program_constants: dict | None = None, decode_tokens: int | None = None) -> LlmReport:
    """The ``etscope llm`` result (schema ``etscope.llm/1``, ``result.LlmReport``).

    A profile of an ETDump holding runs of several methods (see ``profile.MethodSplit``) holds
    one method's runs; with ``all_methods`` the runs of every method are read, in the order they
    ran (unless --method picked that method).

    Several profiles are sessions (``sessions``): one holding the same run data as an earlier one
    is counted once (``llm.duplicates``); each one's phases are found on its own runs and joined by
    phase name; warm-up is judged per phase within each file.

    Tokens per run, when the logged tensors do not give them: ``prompt_tokens`` for each prefill
    run (the user's), the program's ``get_ar_len`` constant method (``program_constants``, as
    ``formats.pte_constants`` reads them) for each decode run: a static QNN LLM's decode method
    processes that many tokens per run; ``decode_tokens`` (the user's) before it. Without any of
    these a phase's tokens per run are unknown: its rates are per run (``runs_per_s``,
    ``decode_runs_per_s``), ``decode_tokens_per_s`` is None and ``tokens_unknown`` says how to give them."""
    if isinstance(profiles, P.Profile):
        profiles = [profiles]
    splits = [_analysed_split(p, all_methods) for p in profiles]
    names = short_names(profiles)
    duplicates = duplicate_inputs(profiles) if len(profiles) > 1 else []
    repeated = {d.file for d in duplicates}
    parts = _parts(profiles, splits, [i for i in range(len(profiles)) if i not in repeated])
    files = [FileRuns(p, i, source, splits[source] is not None) for i, (source, p, _) in enumerate(parts)]
    warnings = _warnings(profiles, splits, parts) + [d.warning(names) for d in duplicates]
    left_out = _columns_left_out(files, profiles, warnings)
    stacks = [_stack_input(source, files, parts) for source in dict.fromkeys(src for src, _, _ in parts)]
    s = _joined(stacks, names)
    assign, phase_names, split = _find_phases(stacks, files, s, prompt_runs, phases, names, warnings)
    warm, warm_notes = _warm_runs(assign, phase_names, s.latency, stacks, len(profiles) > 1)
    steps, pos = _positions(assign, phase_names, s.tokens, stacks)
    given = _given_tokens(prompt_tokens, program_constants, decode_tokens)
    phase_rows = [phase_row(files, j, name, assign, warm, s.latency, s.tokens, s.file_of, s.local, top, given)
                  for j, name in enumerate(phase_names)]
    phase_rows = _with_qnn_partitions(phase_rows, files, warm, s)
    phase_rows, named = _name_lookalike_phases(profiles, splits, phase_rows, warnings)
    decode = next((r for r in phase_rows if r.name == "decode"), None)
    tps, ttft, ttft_first = _rates(phase_rows, s.latency)
    unknown = _tokens_unknown(phase_rows, s.tokens)
    drift = decode_drift(assign, phase_names, warm, s.latency, steps, pos, decode)
    series = _series(profiles, files, s, stacks, [phase_names[int(a)] for a in assign], warm, steps, pos, phase_rows,
                     named is not None)
    method = named or (tuple(_methods(p, sp) for p, sp in zip(profiles, splits)) if len(profiles) > 1 else
                       _methods(profiles[0], splits[0]))
    return LlmReport(
        schema=SCHEMA,
        inputs=tuple(p.source_files for p in profiles),
        method=method,
        llm=LlmRuns(
            runs=len(assign),
            warmup_runs=tuple(int(i) for i in np.nonzero(warm)[0]),
            warmup=tuple(warm_notes),
            phase_split=split,
            phases=tuple(phase_rows),
            decode_tokens_per_s=tps,
            decode_runs_per_s=decode.runs_per_s if decode else None,
            tokens_unknown=unknown,
            ttft_ms=ttft,
            ttft_first_ms=ttft_first,
            drift=drift,
            series=series,
            instructions_left_out=left_out,
            duplicates=tuple(duplicates) or None,
        ),
        findings=plain_findings(phase_rows, tps, ttft, drift, warm_notes, split, unknown,
                                names if len(profiles) > 1 else None),
        warnings=tuple(warnings),
    )


def _stack_input(source, files, parts) -> _Stacked:
    """One input's parts (the ETDump, or its methods' runs) stacked in the order their runs ran;
    its token counts only when every part has them."""
    mine = [k for k, (src, _, _) in enumerate(parts) if src == source]
    fs = [files[k] for k in mine]
    order = np.concatenate([parts[k][2] for k in mine])
    perm = np.argsort(order, kind="stable")
    tokens = stack([f.tokens for f in fs], perm)
    token_evidence = [f.token_evidence for f in fs if f.token_evidence]
    if tokens.size and (tokens < 0).any():
        tokens = np.full(len(tokens), -1, dtype=np.int64)
        token_evidence = []
    return _Stacked(file_of=stack([np.full(f.n, f.file_index, dtype=np.int64) for f in fs], perm),
                    local=stack([np.arange(f.n, dtype=np.int64) for f in fs], perm),
                    latency=units.ns_to_ms(stack([f.latency_ns for f in fs], perm)),
                    tokens=tokens, etdump_run=stack([f.etdump_run for f in fs], perm),
                    token_evidence=token_evidence, source=source,
                    start=int(order.min()) if order.size else 0, perm=perm, files=fs)


def _joined(stacks: list[_Stacked], names: list[str]) -> _Stacked:
    """The inputs' runs, input after input (each input's token evidence named when there are several)."""
    if len(stacks) == 1:
        return stacks[0]

    def cat(field: str, dtype) -> np.ndarray:
        arrays = [getattr(st, field) for st in stacks]
        return np.concatenate(arrays) if arrays else np.zeros(0, dtype)

    return _Stacked(file_of=cat("file_of", np.int64), local=cat("local", np.int64),
                    latency=cat("latency", np.float64), tokens=cat("tokens", np.int64),
                    etdump_run=cat("etdump_run", np.int64),
                    token_evidence=[f"{names[st.source]}: {ev}" for st in stacks for ev in st.token_evidence])


def _find_phases(stacks, files, s: _Stacked, prompt_runs, mode, names, warnings):
    """Phases the user gave over all runs; else each input's own (``phases.find_phases``) joined
    by phase name (``sessions.join_phases``)."""
    given = user_phases(files, len(s.file_of), prompt_runs, mode)
    if given is not None:
        return given
    several = len(stacks) > 1
    sessions = []
    for st in stacks:
        notes: list[str] = []
        assign, phase_names, split = find_phases(st.files, st.file_of, st.local, st.perm, st.latency,
                                                 st.tokens, st.token_evidence, notes)
        warnings.extend(f"{names[st.source]}: {w}" if several else w for w in notes)
        sessions.append(Session(st.source, st.start, assign, phase_names, split, st.files, st.file_of, st.local))
    return join_phases(sessions, names, warnings)


def _positions(assign, phase_names, tokens, stacks) -> tuple[np.ndarray, np.ndarray]:
    """Decode steps and token positions (``drift.positions``), counted within each input: a
    session's first decodes follow its own prefill, not the previous file's."""
    if len(stacks) == 1:
        return positions(assign, phase_names, tokens)
    out = [positions(assign[st.start:st.start + len(st.file_of)], phase_names,
                     tokens[st.start:st.start + len(st.file_of)]) for st in stacks]
    return np.concatenate([o[0] for o in out]), np.concatenate([o[1] for o in out])


def _given_tokens(prompt_tokens, program_constants, decode_tokens=None) -> dict[str, tuple[int, str]]:
    """Tokens per run by phase name, and where each count comes from, from the user or the program."""
    given = {}
    if prompt_tokens is not None:
        given["prefill"] = (int(prompt_tokens), "--prompt-tokens")
    ar_len = (program_constants or {}).get(AR_LEN_METHOD)
    if decode_tokens is not None:
        given["decode"] = (int(decode_tokens), "--decode-tokens")
    elif isinstance(ar_len, list) and len(ar_len) == 1 and type(ar_len[0]) is int and ar_len[0] >= 1:
        given["decode"] = (ar_len[0], f"the program's {AR_LEN_METHOD} = {ar_len[0]}")
    return given


TOKENS_HOW = {"prefill": "--prompt-tokens N", "decode": f"--decode-tokens N, or --pte with a program that has a "
                                                           f"{AR_LEN_METHOD} method"}


def _tokens_unknown(phase_rows, tokens) -> TokensUnknown | None:
    """The prefill/decode phases whose tokens per run nothing gave (no logged tensor shapes, no
    count from the user or the program), and how to give them; None when all are known. With
    several files, some may have logged the shapes: how many of those phases' runs they cover
    (``runs_with_logged_tokens``)."""
    rows = [r for r in phase_rows if r.name in TOKENS_HOW and r.tokens_per_run is None]
    if not rows:
        return None
    logged = sum(int((tokens[np.asarray(r.runs, dtype=np.int64)] > 0).sum()) for r in rows)
    return TokensUnknown(phases=tuple(r.name for r in rows),
                         how="; ".join(f"{r.name}: {TOKENS_HOW[r.name]}" for r in rows)
                             + " (or log tensors as debug events, whose shapes give the count per run)",
                         runs_with_logged_tokens=logged or None)


def _with_qnn_partitions(phase_rows, files, warm, s: _Stacked) -> list:
    """The phases, each with its QNN partitions (``partitions``) as its ``qnn`` entry when its runs
    have any."""
    series = qnn_series_by_part(files)
    if not series:
        return phase_rows
    out = []
    for row in phase_rows:
        runs = np.asarray(row.runs, dtype=np.int64)
        steady = runs[~warm[runs]] if (~warm[runs]).any() else runs
        by_part: dict[int, list[int]] = {}
        for r in steady.tolist():
            by_part.setdefault(int(s.file_of[r]), []).append(int(s.local[r]))
        shards = phase_shards(series, by_part, row.tokens_per_run)
        out.append(row if shards is None else dataclasses.replace(row, qnn=shards))
    return out


def _warm_runs(assign, phase_names, latency, stacks, several: bool) -> tuple[np.ndarray, list]:
    """Per run whether it is a warm-up run of its phase, and a note on each warm-up run. Judged per
    phase within each input (a session's first runs against that session's later runs of the same
    phase); with several inputs each note says which input and which of its runs. Notes in phase
    order, then input order."""
    n = len(assign)
    warm = np.zeros(n, dtype=bool)
    notes = []
    if n == 0:
        return warm, notes
    input_of = np.repeat(np.arange(len(stacks)), [len(st.file_of) for st in stacks])
    order = np.lexsort((np.arange(n), input_of, assign))     # by phase, then input, then run
    key = assign[order] * len(stacks) + input_of[order]
    bounds = np.flatnonzero(np.diff(key)) + 1
    for runs in np.split(order, bounds):
        st = stacks[int(input_of[runs[0]])]
        w, note = warmup_runs(runs, latency, phase_names[int(assign[runs[0]])])
        warm[w] = True
        if several:
            note = [dataclasses.replace(x, file=st.source, file_run=x.run - st.start) for x in note]
        notes.extend(note)
    return warm, notes


def _rates(phase_rows, latency) -> tuple[float | None, float | None, float | None]:
    """Decode tokens/s (1000 / decode p50 ms per token; None when the tokens per run are unknown), TTFT (prefill p50) and the first prefill's latency."""
    decode = next((r for r in phase_rows if r.name == "decode"), None)
    prefill = next((r for r in phase_rows if r.name == "prefill"), None)
    tps = None
    if decode and decode.latency_ms and decode.latency_ms.p50 and decode.tokens_per_run:
        per_tok = decode.latency_ms.p50 / decode.tokens_per_run
        tps = units.per_s_from_ms(per_tok) if per_tok > 0 else None
    ttft = prefill.latency_ms.p50 if prefill and prefill.latency_ms else None
    ttft_first = float(latency[prefill.runs[0]]) if prefill and prefill.runs else None
    return tps, ttft, ttft_first


def _series(profiles, files, s: _Stacked, stacks, phase_of_run, warm, steps, pos, phase_rows,
            named: bool) -> Series:
    """One entry per run, in the order they ran; with several inputs, each run's input (``file``),
    its index among that input's runs (``file_run``) and its method (None: not known); the methods
    of look-alike phases when they were named (``named``)."""
    def known(a) -> tuple:                  # integers, None for -1 (as Python numbers: tolist)
        return tuple(x if x >= 0 else None for x in np.asarray(a, dtype=np.int64).tolist())

    several = len(profiles) > 1
    method = None
    if named:
        method_of = {r.name: r.method for r in phase_rows}
        method = tuple(method_of.get(ph) for ph in phase_of_run)
    elif several or any(f.from_split for f in files):
        method_of_part = [f.profile.method for f in files]
        method = tuple(method_of_part[i] for i in s.file_of.tolist())
    return Series(
        latency_ms=tuple(np.asarray(s.latency, dtype=np.float64).tolist()),
        phase=tuple(phase_of_run),
        warmup=tuple(np.asarray(warm, dtype=bool).tolist()),
        tokens=known(s.tokens),
        step=known(steps),
        position=known(pos),
        etdump_run=tuple(np.asarray(s.etdump_run, dtype=np.int64).tolist()),
        file=tuple(st.source for st in stacks for _ in range(len(st.file_of))) if several else None,
        file_run=tuple(k for st in stacks for k in range(len(st.file_of))) if several else None,
        method=method)


def _name_lookalike_phases(profiles, splits, phase_rows, warnings) -> tuple[list, tuple | None]:
    """ETDumps of one program (one ETDump, or several loaded with the same program) whose methods
    execute the same instructions (QNN hybrid prefill/kv): the prefill and decode phases named after
    them (``analysis.llm.lookalike``), and the methods named, in phase order (None: not named)."""
    if any(sp is not None for sp in splits) or len(
            {(p.sources.get("pte"), p.sources.get("etrecord"), p.method) for p in profiles}) != 1:
        return phase_rows, None
    from etscope.analysis.llm.lookalike import name_phases

    p = profiles[0]
    done = name_phases([r.name for r in phase_rows], p.pte, p.method, p.etrecord)
    if done is None:
        return phase_rows, None
    if "warning" in done:
        warnings.append(done["warning"])
        return phase_rows, None
    warnings[:] = [w for w in warnings if not w.startswith("several methods fit the ETDump")]
    phase_rows = [dataclasses.replace(r, method=done["assigned"][r.name], method_from=done["how"])
                  for r in phase_rows]
    return phase_rows, tuple(r.method for r in phase_rows)


def _file_name(profile: P.Profile, i: int) -> str:
    return profile.sources.get("etdump") or f"ETDump #{i + 1}"


def _analysed_split(profile: P.Profile, all_methods: bool):
    """The profile's MethodSplit when all its methods are read (not when --method picked one)."""
    split = profile.method_split
    return split if all_methods and split is not None and not split.explicit else None


def _parts(profiles, splits, kept) -> list[tuple[int, P.Profile, np.ndarray]]:
    """What the runs are read from: each input profile counted (``kept``), or one profile per
    method when all the methods of an ETDump are read. Per part: input index, profile, its runs'
    indices over the inputs counted (in the order they ran)."""
    parts, offset = [], 0
    for i in kept:
        p, split = profiles[i], splits[i]
        if split is None:
            parts.append((i, p, offset + np.arange(p.n_runs, dtype=np.int64)))
        else:
            parts.extend((i, split.profiles[name], offset + split.runs_of(name)) for name in split.names)
        offset += len(split.of_run) if split is not None else p.n_runs
    return parts


def _methods(profile: P.Profile, split):
    return tuple(split.names) if split is not None else profile.method


def _warnings(profiles, splits, parts) -> list[str]:
    """Warnings of every part, once each; a split's note (which says that only one method is
    shown) does not apply when all methods are read."""
    out: list[str] = []
    for source, p, _ in parts:
        split = splits[source]
        for w in p.warnings:
            if split is not None and w == split.note:
                continue
            w = w if len(profiles) == 1 else f"{_file_name(profiles[source], source)}: {w}"
            if w not in out:
                out.append(w)
    return out


def _columns_left_out(files, profiles, warnings) -> LeftOut | None:
    """Instructions left out of the per-instruction tables (``_columns_within_budget``), counted
    over all parts, each part's left-out count said in a warning; None when nothing was left out."""
    total = left = 0
    for f in files:
        total += f.instructions_total
        out = f.instructions_total - len(f.instr_ids)
        if not out:
            continue
        left += out
        where = "" if len(profiles) == 1 else f"{_file_name(profiles[f.source], f.source)}: "
        where += f"method {f.profile.method}: " if f.from_split else ""
        warnings.append(f"{where}{out:,} of {f.instructions_total:,} instructions, those called least often, "
                        f"are left out of the per-instruction tables (top instructions, cost-profile phase "
                        f"split): {f.n:,} runs x {f.instructions_total:,} instructions would exceed "
                        f"the table budget ({MAX_TABLE_CELLS_PER_EVENT} cells per event of the file + "
                        f"{MAX_TABLE_CELLS_BASE:,})")
    return LeftOut(instructions=total, left_out=left) if left else None

