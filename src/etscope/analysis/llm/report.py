"""The ``etscope llm`` result (schema ``etscope.llm/1``): the runs of every part stacked in the order
they ran, their phases, warm-up, per-phase tables, rates, drift, series and findings."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.analysis.llm.drift import decode_drift, positions, warmup_runs
from etscope.analysis.llm.findings import plain_findings
from etscope.analysis.llm.phases import find_phases
from etscope.analysis.llm.qnn_shards import phase_shards, qnn_series_by_part
from etscope.analysis.llm.runs import MAX_TABLE_CELLS_BASE, MAX_TABLE_CELLS_PER_EVENT, FileRuns, stack
from etscope.analysis.llm.tables import phase_row

SCHEMA = "etscope.llm/1"
AR_LEN_METHOD = "get_ar_len"     # a static LLM's constant method: tokens its decode method takes per run


@dataclass
class _Stacked:
    """Per-run arrays over all parts, in the order the runs ran."""
    perm: np.ndarray           # position of each run among the parts' runs, stacked part after part
    file_of: np.ndarray        # the part (index into files) each run comes from
    local: np.ndarray          # the run's index inside its part
    latency: np.ndarray        # ms
    tokens: np.ndarray         # tokens per run, -1 for all when any is unknown
    token_evidence: list[str]


def llm_report(profiles, prompt_runs: list[int] | None = None, phases: str = "auto", top: int = 8,
               all_methods: bool = False, prompt_tokens: int | None = None,
               program_constants: dict | None = None, decode_tokens: int | None = None) -> dict:
    """The ``etscope llm`` result as plain data (schema ``etscope.llm/1``).

    A profile of an ETDump holding runs of several methods (see ``profile.MethodSplit``) holds
    one method's runs; with ``all_methods`` the runs of every method are read, in the order they
    ran (unless --method picked that method).

    Tokens per run, when the logged tensors do not give them: ``prompt_tokens`` for each prefill
    run (the user's), the program's ``get_ar_len`` constant method (``program_constants``, as
    ``formats.pte_constants`` reads them) for each decode run: a static QNN LLM's decode method
    processes that many tokens per run; ``decode_tokens`` (the user's) before it. Without any of
    these a phase's tokens per run are unknown: its rates are per run (``runs_per_s``,
    ``decode_runs_per_s``), ``decode_tokens_per_s`` is None and ``tokens_unknown`` says how to give them."""
    if isinstance(profiles, P.Profile):
        profiles = [profiles]
    splits = [_analysed_split(p, all_methods) for p in profiles]
    parts = _parts(profiles, splits)
    files = [FileRuns(p, i, source, splits[source] is not None) for i, (source, p, _) in enumerate(parts)]
    warnings = _warnings(profiles, splits, parts)
    left_out = _columns_left_out(files, profiles, warnings)
    s = _stack_runs(files, parts)
    assign, phase_names, split = find_phases(files, s.file_of, s.local, s.perm, s.latency, s.tokens,
                                             s.token_evidence, prompt_runs, phases, warnings)
    warm, warm_notes = _warm_runs(assign, phase_names, s.latency)
    steps, pos = positions(assign, phase_names, s.tokens)
    given = _given_tokens(prompt_tokens, program_constants, decode_tokens)
    phase_rows = [phase_row(files, j, name, assign, warm, s.latency, s.tokens, s.file_of, s.local, top, given)
                  for j, name in enumerate(phase_names)]
    _add_qnn_shards(phase_rows, files, warm, s)
    decode = next((r for r in phase_rows if r["name"] == "decode"), None)
    tps, ttft, ttft_first = _rates(phase_rows, s.latency)
    unknown = _tokens_unknown(phase_rows)
    drift = decode_drift(assign, phase_names, warm, s.latency, steps, pos, decode)
    series = _series(profiles, splits, files, s, [phase_names[int(a)] for a in assign], warm, steps, pos)
    named = _name_lookalike_phases(profiles, splits, phase_rows, series, warnings)
    return {
        "schema": SCHEMA,
        "inputs": [dict(p.sources) for p in profiles],
        "method": named or ([_methods(p, sp) for p, sp in zip(profiles, splits)] if len(profiles) > 1 else
                            _methods(profiles[0], splits[0])),
        "llm": {
            "runs": len(assign),
            "warmup_runs": [int(i) for i in np.nonzero(warm)[0]],
            "warmup": warm_notes,
            "phase_split": split,
            "phases": phase_rows,
            "decode_tokens_per_s": tps,
            "decode_runs_per_s": decode["runs_per_s"] if decode else None,
            "tokens_unknown": unknown,
            "ttft_ms": ttft,
            "ttft_first_ms": ttft_first,
            "drift": drift,
            "series": series,
            **({"instructions_left_out": left_out} if left_out else {}),
        },
        "findings": plain_findings(phase_rows, tps, ttft, drift, warm_notes, split, unknown),
        "warnings": warnings,
    }


def _stack_runs(files, parts) -> _Stacked:
    """Parts (files, or the methods of one file) stacked, in the order their runs ran; token
    counts only when every part has them."""
    perm = np.argsort(np.concatenate([g for _, _, g in parts]), kind="stable") if parts else np.zeros(0, np.int64)
    tokens = stack([f.tokens for f in files], perm)
    token_evidence = [f.token_evidence for f in files if f.token_evidence]
    if tokens.size and (tokens < 0).any():
        tokens = np.full(len(tokens), -1, dtype=np.int64)
        token_evidence = []
    return _Stacked(perm=perm,
                    file_of=stack([np.full(f.n, f.file_index, dtype=np.int64) for f in files], perm),
                    local=stack([np.arange(f.n, dtype=np.int64) for f in files], perm),
                    latency=units.ns_to_ms(stack([f.latency_ns for f in files], perm)),
                    tokens=tokens, token_evidence=token_evidence)


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


def _tokens_unknown(phase_rows) -> dict | None:
    """The prefill/decode phases whose tokens per run nothing gave (no logged tensor shapes, no
    count from the user or the program), and how to give them; None when all are known."""
    names = [r["name"] for r in phase_rows if r["name"] in TOKENS_HOW and r["tokens_per_run"] is None]
    if not names:
        return None
    return {"phases": names,
            "how": "; ".join(f"{n}: {TOKENS_HOW[n]}" for n in names)
                   + " (or log tensors as debug events, whose shapes give the count per run)"}


def _add_qnn_shards(phase_rows, files, warm, s: _Stacked) -> None:
    """Each phase's QNN shards (``qnn_shards``) as its ``qnn`` entry, when its runs have any."""
    series = qnn_series_by_part(files)
    if not series:
        return
    for row in phase_rows:
        runs = np.asarray(row["runs"], dtype=np.int64)
        steady = runs[~warm[runs]] if (~warm[runs]).any() else runs
        by_part: dict[int, list[int]] = {}
        for r in steady.tolist():
            by_part.setdefault(int(s.file_of[r]), []).append(int(s.local[r]))
        shards = phase_shards(series, by_part, row["tokens_per_run"])
        if shards is not None:
            row["qnn"] = shards


def _warm_runs(assign, phase_names, latency) -> tuple[np.ndarray, list[dict]]:
    """Per run whether it is a warm-up run of its phase, and a note on each warm-up run."""
    warm = np.zeros(len(assign), dtype=bool)
    notes = []
    for j, name in enumerate(phase_names):
        w, note = warmup_runs(np.nonzero(assign == j)[0], latency, name)
        warm[w] = True
        notes.extend(note)
    return warm, notes


def _rates(phase_rows, latency) -> tuple[float | None, float | None, float | None]:
    """Decode tokens/s (1000 / decode p50 ms per token; None when the tokens per run are unknown), TTFT (prefill p50) and the first prefill's latency."""
    decode = next((r for r in phase_rows if r["name"] == "decode"), None)
    prefill = next((r for r in phase_rows if r["name"] == "prefill"), None)
    tps = None
    if decode and decode["latency_ms"] and decode["latency_ms"]["p50"] and decode["tokens_per_run"]:
        per_tok = decode["latency_ms"]["p50"] / decode["tokens_per_run"]
        tps = units.per_s_from_ms(per_tok) if per_tok > 0 else None
    ttft = prefill["latency_ms"]["p50"] if prefill and prefill["latency_ms"] else None
    ttft_first = float(latency[prefill["runs"][0]]) if prefill and prefill["runs"] else None
    return tps, ttft, ttft_first


def _series(profiles, splits, files, s: _Stacked, phase_of_run, warm, steps, pos) -> dict:
    """One entry per run, in the order they ran."""
    def known(a) -> list:                  # integers, None for -1 (as Python numbers: tolist)
        return [x if x >= 0 else None for x in np.asarray(a, dtype=np.int64).tolist()]

    series = {
        "latency_ms": np.asarray(s.latency, dtype=np.float64).tolist(),
        "phase": phase_of_run,
        "warmup": np.asarray(warm, dtype=bool).tolist(),
        "tokens": known(s.tokens),
        "step": known(steps),
        "position": known(pos),
        "etdump_run": stack([f.etdump_run for f in files], s.perm).tolist(),
    }
    if len(profiles) > 1:
        source = np.array([f.source for f in files], dtype=np.int64)[s.file_of]
        first_run = np.concatenate([[0], np.cumsum([_runs_in(p, sp) for p, sp in zip(profiles, splits)])[:-1]])
        series["file"] = [int(x) for x in source]
        series["file_run"] = [int(x) for x in np.arange(len(s.file_of)) - first_run[source]]
    if any(f.from_split for f in files):
        method_of_part = [f.profile.method for f in files]
        series["method"] = [method_of_part[i] for i in s.file_of.tolist()]
    return series


def _name_lookalike_phases(profiles, splits, phase_rows, series, warnings) -> list[str] | None:
    """One ETDump, one program whose methods execute the same instructions (QNN hybrid
    prefill/kv): name the prefill and decode phases after them (``analysis.lookalike``); the
    methods named, in phase order, or None."""
    if len(profiles) != 1 or splits[0] is not None:
        return None
    from etscope.analysis.lookalike import name_phases

    p = profiles[0]
    done = name_phases(phase_rows, p.pte, p.method, p.etrecord)
    if done is None:
        return None
    if "warning" in done:
        warnings.append(done["warning"])
        return None
    warnings[:] = [w for w in warnings if not w.startswith("several methods fit the ETDump")]
    method_of = {r["name"]: r["method"] for r in phase_rows}
    series["method"] = [method_of.get(ph) for ph in series["phase"]]
    return [r["method"] for r in phase_rows]


def _file_name(profile: P.Profile, i: int) -> str:
    return profile.sources.get("etdump") or f"ETDump #{i + 1}"


def _analysed_split(profile: P.Profile, all_methods: bool):
    """The profile's MethodSplit when all its methods are read (not when --method picked one)."""
    split = profile.method_split
    return split if all_methods and split is not None and not split.explicit else None


def _parts(profiles, splits) -> list[tuple[int, P.Profile, np.ndarray]]:
    """What the runs are read from: each input profile, or one profile per method when all the
    methods of an ETDump are read. Per part: input index, profile, its runs' indices over all
    inputs (in the order they ran)."""
    parts, offset = [], 0
    for i, (p, split) in enumerate(zip(profiles, splits)):
        if split is None:
            parts.append((i, p, offset + np.arange(p.n_runs, dtype=np.int64)))
        else:
            parts.extend((i, split.profiles[name], offset + split.runs_of(name)) for name in split.names)
        offset += _runs_in(p, split)
    return parts


def _runs_in(profile: P.Profile, split) -> int:
    return len(split.of_run) if split is not None else profile.n_runs


def _methods(profile: P.Profile, split):
    return list(split.names) if split is not None else profile.method


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


def _columns_left_out(files, profiles, warnings) -> dict | None:
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
    return {"instructions": total, "left_out": left} if left else None

