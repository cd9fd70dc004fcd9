"""Runs that repeat an earlier run byte for byte, times aside: copied instead of parsed.

A static graph logs the same events in every run, and ExecuTorch writes each run's events again,
names and delegate strings included, so a later run's bytes usually equal an earlier run's shifted
by the distance between them, except the start/end times. Every FlatBuffer reference is relative
(uoffsets to tables, strings and vectors; soffsets to vtables), so when every byte the earlier
run's parse read is identical at the shifted place, parsing the later run would give the same
events: that is checked with one contiguous comparison of the two byte ranges, and the run's
events are then copied from the earlier run, with only their start/end times read.

Nothing here trusts the file: a run is copied only after the comparison, any difference outside
the time fields sends it to the ordinary reader, and the bytes compared over the whole file are
capped (four times the file) so a crafted file cannot make the comparisons quadratic.
"""
from __future__ import annotations

import functools

import numpy as np

from etscope.arrays import TWO_THREADS_MIN, in_two_threads
from etscope.errors import FormatError
from etscope.formats.etdump_schema import (EV_ALLOCATION, EV_DEBUG, EV_PROFILE, PE_DID_STR, PE_END, PE_META, PE_NAME,
                                           PE_START)
from etscope.formats.flatbuf import Buffer
from etscope.formats.flatbuf_tables import TableSet

TEMPLATES_PER_COUNT = 4       # earlier runs of one event count a run is compared with
_MAX_SPAN_PER_EVENT = 1024    # bytes; ExecuTorch writes ~70 per profiling event
_MAX_SPAN_EXTRA = 1 << 16


class _Layout:
    """Where a parsed run's bytes lie, as int32 words from ``lo``: what must repeat, what may not."""

    __slots__ = ("run", "lo", "words", "must", "free", "partial", "start_words", "end_words", "start_events",
                 "end_events", "vt_words", "vt_offsets", "vt_inside")

    def __init__(self, run: int, lo: int, words: np.ndarray, must: np.ndarray, start_words: np.ndarray,
                 end_words: np.ndarray, start_events: np.ndarray, end_events: np.ndarray, vt_words: np.ndarray,
                 vt_offsets: np.ndarray, vt_inside: np.ndarray):
        self.run = run
        self.lo = lo                        # first byte read (absolute, 4-aligned)
        self.words = words                  # int32: the bytes of [lo, hi), the last word zero padded
        self.must = must                    # int32: all ones on the bits that must repeat, 0 elsewhere
        self.free = must != -1              # words not compared whole (those in ``partial`` apart)
        self.partial = np.flatnonzero(self.free & (must != 0))   # words compared on some bits: the last
        self.start_words = start_words      # per event with a start time: its word (the low half) from lo
        self.end_words = end_words
        self.start_events = start_events    # the events that have one
        self.end_events = end_events
        self.vt_words = vt_words            # the Event and ProfileEvent tables' words (their vtable offsets)
        self.vt_offsets = vt_offsets        # int64: the template's offsets (table - vtable)
        self.vt_inside = vt_inside          # bool: that vtable lies in [lo, hi) and was compared whole


def _extent(lo: int, hi: int, start: np.ndarray, stop: np.ndarray) -> tuple[int, int]:
    if start.size:
        lo, hi = min(lo, int(start.min())), max(hi, int(stop.max()))
    return lo, hi


def _layout(buf: Buffer, run: int, vec_start: int, count: int) -> _Layout | None:
    """The layout of a run made only of profiling events, or None (another kind of event, many
    vtables, unaligned tables, a range far larger than its events need, or anything the ordinary
    reader will report)."""
    try:
        events = TableSet(buf, buf.v_indirect(vec_start + 4 * np.arange(count, dtype=np.int64)))
        if events.vts is None:
            return None
        prof = events.table(EV_PROFILE)
        if not (prof > 0).all() or (events.field(EV_ALLOCATION) > 0).any() or (events.field(EV_DEBUG) > 0).any():
            return None
        ts = TableSet(buf, prof)
        if ts.vts is None:
            return None
        lo, hi = vec_start - 4, vec_start + 4 * count
        for tables in (events, ts):
            sizes = np.asarray(tables.t_size, dtype=np.int64)[tables.inv]
            lo, hi = _extent(lo, hi, tables.tables, tables.tables + sizes)
        for slot in (PE_NAME, PE_DID_STR, PE_META):
            start, length = ts.vector(slot, 1)
            has = start > 0
            lo, hi = _extent(lo, hi, start[has] - 4, start[has] + length[has])
        start_pos, end_pos = ts.field(PE_START), ts.field(PE_END)
    except FormatError:
        return None
    n_words = (hi - lo + 3) // 4          # int32 words, compared one by one
    if hi - lo > _MAX_SPAN_PER_EVENT * count + _MAX_SPAN_EXTRA or lo % 4 or lo + 4 * n_words > buf.size:
        return None
    tables = np.concatenate([events.tables, ts.tables])
    times = [pos[pos > 0] - lo for pos in (start_pos, end_pos)]
    if any((t % 4).any() for t in times) or ((tables - lo) % 4).any():
        return None
    words = np.zeros(n_words * 4, dtype=np.uint8)
    words[:hi - lo] = buf.u8[lo:hi]
    must = np.zeros(n_words, dtype=np.int32)
    must[:(hi - lo) // 4] = -1
    if (hi - lo) % 4:
        must[-1] = (1 << (8 * ((hi - lo) % 4))) - 1      # little endian: the low bytes are in range
    for t in times:
        must[t // 4] = must[t // 4 + 1] = 0
    # Vtables are often shared by all runs (flatcc writes each distinct vtable once), so a table's
    # offset to its vtable changes from run to run: it is checked on its own (it must lead to the
    # same vtable, or to the shifted copy of one inside the compared range).
    vt_words = (tables - lo) // 4
    must[vt_words] = 0
    vtables = np.concatenate([events.vts[events.inv], ts.vts[ts.inv]])
    vt_end = vtables + np.maximum(4, np.concatenate([np.asarray(events.vt_size, np.int64)[events.inv],
                                                     np.asarray(ts.vt_size, np.int64)[ts.inv]]))
    inside = (vtables >= lo) & (vt_end <= hi)
    # A copy may use its own copy of such a vtable only when every byte of it was compared (a
    # crafted file could lay a vtable over bytes that may differ, such as a time field). Counted
    # with a prefix sum of the words not compared whole: one pass, not one per distinct vtable
    # (a crafted run can give every table a vtable of its own).
    not_whole = np.concatenate([[0], np.cumsum(must != -1)])
    first_word = np.clip((vtables - lo) // 4, 0, n_words)
    end_word = np.clip((vt_end - lo + 3) // 4, 0, n_words)
    inside &= not_whole[end_word] == not_whole[first_word]
    return _Layout(run, lo, words.view("<i4"), must, times[0] // 4, times[1] // 4,
                   np.flatnonzero(start_pos > 0), np.flatnonzero(end_pos > 0),
                   vt_words, tables - vtables, inside)


def find_copies(buf: Buffer, vec_start: np.ndarray, counts: np.ndarray, firsts: np.ndarray,
                start_col: np.ndarray, end_col: np.ndarray, release=None) -> np.ndarray:
    """For each run, the earlier run it repeats (-1: to be parsed). The start/end times of the
    repeating runs are written into ``start_col``/``end_col`` as they are compared (their pages
    are read once); ``release(lo, hi)`` drops a compared range's pages.

    The first run of each event count becomes a template and every later run of that count is
    compared with it at once; runs that differ are tried against the next template (up to
    TEMPLATES_PER_COUNT per count, MAX_TEMPLATES in all), and are parsed when none fits."""
    template = np.full(len(counts), -1, dtype=np.int64)
    waiting = counts > 0
    made: dict[int, int] = {}
    budget = [_BUDGET_FACTOR * buf.size + (1 << 20)]
    for _ in range(MAX_TEMPLATES):
        pending = np.flatnonzero(waiting)
        if pending.size == 0:
            break
        r = int(pending[0])
        count = int(counts[r])
        waiting[r] = False
        same = pending[1:][counts[pending[1:]] == count]
        made[count] = made.get(count, 0) + 1
        if made[count] >= TEMPLATES_PER_COUNT:
            waiting[same] = False        # no template after this one: the rest are parsed
        lay = _layout(buf, r, int(vec_start[r]), count) if same.size else None
        if lay is None:
            continue
        shifts = vec_start[same] - vec_start[r]
        # The next few runs first: when none of them repeats this run (the first run after a
        # warm-up often differs), the others are left for a later template instead of compared.
        ok = _compare(buf, lay, same[:_PROBE], shifts[:_PROBE], firsts, (start_col, end_col), budget, release)
        if ok.any() and same.size > _PROBE:
            ok = np.concatenate([ok, _compare(buf, lay, same[_PROBE:], shifts[_PROBE:], firsts,
                                              (start_col, end_col), budget, release)])
        template[same[:ok.size][ok]] = r
        waiting[same[:ok.size][ok]] = False
    return template


MAX_TEMPLATES = 256
_PROBE = 16                     # runs compared before the rest
_BUDGET_FACTOR = 4              # bytes compared, over the whole file, per byte of the file
_BLOCK_BYTES = 4 << 20          # rows compared at a time (1 MB was 0.1-0.3 s slower on 10M events: per-block
                                # calls hold the GIL the other thread waits for)
_TWO_THREADS_BLOCKS = 2         # blocks from which the comparison is shared by two threads


def _compare(buf: Buffer, lay: _Layout, runs: np.ndarray, shifts: np.ndarray, firsts: np.ndarray,
             time_cols: tuple[np.ndarray, np.ndarray], budget: list[int], release=None) -> np.ndarray:
    """Which shifted copies of ``lay`` repeat it; their times go to ``time_cols`` (start, end).
    Each block's pages are dropped once compared (``release``)."""
    span = 4 * lay.words.size
    ok = (shifts % 4 == 0) & (lay.lo + shifts > 0) & (lay.lo + shifts + span <= buf.size)  # 0 means absent
    ok &= np.cumsum(ok) <= max(0, budget[0] // span)
    budget[0] -= span * int(ok.sum())
    idx = np.flatnonzero(ok)
    if idx.size == 0:
        return ok
    # The rows as one strided int32 view per stretch of evenly stepping shifts, cut in blocks.
    order = idx[np.argsort(shifts[idx], kind="stable")]
    sh = shifts[order]
    cuts = np.flatnonzero(np.diff(np.diff(sh))) + 2 if sh.size > 2 else np.zeros(0, np.int64)
    rows = max(1, _BLOCK_BYTES // span)
    blocks = []
    for a0, b0 in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [sh.size]])):
        step = int(sh[a0 + 1] - sh[a0]) if b0 - a0 > 1 else 0
        blocks += [(a, min(int(b0), a + rows), step) for a in range(int(a0), int(b0), rows)]
    base = buf.typed("i32")
    pairs = [np.stack([words, words + 1], axis=1).reshape(-1) for words in (lay.start_words, lay.end_words)]

    def compare(todo) -> None:
        scratch = np.empty(min(rows, sh.size) * (span // 4), dtype=bool)   # reused: no fresh pages per block
        for a, b, step in todo:
            # the rows as int32 words (4-aligned: lo and the shifts are), the words the layout indexes
            view = np.lib.stride_tricks.as_strided(base[(lay.lo + int(sh[a])) // 4:], (b - a, span // 4), (step, 4),
                                                   writeable=False)
            sel = order[a:b]
            equal = scratch[:view.size].reshape(view.shape)
            # each row's first word in ``base``: the words a row's fields are read from are taken
            # from the file's words directly (a take along the rows of ``view``, not contiguous,
            # would first copy the whole block; a fancy index of it is several times slower)
            first = ((lay.lo + sh[a:b]) // 4)[:, None]
            ok[sel] = same = _block_repeats(lay, view, sh[a:b], equal, np.take(base, first + lay.vt_words))
            starts = firsts[runs[sel[same]]]
            first = first[same]
            for col, words, events in zip(time_cols, pairs, (lay.start_events, lay.end_events)):
                if events.size:      # rows x (low, high) word of each event, read as little-endian uint64
                    _put_rows(col, starts, events, np.take(base, first + words).view("<u8"))
            if release is not None:
                release(lay.lo + int(sh[a]), lay.lo + int(sh[b - 1]) + span)

    in_two_threads(compare, blocks, len(blocks) >= _TWO_THREADS_BLOCKS)
    return ok


def _block_repeats(lay: _Layout, view: np.ndarray, shifts: np.ndarray, equal: np.ndarray,
                   vt_words: np.ndarray) -> np.ndarray:
    """Rows (shifted by ``shifts``) equal to the template on every bit that must repeat, whose
    tables lead to the template's vtables. ``view``: the rows as int32 words; ``equal``: bool
    scratch of its shape; ``vt_words``: each row's words at ``lay.vt_words``. Compared as int32
    words, equal or not, the free ones then set: a third fewer passes over the bytes than masking
    their differences."""
    np.equal(view, lay.words, out=equal)
    equal |= lay.free
    same = equal.all(axis=1)
    if lay.partial.size:
        part = view[:, lay.partial] ^ lay.words[lay.partial]
        same &= ~(part & lay.must[lay.partial]).any(axis=1)
    away = vt_words.astype(np.int64)
    away -= lay.vt_offsets                  # how much further from its table each vtable lies than in the template
    leads = away == shifts[:, None]         # the same vtable, further away
    leads |= (away == 0) & lay.vt_inside    # the shifted copy of the vtable
    return same & leads.all(axis=1)


def copy_events(columns: dict[str, np.ndarray], template: np.ndarray, firsts: np.ndarray,
                counts: np.ndarray, skip: tuple[str, ...] = ("start", "end"),
                block_events: int = 1 << 20) -> None:
    """Fill the events of each repeating run with its template's (all ``columns`` but ``skip``)."""
    copied = np.flatnonzero(template >= 0)
    if copied.size == 0:
        return
    order = copied[np.argsort(template[copied], kind="stable")]
    bounds = np.flatnonzero(np.diff(template[order])) + 1
    names = [name for name in columns if name not in skip]
    for group in np.split(order, bounds):
        t = int(template[group[0]])
        n = int(counts[t])
        step = max(1, block_events // n)
        src = slice(int(firsts[t]), int(firsts[t]) + n)
        copy = functools.partial(_copy_columns, columns, firsts[group], src, step)   # each thread: its columns
        in_two_threads(copy, names, n * len(group) >= TWO_THREADS_MIN)


def _copy_columns(columns: dict[str, np.ndarray], starts: np.ndarray, src: slice, step: int, names) -> None:
    """Each column of ``names``: its events ``src`` written at every position of ``starts``."""
    every = np.arange(src.stop - src.start, dtype=np.int64)
    for name in names:
        col = columns[name]
        for b in range(0, len(starts), step):
            _put_rows(col, starts[b:b + step], every, col[src][None, :])


def _put_rows(col: np.ndarray, starts: np.ndarray, events: np.ndarray, values: np.ndarray) -> None:
    """``col[starts[i] + events] = values[i]`` for every row i (``values`` may broadcast one row).
    Runs whose events follow each other in the column (the usual case: consecutive runs, every
    event) are written as one 2-D slice instead of through an index of every event."""
    n = events.size
    if n and int(events[-1]) == n - 1 and starts.size:
        gaps = np.diff(starts)
        if starts.size == 1 or (gaps == n).all():
            col[int(starts[0]):int(starts[0]) + n * starts.size].reshape(starts.size, n)[:] = values
            return
        if (gaps == -n).all():
            lo = int(starts[-1])
            col[lo:lo + n * starts.size].reshape(starts.size, n)[::-1] = values
            return
    col[(starts[:, None] + events).reshape(-1)] = np.broadcast_to(values, (starts.size, n)).reshape(-1)
