"""One name per quantity: the levels of the time nesting, the statistics the views print and the
words etscope uses, each defined once here and read by every analysis and view (issue 33 item 2).

A view that shows a level takes its label and meaning from :data:`NESTING`; a column that shows a
statistic takes its label from :data:`STATISTICS` (a share column is over the same runs as the
figure beside it; every statistic over runs is over the steady runs, warm-up runs left out). `etscope qnn` and
`etscope llm` both call :data:`ACCELERATOR` "the accelerator": one level, by construction.
The README's glossary is rendered from this module (``render.glossary_text``) and a test keeps the
two equal.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Level:
    """One level of the time nesting of a delegate call, outside in."""

    key: str              # stable name in JSON and code
    event: str            # the exact event identifier the files carry (without ExecuTorch's unit suffix)
    unit: str             # the unit the files carry it in ("ns", "us", "cycles")
    label: str            # what the views print (pictures, table headers, findings)
    meaning: str          # what the level measures
    adds: str | None      # what it adds over the next level inside it, short enough for a headline
                          # (None: innermost)


METHOD_EXECUTE = Level(
    "method_execute", "Method::execute", "ns", "Method::execute",
    "ExecuTorch's wall time of one execute() of a method: delegate calls, CPU kernels and framework "
    "overhead", "the rest of the model: other partitions, CPU kernels, framework overhead")
DELEGATE_CALL = Level(
    "delegate_call", "DELEGATE_CALL", "ns", "DELEGATE_CALL",
    "ExecuTorch's wall time around the call into the QNN backend (ns, measured by ExecuTorch)",
    "ExecuTorch's QNN backend around QNN's execute (tensor setup, shared-buffer mapping, profiling "
    "readout)")
QNN_EXECUTE = Level(
    "qnn_execute", "QNN (execute) time", "us", "QNN execute",
    "QNN's graphExecute call on the CPU side",
    "QNN host-side work before and after the remote call")
RPC_EXECUTE = Level(
    "rpc_execute", "RPC (execute) time", "us", "RPC execute",
    "the FastRPC call from the CPU to the HTP (DSP)",
    "FastRPC transport between CPU and DSP")
QNN_ACCELERATOR = Level(
    "qnn_accelerator", "QNN accelerator (execute) time", "us", "QNN accelerator",
    "QNN's handling of the execute on the DSP",
    "DSP-side QNN work around the graph (scheduling, VTCM acquire, power-up)")
ACCELERATOR = Level(
    "accelerator", "Accelerator (execute) time", "us", "accelerator",
    "the HTP executing the graph, waits included",
    "waits (VTCM, DMA, other clients) while the graph runs")
ACCELERATOR_EXCL_WAIT = Level(
    "accelerator_excl_wait", "Accelerator (execute excluding wait) time", "us", "accelerator, waits excluded",
    "the HTP executing the graph, waits excluded", None)
ACCELERATOR_CYCLES = Level(
    "accelerator_cycles", "Accelerator (execute) time (cycles)", "cycles", "accelerator cycles",
    "HTP clock cycles of the graph's execution (cycles, not time: ÷ the HTP clock gives time)", None)

# The QNN levels inside a DELEGATE_CALL, outside in (cycles are not a level of time).
QNN_TIME_LEVELS = (QNN_EXECUTE, RPC_EXECUTE, QNN_ACCELERATOR, ACCELERATOR, ACCELERATOR_EXCL_WAIT)
BY_EVENT = {lv.event: lv for lv in (*QNN_TIME_LEVELS, ACCELERATOR_CYCLES)}
# The whole nesting of an ETDump with a QNN partition, outside in.
NESTING = (METHOD_EXECUTE, DELEGATE_CALL, *QNN_TIME_LEVELS)
BY_EVENT.update({lv.event: lv for lv in NESTING})


@dataclass(frozen=True)
class Statistic:
    key: str
    label: str            # the column header
    runs: str             # which runs it is over
    meaning: str


P50 = Statistic("p50", "p50", "steady runs: each phase's runs without its warm-up runs (every view: summary, "
                "ops, qnn, report, llm, diff, trend; a QNN profile file without an ETDump: each of its executes)",
                "the median over the steady runs; the views say how many warm-up runs were left out")
MEAN_PER_RUN = Statistic("mean_per_run", "mean per run", "the same steady runs as the p50",
                         "total over the runs ÷ the number of runs: what a split of time adds up with")
SHARE_OF_MEAN = Statistic("share_of_mean", "share of mean", "the same steady runs as the p50 and the mean beside it",
                          "a part's mean per run ÷ the whole's mean per run (can differ from the p50s' ratio)")
STATISTICS = (P50, MEAN_PER_RUN, SHARE_OF_MEAN)


@dataclass(frozen=True)
class Term:
    word: str
    meaning: str


TERMS = (
    Term("run", "one execute() of a method: one Execute RunData of the ETDump"),
    Term("steady run", "a run that is not warm-up: warm-up runs are a phase's leading runs each more than 2× "
                       "the median of its runs after it, at most 10% of the runs (at least one), judged "
                       "only in series of 4 runs or more (analysis/stats.py: steady_runs, the one rule of "
                       "every view)"),
    Term("phase", "the runs of one kind of an LLM: prefill (the prompt) or decode (one token per run); "
                  "a model that is not an LLM has one phase"),
    Term("placement", "where an instruction ran: a delegate backend (QnnBackend, XnnpackBackend, ...) or "
                      "'cpu' (a portable / optimized kernel: a fallback when a delegate was expected)"),
    Term("partition", "one delegated subgraph: one DELEGATE_CALL instruction; for QNN, one context "
                      "binary and one QNN graph"),
    Term("shard", "an LLM export's word for a QNN partition: one context binary of a model split "
                  "into several; etscope says partition"),
    Term("QNN files", "the files QNN writes beside an ETDump: profile CSV / viewer text or JSON, "
                      "QHAS, optrace, runtrace, DSP heap profile"),
)
