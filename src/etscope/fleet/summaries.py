"""Each collected file's summary, stored in the dataset (table ``summary``; layout in ``fleet.layout``).

Writing: :func:`summary_table` is one row holding the document ``etscope summary --json`` prints for
the file (``api.summary_document`` of the same analyses collect already made: one source per
number), as compact JSON text in a Parquet part (zstd: ~10x smaller on disk). A document longer than
``MAX_SUMMARY_CHARS`` is not stored; the row then says why (``summary_note``).

Reading: :func:`stored_summary` reads one file's part through its manifest entry (checked like
every part: bytes, rows, footer) and never trusts what it holds: one row, a string of at most
``MAX_SUMMARY_CHARS``, JSON (bounded nesting and numbers), and the shape every reader of a summary
relies on (``analysis.views.stored_summary.shape_problem``); anything else is a
:class:`SummaryProblem` naming the part and what is wrong (one line). A file collected before
summaries were stored has no such part: that is said, not an error.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import pyarrow as pa

from etscope.analysis.views.stored_summary import BuildSummary, digest, shape_problem
from etscope.errors import FormatError
from etscope.fleet.layout import ManifestEntry, load_json_bytes
from etscope.paths import display

TABLE = "summary"
MAX_SUMMARY_CHARS = 16 << 20      # the 10M-event LLM file's document is 0.45 MB
PER_SERIES = 100                  # summaries embedded per series in the trend page (its latest builds)
NOT_STORED = ("collected before etscope stored each file's summary (a dataset of layout etscope.dataset/2 "
              "from before the summary table); collect the file again into a new dataset, or run etscope "
              "summary on it, to see it")


class SummaryProblem(FormatError):
    """A stored summary that cannot be shown (one line: the part and what is wrong)."""


# ---- writing ---------------------------------------------------------------------------------------
def summary_table(r) -> pa.Table:
    """One row: the file's ``summary --json`` document as compact JSON (``summary_json``), or null
    with the reason (``summary_note``) when it is too long or could not be made."""
    from etscope import api
    from etscope.render.json import dumps

    try:
        text = dumps(api.summary_document(r), indent=None)
        note = None
    except FormatError as e:      # the file's tables stand without it: said, not a reject
        text, note = None, f"summary not made: {e}"
    if text is not None and len(text) > MAX_SUMMARY_CHARS:
        text, note = None, (f"summary not stored: {len(text):,} characters of JSON, more than the "
                            f"{MAX_SUMMARY_CHARS:,} a dataset stores; etscope summary FILE --json shows it")
    return pa.table({"summary_json": pa.array([text], pa.string()), "summary_note": pa.array([note], pa.string())})


# ---- reading ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Collected:
    """A checked manifest entry (``fleet.layout.parse_entry``) as the fields this module reads."""
    file_hash: str
    status: str
    order_key: str
    model: str
    soc: str
    build: str
    labels: tuple[str, ...]          # its build first, then its other labels (``also_builds``)
    tables: tuple[str, ...]
    entry: ManifestEntry             # the entry itself, for its parts

    @classmethod
    def of(cls, e: ManifestEntry) -> "Collected":
        p = e.partition
        return cls(e.file_hash, e.status, e.order_key, p.model or "", p.soc or "", p.build or "", e.labels,
                   e.tables, e)


def stored_summary(ds, r, c: Collected) -> dict | None:
    """The checked summary document of a collected file; None when the file was collected before
    summaries were stored (``NOT_STORED`` says so). Raises SummaryProblem."""
    from etscope.fleet.reading import read_part

    part = c.entry.part(TABLE)
    if part is None:
        return None
    shown = display(os.path.join(ds.root, part.path))
    said: list[str] = []
    t = read_part(ds, r, part, said.append, {"summary_json": "str"}, optional={"summary_note": "str"})
    if t is None:
        raise SummaryProblem(said[0] if said else f"{shown}: stored summary not readable")
    if t.num_rows != 1:
        raise SummaryProblem(f"stored summary part holds {t.num_rows} rows, expected 1", shown)
    text = t.column("summary_json")[0].as_py()
    if text is None:
        note = t.column("summary_note")[0].as_py() if "summary_note" in t.column_names else None
        raise SummaryProblem(str(note)[:300] if isinstance(note, str) and note else "summary not stored", shown)
    if len(text) > MAX_SUMMARY_CHARS:
        raise SummaryProblem(f"stored summary of {len(text):,} characters (at most {MAX_SUMMARY_CHARS:,})", shown)
    try:
        data = load_json_bytes(text.encode("utf-8", "surrogatepass"), shown, "stored summary")
    except UnicodeEncodeError:
        raise SummaryProblem("stored summary is not valid text", shown) from None
    except FormatError as e:
        raise SummaryProblem(e.what, shown) from None
    bad = shape_problem(data)
    if bad:
        raise SummaryProblem(f"stored summary has the wrong shape: {bad}", shown)
    return data


def collected(ds, r, warn) -> list[Collected]:
    """The dataset's good manifest entries (``fleet.reading.entries``), typed."""
    from etscope.fleet.reading import entries

    return [Collected.of(d) for d in entries(ds, r, warn)]


def series_files(sessions) -> dict[tuple[str, str, str], dict[str, list]]:
    """{(model, soc, phase): {build: its sessions, first by order key then file}} of a trend's
    sessions (``fleet.reading.trend_inputs``): the build's first file is the one its summary is of
    (the file the trend compares placement and facts with)."""
    out: dict = {}
    for x in sorted(sessions, key=lambda x: (x.order_key, x.file)):
        out.setdefault((x.model, x.soc, x.phase), {}).setdefault(x.build, []).append(x)
    return out


def build_summaries(ds, sessions, trend, per_series: int = PER_SERIES, warn=None) -> dict:
    """{(model, soc, phase, build): BuildSummary} for the latest ``per_series`` builds of each series
    of ``trend`` (the others get none: the page says how many and how to see one). A summary that
    cannot be read is one warning and a note on its build, never the end of the page."""
    from etscope.analysis.diff.trend import ALL_PHASES
    from etscope.fleet.reading import Warnings

    ds.require()
    w = Warnings(warn)
    files = series_files(sessions)
    wanted: dict = {}
    for s in trend.series:
        by_build = files.get((s.model, s.soc, s.phase), {})
        for p in s.builds[-per_series:] if per_series > 0 else []:
            xs = by_build.get(p.build)
            if xs:
                wanted[(s.model, s.soc, s.phase, p.build)] = (xs[0].file, len(xs))
    by_file: dict[str, list] = {}
    for key, (file_hash, _) in wanted.items():
        by_file.setdefault(file_hash, []).append(key)
    out: dict = {}
    with ds.open() as r:
        # a bad entry was said when the trend read the dataset (``trend_inputs``): not again
        by_hash = {c.file_hash: c for c in collected(ds, r, lambda line: None)} if wanted else {}
        for file_hash, keys in by_file.items():      # one stored document in memory at a time
            c = by_hash.get(file_hash)
            try:
                got = NOT_STORED if c is None else stored_summary(ds, r, c) or NOT_STORED
            except SummaryProblem as e:
                w(f"{e}; its build links to no summary")
                got = f"stored summary not shown: {e.what}"
            for key in keys:
                n = wanted[key][1]
                out[key] = BuildSummary(file_hash, n, note=got) if isinstance(got, str) else \
                    BuildSummary(file_hash, n, digest(got, None if key[2] == ALL_PHASES else key[2]))
            del got
    w.close()
    return out


def summaries_of_build(ds, build: str, model: str | None = None,
                       soc: str | None = None) -> list[tuple[Collected, dict | None]]:
    """[(collected file, checked summary document or None: collected before summaries were stored)]
    of the files labelled ``build`` (their own build or an ``also_builds`` label), or whose content
    hash starts with ``build`` (at least 8 hex digits), in order key order. Raises FormatError when
    none matches, SummaryProblem when one cannot be read."""
    from etscope.fleet.reading import Warnings

    ds.require()
    w = Warnings()
    with ds.open() as r:
        cs = [c for c in collected(ds, r, w) if c.status == "added"
              and (model is None or c.model == model) and (soc is None or c.soc == soc)]
        by_hash = len(build) >= 8 and all(ch in "0123456789abcdef" for ch in build)
        hits = [c for c in cs if build in c.labels or (by_hash and c.file_hash.startswith(build))]
        if not hits:
            builds = sorted({b for c in cs for b in c.labels})
            listed = ", ".join(builds[:10]) + (f" and {len(builds) - 10} more" if len(builds) > 10 else "")
            raise FormatError(f"no collected file of build {display(build)[:200]!r}"
                              + (f" here (builds: {listed})" if listed else ""), display(ds.root))
        hits.sort(key=lambda c: (c.order_key, c.file_hash))
        out = [(c, stored_summary(ds, r, c)) for c in hits]
    w.close()
    return out
