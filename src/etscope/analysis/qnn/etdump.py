"""QNN partitions of an ETDump as :class:`QnnSeries`: the QNN events ExecuTorch's QnnProfiler logged
inside each DELEGATE_CALL, per execute, walked in run-aligned slices so memory stays bounded."""
from __future__ import annotations

import re

import numpy as np

from etscope import profile as P
from etscope.analysis.memo import per_profile
from etscope.analysis.qnn.model import QnnSeries, is_node_name, root_key
from etscope.arrays import stable_argsort
from etscope.formats.backends import is_qnn
from etscope.profile.instructions import delegate_internal_names

_QNN_ROOT_HINT = re.compile(r"^(QNN|RPC|Accelerator|Number of HVX|Num times yield|Time for )")

# Up to this many instructions, each one's events are found by a scan of the role and instruction
# columns; more are grouped by one sort (a scan per instruction would be instructions x events).
_SCANNED_INSTRUCTIONS = 8


def _group_by_instruction(profile: P.Profile, role: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices of the events of ``role``, grouped by instruction id (file order within a group):
    (indices, the group's instruction ids, group starts + end), for the series reader (delegate
    events) and, memoised, for the delegate calls. A model has a few delegate instructions (a scan
    each: no sort, no index of every event of the role to permute) or up to thousands (one stable
    sort; a scan per instruction would be instructions x events)."""
    ev = profile.events
    of_role = ev["role"] == role
    instr_all = ev["instruction_id"]
    instr = instr_all[of_role]
    if instr.size == 0:
        return np.zeros(0, np.int64), instr, np.zeros(2, np.int64)
    lo, hi = int(instr.min()), int(instr.max())
    if hi - lo < 1 << 22:
        counts = np.bincount((instr - lo) if lo else instr, minlength=hi - lo + 1)
        ids = np.flatnonzero(counts)
        if ids.size <= _SCANNED_INSTRUCTIONS:
            del instr
            idx = np.concatenate([np.flatnonzero(of_role & (instr_all == i + lo)) for i in ids])
            starts = np.concatenate([[0], np.cumsum(counts[ids])]).astype(np.int64)
            return idx, (ids + lo).astype(instr_all.dtype), starts
    order = stable_argsort(instr)
    idx, instr = np.flatnonzero(of_role)[order], instr[order]
    del order
    cut = np.flatnonzero(np.diff(instr)) + 1
    starts = np.concatenate([[0], cut, [instr.size]]).astype(np.int64)
    return idx, instr[starts[:-1]], starts


@per_profile
def _calls_by_instruction(profile: P.Profile) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return _group_by_instruction(profile, P.ROLE_DELEGATE_CALL)


def _events_of(grouped: tuple[np.ndarray, np.ndarray, np.ndarray], iid: int) -> np.ndarray:
    """Indices (ascending) of the events of instruction ``iid`` in a ``_group_by_instruction`` result."""
    idx, ids, starts = grouped
    g = int(np.searchsorted(ids, iid))
    if g >= ids.size or ids[g] != iid:
        return idx[:0]
    return idx[starts[g]:starts[g + 1]]


def qnn_instructions(profile: P.Profile) -> list[int]:
    """Delegate instructions that are QNN partitions: by backend id, or by their event names."""
    ids = []
    for ins in sorted(profile.instructions.values(), key=lambda i: i.id):
        if ins.kind != "delegate":
            continue
        if is_qnn(ins.backend):
            ids.append(ins.id)
            continue
        if ins.backend_from == "event names":
            codes = _internal_codes(profile).get(ins.id, ())[:20]
            if any(_QNN_ROOT_HINT.match(profile.strings[c]) or is_node_name(profile.strings[c])
                   for c in codes if c >= 0):
                ids.append(ins.id)
    return ids


@per_profile
def _internal_codes(profile: P.Profile) -> dict[int, list[int]]:
    """``profile.instructions.delegate_internal_names``, once per profile (of its events now:
    after accumulated copies were removed)."""
    return delegate_internal_names(profile)


# Events per slice when walking a partition's QNN events: every per-event temporary is this size, so
# memory stays bounded however many events the file holds (slices end on run boundaries).
SLICE_EVENTS = 1 << 20


def run_slices(profile: P.Profile, size: int = SLICE_EVENTS) -> list[slice]:
    """Slices of the event arrays of about ``size`` events that never split a RunData."""
    n = profile.n_events
    ends = P.run_ends(profile.etdump) if "run" not in profile.events else None
    out, lo = [], 0
    while lo < n:
        hi = min(lo + size, n)
        if hi < n:
            # extend to the end of the RunData holding event hi-1 (RunData events are contiguous)
            if ends is None:
                run = profile.events["run"]
                hi = int(np.searchsorted(run, run[hi - 1], side="right"))
            else:
                hi = int(ends[np.searchsorted(ends, hi - 1, side="right")])
        out.append(slice(lo, hi))
        lo = hi
    return out


def _partition_events(profile: P.Profile, mine: np.ndarray, sl: slice, values: bool = True):
    """The QNN events of one partition (``mine``: its delegate events) in one slice: (execute,
    name code, value); the value is None when ``values`` is False (the names pass needs none)."""
    ev = profile.events
    sel = mine[np.searchsorted(mine, sl.start):np.searchsorted(mine, sl.stop)]
    run = ev["execute"][sel]
    ds = ev["delegate_id_str"][sel]
    code = np.where(ds >= 0, ds, ev["name"][sel])     # unnamed delegate events: their id string
    # Events outside an execute belong to no run; an event with neither a name nor a string id
    # (only an integer debug id) names no QNN event.
    keep = (run >= 0) & (code >= 0)
    if keep.all():
        return run, code, ev["value"][sel] if values else None
    return run[keep], code[keep], ev["value"][sel[keep]] if values else None


# Partitions analysed per ETDump. Models have a handful to a few hundred QNN partitions; each costs
# about a millisecond, so a file of tens of thousands (a few MB) would take minutes: past this
# many, the rest are named in a warning, not analysed.
MAX_QNN_PARTITIONS = 1000


def series_from_profile(profile: P.Profile, slice_events: int = SLICE_EVENTS) -> list[QnnSeries]:
    """Per QNN partition, its events per execute. Two passes over run-aligned slices of the events
    (``slice_events`` each): the first finds the names and their repeats per execute; the second
    fills the per-run arrays. Apart from one index of the delegate events grouped by instruction,
    nothing the size of the whole event list is allocated. Events that accumulated across executes
    were de-duplicated when the profile was built (profile.Accumulation)."""
    if slice_events == SLICE_EVENTS:
        return list(_series_of(profile))      # `report` asks twice (its QNN and LLM sections): read once
    return _read_series(profile, slice_events)


@per_profile
def _series_of(profile: P.Profile) -> list[QnnSeries]:
    return _read_series(profile, SLICE_EVENTS)


def _read_series(profile: P.Profile, slice_events: int) -> list[QnnSeries]:
    slices = run_slices(profile, slice_events)
    # The delegate events grouped by instruction: held while the series are read, not after (on
    # 10M events, 75 MB).
    grouped = _group_by_instruction(profile, P.ROLE_DELEGATE_INTERNAL)
    return [_partition_series(profile, iid, _events_of(grouped, iid), slices)
            for iid in qnn_instructions(profile)[:MAX_QNN_PARTITIONS]]


class _Names:
    """Pass 1 over one partition: the names seen, how many copies each run holds of its most repeated
    name, the most repeats of each name within one run, and the number of events."""

    __slots__ = ("seen", "copies", "max_occ", "n_events")

    def __init__(self, seen: np.ndarray, copies: np.ndarray, max_occ: np.ndarray, n_events: int):
        self.seen, self.copies, self.max_occ, self.n_events = seen, copies, max_occ, n_events


def _scan_names(profile: P.Profile, mine: np.ndarray, slices: list[slice]) -> _Names:
    n_strings = len(profile.strings) + 1
    names = _Names(np.zeros(n_strings, dtype=bool), np.zeros(profile.n_runs, dtype=np.int64),
                   np.full(n_strings, -1, dtype=np.int64), 0)
    for sl in slices:
        run, code, _ = _partition_events(profile, mine, sl, values=False)
        if not run.size:
            continue
        names.n_events += run.size
        k = _period(run, code)
        if k:       # every run of the slice logged what its first run logged: that run tells
            occ, count = _occurrence_and_count(run[:k], code[:k])
            run, code, count = run[::k], code[:k], np.full(run.size // k, count.max())
        else:
            occ, count = _occurrence_and_count(run, code)
        names.seen[code] = True
        # values in the tables' own dtype: ufunc.at's fast loop (a cast makes it ~15x slower)
        np.maximum.at(names.copies, run, count.astype(names.copies.dtype))
        np.maximum.at(names.max_occ, code, occ.astype(names.max_occ.dtype))
    return names


class _RowIndex:
    """Per-op rows keyed (name, occurrence) -> row, rows in order of first appearance. Keys are
    looked up in a sorted array, not an array of names x most repeats (10k names and one repeated
    50k times would be 4 GB)."""

    def __init__(self):
        self.keys = np.zeros(0, dtype=np.int64)
        self.rows = np.zeros(0, dtype=np.int64)
        self.in_order: list[int] = []

    def rows_of(self, rowkey: np.ndarray) -> np.ndarray:
        new_keys, first_pos = np.unique(rowkey, return_index=True)
        at = np.searchsorted(self.keys, new_keys)
        fresh = at >= self.keys.size
        fresh[~fresh] = self.keys[at[~fresh]] != new_keys[~fresh]
        add = new_keys[fresh][np.argsort(first_pos[fresh], kind="stable")]
        if add.size:
            rows = np.arange(len(self.in_order), len(self.in_order) + add.size, dtype=np.int64)
            self.in_order.extend(add.tolist())
            keys_all = np.concatenate([self.keys, add])
            order = np.argsort(keys_all, kind="stable")
            self.keys, self.rows = keys_all[order], np.concatenate([self.rows, rows])[order]
        return self.rows[np.searchsorted(self.keys, rowkey)]


def _notes(profile: P.Profile, iid: int, copies: np.ndarray) -> tuple[int, list[str]]:
    removed = (profile.accumulation.events_removed.get(iid, 0) if profile.accumulation else 0)
    notes = []
    if removed:
        notes.append("QNN events accumulate across executes (execute k holds k copies of every "
                     f"event); {removed:,} older copies were removed when the ETDump was read, each "
                     "run keeps only its own, the newest")
    if (copies[np.flatnonzero(copies > 0)] > 1).any():
        notes.append("some QNN events repeat within one execute; the last value is used for "
                     "top-level events, all repeats are kept for per-op rows")
    return removed, notes


def _partition_series(profile: P.Profile, iid: int, mine: np.ndarray, slices: list[slice]) -> QnnSeries:
    """One partition: pass 1 (names), then pass 2 (values) into roots and one row per (node name,
    occurrence within the execute)."""
    n_runs = profile.n_runs
    names = _scan_names(profile, mine, slices)
    distinct = np.flatnonzero(names.seen)
    is_node = np.zeros(names.seen.size, dtype=bool)
    is_node[distinct] = [is_node_name(profile.strings[c]) for c in distinct]
    removed, notes = _notes(profile, iid, names.copies)
    node_codes = distinct[is_node[distinct]]
    span = 1 if not node_codes.size else int(names.max_occ[node_codes].max()) + 1
    dense = np.full(names.seen.size, -1, dtype=np.int64)
    dense[node_codes] = np.arange(node_codes.size)
    n_rows = int((names.max_occ[node_codes] + 1).sum())
    # One value per (row, run): dense when rows recur across runs (the normal case); when names
    # differ from run to run the matrix would be rows x runs from a file of rows + runs events.
    skip_nodes = n_rows * n_runs > 16 * names.n_events + (1 << 22)
    if skip_nodes:
        notes.append(f"per-op rows left out: {n_rows} distinct (name, repeat) rows over {n_runs} runs "
                     "(names differ from run to run) would not fit a per-run table")
    node_rows = np.full((0 if skip_nodes else n_rows, n_runs), np.nan)
    roots: dict[tuple[str, str], np.ndarray] = {}
    index = _RowIndex()
    for sl in slices:
        run, code, value = _partition_events(profile, mine, sl)
        if not run.size:
            continue
        k = _period(run, code)
        occ, count = _occurrence_and_count(run, code, k)
        node = is_node[code]
        _fill_roots(roots, profile, run, code, value, np.flatnonzero(~node & (occ == count - 1)))
        del count
        if skip_nodes or not node.any():
            continue
        if k:       # the same rows in every run: looked up for the first run, repeated
            first = node[:k]
            rows = np.tile(index.rows_of(dense[code[:k][first]] * span + occ[:k][first]), run.size // k)
        else:
            rows = index.rows_of(dense[code[node]] * span + occ[node])
        node_rows[rows, run[node]] = value[node]
    node_names, node_unit = _row_labels(profile, index.in_order, node_codes, span)
    return QnnSeries(key=f"instruction {iid}", instruction_id=iid, runs=np.arange(n_runs),
                     roots=roots, node_names=node_names, node_values=node_rows[: len(index.in_order)],
                     node_unit=node_unit, delegate_call_ns=_delegate_call_ns(profile, iid),
                     accumulating=bool(removed), copies_per_run=names.copies, source="etdump", notes=notes)


def _fill_roots(roots: dict, profile: P.Profile, run, code, value, rm: np.ndarray) -> None:
    """Top-level events ``rm`` (the last copy of each name per run) into ``roots``, grouped by name
    with one sort (a scan per root name was names x events), in the order they were first logged
    (string codes follow how the file was read, not the events)."""
    order = rm[stable_argsort(code[rm])]
    cuts = np.flatnonzero(np.diff(code[order])) + 1
    groups = np.split(order, cuts) if order.size else []
    for grp in sorted(groups, key=lambda g: int(g[0])):
        arr = roots.setdefault(root_key(profile.strings[int(code[grp[0]])]), np.full(profile.n_runs, np.nan))
        arr[run[grp]] = value[grp]


def _row_labels(profile: P.Profile, row_keys: list[int], node_codes: np.ndarray, span: int):
    """Per-op row names ("name", "name #2" for the second occurrence in one execute) and units."""
    node_names, node_unit = [], []
    for k in row_keys:
        nm_str = profile.strings[int(node_codes[k // span])]
        o = k % span
        node_names.append(nm_str if o == 0 else f"{nm_str} #{o + 1}")
        node_unit.append("cycles" if nm_str.endswith("(cycles)") else "unknown")
    return node_names, node_unit


def _period(run: np.ndarray, code: np.ndarray) -> int:
    """k when the events are m >= 2 runs (ascending) of k events each, every run logging the same
    names in the same order (a static graph): what holds for the first run then holds for each;
    else 0. Three passes over the events, against a sort and its scatters."""
    n = run.size
    if n < 2:
        return 0
    k = int(np.argmax(run != run[0]))           # events of the first run (0: all of one run)
    if k == 0 or n % k:
        return 0
    runs, codes = run.reshape(-1, k), code.reshape(-1, k)
    if (runs == runs[:, :1]).all() and (np.diff(runs[:, 0]) > 0).all() and (codes == codes[0]).all():
        return k
    return 0


def _occurrence_and_count(run: np.ndarray, code: np.ndarray, period: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """For each event: its index among events of the same (run, name) in file order, and how many
    such events exist. One stable sort; with ``period`` (``_period``), one run's, repeated."""
    n = run.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if period:
        occ, count = _occurrence_and_count(run[:period], code[:period])
        return np.tile(occ, n // period), np.tile(count, n // period)
    r0 = int(run.min())
    key = (run - r0).astype(np.int64) * (int(code.max()) + 1) + code
    order = np.argsort(key, kind="stable")     # timsort: the keys repeat in runs, nearly sorted
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
    m = _events_of(_calls_by_instruction(profile), iid)
    m = m[ev["execute"][m] >= 0]
    out = np.bincount(ev["execute"][m], weights=ev["value"][m], minlength=profile.n_runs)
    present = np.bincount(ev["execute"][m], minlength=profile.n_runs) > 0
    return np.where(present, out, np.nan)

