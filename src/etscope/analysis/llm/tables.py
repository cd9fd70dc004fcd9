"""Per-phase tables: latency statistics over steady runs, where Method::execute's time goes, and
the instructions by mean time."""
from __future__ import annotations

import numpy as np

from etscope.arrays import median, percentile, unique
from etscope import profile as P
from etscope import units
from etscope.analysis.llm.result import BreakdownPart, FallbackOpType, LatencyStats, Phase, TopInstruction
from etscope.analysis.llm.runs import label_text
from etscope.analysis.stats import describe


def phase_row(files, j, name, assign, warm, latency, tokens, file_of, local, top, given=None) -> Phase:
    """Phase ``j``'s row. Tokens per run: from the logged tensors, else ``given`` (phase name ->
    (count, where from)), else unknown (None: rates are then per run, ``runs_per_s``)."""
    runs = np.nonzero(assign == j)[0]
    steady = runs[~warm[runs]]
    if steady.size == 0:
        steady = runs
    lat = latency[steady]
    lat = lat[np.isfinite(lat)]
    lat_ms = None
    if lat.size:
        s = describe(lat)
        lat_ms = LatencyStats(**{k: s[k] for k in ("p50", "p90", "p99", "max", "min", "mean")})
    tok = tokens[steady]
    tpr = tokens_from = None
    if tok.size and (tok > 0).all():
        u = unique(tok)
        tpr = int(u[0]) if len(u) == 1 else float(tok.mean())
    elif name in (given or {}):
        tpr, tokens_from = given[name]
    # Each part's steady runs (its own run numbers), parts in order of their first steady run.
    owner, own_run = np.asarray(file_of)[steady], np.asarray(local)[steady]
    firsts = np.unique(owner, return_index=True)[1] if owner.size else np.zeros(0, np.int64)
    by_file = {int(fi): own_run[owner == fi] for fi in owner[np.sort(firsts)]}
    methods = sorted({files[fi].profile.method for fi in by_file if files[fi].profile.method})
    ops = _top_ops(files, by_file, float(lat.mean()) if lat.size else float("nan"))
    cpu = [o for o in ops if o.kind == "cpu"]
    return Phase(
        name=name,
        runs=tuple(runs.tolist()),
        steady_runs=int(steady.size),
        warmup_runs=tuple(int(r) for r in runs if warm[r]),
        method=methods[0] if len(methods) == 1 else (tuple(methods) or None),
        tokens_per_run=tpr,
        tokens_from=tokens_from or None,
        latency_ms=lat_ms,
        ms_per_token=(lat_ms.p50 / tpr) if lat_ms and tpr else None,
        runs_per_s=units.per_s_from_ms(lat_ms.p50) if lat_ms and lat_ms.p50 > 0 else None,
        breakdown=_breakdown(files, by_file, lat),
        top_ops=tuple(ops[:top] if top else ops),
        top_fallback_ops=tuple(cpu[:top or None]),
        fallback_op_types=_by_op_type(cpu)[:top or None],
    )


def _by_op_type(ops: list[TopInstruction]) -> tuple[FallbackOpType, ...]:
    agg: dict[str, dict] = {}
    for o in ops:
        key = label_text(o)
        a = agg.setdefault(key, {"op_type": key, "instructions": [], "mean_ms": 0.0, "share": 0.0})
        a["instructions"].append(o.instruction_id)
        a["mean_ms"] += o.mean_ms
        a["share"] += o.share or 0.0
    return tuple(FallbackOpType(op_type=a["op_type"], instructions=tuple(a["instructions"]), mean_ms=a["mean_ms"],
                                share=a["share"]) for a in sorted(agg.values(), key=lambda a: -a["mean_ms"]))


def _breakdown(files, by_file, lat) -> tuple[BreakdownPart, ...]:
    """Method::execute split into delegate calls per backend, CPU kernels and framework overhead."""
    parts: dict[tuple, list] = {}
    for fi, rows in by_file.items():
        f = files[fi]
        rows = np.asarray(rows)
        for b in f.profile.backends():
            parts.setdefault(("delegate", b), [[], []])
            parts[("delegate", b)][0].append(f.parts[f"delegate:{b}"][rows])
            parts[("delegate", b)][1].append(f.parts[f"calls:{b}"][rows])
        for kind, calls in (("cpu_ops", "calls:cpu"), ("framework_overhead", None)):
            parts.setdefault((kind, None), [[], []])
            parts[(kind, None)][0].append(f.parts[kind][rows])
            if calls:
                parts[(kind, None)][1].append(f.parts[calls][rows])
    mean_lat = float(lat.mean()) if lat.size else float("nan")
    out = []
    order = sorted(parts, key=lambda k: {"delegate": 0, "cpu_ops": 1, "framework_overhead": 2}[k[0]])
    for kind, backend in order:
        vals = units.ns_to_ms(np.concatenate(parts[(kind, backend)][0]))
        ok = np.isfinite(vals)
        vals = vals[ok]
        row = {"kind": kind}
        if backend:
            row["backend"] = backend
        calls = parts[(kind, backend)][1]
        if calls:
            c = np.concatenate(calls)[ok]
            row["calls_per_run"] = float(c.mean()) if c.size else 0.0
        row["mean_ms"] = float(vals.mean()) if vals.size else 0.0
        row["p50_ms"] = float(median(vals)) if vals.size else 0.0
        row["p10_ms"], row["p90_ms"] = (float(v) for v in percentile(vals, [10, 90])) if vals.size else (0.0, 0.0)
        row["share"] = float(row["mean_ms"] / mean_lat) if vals.size and mean_lat else 0.0
        out.append(BreakdownPart(**row))
    return tuple(out)


def _top_ops(files, by_file, mean_lat) -> list[TopInstruction]:
    """Instructions by mean time per run in this phase (steady runs), largest first."""
    agg: dict[tuple, dict] = {}
    for fi, rows in by_file.items():
        f = files[fi]
        rows = np.asarray(rows)
        if not f.instr_ids.size:
            continue
        # One copy of the phase's rows (~70 MB on 90k runs), converted in place.
        T = units.ns_to_ms_in_place(np.nan_to_num(f.T[rows], nan=0.0, copy=False))
        single = len(by_file) == 1
        means = T.mean(axis=0) if single else None
        meds = median(T, axis=0, overwrite=True) if single else None     # T is ours and done with
        for c, iid in enumerate(f.instr_ids):
            lab = f.label(iid)
            key = (lab["instruction_id"], lab["placement"], lab["op_type"], lab["kernel"])
            a = agg.setdefault(key, {**lab, "_vals": []})
            if single:
                a["mean_ms"], a["p50_ms"] = float(means[c]), float(meds[c])
            else:
                a["_vals"].append(T[:, c])
    rows = []
    for a in agg.values():
        vals = a.pop("_vals")
        if vals:
            vals = np.concatenate(vals)
            a["mean_ms"] = float(vals.mean()) if vals.size else 0.0
            a["p50_ms"] = float(median(vals)) if vals.size else 0.0
        a.setdefault("mean_ms", 0.0)
        a.setdefault("p50_ms", 0.0)
        a["share"] = float(a["mean_ms"] / mean_lat) if mean_lat and np.isfinite(mean_lat) else None
        a["kind"] = "cpu" if a["placement"] == P.CPU else "delegate"
        rows.append(TopInstruction(**a))
    rows.sort(key=lambda r: -r.mean_ms)
    return rows

