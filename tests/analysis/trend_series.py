"""Generated build series for the trend tests (and benchmarks/trend_false_alarms.py): the columns
``etscope collect`` writes to the runs and ops tables, for one model x SoC, with a known change.

Noise model (log scale): every session (one ETDump) has its own speed factor (between-session
spread ``session_sd``: clocks, thermal state, other load), every run inside a session a smaller
one (``run_sd``); a few leading warm-up runs are 3x slower. Ops share the session factor and add
their own noise. ``change`` = (op index, factor, first build): that op (and so the latency) is
``factor`` x slower from that build on. ``moved`` = (op index, first build): that op runs on the
CPU from then on (a placement change).
"""
from __future__ import annotations

import numpy as np

OPS = (("DELEGATE_CALL (XnnpackBackend)", "XnnpackBackend", 0.5), ("native_call_cumsum.out", "cpu", 0.3),
       ("DELEGATE_CALL (XnnpackBackend)", "XnnpackBackend", 0.2))


def series(seed: int, builds: int = 20, sessions: int = 3, runs: int = 10, session_sd: float = 0.03,
           run_sd: float = 0.02, base_ms: float = 20.0, change=None, moved=None, model: str = "m", soc: str = "s",
           warmup: int = 1) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    n_ops = len(OPS)
    sess = rng.normal(0, session_sd, (builds, sessions, 1, 1))
    op_ms = base_ms * np.array([share for _, _, share in OPS])[None, None, :, None] * np.exp(
        sess + rng.normal(0, run_sd, (builds, sessions, n_ops, runs)))
    if change is not None:
        op_ms[change[2]:, :, change[0], :] *= change[1]
    lat = op_ms.sum(axis=2)                                   # builds x sessions x runs
    lat[:, :, :warmup] *= 3
    b_idx, s_idx = np.meshgrid(np.arange(builds), np.arange(sessions), indexing="ij")
    files = np.array([f"{seed:04d}{b:04d}{s:04d}".ljust(64, "0") for b, s in zip(b_idx.ravel(), s_idx.ravel())])
    build = np.array([f"c{b:03d}" for b in b_idx.ravel()])
    key = np.array([f"2026-01-{1 + b // 24:02d}T{b % 24:02d}:{s:02d}:00" for b, s in zip(b_idx.ravel(), s_idx.ravel())])
    n_files = files.size
    runs_cols = {"file_hash": np.repeat(files, runs), "build": np.repeat(build, runs),
                 "order_key": np.repeat(key, runs), "execute": np.tile(np.arange(runs), n_files),
                 "latency_ms": lat.reshape(-1), "model": np.full(n_files * runs, model),
                 "soc": np.full(n_files * runs, soc)}
    names = np.array([[name for name, _, _ in OPS]] * builds, dtype=object)
    places = np.array([[place for _, place, _ in OPS]] * builds, dtype=object)
    if moved is not None:
        names[moved[1]:, moved[0]] = "native_call_cumsum.out"
        places[moved[1]:, moved[0]] = "cpu"
    rows = n_files * n_ops
    ops_cols = {"file_hash": np.repeat(files, n_ops), "build": np.repeat(build, n_ops), "order_key": np.repeat(key, n_ops),
                "level": np.zeros(rows, np.int64), "name": np.repeat(names, sessions, axis=0).reshape(-1).astype(str),
                "instruction_id": np.tile(np.arange(n_ops), n_files), "occurrence": np.zeros(rows, np.int64),
                "placement": np.repeat(places, sessions, axis=0).reshape(-1).astype(str),
                "unit": np.full(rows, "ns"), "p50": np.median(op_ms, axis=3).reshape(-1) * 1e6,
                "model": np.full(rows, model), "soc": np.full(rows, soc)}
    return runs_cols, ops_cols
