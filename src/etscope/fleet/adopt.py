"""``etscope collect --adopt``: the manifest of a dataset written before it existed (layout
``etscope.dataset/1``), built from that layout's commit markers ``_collected/<sha256>`` and the
parts found for them where the layout put them. Nothing is moved or deleted; a part behind a
link, unreadable, or without a commit marker is not adopted (one warning each, at most
``MAX_WARNINGS`` lines)."""
from __future__ import annotations

import os
import stat
from urllib.parse import unquote

from etscope.fleet.folder import Root, UnsafeEntry
from etscope.fleet.layout import (COLLECTED, HASH, MANIFEST, PARTITION_KEYS, REJECTS, TABLES, TMP, Partition,
                                  PartRef, entry, entry_bytes, part_path)
from etscope.paths import display

MAX_WARNINGS = 20


def _walk_table(r: Root, table: str, warn) -> list[tuple[str, str, dict]]:
    """(hash, path, partition) of the ``<sha256>.parquet`` files at the layout's depth of a table
    folder; links and other entries are reported, never followed."""
    depth = 0 if table == REJECTS else len(PARTITION_KEYS)
    out = []

    def visit(rel: str, level: int, partition: dict) -> None:
        for name in r.listdir(rel):
            path = f"{rel}/{name}"
            st = r.lstat(path)
            if st is None:
                continue
            if stat.S_ISLNK(st.st_mode):
                warn(f"{display(os.path.join(r.path, path))}: a symlink, not adopted (never followed)")
            elif level < depth and stat.S_ISDIR(st.st_mode):
                key, sep, value = name.partition("=")
                if sep and key == PARTITION_KEYS[level]:
                    visit(path, level + 1, {**partition, key: unquote(value, errors="surrogateescape")})
            elif level == depth and stat.S_ISREG(st.st_mode) and name.endswith(".parquet") \
                    and HASH.match(name[:-len(".parquet")]):
                out.append((name[:-len(".parquet")], path, partition))

    st = r.lstat(table)
    if st is None:
        return out
    if not stat.S_ISDIR(st.st_mode):
        warn(f"{display(os.path.join(r.path, table))}: not a folder (a symlink?), not adopted (never followed)")
        return out
    visit(table, 0, {})
    return out


def _footer(r: Root, path: str) -> tuple[int, int, str]:
    """(rows, bytes, order_key of its first row or '') of a part, from its footer and one column."""
    import pyarrow.parquet as pq

    with r.open_file(path) as f:
        size = os.fstat(f.fileno()).st_size
        pf = pq.ParquetFile(f)
        rows = pf.metadata.num_rows
        key = ""
        if "order_key" in pf.schema_arrow.names and rows and pf.metadata.num_row_groups:
            col = pf.read_row_group(0, columns=["order_key"]).column(0)
            key = str(col[0].as_py()) if len(col) and col[0].is_valid else ""
    return rows, size, key


def adopt_entries(r: Root, put) -> tuple[int, list[str]]:
    """Write an entry per committed file of a layout-1 dataset (``put(r, tmp, target, body)``
    writes one atomically). Returns (entries written, warning lines)."""
    warnings: list[str] = []
    hidden = [0]

    def warn(line: str) -> None:
        if len(warnings) < MAX_WARNINGS:
            warnings.append(line)
        else:
            hidden[0] += 1

    committed = {n for n in r.listdir(COLLECTED) if HASH.match(n)}
    found: dict[str, dict] = {}
    for table in TABLES + (REJECTS,):
        for h, path, partition in _walk_table(r, table, warn):
            if h not in committed:
                warn(f"{display(os.path.join(r.path, path))}: no commit marker (an interrupted collect), left in "
                     "place and not adopted")
                continue
            if part_path(table, h, Partition(**partition)) != path:
                warn(f"{display(os.path.join(r.path, path))}: its folder names cannot be written again "
                     "(a value cut by layout 1), not adopted")
                continue
            found.setdefault(h, {})[table] = (path, partition)
    written = 0
    for h, tables in sorted(found.items()):
        if (REJECTS in tables) != (len(tables) == 1 and REJECTS in tables):
            warn(f"{h}: parts both collected and rejected, not adopted")
            continue
        partitions = {tuple(sorted(p.items())) for t, (_, p) in tables.items() if t != REJECTS}
        if len(partitions) > 1:
            warn(f"{h}: parts in different partitions, not adopted")
            continue
        parts, order_key = {}, ""
        for table, (path, _) in tables.items():
            try:
                rows, size, key = _footer(r, path)
            except (UnsafeEntry, OSError, ValueError, TypeError) as e:     # pyarrow's errors are ValueErrors
                warn(f"{display(os.path.join(r.path, path))}: not a readable Parquet part ({str(e)[:200]}), not adopted")
                continue
            order_key = order_key or key
            parts[table] = PartRef(table, path, rows, size)
        if not parts:
            continue
        partition = Partition(**dict(next(iter(partitions)))) if partitions else Partition()
        doc = entry(h, "rejected" if REJECTS in parts else "added", partition, order_key, tuple(parts.values()))
        put(r, f"{TMP}/{h}.entry.tmp", f"{MANIFEST}/{h}.json", entry_bytes(doc))
        written += 1
    if hidden[0]:
        warnings.append(f"({hidden[0]} more warnings)")
    return written, warnings
