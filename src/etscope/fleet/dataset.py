"""The dataset on disk (layout in ``fleet.layout``): a folder etscope owns, written by
``etscope collect`` only, read back through its manifest (``fleet.reading``).

Writing one file is a commit: its parts are written under ``_tmp/``, its manifest entry is
written as ``<sha256>.pending`` (the journal), the parts are renamed into their partitions, then
the entry is renamed to ``<sha256>.json`` (the commit) and the journal removed. A collect
interrupted between renames leaves a journal: the next collect deletes exactly the parts it
names, nothing else (``recover``). Every path is walked without following links
(``fleet.folder``), so a symlinked table or partition folder is refused, never written through.
One collect at a time per dataset (``_etscope.lock``).
"""
from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator

import pyarrow as pa

from etscope.errors import FormatError
from etscope.fleet.folder import Root, UnsafeEntry
from etscope.fleet.layout import (load_json_bytes, ALL_TABLES, ENTRY, HASH, LAYOUT, LOCK, MANIFEST, MARKER,
                                  MAX_ENTRY_BYTES, MAX_MARKER_BYTES, OLD_LAYOUTS, PARTITION_KEYS, PENDING,
                                  REJECTS, TABLE_NAME, TABLES, TMP, TMP_NAME, UNKNOWN, EntryProblem, ManifestEntry,
                                  Partition, PartRef, entry, entry_bytes, marker_layout, parse_entry, partition_dir,
                                  partition_value, part_path)
from etscope.paths import display

__all__ = ["Dataset", "LAYOUT", "MARKER", "PARTITION_KEYS", "TABLES", "REJECTS", "UNKNOWN", "partition_value",
           "partition_dir", "trend_inputs", "dataset_tables", "query_dataset"]




# Parquet options per table: a summary part is one long JSON string, which a dictionary page and
# min/max statistics would each store again (2 KB of JSON took 11 KB on disk, 2 KB without them).
PART_OPTIONS = {"summary": {"use_dictionary": False, "write_statistics": False}}


class Dataset:
    """A dataset folder (created on first collect)."""

    def __init__(self, root):
        self.root = os.path.abspath(os.fspath(root))

    def open(self) -> Root:
        return Root(self.root)

    # ---- the marker ----
    def layout(self) -> str | None:
        """The marker's layout; None when the folder holds no marker (a link or a special file
        named like the marker is refused)."""
        try:
            os.lstat(os.path.join(self.root, MARKER))
        except FileNotFoundError:
            return None
        except OSError as e:
            raise FormatError(f"{display(self.root)}: cannot read the dataset ({e.strerror or e})") from None
        with self.open() as r:
            data = r.read_bytes(MARKER, MAX_MARKER_BYTES)
        return marker_layout(load_json_bytes(data, os.path.join(self.root, MARKER), "the dataset marker"))

    def is_dataset(self) -> bool:
        return os.path.lexists(os.path.join(self.root, MARKER))

    def require(self) -> None:
        """A dataset of this layout, else one FormatError line (an old one: the --adopt instruction)."""
        if not os.path.isdir(self.root) or not self.is_dataset():
            raise FormatError(f"{display(self.root)}: not an etscope dataset (no {MARKER}; make one with etscope collect)")
        layout = self.layout()
        if layout in OLD_LAYOUTS:
            raise FormatError(f"{display(self.root)}: written by an older etscope (layout {layout}, without a manifest "
                              f"of its parts); adopt it first: etscope collect --adopt --to {display(self.root)}")
        if layout != LAYOUT:
            raise FormatError(f"{display(self.root)}: unknown dataset layout {display(str(layout)[:60])!r} "
                              f"(this etscope reads {LAYOUT})")

    def create(self) -> None:
        """Make the folder a dataset. The folder may be made, never its parents; an existing
        folder that is not empty is refused (a typo cannot scatter parts into an unrelated
        folder); a folder inside another dataset is refused."""
        from etscope.paths import dataset_holding

        if self.is_dataset():
            return
        outer = dataset_holding(self.root)
        if outer is not None:
            raise FormatError(f"{display(self.root)}: --to is inside the etscope dataset {display(outer)}; "
                              "give a folder outside it")
        if os.path.lexists(self.root) and not os.path.isdir(self.root):
            raise FormatError(f"{display(self.root)}: --to must be a folder (a dataset), not a file")
        if os.path.isdir(self.root) and os.listdir(self.root):
            raise FormatError(f"{display(self.root)}: folder is not empty and is not an etscope dataset "
                              f"(no {MARKER}); give a new or empty folder")
        try:
            if not os.path.isdir(self.root):
                os.mkdir(self.root)         # never its parents (FileNotFoundError below)
        except FileNotFoundError:
            raise FormatError(f"{display(self.root)}: its folder does not exist (folders are not created)") from None
        except OSError as e:
            raise FormatError(f"{display(self.root)}: cannot create the dataset ({e.strerror or e})") from None
        with self.open() as r:
            for d in (MANIFEST, TMP):
                os.close(r.open_dir(d, create=True))
            self._write_marker(r)

    def _write_marker(self, r: Root) -> None:
        doc = {"layout": LAYOUT, "partitions": list(PARTITION_KEYS), "tables": list(ALL_TABLES), "manifest": MANIFEST}
        tmp = f"{TMP}/{'0' * 64}.entry.tmp"
        r.unlink_file(tmp)
        r.write_new(tmp, (json.dumps(doc) + "\n").encode())
        r.replace(tmp, MARKER)

    def check_folders(self) -> None:
        """Refuse a dataset whose table, manifest or staging folder is a symlink or not a folder
        (etscope would otherwise write or delete through it)."""
        with self.open() as r:
            for d in sorted(set(ALL_TABLES + (MANIFEST, TMP)) | {n for n in r.listdir("") if TABLE_NAME.match(n)}):
                st = r.lstat(d)
                if st is not None and not stat.S_ISDIR(st.st_mode):
                    kind = "a symlink" if stat.S_ISLNK(st.st_mode) else "not a folder"
                    raise FormatError(f"{display(os.path.join(self.root, d))}: is {kind}; etscope never follows links "
                                      "inside a dataset (nothing was written; make it a folder of the dataset)")

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """One collect at a time: an exclusive lock file (never through a link), removed at the end."""
        with self.open() as r:
            try:
                with r.create_file(LOCK) as f:
                    f.write(str(os.getpid()).encode())
            except UnsafeEntry as e:
                if r.lstat(LOCK) is None:
                    raise
                raise FormatError(f"{display(os.path.join(self.root, LOCK))}: another collect is writing this "
                                  "dataset (delete the file if none is)") from None
            try:
                yield
            finally:
                r.unlink_file(LOCK)

    # ---- the index ----
    def is_collected(self, file_hash: str) -> bool:
        with self.open() as r:
            return r.lstat(f"{MANIFEST}/{file_hash}.json") is not None

    def entry(self, file_hash: str) -> ManifestEntry | None:
        """The checked manifest entry of a collected file; None when there is none or it is bad."""
        if not HASH.match(file_hash):
            return None
        with self.open() as r:
            rel = f"{MANIFEST}/{file_hash}.json"
            if r.lstat(rel) is None:
                return None
            try:
                doc = load_json_bytes(r.read_bytes(rel, MAX_ENTRY_BYTES), os.path.join(self.root, rel), "manifest entry")
            except FormatError:
                return None
        try:
            return parse_entry(doc, file_hash)
        except EntryProblem:
            return None

    def add_build_label(self, file_hash: str, build: str) -> tuple[str, ...]:
        """Record ``build`` as another build label of a collected file (``also_builds`` of its
        entry; the parts stay as they are). Returns the file's labels after. The entry is replaced
        atomically; only one collect writes a dataset at a time (``lock``) and labels are added by
        its parent process only."""
        from etscope.fleet.layout import MAX_ALSO_BUILDS, MAX_LABEL_CHARS

        e = self.entry(file_hash)
        if e is None or e.status != "added":
            raise FormatError(f"{display(self.root)}: no collected file {file_hash[:12]}… to label")
        if not 0 < len(build) <= MAX_LABEL_CHARS:
            raise FormatError(f"build label of {len(build)} characters (1 to {MAX_LABEL_CHARS})")
        if build in e.labels:
            return e.labels
        also = e.also_builds + (build,)
        if len(also) > MAX_ALSO_BUILDS:
            raise FormatError(f"{display(self.root)}: file {file_hash[:12]}… has {MAX_ALSO_BUILDS} build labels already")
        new = entry(file_hash, e.status, e.partition, e.order_key, e.parts, also)
        with self.open() as r:
            self._put(r, f"{TMP}/{file_hash}.entry.tmp", f"{MANIFEST}/{file_hash}.json", entry_bytes(new))
        return new.labels

    def claim(self, file_hash: str) -> bool:
        """Take the file for this collect (False: another worker has the same content in hand).
        Claims live in ``_tmp``, cleared of etscope's names before every collect."""
        with self.open() as r:
            try:
                r.write_new(f"{TMP}/{file_hash}.claim", b"")
                return True
            except UnsafeEntry:
                return False

    def collected(self) -> set[str]:
        with self.open() as r:
            return {m.group(1) for n in r.listdir(MANIFEST) if (m := ENTRY.match(n))}

    def parts(self, table: str) -> list[str]:
        """The committed parts of a table (absolute paths, sorted), from the manifest."""
        from etscope.fleet.reading import entries

        with self.open() as r:
            found = entries(self, r, lambda line: None)
        return sorted(os.path.join(self.root, p.path) for p in (e.part(table) for e in found) if p is not None)

    def recover(self) -> int:
        """Undo interrupted commits: for each journal without its entry, delete the parts the
        journal names (regular files only, never through a link); then clear ``_tmp`` of the
        names etscope makes. Returns how many parts were removed."""
        removed = 0
        with self.open() as r:
            names = r.listdir(MANIFEST)
            done = {m.group(1) for n in names if (m := ENTRY.match(n))}
            for n in names:
                m = PENDING.match(n)
                if not m:
                    continue
                if m.group(1) not in done:
                    for p in self._journal_parts(r, f"{MANIFEST}/{n}", m.group(1)):
                        removed += r.unlink_file(p)
                r.unlink_file(f"{MANIFEST}/{n}")
            for n in r.listdir(TMP):
                if TMP_NAME.match(n):
                    r.unlink_file(f"{TMP}/{n}")
        return removed

    @staticmethod
    def _journal_parts(r: Root, rel: str, file_hash: str) -> list[str]:
        try:
            doc = load_json_bytes(r.read_bytes(rel, MAX_ENTRY_BYTES), rel, "a journal")
        except FormatError:
            return []
        try:
            return [p.path for p in parse_entry(doc, file_hash).parts]
        except EntryProblem:
            return []          # not a journal etscope wrote: delete nothing it names

    # ---- writing one file's tables: the commit ----
    def commit(self, file_hash: str, partition: Partition, order_key: str, tables: dict[str, pa.Table],
               reject: bool = False) -> None:
        """Write ``tables`` ({table name: Arrow table}) of one collected file into their
        partitions (``rejects`` for a reject, unpartitioned: its entry names no partition), then
        its manifest entry."""
        import pyarrow.parquet as pq

        if not HASH.match(file_hash):
            raise ValueError(f"not a sha256 hex digest: {file_hash!r}")
        if reject:
            partition, order_key = Partition(), ""
        with self.open() as r:
            staged, parts = [], {}
            try:
                for name, table in tables.items():
                    tmp = f"{TMP}/{file_hash}.{name}.parquet.tmp"
                    r.unlink_file(tmp)
                    with r.create_file(tmp) as f:
                        pq.write_table(table, f, compression="zstd", **PART_OPTIONS.get(name, {}))
                        f.flush()
                        size = os.fstat(f.fileno()).st_size
                    staged.append((name, tmp))
                    parts[name] = PartRef(name, part_path(name, file_hash, partition), table.num_rows, size)
                doc = entry(file_hash, "rejected" if reject else "added", partition, order_key, tuple(parts.values()))
                body = entry_bytes(doc)
                self._put(r, f"{TMP}/{file_hash}.pending.tmp", f"{MANIFEST}/{file_hash}.pending", body)
                for name, tmp in sorted(staged, key=lambda s: s[0] == "files"):     # the index entry last
                    r.replace(tmp, parts[name].path, make_folder=True)
                self._put(r, f"{TMP}/{file_hash}.entry.tmp", f"{MANIFEST}/{file_hash}.json", body)
                r.unlink_file(f"{MANIFEST}/{file_hash}.pending")
            finally:
                for _, tmp in staged:
                    r.unlink_file(tmp)

    @staticmethod
    def _put(r: Root, tmp: str, target: str, body: bytes) -> None:
        r.unlink_file(tmp)
        r.write_new(tmp, body)
        r.replace(tmp, target)

    # ---- adopting a layout-1 dataset ----
    def adopt(self) -> tuple[int, list[str]]:
        """Write the manifest of a layout-1 dataset from its commit markers (``_collected/<sha256>``)
        and the parts found for them in the layout's places (no link followed); then mark the
        folder layout 2. Parts without a marker, or unreadable, are left where they are and not
        adopted. Returns (entries written, warnings)."""
        from etscope.fleet.adopt import adopt_entries

        with self.open() as r:
            for d in (MANIFEST, TMP):
                os.close(r.open_dir(d, create=True))
            n, warnings = adopt_entries(r, self._put)
            self._write_marker(r)
        return n, warnings

    def prepare(self, adopt: bool = False) -> list[str]:
        """Before a collect: create the dataset, or check its layout (adopting a layout-1 one
        when asked). Returns warnings."""
        if not self.is_dataset():
            if adopt:
                raise FormatError(f"{display(self.root)}: --adopt needs an existing etscope dataset")
            self.create()
            return []
        layout = self.layout()
        if layout in OLD_LAYOUTS and adopt:
            with self.lock():
                n, warnings = self.adopt()
            return [f"{display(self.root)}: adopted {n} collected file(s) into layout {LAYOUT}"] + warnings
        self.require()
        return [f"{display(self.root)}: already layout {LAYOUT}; nothing to adopt"] if adopt else []


def trend_inputs(ds: Dataset, model: str | None = None, soc: str | None = None, warn=None):
    """(sessions, level-0 ops columns) for ``analysis.diff.trend.trend_of_sessions`` (see ``fleet.reading``)."""
    from etscope.fleet.reading import trend_inputs as read

    return read(ds, model, soc, warn)


def dataset_tables(ds: Dataset, warn=None) -> dict[str, pa.Table]:
    """{table: Arrow table} of the manifest's good parts (see ``fleet.reading``)."""
    from etscope.fleet.reading import dataset_tables as read

    return read(ds, warn)


def query_dataset(ds: Dataset, sql: str, warn=None) -> pa.Table:
    """``etscope sql --dataset``: the query over tables etscope registers from the manifest's
    good parts (``sql.engine.query``: the query reaches no path); an Arrow table."""
    from etscope.sql.engine import query

    return query(dataset_tables(ds, warn), sql)

