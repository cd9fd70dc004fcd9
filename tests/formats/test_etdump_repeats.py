"""Runs that repeat an earlier run are copied, not parsed (issue 20): the columns must be exactly
what parsing every run gives, on every fixture and on files changed anywhere in a copied run."""
from pathlib import Path

import numpy as np
import pytest

from etscope.errors import FormatError
from etscope.formats import etdump as E
from etscope.formats import etdump_repeats as R

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ALL = sorted(FIXTURES.glob("*/*.etdump"))


def _parse(data: bytes, copy: bool, monkeypatch):
    monkeypatch.setattr(E, "COPY_REPEATED_RUNS", copy)
    return E.parse_etdump(data, "x.etdump")


_TEXT = ("name", "delegate_id_str", "tensor_shape")


def _text(d, column: str) -> np.ndarray:
    codes = d.events[column]
    return np.array(d.strings + [None], dtype=object)[np.where(codes >= 0, codes, -1)]


def _same(a, b, codes: bool = True) -> None:
    """The same file read twice. String codes number the distinct strings in the order the reader
    met them, which may differ when different runs were parsed; ``codes=False`` compares texts."""
    if codes:
        assert a.strings == b.strings
    else:
        assert sorted(a.strings) == sorted(b.strings)
    assert [vars(r) for r in a.runs] == [vars(r) for r in b.runs]
    assert a.events.keys() == b.events.keys()
    for k in a.events:
        assert a.events[k].dtype == b.events[k].dtype, k
        if codes or k not in _TEXT:
            assert np.array_equal(a.events[k], b.events[k]), k
        else:
            assert (_text(a, k) == _text(b, k)).all(), k
    assert (a.tensors is None) == (b.tensors is None)
    if a.tensors is not None:
        for k in a.tensors.columns:
            assert np.array_equal(a.tensors.columns[k], b.tensors.columns[k]), k


def _read_alike(data: bytes, monkeypatch, where: int | None = None) -> None:
    """``data`` read with and without copying: the same error, or the same events (string codes
    may be numbered differently when other runs were parsed)."""
    outcome = []
    for copy in (False, True):
        try:
            outcome.append(_parse(data, copy, monkeypatch))
        except FormatError as err:
            outcome.append(str(err))
    if isinstance(outcome[0], str) or isinstance(outcome[1], str):
        assert outcome[0] == outcome[1], where
    else:
        _same(*outcome, codes=False)


def _copied(data: bytes, monkeypatch) -> np.ndarray:
    found = {}
    real = R.find_copies

    def spy(*args, **kw):
        found["template"] = out = real(*args, **kw)
        return out

    monkeypatch.setattr(R, "find_copies", spy)
    _parse(data, True, monkeypatch)
    return found["template"]


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_copying_gives_what_parsing_gives(path, monkeypatch):
    data = path.read_bytes()
    _same(_parse(data, False, monkeypatch), _parse(data, True, monkeypatch))


@pytest.mark.parametrize("name, at_least", [("real/gen_llama.etdump", 30), ("real/llama_nodebug.etdump", 22),
                                            ("qnn_etdump/synthetic_qnn_llm.etdump", 19),
                                            ("diff/diff_same_00.etdump", 28)])
def test_repeating_runs_are_copied(name, at_least, monkeypatch):
    template = _copied((FIXTURES / name).read_bytes(), monkeypatch)
    assert int((template >= 0).sum()) >= at_least
    assert (template[template >= 0] < np.flatnonzero(template >= 0)).all()   # an earlier run


def _names(d) -> np.ndarray:
    return _text(d, "name")


def test_a_changed_name_in_a_repeating_run_is_read(monkeypatch):
    data = (FIXTURES / "real/llama_nodebug.etdump").read_bytes()
    before = _parse(data, False, monkeypatch)
    template = _copied(data, monkeypatch)
    copied = set(np.flatnonzero(template >= 0).tolist())
    run_of = np.repeat(np.arange(len(before.runs)), [r.event_count for r in before.runs])
    text = _names(before)[before.runs[max(copied)].first_event + 3].encode()
    pos = data.find(text)
    while pos >= 0:                 # each event writes its own copy: find one in a repeating run
        trial = bytearray(data)
        trial[pos] ^= 0x20          # another letter case, same length
        parsed = _parse(bytes(trial), False, monkeypatch)
        changed = np.flatnonzero(_names(parsed) != _names(before))
        if changed.size == 1 and int(run_of[changed[0]]) in copied:
            break
        pos = data.find(text, pos + 1)
    else:
        pytest.fail("no copy of the name lies in a repeating run")
    assert _names(parsed)[changed[0]] != text.decode()
    _same(parsed, _parse(bytes(trial), True, monkeypatch), codes=False)


def test_single_byte_changes_anywhere_read_as_parsing_reads_them(monkeypatch):
    data = (FIXTURES / "qnn_etdump/synthetic_qnn_llm.etdump").read_bytes()
    rng = np.random.default_rng(20)
    events_from = len(data) // 20
    for pos in rng.integers(events_from, len(data), 150):
        trial = bytearray(data)
        trial[int(pos)] ^= int(rng.integers(1, 256))
        _read_alike(bytes(trial), monkeypatch, int(pos))


def test_no_comparison_budget_means_no_copy(monkeypatch):
    data = (FIXTURES / "real/gen_llama.etdump").read_bytes()
    monkeypatch.setattr(R, "_BUDGET_FACTOR", 0)
    monkeypatch.setattr(R, "_BLOCK_BYTES", 1)
    parsed, copied = _parse(data, False, monkeypatch), _parse(data, True, monkeypatch)
    _same(parsed, copied)
    template = _copied(data, monkeypatch)
    # 1 MiB of comparisons is left without the factor: a few runs at most
    assert int((template >= 0).sum()) <= (1 << 20) // 1000


def test_a_table_led_to_another_vtable_is_read_as_parsing_reads_it(monkeypatch):
    """The vtable offsets of a repeating run's tables may differ from the template's (shared
    vtables): each must still lead to the same vtable. Point some at other places: the copy path
    must give what parsing gives (another layout, or the same error)."""
    from etscope.formats.flatbuf_tables import TableSet
    from etscope.formats.flatbuf import Buffer, root_table

    data = (FIXTURES / "qnn_etdump/synthetic_qnn_llm.etdump").read_bytes()
    template = _copied(data, monkeypatch)
    outer = Buffer(data)
    buf, root = root_table(outer, E.IDENTIFIER)
    base = len(data) - buf.size                       # the size prefix, if any
    runs, ev_start, counts = E._read_runs(buf, buf.tables(root, 1))
    run = int(np.flatnonzero(template >= 0)[len(np.flatnonzero(template >= 0)) // 2])
    events = TableSet(buf, buf.v_indirect(ev_start[run] + 4 * np.arange(counts[run])))
    tables = np.concatenate([events.tables, events.table(0)])
    rng = np.random.default_rng(11)
    for pos in rng.choice(tables, 40, replace=False):
        for delta in (-8, -4, 4, 8, 12):
            trial = bytearray(data)
            at = base + int(pos)
            soff = int.from_bytes(trial[at:at + 4], "little", signed=True) + delta
            trial[at:at + 4] = soff.to_bytes(4, "little", signed=True)
            _read_alike(bytes(trial), monkeypatch)


def test_changes_in_the_last_partly_compared_word_read_as_parsing_reads_them(monkeypatch):
    """A run's bytes rarely end on a 4-byte boundary: its last int32 word is compared on its low
    bytes only. Every byte of that word and of the next one, changed in each copied run, is read
    as parsing reads it (a change inside the run's bytes stops the copy; one past them does not)."""
    layouts, starts = [], {}
    real_layout, real_find = R._layout, R.find_copies

    def layout_spy(buf, run, vec_start, count):
        lay = real_layout(buf, run, vec_start, count)
        layouts.append((lay, vec_start))
        return lay

    def find_spy(buf, vec_start, *args, **kw):
        starts["vec"] = vec_start.copy()
        return real_find(buf, vec_start, *args, **kw)

    tried = 0
    for path in ALL:
        data = path.read_bytes()
        layouts.clear()
        with monkeypatch.context() as m:
            m.setattr(R, "_layout", layout_spy)
            m.setattr(R, "find_copies", find_spy)
            template = _copied(data, m)
        partial = [(lay, v, np.flatnonzero(template == lay.run)[:2]) for lay, v in layouts
                   if lay is not None and lay.must[-1] not in (0, -1)]
        partial = [p for p in partial if p[2].size]
        if not partial:
            continue
        lay, vec, copies = partial[0]
        end = lay.lo + 4 * (lay.must.size - 1)                        # the partly compared word
        for r in copies:
            shift = int(starts["vec"][r]) - vec
            for pos in range(end + shift, end + shift + 8):
                trial = bytearray(data)
                trial[pos] ^= 0x5A
                _read_alike(bytes(trial), monkeypatch, pos)
                tried += 1
        if tried >= 32:
            break
    assert tried >= 16


@pytest.mark.parametrize("name", ["real/gen_llama.etdump", "qnn_etdump/synthetic_qnn_llm.etdump"])
def test_comparing_on_two_threads_reads_what_parsing_reads(name, monkeypatch):
    """Blocks of a few runs shared by two threads, the columns allocated and the copies written
    on two threads (as on a big file): the same columns as parsing every run, and as many runs
    copied as one thread copies."""
    import etscope.arrays as A

    data = (FIXTURES / name).read_bytes()
    serial = _copied(data, monkeypatch)
    monkeypatch.setattr(R, "_BLOCK_BYTES", 1)          # one run per block
    monkeypatch.setattr(R, "_TWO_THREADS_BLOCKS", 2)
    monkeypatch.setattr(R, "TWO_THREADS_MIN", 1)       # the copies of the other columns too
    monkeypatch.setattr(E, "TWO_THREADS_MIN", 1)       # and the columns' allocation
    monkeypatch.setattr(A, "cores", lambda: 2)
    threads = []
    real_thread = __import__("threading").Thread

    def counted(*args, **kw):
        threads.append(kw.get("name"))
        return real_thread(*args, **kw)

    monkeypatch.setattr("threading.Thread", counted)
    assert np.array_equal(_copied(data, monkeypatch), serial)
    assert threads                                      # the second thread did run
    _same(_parse(data, False, monkeypatch), _parse(data, True, monkeypatch))
