"""LLM numerics over decode steps: per layer, the error against the reference at every step.

The runs of an LLM comparison are paired by phase and token position (``numerics.runs``): prefill
with prefill, each decode run with the reference's decode run at the same position. Each paired
run is a *step* (a column); each *layer* a row:

* the module path of the transformer block the tensor's node belongs to (``nn_module_stack``:
  the path up to its first numbered part, ``layers.3`` of ``layers.3.attention.wq``; a Wrapper's
  prefix kept, ``m.layers.3``), read from the reference's graph node (the float side), else the
  candidate's;
* else the node's module path itself (``tok_embeddings``, ``norm``: not inside a numbered block);
* else the graph node (the tensor's name: ``output[0]`` for a program output).

A cell is the layer's paired tensors at that step: the worst (lowest) SNR in dB, the largest max
abs error, how many tensors, and whether any crossed a threshold (``numerics.metrics.crosses``:
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
from dataclasses import dataclass, field

BLOCK = "block"          # the module path up to its first numbered part (a transformer block)
MODULE = "module"        # a module path outside any numbered block
NODE = "node"            # no module path: the graph node


@dataclass(frozen=True)
class DriftLayer:
    name: str                  # module path of the block, the module, or the graph node
    rule: str                  # BLOCK | MODULE | NODE
    max_abs: float = field(metadata={"json": False})   # largest max abs error over its steps (NaN: NaN/Inf values)


@dataclass(frozen=True)
class DriftStep:
    label: str                 # prefill, d<step>@<position> (r<run>: step unknown)
    run: int                   # candidate run
    ref_run: int | None = field(metadata={"json": "reference_run"})   # reference run it was compared with
    phase: str
    step: int | None           # decode step since its prefill (1, 2...), None for a prefill
    position: int | None       # token position of a decode run (when known)

    @classmethod
    def of(cls, run: int, ref_run: int | None, phase: str, step: int | None, position: int | None) -> "DriftStep":
        if phase != "decode":
            label = phase
        else:
            label = (f"d{step}" if step is not None else f"r{run}") + (f"@{position}" if position is not None else "")
        return cls(label, run, ref_run, phase, step, position)


@dataclass(frozen=True)
class DriftCell:
    snr_db: float              # worst over the layer's compared tensors (+inf: all equal; -inf: NaN/Inf)
    equal: bool                # every tensor equal (SNR +inf)
    nonfinite: bool            # a tensor with NaN/Inf values (SNR -inf)
    max_abs: float = field(metadata={"json": "max_abs_error"})    # largest max abs error (NaN: non-finite values)
    tensors: int               # compared tensors
    diverged: bool             # any crossed a threshold
    worst: str = field(metadata={"json": "worst_tensor"})         # the tensor with the worst SNR

    @classmethod
    def of(cls, snr_db: float, max_abs: float, tensors: int, diverged: bool, worst: str) -> "DriftCell":
        return cls(snr_db, snr_db == math.inf, snr_db == -math.inf, max_abs, tensors, diverged, worst)


@dataclass(frozen=True)
class DriftFirst:
    """The first (layer, step) crossing a threshold (module doc)."""

    layer: str
    step: str                  # the step's label
    run: int
    phase: str
    decode_step: int | None
    position: int | None
    snr_db: float              # the cell's worst SNR
    max_abs: float = field(metadata={"json": "max_abs_error"})
    first_tensor: str          # its first crossing tensor (graph order)
    worst: str = field(metadata={"json": "worst_tensor"})
    layer_index: int = field(metadata={"json": False})
    step_index: int = field(metadata={"json": False})


@dataclass(frozen=True)
class Drift:
    layers: tuple[DriftLayer, ...]                     # graph order
    steps: tuple[DriftStep, ...]                       # run order
    cells: tuple[tuple[DriftCell | None, ...], ...]    # layers x steps (None: no compared tensor)
    first: DriftFirst | None = field(metadata={"json": "first_divergence"})

    @property
    def layer_names(self) -> tuple[str, ...]:
        return tuple(lay.name for lay in self.layers)

    def cell(self, layer: str, step: int) -> DriftCell | None:
        return self.cells[self.layer_names.index(layer)][step]


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
    """The drift table of a comparison's runs (``numerics.compare.RunComparison`` with a phase);
    None when no run has a phase (runs paired in order: no steps to speak of), or when layers x
    steps exceed ``max_cells`` (said by the caller)."""
    runs = [rc for rc in runs if rc.phase is not None]
    if not runs:
        return None
    steps = tuple(DriftStep.of(rc.run, rc.ref_run, rc.phase, rc.step, rc.position) for rc in runs)
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
    names = sorted(first_pos, key=first_pos.__getitem__)
    if len(names) * len(steps) > max_cells(len(acc)):
        return None
    cells = tuple(tuple(DriftCell.of(*acc[(lay, j)]) if (lay, j) in acc else None for j in range(len(steps)))
                  for lay in names)
    layers = tuple(DriftLayer(lay, rules[lay], _layer_max_abs(row)) for lay, row in zip(names, cells))
    first = None
    for j, rc in enumerate(runs):       # the earliest step with a crossing; its first crossing tensor's layer
        if rc.first_divergence is not None:
            t = rc.tensors[rc.first_divergence]
            i = names.index(layer_of(t, gr, gc)[0])
            s, c = steps[j], cells[i][j]
            first = DriftFirst(names[i], s.label, s.run, s.phase, s.step, s.position, c.snr_db, c.max_abs, t.name,
                               c.worst, layer_index=i, step_index=j)
            break
    return Drift(layers, steps, cells, first)


def _layer_max_abs(row) -> float:
    """The largest max abs error over a layer's cells; NaN when a cell holds NaN/Inf values."""
    got = [c.max_abs for c in row if c is not None]
    return math.nan if any(math.isnan(x) for x in got) else max(got, default=math.nan)
