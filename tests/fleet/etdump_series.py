"""A build series as real ETDump files (written with the flatbuffers Builder of
tests/fuzz/generators.py) with a ``<stem>.meta.json`` sidecar each: the end-to-end input of
collect -> trend. Two CPU ops per run; ``slower`` = (factor, first build) makes op 1 slower."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
from generators import _op_events, build_etdump_shared  # noqa: E402


def etdump_bytes(rng: np.random.Generator, runs: int, op_ns: tuple[float, float], session: float) -> bytes:
    out = []
    t = 1_000_000
    for r in range(runs):
        d = [int(ns * session * np.exp(rng.normal(0, 0.02)) * (3 if r == 0 else 1)) for ns in op_ns]
        events = [("P", "Method::execute", None, None, None, None, t, t + sum(d) + 2000)]
        events += _op_events(0, "convolution", t + 1000, d[0])
        events += _op_events(1, "add", t + 1000 + d[0], d[1])
        out.append(dict(name="Execute", events=events))
        t += sum(d) + 10_000
    return build_etdump_shared(out)


def write_series(folder: Path, seed: int = 0, builds: int = 8, sessions: int = 2, runs: int = 8,
                 slower=None, model: str = "cnn", soc: str = "sm8650") -> list[Path]:
    rng = np.random.default_rng(seed)
    paths = []
    folder.mkdir(parents=True, exist_ok=True)
    for b in range(builds):
        for s in range(sessions):
            factor = slower[0] if slower is not None and b >= slower[1] else 1.0
            data = etdump_bytes(rng, runs, (600_000.0, 400_000.0 * factor), float(np.exp(rng.normal(0, 0.02))))
            p = folder / f"run_{b:02d}_{s}.etdump"
            p.write_bytes(data)
            (folder / f"run_{b:02d}_{s}.meta.json").write_text(json.dumps(
                {"model": model, "soc": soc, "commit": f"{b * 7919 % 65536:04x}", "order": str(b), "date": "2026-11-30"}))
            paths.append(p)
    return paths
