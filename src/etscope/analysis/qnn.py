"""QNN (HTP) depth: the nesting of QNN's events inside DELEGATE_CALL with true units, the HTP
clock estimated per run, per-op cycles joined to the graph, HMX/HVX/DMA, VTCM/DRAM and utilisation.

Sources, each optional: the ETDump (QNN events logged by ExecuTorch's QnnProfiler inside each
DELEGATE_CALL), a QNN profile CSV / viewer text / viewer JSON (same events, from qnn-net-run or
ONNX Runtime), QHAS and optrace JSON (first inference only, from a separate optrace run).

Everything is first put into one neutral shape, :class:`QnnSeries` (per partition: root events
and per-op node values, one column per execute), then analysed the same way whatever the source.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.analysis.htp_timeline import htp_timeline
from etscope.analysis.nesting import METHOD as METHOD_EXECUTE
from etscope.analysis.nesting import nesting as nesting_of
from etscope.analysis.stats import describe
from etscope.arrays import unique
from etscope.formats.qnn_names import fx_node_candidates, parse_qnn_event_name

SCHEMA = "etscope.qnn/1"

# QNN's top-level execute events, by (identifier without ExecuTorch's unit suffix, unit).
QNN_EXECUTE = ("QNN (execute) time", "us")
RPC_EXECUTE = ("RPC (execute) time", "us")
QNN_ACCEL = ("QNN accelerator (execute) time", "us")
ACCEL_US = ("Accelerator (execute) time", "us")
ACCEL_EXCL_WAIT_US = ("Accelerator (execute excluding wait) time", "us")
ACCEL_CYCLES = ("Accelerator (execute) time (cycles)", "cycles")
HVX_THREADS = ("Number of HVX threads used", "count")
YIELDS = ("Num times yield occured", "count")
VTCM_ACQUIRE = ("Time for initial VTCM acquire", "us")
POWER_ON = ("Time for HVX + HMX power on and acquire", "us")

# The nesting from outside in, with what each level adds over the next one, in plain words.
LEVELS = (
    ("DELEGATE_CALL", "ExecuTorch's wall time around the call into the QNN backend (ns, measured "
     "by ExecuTorch)", "ExecuTorch QNN backend work around QNN's graph execute: input/output tensor "
     "setup, shared-buffer mapping, profiling readout"),
    (QNN_EXECUTE, "QNN's graphExecute call on the CPU side", "QNN host-side work before and after "
     "the remote call (argument marshalling, cache maintenance)"),
    (RPC_EXECUTE, "the FastRPC call from the CPU to the HTP (DSP)", "FastRPC transport and driver "
     "time between CPU and DSP"),
    (QNN_ACCEL, "QNN's handling of the execute on the DSP", "DSP-side QNN work around the graph "
     "(scheduling, VTCM acquire, power-up)"),
    (ACCEL_US, "the HTP executing the graph, waits included", "waiting (for VTCM, DMA, other "
     "clients) while the graph runs"),
    (ACCEL_EXCL_WAIT_US, "the HTP executing the graph, waits excluded", None),
)

# Above this, cycles ÷ µs cannot be one core's clock (HTP cores clock below ~2 GHz in the data we
# have: SM8650 runtrace 1.9 GHz warm); it means cycles were summed over parallel threads.
PLAUSIBLE_MAX_CLOCK_MHZ = 2500.0

_WELL_KNOWN = {QNN_EXECUTE, RPC_EXECUTE, QNN_ACCEL, ACCEL_US, ACCEL_EXCL_WAIT_US, ACCEL_CYCLES,
               HVX_THREADS, YIELDS, VTCM_ACQUIRE, POWER_ON}


def root_key(name: str, unit: str | None = None) -> tuple[str, str]:
    """(QNN identifier, unit) for a top-level event name as ExecuTorch or a QNN tool writes it."""
    for suffix, u in ((" (us)", "us"), (" (bytes)", "bytes"), (" (count)", "count")):
        if name.endswith(suffix):
            return name[: -len(suffix)], u
    if name.endswith("(cycles)"):
        return name, "cycles"
    return name, (unit or "unknown")


@dataclass
class QnnSeries:
    """One QNN graph (partition): its events per execute, columns aligned on ``runs``."""

    key: str                                  # "instruction 12" or "graph 0"
    instruction_id: int | None
    runs: np.ndarray                          # execute indices (ETDump Execute runs or CSV executes)
    roots: dict[tuple[str, str], np.ndarray]  # (identifier, unit) -> value per run (NaN = absent)
    node_names: list[str]
    node_values: np.ndarray                   # (nodes, runs), NaN where absent
    node_unit: list[str]
    delegate_call_ns: np.ndarray | None = None   # per run (sum over calls), ETDump only
    accumulating: bool = False
    copies_per_run: np.ndarray | None = None
    source: str = "etdump"
    notes: list[str] = field(default_factory=list)


# ---- sources --------------------------------------------------------------------------------------
def is_node_name(name: str) -> bool:
    return parse_qnn_event_name(name).op_id is not None


_QNN_ROOT_HINT = re.compile(r"^(QNN|RPC|Accelerator|Number of HVX|Num times yield|Time for )")


def _by_instruction(profile: P.Profile, role: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of the events of ``role``, grouped by instruction id (file order within a group):
    (indices, the group's instruction ids, group starts + end). Built once per profile: a scan of
    every event per instruction was instructions x events (20k partitions: minutes)."""
    key = f"qnn_by_instruction_{role}"
    got = profile.cache.get(key)
    if got is None:
        ev = profile.events
        idx = np.flatnonzero(ev["role"] == role)
        instr = ev["instruction_id"][idx]
        order = np.argsort(instr, kind="stable")
        idx, instr = idx[order], instr[order]
        cut = np.flatnonzero(np.diff(instr)) + 1 if instr.size else np.zeros(0, np.int64)
        starts = np.concatenate([[0], cut, [instr.size]]).astype(np.int64)
        got = profile.cache[key] = (idx, instr[starts[:-1]] if instr.size else instr, starts)
    return got


def _events_of(profile: P.Profile, role: int, iid: int) -> np.ndarray:
    """Indices (ascending) of the events of ``role`` with instruction id ``iid``."""
    idx, ids, starts = _by_instruction(profile, role)
    g = int(np.searchsorted(ids, iid))
    if g >= ids.size or ids[g] != iid:
        return idx[:0]
    return idx[starts[g]:starts[g + 1]]


def qnn_instructions(profile: P.Profile) -> list[int]:
    """Delegate instructions that are QNN partitions: by backend id, or by their event names."""
    ids = []
    ev = profile.events
    for ins in sorted(profile.instructions.values(), key=lambda i: i.id):
        if ins.kind != "delegate":
            continue
        if ins.backend == "QnnBackend":
            ids.append(ins.id)
            continue
        if ins.backend_from == "event names":
            sel = _events_of(profile, P.ROLE_DELEGATE_INTERNAL, ins.id)
            codes = unique(ev["delegate_id_str"][sel])[:20]
            if any(_QNN_ROOT_HINT.match(profile.strings[c]) or is_node_name(profile.strings[c])
                   for c in codes if c >= 0):
                ids.append(ins.id)
    return ids


# Events per slice when walking a partition's QNN events: every per-event temporary is this size, so
# memory stays bounded however many events the file holds (slices end on run boundaries).
_SLICE_EVENTS = 1 << 20


def _run_slices(profile: P.Profile) -> list[slice]:
    """Slices of the event arrays of about ``_SLICE_EVENTS`` events that never split a RunData."""
    size = _SLICE_EVENTS
    run = profile.events["run"]
    n = int(run.shape[0])
    out, lo = [], 0
    while lo < n:
        hi = min(lo + size, n)
        if hi < n:
            # extend to the end of the RunData holding event hi-1 (RunData events are contiguous)
            hi = int(np.searchsorted(run, run[hi - 1], side="right"))
        out.append(slice(lo, hi))
        lo = hi
    return out


def _partition_events(profile: P.Profile, iid: int, sl: slice):
    """The QNN events of instruction ``iid`` in one slice: (execute, name code, value)."""
    ev = profile.events
    mine = _events_of(profile, P.ROLE_DELEGATE_INTERNAL, iid)
    sel = mine[np.searchsorted(mine, sl.start):np.searchsorted(mine, sl.stop)]
    sel = sel[ev["execute"][sel] >= 0]
    ds = ev["delegate_id_str"][sel]
    code = np.where(ds >= 0, ds, ev["name"][sel])     # unnamed delegate events: their id string
    # An event with neither a name nor a string id (only an integer debug id) names no QNN event.
    named = code >= 0
    return ev["execute"][sel][named], code[named], ev["value"][sel][named]


# Partitions analysed per ETDump. Models have a handful to a few hundred QNN partitions; each costs
# about a millisecond, so a file of tens of thousands (a few MB) would take minutes: past this
# many, the rest are named in a warning, not analysed.
MAX_QNN_PARTITIONS = 1000


def series_from_profile(profile: P.Profile) -> list[QnnSeries]:
    """Per QNN partition, its events per execute. Two passes over run-aligned slices of the events:
    the first finds the names and their repeats per execute; the second fills the per-run arrays.
    Apart from one index of the delegate events grouped by instruction (``_by_instruction``),
    nothing the size of the whole event list is allocated. Events that accumulated across executes
    were de-duplicated when the profile was built (profile.Accumulation)."""
    n_runs = profile.n_runs
    slices = _run_slices(profile)
    n_strings = len(profile.strings) + 1
    out = []
    for iid in qnn_instructions(profile)[:MAX_QNN_PARTITIONS]:
        # pass 1: distinct names, copies per run, most repeats per name
        seen = np.zeros(n_strings, dtype=bool)
        copies = np.zeros(n_runs, dtype=np.int64)
        max_occ = np.full(n_strings, -1, dtype=np.int64)
        n_events = 0
        for sl in slices:
            run, code, _ = _partition_events(profile, iid, sl)
            if not run.size:
                continue
            n_events += run.size
            occ, count = _occurrence_and_count(run, code)
            seen[code] = True
            np.maximum.at(copies, run, count)
            np.maximum.at(max_occ, code, occ)
        distinct = np.flatnonzero(seen)
        is_node = np.zeros(n_strings, dtype=bool)
        is_node[distinct] = [is_node_name(profile.strings[c]) for c in distinct]
        present_runs = np.flatnonzero(copies > 0)
        removed = (profile.accumulation.events_removed.get(iid, 0) if profile.accumulation else 0)
        notes = []
        if removed:
            notes.append("QNN events accumulate across executes (execute k holds k copies of every "
                         f"event); {removed:,} older copies were removed when the ETDump was read, each "
                         "run keeps only its own, the newest")
        if (copies[present_runs] > 1).any():
            notes.append("some QNN events repeat within one execute; the last value is used for "
                         "top-level events, all repeats are kept for per-op rows")
        # One row per (node name, occurrence within the execute); rows in order of first appearance.
        node_codes = distinct[is_node[distinct]]
        span = 1 if not node_codes.size else int(max_occ[node_codes].max()) + 1
        dense = np.full(n_strings, -1, dtype=np.int64)
        dense[node_codes] = np.arange(node_codes.size)
        n_rows = int((max_occ[node_codes] + 1).sum())
        # Row keys (name, occurrence) are looked up in a sorted array, not an array of names x most
        # repeats (10k names and one repeated 50k times would be 4 GB).
        known_keys = np.zeros(0, dtype=np.int64)
        known_rows = np.zeros(0, dtype=np.int64)
        row_keys: list[int] = []
        # One value per (row, run): dense when rows recur across runs (the normal case); when names
        # differ from run to run the matrix would be rows x runs from a file of rows + runs events.
        skip_nodes = n_rows * n_runs > 16 * n_events + (1 << 22)
        if skip_nodes:
            notes.append(f"per-op rows left out: {n_rows} distinct (name, repeat) rows over {n_runs} runs "
                         "(names differ from run to run) would not fit a per-run table")
        node_rows = np.full((0 if skip_nodes else n_rows, n_runs), np.nan)
        roots: dict[tuple[str, str], np.ndarray] = {}
        # pass 2: values
        for sl in slices:
            run, code, value = _partition_events(profile, iid, sl)
            if not run.size:
                continue
            occ, count = _occurrence_and_count(run, code)
            keep_last = occ == count - 1
            del count
            node = is_node[code]
            rm = np.flatnonzero(~node & keep_last)
            # Grouped by name with one sort (a scan per root name was names x events).
            order = rm[np.argsort(code[rm], kind="stable")]
            cuts = np.flatnonzero(np.diff(code[order])) + 1
            for grp in np.split(order, cuts) if order.size else []:
                arr = roots.setdefault(root_key(profile.strings[int(code[grp[0]])]), np.full(n_runs, np.nan))
                arr[run[grp]] = value[grp]
            if skip_nodes or not node.any():
                continue
            nm = node
            rowkey = dense[code[nm]] * span + occ[nm]
            new_keys, first_pos = np.unique(rowkey, return_index=True)
            at = np.searchsorted(known_keys, new_keys)
            fresh = at >= known_keys.size
            fresh[~fresh] = known_keys[at[~fresh]] != new_keys[~fresh]
            add = new_keys[fresh][np.argsort(first_pos[fresh], kind="stable")]
            if add.size:
                rows = np.arange(len(row_keys), len(row_keys) + add.size, dtype=np.int64)
                row_keys.extend(add.tolist())
                keys_all = np.concatenate([known_keys, add])
                order = np.argsort(keys_all, kind="stable")
                known_keys, known_rows = keys_all[order], np.concatenate([known_rows, rows])[order]
            node_rows[known_rows[np.searchsorted(known_keys, rowkey)], run[nm]] = value[nm]
        node_names, node_unit = [], []
        for k in row_keys:
            nm_str = profile.strings[int(node_codes[k // span])]
            o = k % span
            node_names.append(nm_str if o == 0 else f"{nm_str} #{o + 1}")
            node_unit.append("cycles" if nm_str.endswith("(cycles)") else "unknown")
        node_rows = node_rows[: len(row_keys)]
        dc = _delegate_call_ns(profile, iid)
        out.append(QnnSeries(key=f"instruction {iid}", instruction_id=iid, runs=np.arange(n_runs),
                             roots=roots, node_names=node_names, node_values=node_rows,
                             node_unit=node_unit, delegate_call_ns=dc, accumulating=bool(removed),
                             copies_per_run=copies, source="etdump", notes=notes))
    return out


def _occurrence_and_count(run: np.ndarray, code: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each event: its index among events of the same (run, name) in file order, and how many
    such events exist. One stable sort."""
    n = run.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    r0 = int(run.min())
    key = (run - r0).astype(np.int64) * (int(code.max()) + 1) + code
    order = np.argsort(key, kind="stable")
    ks = key[order]
    del key
    first = np.ones(n, dtype=bool)
    first[1:] = ks[1:] != ks[:-1]
    del ks
    starts = np.flatnonzero(first)
    gid = np.cumsum(first) - 1
    del first
    sizes = np.diff(np.append(starts, n))
    occ = np.empty(n, dtype=np.int32)
    occ[order] = np.arange(n) - starts[gid]
    count = np.empty(n, dtype=np.int32)
    count[order] = sizes[gid]
    return occ, count


def _delegate_call_ns(profile: P.Profile, iid: int) -> np.ndarray:
    ev = profile.events
    m = _events_of(profile, P.ROLE_DELEGATE_CALL, iid)
    m = m[ev["execute"][m] >= 0]
    out = np.bincount(ev["execute"][m], weights=ev["value"][m], minlength=profile.n_runs)
    present = np.bincount(ev["execute"][m], minlength=profile.n_runs) > 0
    return np.where(present, out, np.nan)


def series_from_qnn_profile(qp) -> list[QnnSeries]:
    """From a QNN profile CSV / viewer text / viewer JSON (etscope.formats.qnn_csv.QnnProfile)."""
    blocks = [b for b in qp.blocks if b.kind == "execute"]
    by_graph: dict[int, list] = {}
    for b in blocks:
        by_graph.setdefault(b.graph_index if b.graph_index is not None else 0, []).append(b)
    graphs = sorted(by_graph)
    out = []
    for g in graphs:
        gb = by_graph[g]
        n = len(gb)
        roots: dict[tuple[str, str], np.ndarray] = {}
        row: dict[str, int] = {}          # node name -> row, in order of first appearance (a dict:
        for b in gb:                      # a list membership test was names x names)
            for nm in b.node_names:
                row.setdefault(nm, len(row))
        names = list(row)
        mat = np.full((len(names), n), np.nan)
        for j, b in enumerate(gb):
            for name, (value, unit) in b.roots.items():
                key = root_key(name, unit)
                roots.setdefault(key, np.full(n, np.nan))[j] = value
            for nm, cyc in zip(b.node_names, b.node_cycles):
                mat[row[nm], j] = cyc
        notes = []
        if getattr(qp, "graph_split", None) == "execute order":
            notes.append(f"graph told apart by execute order only (block i -> graph i mod {len(graphs)}; "
                         "basic level has no per-op names and the file names no graph)")
        out.append(QnnSeries(key=f"graph {g}", instruction_id=None, runs=np.arange(n), roots=roots,
                             node_names=names, node_values=mat, node_unit=["cycles"] * len(names),
                             source=qp.source, notes=notes))
    return out


# ---- analysis ---------------------------------------------------------------------------------------
def _p50(a) -> float | None:
    if a is None:
        return None
    a = np.asarray(a, dtype=np.float64)
    a = a[~np.isnan(a)]
    return float(np.median(a)) if a.size else None


def _stats(a) -> dict | None:
    if a is None:
        return None
    a = np.asarray(a, dtype=np.float64)
    a = a[~np.isnan(a)]
    if a.size == 0:
        return None
    s = describe(a)
    return {k: s[k] for k in ("count", "p10", "p50", "p90", "mean", "min", "max")}


def clock_estimate(s: QnnSeries) -> dict:
    """HTP clock per run = accelerator cycles ÷ accelerator µs (excluding wait when present).

    The two times bracket the clock: cycles ÷ 'Accelerator (execute) time' (waits included) is a
    lower bound, cycles ÷ 'Accelerator (execute excluding wait) time' an upper bound (SM8650 warm
    run: 1,040 … 2,174 MHz; its runtrace measured 1,868 MHz). The estimate is cycles ÷ the
    excluding-wait time (the upper bound) when present, else cycles ÷ the wait-inclusive time (the
    lower bound). ``bound_lo``/``bound_hi`` also allow ±0.5 µs for QNN's whole-µs values;
    ``lo``/``hi`` are that rounding alone around the estimate. Derived, never measured.
    """
    cycles = s.roots.get(ACCEL_CYCLES)
    basis = ACCEL_EXCL_WAIT_US if ACCEL_EXCL_WAIT_US in s.roots else ACCEL_US if ACCEL_US in s.roots else None
    n = len(s.runs)
    nan = np.full(n, np.nan)
    if cycles is None or basis is None:
        missing = [k[0] for k in (ACCEL_CYCLES, ACCEL_US) if k not in s.roots]
        return {"clock_mhz": nan, "lo": nan, "hi": nan, "bound_lo": nan, "bound_hi": nan,
                "basis": None, "bound": None,
                "warning": "no clock estimate: the profile lacks " + " and ".join(
                    f"'{m}'" for m in missing) + " (per-op times need QNN profile level 'detailed')"}
    us = s.roots[basis]
    with np.errstate(divide="ignore", invalid="ignore"):
        mhz = np.where(us > 0, cycles / us, np.nan)
        lo = np.where(us > 0, cycles / (us + 0.5), np.nan)
        hi = np.where(us > 0.5, cycles / (us - 0.5), np.nan)
        wait_us = s.roots.get(ACCEL_US)
        bound_lo = np.where(wait_us > 0, cycles / (wait_us + 0.5), np.nan) if wait_us is not None else nan
        excl = s.roots.get(ACCEL_EXCL_WAIT_US)
        bound_hi = np.where(excl > 0.5, cycles / (excl - 0.5), np.nan) if excl is not None else nan
    warning = None
    p50 = np.nanmedian(mhz) if (~np.isnan(mhz)).any() else np.nan
    if p50 > PLAUSIBLE_MAX_CLOCK_MHZ:
        warning = (f"cycles ÷ µs gives {p50:,.0f} MHz, more than an HTP core runs at: the per-op cycles "
                   "are summed over HVX/HMX threads that ran in parallel. The 'clock' is then an "
                   "effective rate, and per-op µs estimates share the measured accelerator time out in "
                   "proportion to cycles")
    # What the estimate is: "between" (both times: lower and upper bound known), "upper"/"lower"
    # (one time only), "effective" (above any core clock: cycles summed over parallel threads, so
    # neither time bounds a clock).
    bound = "effective" if warning else "between" if basis == ACCEL_EXCL_WAIT_US and wait_us is not None \
        else "upper" if basis == ACCEL_EXCL_WAIT_US else "lower"
    return {"clock_mhz": mhz, "lo": lo, "hi": hi, "bound_lo": bound_lo, "bound_hi": bound_hi,
            "basis": basis[0], "bound": bound, "warning": warning}


def measured_clock(runtrace) -> dict | None:
    """The HTP clock a runtrace measured: p50 over its 'Graph Execute' spans (all executes; the
    cold first one included, as in the profile's own p50 over runs)."""
    if runtrace is None:
        return None
    per = runtrace.graph_execute_mhz()
    if per.size == 0:
        return None
    from etscope.formats.runtrace import GRAPH_EXECUTE

    return {"mhz": float(np.median(per)), "per_execute": [float(x) for x in per],
            "path": runtrace.path, "graphs": runtrace.graphs,
            # per execute of the runtrace, to tie its executes to a profile's runs
            "graph_mhz": runtrace.per_execute(GRAPH_EXECUTE)[:, 1],
            "ticks": {VTCM_ACQUIRE: runtrace.per_execute("VTCM Acquire")[:, 0],
                      POWER_ON: runtrace.per_execute("Resource Power On")[:, 0]}}


def _runs_match(s: QnnSeries, measured: dict) -> bool:
    """Whether the runtrace recorded these very runs: one graph, as many executes as runs, and its
    VTCM-acquire / power-on tick counts equal to the profile's values of those events, run by run
    (they are the same counters; see formats/runtrace.py)."""
    if len(measured["graphs"]) != 1 or measured["graph_mhz"].size != len(s.runs):
        return False
    if np.isnan(measured["graph_mhz"]).any():
        return False
    compared = 0
    for key, ticks in measured["ticks"].items():
        v = s.roots.get(key)
        if v is None or np.isnan(v).any() or np.isnan(ticks).any():
            continue
        if not np.array_equal(v, ticks):
            return False
        compared += 1
    return compared > 0


def _clock_fields(s: QnnSeries, clock: dict, measured: dict | None) -> tuple[dict, np.ndarray]:
    """The clock as reported per partition, and the per-run clock used for cycles -> µs (the
    runtrace's measured clock when given, else the per-run estimate)."""
    est = clock["clock_mhz"]
    ok = est[~np.isnan(est)]
    per_run = bool(measured) and _runs_match(s, measured)
    used = measured["graph_mhz"].copy() if per_run else np.full(len(s.runs), measured["mhz"]) if measured else est
    lo, hi = _p50(clock["bound_lo"]), _p50(clock["bound_hi"])
    out = {
        "clock_mhz_bounds": [lo, hi],
        "clock_bound": clock["bound"],
        "clock_mhz_est_per_run_range": [float(ok.min()), float(ok.max())] if ok.size else None,
        "clock_mhz_measured": measured["mhz"] if measured else None,
        "clock_mhz_measured_per_execute": measured["per_execute"] if measured else None,
        "clock_source": "runtrace" if measured else ("estimate" if ok.size else None),
        "clock_mhz_used": _p50(used),
        "clock_measured_within_bounds": None,
        # True: the runtrace holds these very runs (matched by VTCM-acquire / power-on ticks), so
        # each run's cycles are divided by that run's measured clock; False: by the runtrace's p50.
        "clock_measured_per_run": per_run if measured else None,
    }
    if measured and (lo is not None or hi is not None):
        m = measured["mhz"]
        out["clock_measured_within_bounds"] = bool((lo is None or m >= lo) and (hi is None or m <= hi))
    return out, used


def cold_runs(s: QnnSeries) -> list[int]:
    """Runs that paid HTP power-up: 'Time for HVX + HMX power on and acquire' far above the rest."""
    power = s.roots.get(POWER_ON)
    if power is None or np.isnan(power).all():
        return []
    base = np.nanmedian(power)
    # Well above the typical run, by ratio and by at least a millisecond of absolute time.
    cold = np.nonzero((power > 1.5 * base) & (power > base + 1000))[0]
    return [int(s.runs[i]) for i in cold]


def analyse_series(s: QnnSeries, graph=None, qhas_ops: dict | None = None, measured: dict | None = None,
                   method_us: np.ndarray | None = None) -> dict:
    """One partition analysed. ``method_us``: Method::execute per run (µs), aligned on ``s.runs``
    (ETDump only), the outermost band of the nesting."""
    clock = clock_estimate(s)
    clock_fields, clock_used = _clock_fields(s, clock, measured)
    n = len(s.runs)
    accel = s.roots.get(ACCEL_CYCLES)
    node_sum = np.nansum(s.node_values, axis=0) if s.node_values.size else np.zeros(n)
    has_nodes = ~np.isnan(s.node_values).all(axis=0) if s.node_values.size else np.zeros(n, bool)
    levels = _levels(s)
    checks = _checks(s, node_sum, has_nodes, levels)
    ops = _ops(s, dict(clock, clock_mhz=clock_used), accel, graph, qhas_ops)
    used_p50 = clock_fields["clock_mhz_used"]
    for o in ops:       # the one per-op time the text shows: cycles p50 ÷ the clock stated above it
        o["est_us_at_clock"] = (o["cycles_p50"] / used_p50 if o["unit"] == "cycles" and used_p50
                                and o["cycles_p50"] is not None else None)
    matched = sum(1 for o in ops if o["node"])
    named = sum(1 for o in ops if o["graph_op"])
    part = {
        "key": s.key, "instruction_id": s.instruction_id, "source": s.source,
        "runs": int(n),
        "delegate_call_ms": (_p50(s.delegate_call_ns) / 1e6) if _p50(s.delegate_call_ns) is not None else None,
        "qnn_execute_us": _p50(s.roots.get(QNN_EXECUTE)),
        "rpc_us": _p50(s.roots.get(RPC_EXECUTE)),
        "qnn_accel_us": _p50(s.roots.get(QNN_ACCEL)),
        "accel_us": _p50(s.roots.get(ACCEL_US)),
        "accel_excl_wait_us": _p50(s.roots.get(ACCEL_EXCL_WAIT_US)),
        "accel_cycles": _p50(accel),
        "clock_mhz_est": _p50(clock["clock_mhz"]),
        "clock_mhz_est_range": [_p50(clock["lo"]), _p50(clock["hi"])],
        "clock_basis": clock["basis"],
        "clock_is_estimate": True,
        **clock_fields,
        "clock_warning": clock["warning"],
        "cold_runs": cold_runs(s),
        "accumulating": s.accumulating,
        "levels": levels,
        "counts": {k[0]: _p50(v) for k, v in s.roots.items() if k[1] == "count"},
        "bytes": {k[0]: _p50(v) for k, v in s.roots.items() if k[1] == "bytes"},
        "other_events": [{"name": k[0], "unit": k[1], "p50": _p50(v)} for k, v in s.roots.items()
                         if k not in _WELL_KNOWN and k[1] not in ("count", "bytes")],
        "per_run": {
            "delegate_call_us": _list(s.delegate_call_ns / 1e3) if s.delegate_call_ns is not None else None,
            "qnn_execute_us": _list(s.roots.get(QNN_EXECUTE)),
            "accel_us": _list(s.roots.get(ACCEL_US)),
            "accel_excl_wait_us": _list(s.roots.get(ACCEL_EXCL_WAIT_US)),
            "accel_cycles": _list(accel),
            "node_cycles_sum": _list(np.where(has_nodes, node_sum, np.nan)),
            "clock_mhz_est": _list(clock["clock_mhz"]),
            "clock_mhz_used": _list(clock_used),
            "power_on_us": _list(s.roots.get(POWER_ON)),
        },
        "ops": ops,
        "ops_matched_to_graph": matched,
        "ops_named": named,
        "unmatched_ops": [o["qnn_name"] for o in ops if o["graph_op"] and not o["node"]] if graph is not None else [],
        "checks": checks,
        "notes": list(s.notes),
    }
    nest = _nesting(s, method_us, accel, clock_fields)
    part["nesting"] = nest.to_dict()
    part["headline"] = nest.headline
    return part


def _nesting(s: QnnSeries, method_us, accel, clock_fields: dict):
    """The partition's nesting picture (analysis.nesting) from its per-run levels."""
    levels = [(METHOD_EXECUTE, None if method_us is None else np.asarray(method_us, dtype=np.float64)[s.runs])]
    for key, _, _ in LEVELS:
        if key == "DELEGATE_CALL":
            levels.append(("DELEGATE_CALL", None if s.delegate_call_ns is None else s.delegate_call_ns / 1e3))
        else:
            levels.append((key[0], s.roots.get(key)))
    lo, hi = clock_fields["clock_mhz_bounds"]
    # Above any core clock (cycles summed over parallel threads): an effective rate, which no time bounds.
    effective = clock_fields["clock_source"] == "estimate" and clock_fields["clock_bound"] == "effective"
    return nesting_of(levels, accel, clock_fields["clock_mhz_used"],
                      "effective" if effective else clock_fields["clock_source"],
                      (lo, hi) if (lo is not None or hi is not None) and not effective else None)


def _list(a):
    if a is None:
        return None
    return [None if (x != x) else float(x) for x in np.asarray(a, dtype=np.float64)]


def _levels(s: QnnSeries) -> list[dict]:
    """The nesting with the p50 of each level and what it adds over the next one inside it."""
    rows = []
    values = []
    for key, what, adds in LEVELS:
        if key == "DELEGATE_CALL":
            v = None if s.delegate_call_ns is None else s.delegate_call_ns / 1e3
            name, unit = "DELEGATE_CALL", "us"
        else:
            v = s.roots.get(key)
            name, unit = key[0], key[1]
        if v is None or np.isnan(v).all():
            continue
        values.append(v)
        rows.append({"name": name, "unit": unit, "p50_us": _p50(v), "what": what,
                     "adds_over_next": adds, "adds_us_p50": None})
    for i in range(len(rows) - 1):
        diff = values[i] - values[i + 1]
        rows[i]["adds_us_p50"] = _p50(diff)
    cyc = s.roots.get(ACCEL_CYCLES)
    if cyc is not None:
        rows.append({"name": ACCEL_CYCLES[0], "unit": "cycles", "p50_cycles": _p50(cyc),
                     "what": "HTP cycles of the graph execution; the per-op rows below add up to it",
                     "adds_over_next": None, "adds_us_p50": None})
    return rows


def _checks(s: QnnSeries, node_sum, has_nodes, levels) -> list[dict]:
    checks = []
    accel = s.roots.get(ACCEL_CYCLES)
    if accel is not None and has_nodes.any():
        ok_runs = has_nodes & ~np.isnan(accel)
        diff = np.abs(node_sum[ok_runs] - accel[ok_runs])
        rel = diff / np.maximum(accel[ok_runs], 1)
        bad = int((rel > 0.001).sum())
        checks.append({"check": "sum of per-op cycles = Accelerator (execute) time (cycles)",
                       "ok": bad == 0, "runs_checked": int(ok_runs.sum()), "runs_failing": bad,
                       "max_rel_diff": float(rel.max()) if rel.size else None})
    vals = []
    for key, _, _ in LEVELS:
        v = (s.delegate_call_ns / 1e3 if s.delegate_call_ns is not None else None) if key == "DELEGATE_CALL" \
            else s.roots.get(key)
        if v is not None and not np.isnan(v).all():
            vals.append(((key if isinstance(key, str) else key[0]), v))
    for (outer_name, outer), (inner_name, inner) in zip(vals, vals[1:]):
        both = ~np.isnan(outer) & ~np.isnan(inner)
        # Whole-µs values: allow 1 µs of rounding.
        bad = both & (inner > outer + 1.0)
        checks.append({"check": f"{inner_name} ≤ {outer_name}", "ok": not bad.any(),
                       "runs_checked": int(both.sum()), "runs_failing": int(bad.sum())})
    if s.accumulating:
        checks.append({"check": "QNN events accumulate across executes (detected, de-duplicated)",
                       "ok": True, "runs_checked": int(len(s.runs)), "runs_failing": 0})
    return checks


def _ops(s: QnnSeries, clock, accel, graph, qhas_ops) -> list[dict]:
    mhz = clock["clock_mhz"]
    total_accel = float(np.nansum(accel)) if accel is not None else None
    rows = []
    by_name = getattr(graph, "by_name", None) or {}
    for i, name in enumerate(s.node_names):
        vals = s.node_values[i]
        original = name.split(" #")[0]
        parsed = parse_qnn_event_name(original)
        base = parsed.base
        node = None
        candidates = fx_node_candidates(original)
        for cand in candidates:
            if cand in by_name:
                node = by_name[cand]
                break
        with np.errstate(divide="ignore", invalid="ignore"):
            est_us = vals / mhz if s.node_unit[i] == "cycles" else np.full(vals.shape, np.nan)
        q = (qhas_ops or {}).get(base) if base else None
        total = float(np.nansum(vals))
        row = {
            "qnn_name": name, "base": base or None, "op_id": parsed.op_id, "token": parsed.token,
            "graph_op": bool(candidates),   # False for QNN's own Input/Output/nameless rows
            "unit": s.node_unit[i],
            "node": node.name if node else None,
            "op_type": node.target if node else None,
            "source": getattr(node, "source", None) if node else None,
            "module": _module(node),
            "runs": int((~np.isnan(vals)).sum()),
            "cycles_p50": _p50(vals), "cycles_mean": float(np.nanmean(vals)) if (~np.isnan(vals)).any() else None,
            "est_us_p50": _p50(est_us), "est_is_estimate": True,
            "share": (total / total_accel) if total_accel else None,
            "hmx": q["hmx"] if q else None, "hvx": q["hvx"] if q else None, "dma": q["dma"] if q else None,
            "htp_ops": q["htp_ops"] if q else None,
            "dram_read": q["dram_read"] if q else None, "dram_write": q["dram_write"] if q else None,
            "vtcm_read": q["vtcm_read"] if q else None, "vtcm_write": q["vtcm_write"] if q else None,
            "dominant_path_cycles": q["dominant_path_cycles"] if q else None,
            "qhas_cycles": q["cycles"] if q else None,
        }
        rows.append(row)
    return rows


def _module(node) -> str | None:
    if node is None:
        return None
    stack = getattr(node, "nn_module_stack", None) or ()
    if not stack:
        return None
    try:
        path, typ = stack[-1][1]
        return f"{path} ({typ.rsplit('.', 1)[-1]})" if path else typ
    except (TypeError, ValueError, IndexError):
        return None


# ---- QHAS / optrace ----------------------------------------------------------------------------------
def qhas_op_table(qhas) -> dict[str, dict]:
    """Per QNN op name: cycles, DRAM/VTCM bytes, dominant-path cycles, and HMX/HVX/DMA use of the
    HTP ops it became (from htp_op_instances)."""
    out: dict[str, dict] = {}
    seen: dict[str, set] = {}
    for r in qhas.qnn_op_instances_nodes:
        name = r.get("qnn_op")
        if not isinstance(name, str):
            continue
        dp = next((v for k, v in r.items() if k.startswith("num_dominant_path_cycles")), None)
        out[name] = {"cycles": r.get("cycles"), "op_type": r.get("qnn_op_type"),
                     "dram_read": r.get("dram_read"), "dram_write": r.get("dram_write"),
                     "vtcm_read": r.get("vtcm_read"), "vtcm_write": r.get("vtcm_write"),
                     "dominant_path_cycles": dp, "hmx": None, "hvx": None, "dma": None, "htp_ops": []}
    for r in qhas.htp_op_instances:
        name = r.get("qnn_op")
        if not isinstance(name, str):
            continue
        o = out.setdefault(name, {"cycles": None, "op_type": r.get("qnn_op_type"), "dram_read": None,
                                  "dram_write": None, "vtcm_read": None, "vtcm_write": None,
                                  "dominant_path_cycles": None, "hmx": None, "hvx": None, "dma": None,
                                  "htp_ops": []})
        for flag in ("hmx", "hvx", "dma"):
            v = r.get(flag)
            if isinstance(v, bool):
                o[flag] = bool(o[flag]) or v
        htp = r.get("htp_op")
        if isinstance(htp, str) and htp not in seen.setdefault(name, set()):   # a set: one QNN op may
            seen[name].add(htp)                                               # hold 60k HTP ops
            o["htp_ops"].append(htp)
    return out


def optrace_op_table(trace) -> dict[str, dict]:
    """Per QNN op name from an optrace: HTP ops it became, their cycles and HMX/HVX/DMA flags."""
    out: dict[str, dict] = {}
    seen: dict[str, set] = {}
    ev = trace.events
    for i in trace.op_event_indices():
        args = ev.args[i] if isinstance(ev.args[i], dict) else {}
        name = args.get("QNN Op Name")
        if not isinstance(name, str):
            continue
        flags = [f for f in args.get("Flags") or [] if isinstance(f, str)]
        o = out.setdefault(name, {"cycles": 0.0, "op_type": args.get("QNN Op Type"), "dram_read": None,
                                  "dram_write": None, "vtcm_read": None, "vtcm_write": None,
                                  "dominant_path_cycles": None, "hmx": False, "hvx": False, "dma": False,
                                  "htp_ops": []})
        dur = ev.dur_cycles[i]
        o["cycles"] += float(dur) if dur == dur else 0.0
        o["hmx"] = o["hmx"] or any("hmx" in f for f in flags)
        o["hvx"] = o["hvx"] or any("hvx" in f for f in flags)
        o["dma"] = o["dma"] or any(f.startswith("dma") for f in flags)
        htp = args.get("HTP Op Type") or ev.name[i]
        if isinstance(htp, str) and htp not in seen.setdefault(name, set()):
            seen[name].add(htp)
            o["htp_ops"].append(htp)
    return out


def merge_op_tables(primary: dict | None, secondary: dict | None) -> dict | None:
    """QHAS first; optrace fills what QHAS lacks (e.g. trimmed QHAS without htp_op_instances)."""
    if not primary:
        return secondary
    if not secondary:
        return primary
    merged = {k: dict(v) for k, v in primary.items()}
    for name, o in secondary.items():
        m = merged.setdefault(name, dict(o))
        for k, v in o.items():
            if m.get(k) in (None, []):
                m[k] = v
    return merged


def qhas_summary(qhas, vtcm_bytes: int | None = None, soc: str | None = None) -> dict:
    o = qhas.overall or {}
    resources = []
    for r in o.get("htp_resources") or []:
        if isinstance(r, dict):
            resources.append({k: r.get(k) for k in ("type", "tid", "utilization", "cycles_used",
                                                     "timeline_cycles", "start_cycle", "end_cycle",
                                                     "num_dominant_path_cycles")})
    peak = o.get("peak_vtcm_alloc")
    return {
        "path": qhas.path, "version": list(qhas.version) if qhas.version else None,
        "note": "QHAS describes the first inference of a separate optrace-level run only",
        "percent_utilization": o.get("percent_utilization"), "percent_idle": o.get("percent_idle"),
        "time_us": o.get("time_us"), "graph_execute_us": o.get("graph_execute_us"),
        "inf_per_s": o.get("inf_per_s"), "timeline_cycles": o.get("timeline_cycles"),
        "total_dram_read": o.get("total_dram_read"), "total_dram_write": o.get("total_dram_write"),
        "total_dram": o.get("total_dram"), "total_vtcm_read": o.get("total_vtcm_read"),
        "total_vtcm_write": o.get("total_vtcm_write"), "peak_vtcm_alloc": peak,
        "soc": soc, "vtcm_bytes": vtcm_bytes,
        "peak_vtcm_share": (peak / vtcm_bytes) if isinstance(peak, (int, float)) and vtcm_bytes else None,
        "resources": resources,
        "op_types": [{k: r.get(k) for k in ("op", "num_htp_ops", "cycles", "percent_active_cycles",
                                             "dram_read", "dram_write", "vtcm_read", "vtcm_write")}
                     for r in qhas.qnn_op_types],
        "warnings": list(qhas.warnings),
    }


def optrace_summary(trace) -> dict:
    """Per-track busy cycles from an optrace (cycles, not µs)."""
    ev = trace.events
    idx = trace.op_event_indices() if hasattr(trace, "op_event_indices") else np.arange(len(ev.name))
    tracks = []
    # Op events grouped by track in one pass (a per-track scan was tracks x events).
    idx = np.asarray(idx, dtype=np.int64)
    pids = np.asarray(ev.pid, dtype=np.int64)[idx]
    tids = np.asarray(ev.tid, dtype=np.int64)[idx]
    dur = np.asarray(ev.dur_cycles, dtype=np.float64)[idx]
    keys, inv = (np.unique(np.stack([pids, tids]), axis=1, return_inverse=True) if idx.size
                 else (np.zeros((2, 0), np.int64), np.zeros(0, np.int64)))
    inv = inv.reshape(-1)
    n_ops = np.bincount(inv, minlength=keys.shape[1])
    busy = np.bincount(inv, weights=np.nan_to_num(dur, nan=0.0), minlength=keys.shape[1])
    at = {(int(p), int(t)): j for j, (p, t) in enumerate(keys.T.tolist())}
    ops_of = {k: int(n_ops[j]) for k, j in at.items()}
    busy_of = {k: float(busy[j]) for k, j in at.items()}
    for (pid, tid), kind in sorted(trace.tracks.items()):
        tracks.append({"pid": int(pid), "tid": int(tid), "kind": kind,
                       "name": trace.thread_names.get((pid, tid)) if isinstance(trace.thread_names, dict) else None,
                       "ops": ops_of.get((pid, tid), 0), "busy_cycles": busy_of.get((pid, tid), 0.0)})
    return {"ops": int(len(idx)), "tracks": tracks, "unit": "cycles"}


# ---- entry point ------------------------------------------------------------------------------------
def qnn_report(profile: P.Profile | None = None, qhas=None, optrace=None, qnn_profile=None,
               soc: dict | None = None, runtrace=None, qhas_ops_by_key: dict[str, dict] | None = None) -> dict:
    """Everything QNN, as plain data (the ``qnn`` object of ``etscope qnn --json``).
    ``qhas_ops_by_key``: per partition key, the QHAS/optrace op table of that partition's own files
    (several context binaries, ``analysis.qnn_shards``), used instead of ``qhas``/``optrace``'s."""
    graph = None
    if profile is not None and profile.etrecord is not None:
        graph = _lowering_graph(profile)
    qhas_ops = merge_op_tables(qhas_op_table(qhas) if qhas is not None else None,
                                optrace_op_table(optrace) if optrace is not None else None)
    series: list[QnnSeries] = []
    if profile is not None:
        series += series_from_profile(profile)
    if qnn_profile is not None:
        series += series_from_qnn_profile(qnn_profile)
    measured = measured_clock(runtrace)
    method_us = _method_execute_us(profile) if profile is not None else None
    partitions = [analyse_series(s, graph, qhas_ops if qhas_ops_by_key is None else qhas_ops_by_key.get(s.key),
                                 measured, method_us if s.source == "etdump" else None) for s in series]
    if profile is not None:
        for p in partitions:
            ins = profile.instructions.get(p["instruction_id"]) if p["instruction_id"] is not None else None
            p["backend"] = ins.backend if ins else "QnnBackend"
    warnings = []
    for p in partitions:
        if p["clock_warning"]:
            warnings.append(f"{p['key']}: {p['clock_warning']}")
        for c in p["checks"]:
            if not c["ok"]:
                warnings.append(f"{p['key']}: check failed: {c['check']} ({c['runs_failing']} of "
                                f"{c['runs_checked']} runs)")
        if p["unmatched_ops"]:
            warnings.append(f"{p['key']}: {len(p['unmatched_ops'])} QNN op(s) not found in the ETRecord "
                            f"graph, e.g. {p['unmatched_ops'][0]}")
    if qnn_profile is not None:
        warnings += [f"{qnn_profile.source}: {w}" for w in qnn_profile.warnings]
    warnings += _clock_warnings(partitions, runtrace, measured)
    if profile is not None and not series:
        warnings.append("no QNN events in this ETDump (QNN profile level off, or no QnnBackend partition)")
    if profile is not None:
        skipped = qnn_instructions(profile)[MAX_QNN_PARTITIONS:]
        if skipped:
            warnings.append(f"{len(skipped)} more QNN partitions (instructions {skipped[0]} to {skipped[-1]}) "
                            f"not analysed: only the first {MAX_QNN_PARTITIONS} are")
    vtcm = soc.get("vtcm_bytes") if soc else None
    return {
        "schema": SCHEMA,
        "partitions": partitions,
        "qhas": qhas_summary(qhas, vtcm, soc.get("soc_model") if soc else None) if qhas is not None else None,
        "optrace": optrace_summary(optrace) if optrace is not None else None,
        "htp_timeline": None if optrace is None else htp_timeline(
            optrace, qhas, runtrace, next((p["clock_mhz_used"] for p in partitions if p["clock_mhz_used"]), None)
        ).to_dict(),
        "soc": soc,
        "runtrace": None if runtrace is None else {
            "path": runtrace.path, "graphs": runtrace.graphs,
            "clock_mhz": measured["mhz"] if measured else None,
            "clock_mhz_per_execute": measured["per_execute"] if measured else None},
        "warnings": warnings,
    }


def _method_execute_us(profile: P.Profile) -> np.ndarray:
    """Method::execute per run in µs (NaN for a run without one)."""
    lat = profile.runs["latency_ns"].astype(np.float64)
    return np.where(lat > 0, lat / 1e3, np.nan)


def _clock_warnings(partitions: list[dict], runtrace, measured) -> list[str]:
    out = []
    if runtrace is None:
        return out
    out += [f"runtrace: {w}" for w in runtrace.warnings]
    if measured is None:
        out.append("runtrace: no measured 'Graph Execute' clock; per-op µs use the estimate")
        return out
    if len(measured["graphs"]) > 1:
        out.append(f"runtrace: {len(measured['graphs'])} graphs; their executes' median clock is used for "
                   "every partition")
    for p in partitions:
        if p["clock_measured_within_bounds"] is False:
            lo, hi = p["clock_mhz_bounds"]
            out.append(f"{p['key']}: the runtrace's {measured['mhz']:,.0f} MHz lies outside this profile's "
                       f"bounds ({_mhz(lo)}–{_mhz(hi)} MHz): the runtrace may come from another session, "
                       "or the cycles are summed over parallel HVX/HMX threads")
    return out


def _mhz(x) -> str:
    return "?" if x is None else f"{x:,.0f}"


def _lowering_graph(profile: P.Profile):
    er = profile.etrecord
    method = profile.method or "forward"
    for attr in ("lowering_input",):
        fn = getattr(er, attr, None)
        if fn is not None:
            try:
                g = fn(method)
                if g is not None:
                    return g
            except Exception:  # noqa: BLE001 - any reader problem just means no graph join
                pass
    graphs = getattr(er, "graphs", None) or {}
    return graphs.get(method)
