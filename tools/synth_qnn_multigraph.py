"""Build multi-graph QNN profiles (basic level) from real single-graph samples.

No public basic-level QNN profile of a model with 3 graphs exists (the emulator's
``vit_mixed_qdq/basic`` is a real 2-graph one). This script interleaves the execute blocks of real
single-graph files the way ONNX Runtime's QNN EP writes several graphs (see the real vit file):
finalize blocks repeated as QNN hands back every graph finalized so far (g1 | g1 g2 | g1 g2 g3),
then per inference one execute block per graph, in graph order. Every line is copied unchanged
from its source file (CRLF kept); only the order is new. Regenerate with

    python tools/synth_qnn_multigraph.py --out tests/fixtures/qnn

(deterministic; needs ``shared/data``, or set ``ETSCOPE_SHARED_DATA``). Fixtures written:

- ``synthetic_multigraph2_basic.qnn_profile.csv``: cnn_small_qdq + tblock_qdq (2 graphs x 6 executes)
- ``synthetic_multigraph3_basic.qnn_profile.csv``: cnn_small_fp32 + cnn_small_qdq + tblock_qdq
- ``synthetic_multigraph2_basic_odd.qnn_profile.csv``: as the 2-graph file without its last execute
  block (11 blocks for 2 graphs: cannot be split)
- ``synthetic_multigraph2_basic_nofinalize.qnn_profile.csv``: cnn_small_fp32 + cnn_small_qdq
  without finalize rows (graph count unknown; their times never overlap, so they alternate visibly)
- ``synthetic_multigraph2_basic.profile.txt``: qnn-profile-viewer text, ``Execute Stat`` sections of
  the device files chain8_sm8650 and indep8_native_sm8650 alternated, per-op (NODE) lines removed
  (basic level); no finalize section (both were loaded from a context binary)
- ``synthetic_multigraph2.qnn_profile.json``: viewer JSON, two ``BACKEND_EXECUTE`` messages of
  tiny_sm8750 alternated with chain8's Execute Stat 2 and 3 turned into messages, with per-op
  sub-events (detailed level: graphs told apart by names)
"""
from __future__ import annotations

import argparse
import json
import os
import re
from pathlib import Path

SHARED = Path(os.environ.get("ETSCOPE_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
EMU = SHARED / "qnn-htp-emulator"
DEV = SHARED / "qnn-device"


def _csv_blocks(path: Path) -> tuple[bytes, list[bytes], list[list[bytes]]]:
    """(header line, finalize lines, execute blocks) of a single-graph CSV, lines with their EOL."""
    lines = path.read_bytes().splitlines(keepends=True)
    header, rows = lines[0], lines[1:]
    finalize: list[bytes] = []
    blocks: list[list[bytes]] = []
    cur: list[bytes] = []
    in_finalize = False
    for ln in rows:
        fields = ln.rstrip(b"\r\n").split(b",", 6)
        if fields[1] == b"FINALIZE" or (in_finalize and fields[5] == b"SUB-EVENT"):
            finalize.append(ln)
            in_finalize = True
            continue
        in_finalize = False
        cur.append(ln)
        if fields[5] == b"ROOT" and fields[6] == b"QNN (execute) time":
            blocks.append(cur)
            cur = []
    assert not cur, f"{path}: trailing rows outside an execute block"
    return header, finalize, blocks


def multigraph_csv(sources: list[Path], *, finalize: bool = True, drop_last: int = 0) -> bytes:
    parsed = [_csv_blocks(p) for p in sources]
    n = min(len(b) for _, _, b in parsed)
    out = [parsed[0][0]]
    if finalize:
        for k in range(1, len(parsed) + 1):              # g1 | g1 g2 | g1 g2 g3
            for _, fin, _ in parsed[:k]:
                out += fin
    blocks = [blk for i in range(n) for _, _, b in parsed for blk in [b[i]]]
    for blk in blocks[: len(blocks) - drop_last]:
        out += blk
    return b"".join(out)


_STAT = re.compile(r"^Execute Stat (\d+)\s*$")


def _text_parts(path: Path) -> tuple[list[str], list[list[str]]]:
    """(lines before the first Execute Stat, each Execute Stat's lines without its heading)."""
    lines = path.read_text().split("\n")
    head: list[str] = []
    stats: list[list[str]] = []
    for ln in lines:
        if _STAT.match(ln):
            stats.append([])
        elif stats:
            if ln.startswith((" ", "\t")) and ln.strip():
                continue                                   # a per-op (NODE) line: basic has none
            stats[-1].append(ln)
        else:
            head.append(ln)
    return head, stats


def multigraph_text(a: Path, b: Path) -> str:
    head, sa = _text_parts(a)
    _, sb = _text_parts(b)
    out = list(head)
    k = 0
    for x, y in zip(sa, sb):
        for body in (x, y):
            k += 1
            out.append(f"Execute Stat {k}")
            out += body
    return "\n".join(out)


def _text_execute_messages(path: Path) -> list[dict]:
    """Execute Stat sections of viewer text as QNN_PROFILE JSON messages (sub-events kept)."""
    msgs: list[dict] = []
    unit_json = {"us": "MICROSEC", "cycles": "CYCLES", "count": "COUNT", "object": "OBJECT"}
    for ln in path.read_text().split("\n"):
        if _STAT.match(ln):
            msgs.append({"method": "BACKEND_EXECUTE", "profilingEvents": []})
            continue
        if not msgs or " : " not in ln:
            continue
        name, _, rest = ln.strip().rpartition(" : ")
        bits = rest.split()
        if len(bits) == 2:
            value, unit = int(bits[0]), bits[1]
        else:
            value, unit = None, bits[0] if bits else ""
        ev = {"identifier": name.strip(), "unit": unit_json.get(unit, unit.upper()), "value": value,
              "type": "NODE" if ln.startswith(" ") else ""}
        if ln.startswith(" "):
            msgs[-1]["profilingEvents"][-1].setdefault("sub-events", []).append(ev)
        else:
            if name.strip() == "QNN (execute) time":
                ev["type"] = "EXECUTE"
            msgs[-1]["profilingEvents"].append(ev)
    return msgs


def multigraph_json(tiny: Path, text: Path) -> str:
    doc = json.loads(tiny.read_text())
    msgs = doc["messages"]
    i = next(k for k, m in enumerate(msgs) if m["method"] == "BACKEND_EXECUTE")
    a = msgs[i]
    other = _text_execute_messages(text)[1:3]            # chain8's warm executes (Stat 2, 3)
    doc["messages"] = msgs[:i] + [a, other[0], a, other[1]] + msgs[i + 1:]
    return json.dumps(doc, indent=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    out = ap.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    fp32, qdq, tblock = (EMU / d / "basic" / "qnn_profile.csv" for d in ("cnn_small_fp32", "cnn_small_qdq", "tblock_qdq"))
    files = {
        "synthetic_multigraph2_basic.qnn_profile.csv": multigraph_csv([qdq, tblock]),
        "synthetic_multigraph3_basic.qnn_profile.csv": multigraph_csv([fp32, qdq, tblock]),
        "synthetic_multigraph2_basic_odd.qnn_profile.csv": multigraph_csv([qdq, tblock], drop_last=1),
        "synthetic_multigraph2_basic_nofinalize.qnn_profile.csv": multigraph_csv([fp32, qdq], finalize=False),
    }
    for name, data in files.items():
        (out / name).write_bytes(data)
    (out / "synthetic_multigraph2_basic.profile.txt").write_text(
        multigraph_text(DEV / "chain8_sm8650.profile.txt", DEV / "indep8_native_sm8650.profile.txt"))
    (out / "synthetic_multigraph2.qnn_profile.json").write_text(
        multigraph_json(DEV / "tiny_sm8750.qnn_profile.json", DEV / "chain8_sm8650.profile.txt"))
    print(f"wrote {len(files) + 2} files to {out}")


if __name__ == "__main__":
    main()
