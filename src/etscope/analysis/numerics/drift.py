"""LLM numerics over decode steps: per layer, the error against the reference at every step.

The runs of an LLM comparison are paired by phase and token position (``numerics_runs``): prefill
with prefill, each decode run with the reference's decode run at the same position. Each paired
run is a *step* (a column); each *layer* a row:

* the module path of the transformer block the tensor's node belongs to (``nn_module_stack``:
  the path up to its first numbered part, ``layers.3`` of ``layers.3.attention.wq``; a Wrapper's
  prefix kept, ``m.layers.3``), read from the reference's graph node (the float side), else the
  candidate's;
* else the node's module path itself (``tok_embeddings``, ``norm``: not inside a numbered block);
* else the graph node (the tensor's name: ``output[0]`` for a program output).

A cell is the layer's paired tensors at that step: the worst (lowest) SNR in dB, the largest max
abs error, how many tensors, and whether any crossed a threshold (``numerics_compare.crosses``:
cosine or SNR; NaN/Inf values count as crossing, SNR -inf). Equal tensors have SNR +inf.

The first divergence is the first (layer, step) that crosses, in the order the model computed
them: the earliest step (run order: prefill, then decode steps) where a tensor crosses, and the
layer of its first crossing tensor in graph order (the run's first divergence). Rows are ordered by
each layer's first node in the reference's graph; a module's own ops (``m``, the Transformer's
rope and last-token selection) may come before and after its blocks, so the first crossing is told
by tensor, not by row.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

BLOCK = "block"          # the module path up to its first numbered part (a transformer block)
MODULE = "module"        # a module path outside any numbered block
NODE = "node"            # no module path: the graph node


@dataclass(frozen=True)
class DriftStep:
    run: int                   # candidate run
    ref_run: int | None        # reference run it was compared with
    phase: str
    step: int | None           # decode step since its prefill (1, 2...), None for a prefill
    position: int | None       # token position of a decode run (when known)

    @property
    def label(self) -> str:
        if self.phase != "decode":
            return self.phase
        s = f"d{self.step}" if self.step is not None else f"r{self.run}"
        return s + (f"@{self.position}" if self.position is not None else "")


@dataclass(frozen=True)
class DriftCell:
    snr_db: float              # worst over the layer's compared tensors (+inf: all equal; -inf: NaN/Inf)
    max_abs: float             # largest max abs error (NaN when values are non-finite)
    tensors: int               # compared tensors
    diverged: bool             # any crossed a threshold
    worst: str                 # the tensor with the worst SNR

    @property
    def equal(self) -> bool:
        return self.snr_db == math.inf


@dataclass(frozen=True)
class Drift:
    layers: tuple[str, ...]                            # graph order
    layer_rules: tuple[str, ...]                       # BLOCK | MODULE | NODE per layer
    steps: tuple[DriftStep, ...]                       # run order
    cells: tuple[tuple[DriftCell | None, ...], ...]    # layers x steps (None: no compared tensor)
    first: tuple[int, int] | None                      # (layer, step) indices of the first crossing
    first_tensor: str | None = None                    # its first crossing tensor (graph order)

    def cell(self, layer: str, step: int) -> DriftCell | None:
        return self.cells[self.layers.index(layer)][step]


def block_of(module_path: str) -> str:
    """``m.layers.3.attention.wq`` -> ``m.layers.3``; a path without a numbered part is itself."""
    parts = module_path.split(".")
    for i, part in enumerate(parts):
        if part.isdigit():
            return ".".join(parts[:i + 1])
    return module_path


def layer_of(t, gr, gc) -> tuple[str, str]:
    """(layer, rule) of a compared tensor (module doc)."""
    for tid, g in ((t.ref, gr), (t.cand, gc)):
        node = g.by_name.get(tid.node) if (g is not None and tid.node) else None
        path = node.module_path if node is not None else None
        if path:
            b = block_of(path)
            return b, BLOCK if b != path or path.split(".")[-1].isdigit() else MODULE
    return t.name, NODE


def max_cells(filled: int) -> int:
    """Cells a drift table may have for ``filled`` (layer, step) pairs holding a tensor: in real runs
    every layer logs at every step (cells = filled); runs each logging other nodes would make
    layers x steps grow as the square of the tensors (a crafted file): then no table."""
    return 8 * filled + 100_000


def layer_drift(runs, gr, gc) -> Drift | None:
    """The drift table of a comparison's runs (``numerics_compare.RunComparison`` with a phase);
    None when no run has a phase (runs paired in order: no steps to speak of), or when layers x
    steps exceed ``max_cells`` (said by the caller)."""
    runs = [rc for rc in runs if rc.phase is not None]
    if not runs:
        return None
    steps = tuple(DriftStep(rc.run, rc.ref_run, rc.phase, rc.step, rc.position) for rc in runs)
    first_pos: dict[str, tuple] = {}
    rules: dict[str, str] = {}
    acc: dict[tuple[str, int], list] = {}     # (layer, step) -> [snr, max_abs, n, diverged, worst]
    for j, rc in enumerate(runs):
        for t in rc.tensors:
            if t.metrics is None:
                continue
            layer, rule = layer_of(t, gr, gc)
            rules.setdefault(layer, rule)
            order = (t.ref.role == "program_output", t.ref.order)
            if layer not in first_pos or order < first_pos[layer]:
                first_pos[layer] = order
            m = t.metrics
            snr = -math.inf if m.nonfinite else m.snr_db
            mx = math.nan if m.nonfinite else m.max_abs
            a = acc.get((layer, j))
            if a is None:
                acc[(layer, j)] = [snr, mx, 1, t.diverged, t.name]
                continue
            if snr < a[0]:
                a[0], a[4] = snr, t.name
            a[1] = math.nan if (math.isnan(a[1]) or math.isnan(mx)) else max(a[1], mx)
            a[2] += 1
            a[3] = a[3] or t.diverged
    layers = tuple(sorted(first_pos, key=first_pos.__getitem__))
    if len(layers) * len(steps) > max_cells(len(acc)):
        return None
    cells = tuple(tuple(DriftCell(*acc[(lay, j)]) if (lay, j) in acc else None for j in range(len(steps)))
                  for lay in layers)
    first = first_tensor = None
    for j, rc in enumerate(runs):       # the earliest step with a crossing; its first crossing tensor's layer
        if rc.first_divergence is not None:
            t = rc.tensors[rc.first_divergence]
            first, first_tensor = (layers.index(layer_of(t, gr, gc)[0]), j), t.name
            break
    return Drift(layers, tuple(rules[lay] for lay in layers), steps, cells, first, first_tensor)


def _num(x: float) -> float | None:
    return None if math.isnan(x) or math.isinf(x) else x


def drift_dict(d: Drift | None) -> dict | None:
    """Plain data: layers, steps, cells (layers x steps; an SNR of +inf written null with ``equal``
    true, -inf (NaN/Inf values) null with ``nonfinite`` true) and the first crossing."""
    if d is None:
        return None

    def cell(c: DriftCell | None):
        if c is None:
            return None
        return {"snr_db": _num(c.snr_db), "equal": c.equal, "nonfinite": c.snr_db == -math.inf,
                "max_abs_error": _num(c.max_abs), "tensors": c.tensors, "diverged": c.diverged, "worst_tensor": c.worst}

    first = None
    if d.first is not None:
        i, j = d.first
        s, c = d.steps[j], d.cells[i][j]
        first = {"layer": d.layers[i], "step": s.label, "run": s.run, "phase": s.phase, "decode_step": s.step,
                 "position": s.position, "snr_db": _num(c.snr_db), "max_abs_error": _num(c.max_abs),
                 "first_tensor": d.first_tensor, "worst_tensor": c.worst}
    return {"layers": [{"name": n, "rule": r} for n, r in zip(d.layers, d.layer_rules)],
            "steps": [{"label": s.label, "run": s.run, "reference_run": s.ref_run, "phase": s.phase, "step": s.step,
                       "position": s.position} for s in d.steps],
            "cells": [[cell(c) for c in row] for row in d.cells],
            "first_divergence": first}
