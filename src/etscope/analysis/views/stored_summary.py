"""A summary read back from storage (``etscope collect`` keeps each file's ``summary --json``
document in its dataset): its shape checked before anything reads it, and the few figures the
trend page shows per build (headline latency, where the time went, the largest ops) taken from it
as typed values. Every figure is the stored one: nothing here is recomputed from other data.

The stored bytes are not trusted: :func:`shape_problem` checks every key the summary's renderers
(``render.text.render_summary``, the page) read, with its type, and returns what is wrong (one
line naming the key path) or None; :func:`digest` reads only a checked document.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

SCHEMA = "etscope.summary/1"
TOP_OPS = 8                  # ops listed per build on the page
MAX_WARNINGS_SHOWN = 5
MAX_TEXT = 300               # characters of a name or warning kept in a digest

# ---- the shape ------------------------------------------------------------------------------------
# A spec is "str" | "int" | "num" | "bool" | "scalar" | "any", a tuple ("opt", spec) (the key may be
# missing or null), ("list", spec), ("map", spec) (an object of str -> spec), ("enum", values...),
# ("absent",) (the key must not be there), or a dict {key: spec} (an object; other keys ignored).
OPT = "opt"
_NUM_OPT = (OPT, "num")
_LATENCY = {"p50": "num", "mean": "num", "min": "num", "max": "num"}
_NESTING = {"bands": (OPT, ("list", {"label": "str", "us_p50": "num", "adds": "str", "adds_us_p50": _NUM_OPT})),
            "scale": "str", "cycles_p50": _NUM_OPT, "clock_mhz": _NUM_OPT, "clock_source": (OPT, "str"),
            "cycles_us": _NUM_OPT, "clock_bounds_mhz": (OPT, ("list", _NUM_OPT))}
_QNN = {"instruction_id": (OPT, "int"), "delegate_call_ms": _NUM_OPT, "runs": (OPT, "int"),
        "qnn_execute_us": _NUM_OPT, "accel_us": _NUM_OPT, "accel_cycles": _NUM_OPT, "ops": (OPT, "int"),
        "clock_mhz_est": _NUM_OPT, "clock_basis": (OPT, "str"), "clock_mhz_bounds": (OPT, ("list", _NUM_OPT)),
        "accel_excl_wait_us": _NUM_OPT, "clock_bound": (OPT, "str"), "clock_source": (OPT, "str"),
        "clock_mhz_measured": _NUM_OPT, "cold_runs": (OPT, ("list", "int")),
        "checks_failed": (OPT, ("list", "str")), "headline": (OPT, "str"), "nesting": (OPT, _NESTING)}
_ONE = {
    "schema": ("enum", SCHEMA),
    "qnn_only": ("absent",),         # a QNN-files-only summary: never what collect stores
    "inputs": ("map", "str"),
    "method": (OPT, "str"),
    "phase": (OPT, {"name": "str", "method": (OPT, "str"), "runs": ("list", "int"), "of_runs": "int",
                    "how": (OPT, "str")}),
    "etdump": (OPT, {"events": (OPT, "int"), "run_data": (OPT, "int"), "bytes": (OPT, "int")}),
    "runs": {"count": "int", "latency_ms": (OPT, _LATENCY),
             "warmup": (OPT, {"count": "int", "runs": ("list", "int"), "latency_ms": ("list", "num"),
                              "times_steady_p50": ("list", _NUM_OPT)})},
    "breakdown": ("list", {"kind": ("enum", "delegate", "cpu_ops", "framework_overhead"), "backend": (OPT, "str"),
                           "calls_per_run": _NUM_OPT, "mean_ms": "num", "p50_ms": "num", "share": "num"}),
    "fallback_ops": ("list", {"instruction_id": "int", "op_type": (OPT, "str"), "kernel": (OPT, "str"),
                              "mean_ms": "num", "p50_ms": _NUM_OPT, "share": "num", "source": (OPT, "str")}),
    "top_fallback_op_types": ("list", {"op_type": (OPT, "str"), "instructions": "int", "sources": ("list", "str")}),
    "delegate_calls": ("list", {"instruction_id": "int", "backend": (OPT, "str"), "p50_ms": _NUM_OPT,
                                "mean_ms": _NUM_OPT, "share": _NUM_OPT}),
    "load": (OPT, ("list", {"name": "str", "ms": "num", "count": (OPT, "int")})),
    "memory": (OPT, {"planned_bytes": (OPT, "int"), "planned_buffers": (OPT, ("list", "int"))}),
    "qnn": (OPT, ("list", _QNN)),
    "qnn_compile": (OPT, {"vtcm_bytes": _NUM_OPT, "soc_model": (OPT, "scalar"), "htp_arch": (OPT, "scalar"),
                          "profile_level": (OPT, "scalar")}),
    "warnings": ("list", "str"),
    # the ranked findings (analysis.findings.Finding; stored since summary --json carries them)
    "findings": (OPT, ("list", {"kind": "str", "severity": ("enum", "high", "medium", "info"), "text": "str",
                                "evidence": "str", "section": "str", "us_per_run": _NUM_OPT})),
}
SUMMARY_SHAPE = {**_ONE, "phases_pooled": (OPT, "str"),
                 "phases": (OPT, ("list", {"name": "str", "method": (OPT, "str"), "runs": ("list", "int"),
                                           "warmup_runs": ("list", "int"),
                                           "latency_ms": {k: _NUM_OPT for k in _LATENCY}, "summary": _ONE}))}
MAX_NODES = 2_000_000        # values visited per document (bounded work, whatever its nesting)


class _TooBig(Exception):
    pass


def shape_problem(doc) -> str | None:
    """What is wrong with a stored summary document (None: it has the shape its readers rely on):
    one line naming the first bad key path and what it should be."""
    budget = [MAX_NODES]
    try:
        return _check(doc, SUMMARY_SHAPE, "summary", budget)
    except _TooBig:
        return f"more than {MAX_NODES:,} values"


def _is_num(v) -> bool:
    return type(v) in (int, float) and math.isfinite(v)


_SCALARS = {"str": lambda v: type(v) is str, "int": lambda v: type(v) is int, "num": _is_num,
            "bool": lambda v: type(v) is bool, "scalar": lambda v: type(v) in (str, int, float, bool),
            "any": lambda v: True}
_WORDS = {"str": "a string", "int": "an integer", "num": "a finite number", "bool": "true or false",
          "scalar": "a string or number", "any": "a value"}


def _check(v, spec, path: str, budget: list) -> str | None:  # noqa: C901 - one branch per kind of spec
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooBig
    if isinstance(spec, str):
        return None if _SCALARS[spec](v) else f"{path} must be {_WORDS[spec]}"
    if isinstance(spec, dict):
        if type(v) is not dict:
            return f"{path} must be an object"
        for k, sub in spec.items():
            if isinstance(sub, tuple) and sub[0] == "absent":
                if k in v:
                    return f"{path}.{k} is not a key of a stored summary"
                continue
            if k not in v:
                if isinstance(sub, tuple) and sub[0] == OPT:
                    continue
                return f"{path}.{k} is missing"
            bad = _check(v[k], sub, f"{path}.{k}", budget)
            if bad:
                return bad
        return None
    kind = spec[0]
    if kind == OPT:
        return None if v is None else _check(v, spec[1], path, budget)
    if kind == "enum":
        return None if type(v) is str and v in spec[1:] else f"{path} must be one of {', '.join(spec[1:])}"
    if kind == "list":
        if type(v) is not list:
            return f"{path} must be a list"
        for i, x in enumerate(v):
            bad = _check(x, spec[1], f"{path}[{i}]", budget)
            if bad:
                return bad
        return None
    if kind == "map":
        if type(v) is not dict:
            return f"{path} must be an object"
        for k, x in v.items():
            bad = _check(x, spec[1], f"{path}.{k[:40]}", budget)
            if bad:
                return bad
        return None
    raise ValueError(f"unknown spec {spec!r}")


# ---- the digest the page shows ------------------------------------------------------------------------
@dataclass(frozen=True)
class SummaryPart:
    """One part of Method::execute (the summary's ``breakdown``): a backend's delegate calls, the
    CPU kernels, or the framework overhead; times are means per run (ms) and the share of the mean."""
    kind: str                        # delegate / cpu_ops / framework_overhead
    backend: str | None
    calls_per_run: float | None
    mean_ms: float
    p50_ms: float
    share: float


@dataclass(frozen=True)
class SummaryOp:
    """One of the largest instructions: a delegate call (the summary's ``delegate_calls``) or a CPU
    kernel (its ``fallback_ops``), by share of the mean latency."""
    instruction_id: int
    kind: str                        # delegate call / CPU kernel
    name: str                        # DELEGATE_CALL; the kernel (else op type) of a CPU kernel
    where: str                       # the backend, or "CPU"
    mean_ms: float | None
    share: float | None


@dataclass(frozen=True)
class SummaryDigest:
    """What the trend page shows of one stored summary (a file, or one phase of it)."""
    method: str | None
    phase: str | None                # the phase whose summary this is (an LLM's prefill / decode)
    runs: int
    warmup_runs: int                 # of ``runs``, left out of the statistics (warm-up)
    p50_ms: float | None             # Method::execute over the steady runs (None: no timed run)
    mean_ms: float | None
    min_ms: float | None
    max_ms: float | None
    parts: tuple[SummaryPart, ...]
    top_ops: tuple[SummaryOp, ...]
    ops_total: int                   # delegate calls and CPU kernels in the summary
    qnn_headlines: tuple[str, ...]
    soc: str | None                  # the QNN compile spec's SoC, when the .pte recorded one
    events: int | None
    warnings: tuple[str, ...]
    warnings_total: int


@dataclass(frozen=True)
class BuildSummary:
    """The stored summary linked from one build of a trend series: the file it is of (the build's
    first by order key), how many files the build has in the series, and the digest, or why there
    is none (``note``: collected before summaries were stored, not read, left out of the page)."""
    file_hash: str
    files: int
    digest: SummaryDigest | None = None
    note: str = ""


def _clip(s) -> str:
    s = str(s)
    return s if len(s) <= MAX_TEXT else s[:MAX_TEXT - 1] + "…"


def phase_document(doc: dict, phase: str | None) -> dict:
    """The summary of ``phase`` (a checked document): its entry of ``phases`` when the runs were
    several phases, else the document itself."""
    for p in doc.get("phases") or []:
        if phase is not None and p["name"] == phase:
            return p["summary"]
    return doc


def digest(doc: dict, phase: str | None = None) -> SummaryDigest:
    """The page's figures of a checked summary document (``shape_problem`` gave None), of ``phase``
    when the document holds several phases' summaries."""
    s = phase_document(doc, phase)
    lat = s["runs"].get("latency_ms") or {}
    parts = tuple(SummaryPart(b["kind"], b.get("backend"), b.get("calls_per_run"), b["mean_ms"], b["p50_ms"],
                              b["share"]) for b in s["breakdown"])
    ops = [SummaryOp(d["instruction_id"], "delegate call", "DELEGATE_CALL",
                     _clip(d.get("backend") or "?"), d.get("mean_ms"), d.get("share")) for d in s["delegate_calls"]]
    ops += [SummaryOp(f["instruction_id"], "CPU kernel", _clip(f.get("kernel") or f.get("op_type") or "?"), "CPU",
                      f["mean_ms"], f["share"]) for f in s["fallback_ops"]]
    ops.sort(key=lambda o: (-(o.share if o.share is not None else -1.0), o.instruction_id))
    qc = s.get("qnn_compile") or {}
    warnings = s["warnings"]
    ph = s.get("phase")
    return SummaryDigest(
        method=s.get("method"), phase=(ph or {}).get("name") or (phase if s is not doc else None),
        runs=s["runs"]["count"], warmup_runs=(s["runs"].get("warmup") or {}).get("count", 0), p50_ms=lat.get("p50"), mean_ms=lat.get("mean"), min_ms=lat.get("min"),
        max_ms=lat.get("max"), parts=parts, top_ops=tuple(ops[:TOP_OPS]), ops_total=len(ops),
        qnn_headlines=tuple(_clip(q["headline"]) for q in (s.get("qnn") or []) if q.get("headline"))[:TOP_OPS],
        soc=None if qc.get("soc_model") is None else _clip(qc["soc_model"]),
        events=(s.get("etdump") or {}).get("events"),
        warnings=tuple(_clip(w) for w in warnings[:MAX_WARNINGS_SHOWN]), warnings_total=len(warnings))


def stored_result(s: dict):
    """A checked stored summary as the summary's typed result (``analysis.views.summary_result.Summary``;
    its QNN rows ``QnnBrief``, their nesting an ``analysis.qnn.nesting.Nesting``): the renderers
    read those, whether the summary was just analysed or stored by ``collect``. A key a document
    may lack (stored by an older etscope) is None or empty."""
    from etscope.analysis.ops.latency import LatencyMs, RunLatency, WarmupLeftOut
    from etscope.analysis.ops.placement import DelegatePart, FallbackOp, LocalPart
    from etscope.analysis.views import summary_result as R

    runs, lat = s["runs"], s["runs"].get("latency_ms")
    mem = s.get("memory") or {}
    return R.Summary(
        schema=s["schema"], inputs=dict(s["inputs"]), method=s.get("method"),
        phase=_typed(R.PhaseFacts, s["phase"], runs=tuple(s["phase"]["runs"])) if s.get("phase") else None,
        etdump=_typed(R.EtdumpFacts, s["etdump"]) if s.get("etdump") else None,
        runs=RunLatency(runs["count"], _typed(LatencyMs, lat) if lat else None,
                        _warmup(WarmupLeftOut, runs["warmup"]) if runs.get("warmup") else None),
        breakdown=tuple(_typed(DelegatePart, b) if b["kind"] == "delegate" else _typed(LocalPart, b)
                        for b in s["breakdown"]),
        fallback_ops=tuple(_typed(FallbackOp, f, nodes=tuple(f.get("nodes") or ())) for f in s["fallback_ops"]),
        top_fallback_op_types=tuple(_typed(R.OpTypeTime, t, sources=tuple(t["sources"]))
                                    for t in s["top_fallback_op_types"]),
        delegate_calls=tuple(_typed(R.DelegateCall, d) for d in s["delegate_calls"]),
        load=tuple(_typed(R.LoadEvent, e) for e in s.get("load") or ()),
        memory=_typed(R.Memory, mem, planned_buffers=tuple(mem["planned_buffers"])
                      if mem.get("planned_buffers") is not None else None),
        qnn=tuple(_brief(q) for q in s["qnn"]) if s.get("qnn") is not None else None,
        qnn_compile=_typed(R.QnnCompile, s["qnn_compile"]) if s.get("qnn_compile") else None,
        warnings=tuple(s["warnings"]))


def _warmup(cls, w: dict):
    """The warm-up runs a stored summary left out (``latency.WarmupLeftOut``), its lists as tuples."""
    return cls(count=w["count"], runs=tuple(w["runs"]), latency_ms=tuple(w["latency_ms"]),
               times_steady_p50=tuple(w["times_steady_p50"]))


def _typed(cls, d: dict, **given):
    """``cls`` from a stored JSON object: each field from its JSON key (a field with a default keeps
    it when the key is missing; one without is None), ``given`` as they are."""
    from dataclasses import MISSING, fields

    out = dict(given)
    for f in fields(cls):
        if f.name in out or not f.init:
            continue
        key = f.metadata["json"] if isinstance(f.metadata.get("json"), str) else f.name   # as render.json writes it
        if key in d:
            out[f.name] = d[key]
        elif f.default is MISSING and f.default_factory is MISSING:
            out[f.name] = None
    return cls(**out)


def stored_findings(s: dict) -> tuple:
    """A checked stored summary's ranked findings (``analysis.findings.Finding``; none in a
    document stored before summaries carried them)."""
    from etscope.analysis.findings import Finding

    return tuple(Finding(kind=f["kind"], severity=f["severity"], text=f["text"], evidence=f["evidence"],
                         section=f["section"], us_per_run=f.get("us_per_run")) for f in s.get("findings") or ())


def _brief(q: dict):
    from dataclasses import fields

    from etscope.analysis.views.summary import QnnBrief

    row = {f.name: q.get(f.name) for f in fields(QnnBrief)}
    for k in ("cold_runs", "checks_failed", "clock_mhz_est_range", "clock_mhz_bounds"):
        row[k] = tuple(row[k] or ())
    row["nesting"] = _nesting(q["nesting"]) if q.get("nesting") else None
    return QnnBrief(**row)


def _nesting(n: dict):
    from etscope.analysis.qnn.nesting import Band, Nesting

    bands = tuple(Band(name=b.get("name") or b["label"], label=b["label"], us_p50=b["us_p50"],
                       adds_us_p50=b.get("adds_us_p50"), adds=b["adds"], share_of_outer=b.get("share_of_outer") or 0.0)
                  for b in n.get("bands") or ())
    bounds = n.get("clock_bounds_mhz")
    return Nesting(bands=bands, scale=n["scale"], cycles_p50=n.get("cycles_p50"), clock_mhz=n.get("clock_mhz"),
                   clock_source=n.get("clock_source"), clock_bounds_mhz=tuple(bounds) if bounds else None,
                   cycles_us=n.get("cycles_us"), headline=n.get("headline") or "",
                   headline_rule=n.get("headline_rule") or "")


def stored_phases(doc: dict) -> tuple[str, list]:
    """(how the runs were told apart, [(``PhaseRow``, that phase's summary)]) of a checked document
    whose runs are several phases (``summary --json``'s ``phases``); ("", []) when they are one."""
    from etscope.analysis.llm.run_phases import PhaseRow

    out = []
    for p in doc.get("phases") or []:
        lat = p["latency_ms"]
        out.append((PhaseRow(name=p["name"], method=p.get("method"), runs=tuple(p["runs"]),
                             warmup_runs=tuple(p["warmup_runs"]), p50_ms=lat.get("p50"), mean_ms=lat.get("mean"),
                             min_ms=lat.get("min"), max_ms=lat.get("max")), p["summary"]))
    how = next(((s.get("phase") or {}).get("how") for _, s in out if (s.get("phase") or {}).get("how")), None)
    return (how or "their phases" if out else ""), out
