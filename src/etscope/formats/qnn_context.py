"""What a QNN context binary (a QnnBackend delegate's processed blob in a ``.pte``) says of the QNN
SDK that built it: the build id QNN writes into the binary, ``v2.37.0.250724175447_124859``
(version, build timestamp, build number; seen in the real stories260k hybrid program). Bytes are
searched in place (memory-mapped), each blob once, linear in its size; a blob without the id
(etscope's synthetic placeholders, other SDKs' layouts) gives None."""
from __future__ import annotations

import os
import re

from etscope.formats.backends import QNN_BACKEND_ID
from etscope.formats.pte import PteProgram, mapped_pte, parse_pte

_BUILD_ID = re.compile(rb"v(\d{1,3}\.\d{1,3}\.\d{1,3})\.(\d{6,14})_(\d{1,10})")


def qnn_sdk_builds(path: str | os.PathLike, program: PteProgram | None = None) -> dict[tuple[str, int], str | None]:
    """Per QnnBackend delegate ((method, delegate index)), the QNN SDK build id its context binary
    records (``2.37.0.250724175447_124859``), or None when the blob holds none."""
    out: dict[tuple[str, int], str | None] = {}
    with mapped_pte(path) as (mm, name):
        if program is None:
            program = parse_pte(mm, name)
        seen: dict[tuple[int, int], str | None] = {}
        budget = 4 * len(mm) + (1 << 20)      # bytes searched: distinct overlapping blobs stay linear
        for m in program.methods:
            for d in m.delegates:
                if d.backend_id != QNN_BACKEND_ID:
                    continue
                end = d.blob_offset + d.blob_size
                if not (0 <= d.blob_offset <= end <= len(mm)):
                    out[(m.name, d.index)] = None
                    continue
                key = (d.blob_offset, end)
                if key not in seen:
                    budget -= d.blob_size
                    if budget < 0:            # crafted overlaps: the rest is not searched
                        out[(m.name, d.index)] = None
                        continue
                    hit = _BUILD_ID.search(mm, d.blob_offset, end)
                    seen[key] = None if hit is None else "{}.{}_{}".format(*(g.decode() for g in hit.groups()))
                out[(m.name, d.index)] = seen[key]
    return out


def qnn_sdk_versions(path: str | os.PathLike, program: PteProgram | None = None) -> list[str]:
    """The distinct QNN SDK build ids of the program's context binaries, sorted."""
    return sorted({v for v in qnn_sdk_builds(path, program).values() if v})
