"""LLM runs (``etscope llm``): the run series, phases (prefill / decode, or one per method), warm-up,
tokens/s, time to first token and how decode latency drifts with the position in the generation.

Where each number comes from:

* **Run series**: ``Method::execute`` of every Execute run, in file order (several ETDumps are
  concatenated in the order given; an ETDump holding the same run data as an earlier one, the
  same file given twice or a copy, is counted once: ``duplicates``, and a warning).
* **Several ETDumps** are sessions of one program (``sessions``): rules 2-4 below apply to each
  file's own runs; the files' phases are then joined by name (prefill with prefill, decode with
  decode, a method's runs with the same method's when they executed the same instructions). A
  file whose runs cannot be told into prefill and decode, beside files whose runs can, keeps a
  phase of its own named after it (a warning says so). ``phase_split.files`` holds each file's
  split; the series has each run's ``file``, ``file_run`` and ``method``.
* **Phases**, first rule that applies:

  1. ``--prompt-runs``: the listed runs are prefill, all others decode (indices over all files).
  2. Debug events with tensor shapes: the dimension that changes between runs in the logged
     tensors (``1x8x64`` vs ``1x1x64``) is the token count of each run; runs with more than one
     token are prefill.
  3. What the runs executed: runs whose events differ (another method, e.g. QNN's separate
     prefill and decode graphs) form separate groups.
  4. Cost profile, inside each group (one dynamic-shape method serving both): a prefill run is
     one where the same set of token-dependent instructions (matmuls, KV-cache updates, masks)
     costs several times its median over the runs while the other instructions do not. The
     instructions that gave the decision are reported.

* **Warm-up**: the first runs of a phase, within each file, each over 2x the median latency of
  the phase's runs after it in that file (at most 10% of the phase's runs there, at least one;
  4+ runs; ``stats.leading_warmup``, the rule ``diff`` uses too). They are listed and left out of
  the steady-state statistics; all runs stay in the series.
* **Tokens per run**: the logged tensors' token dimension, else ``--prompt-tokens`` for prefill runs
  and ``--decode-tokens`` or the program's ``get_ar_len`` for decode runs, else unknown (never
  assumed): rates are then per run (``runs_per_s``) and ``tokens_unknown`` says how to give them.
* **Tokens/s**: 1000 / (decode p50 ms per token), only when the decode tokens per run are known. **TTFT**: the prefill latency (p50 over steady
  prefill runs; the first prefill is also given).
* **QNN partitions** (an LLM export's "shards"): per phase and QNN partition, DELEGATE_CALL,
  accelerator time, HTP cycles and the overhead between them per run (``phases[].qnn.shards``).
* **Drift**: decode latency against the position in the generation (token index when the prompt
  length is known, else decode steps since the last prefill), with a least-squares slope on the
  median latency per position (weighted by runs) and its 95% interval. Stated as a drift only when
  the interval excludes zero, the positions span at least 32, and the fitted change over the range
  exceeds the run-to-run spread (IQR of the runs' residuals around the fit).
* **First decode after a prefill**: stated as slower only when there are at least 5 prefill->decode
  transitions, the first decode is above the upper quartile of the other decodes in at least 80% of
  them (each would be with probability 1/4 if it were like the others: 4 of 5 by chance 1.6%), and
  its median exceeds theirs by more than their IQR. Causes are offered as possibilities.

Every finding (``findings[]``) states its basis: how many runs or instances, and their spread.

The package, by responsibility: ``runs`` (per-part run data and the bounded per-instruction
table), ``tokens`` (token counts from tensor shapes), ``cost_profile`` (``cost_split``), ``phases``
(the rules above), ``sessions`` (several ETDumps: duplicates, joining phases by name), ``drift``
(warm-up, positions, drift), ``tables`` (per-phase tables),
``partitions`` (per-partition QNN numbers), ``findings`` (sentences), ``report`` (``llm_report``),
``result`` (the typed result: frozen dataclasses, the schema of ``llm --json``).
"""
from __future__ import annotations

from etscope.analysis.llm.cost_profile import (
    CLOCK_CPU, CLOCK_DELEGATE, CLOCK_NONE, DECODE_MAX_SHARE, LONE_RUN_EVIDENCE_LOG2, MIN_OP_NS, MIN_OPS_FOR_COST_SPLIT,
    MIN_SENSITIVE_OPS, PREFILL_MAX_SHARE, SENSITIVE_LOG2, cost_split)
from etscope.analysis.llm.drift import (
    DRIFT_MIN_POSITIONS, FIRST_DECODE_HINT_RATIO, FIRST_DECODE_MIN_INSTANCES, FIRST_DECODE_MIN_SHARE)
from etscope.analysis.llm.phases import MAX_GROUPS, RunIndexError
from etscope.analysis.llm.report import SCHEMA, llm_report
from etscope.analysis.llm.runs import MAX_TABLE_CELLS_BASE, MAX_TABLE_CELLS_PER_EVENT, label_text

__all__ = [
    "CLOCK_CPU", "CLOCK_DELEGATE", "CLOCK_NONE", "DECODE_MAX_SHARE", "DRIFT_MIN_POSITIONS", "FIRST_DECODE_HINT_RATIO",
    "FIRST_DECODE_MIN_INSTANCES", "FIRST_DECODE_MIN_SHARE", "LONE_RUN_EVIDENCE_LOG2", "MAX_GROUPS",
    "MAX_TABLE_CELLS_BASE", "MAX_TABLE_CELLS_PER_EVENT", "MIN_OP_NS", "MIN_OPS_FOR_COST_SPLIT", "MIN_SENSITIVE_OPS",
    "PREFILL_MAX_SHARE", "RunIndexError", "SCHEMA", "SENSITIVE_LOG2", "cost_split", "label_text", "llm_report",
]
