"""The typed result of one QNN partition (``analysis.qnn.partition.analyse_series``), a part of
``etscope qnn --json`` (schema ``etscope.qnn/1``): the declared field order is the JSON key order."""
from __future__ import annotations

from dataclasses import dataclass, field

from etscope.analysis.qnn.nesting import Nesting
from etscope.analysis.qnn.result import OPTIONAL


@dataclass(frozen=True)
class TimeLevel:
    """One level of the nesting in µs (or DELEGATE_CALL's): its p50 and what it adds over the next."""
    name: str
    unit: str
    p50_us: float | None
    what: str                       # what the level is
    adds_over_next: str | None      # what it adds over the next level inside it, in words
    adds_us_p50: float | None       # p50 over runs of (this level - the next one inside); None innermost


@dataclass(frozen=True)
class CyclesLevel:
    """The accelerator cycles beside the levels (cycles are not a level of time)."""
    name: str
    unit: str
    p50_cycles: float | None
    what: str
    adds_over_next: None = None
    adds_us_p50: None = None


@dataclass(frozen=True)
class Check:
    """A consistency check over the runs (levels nest, events de-duplicated)."""
    check: str
    ok: bool
    runs_checked: int
    runs_failing: int


@dataclass(frozen=True)
class SumCheck(Check):
    """The per-op cycles add up to the accelerator's: with the largest relative difference."""
    max_rel_diff: float | None = None


@dataclass(frozen=True)
class OtherEvent:
    """A QNN event of the partition outside the well-known levels, counts and bytes."""
    name: str
    unit: str
    p50: float | None


@dataclass(frozen=True)
class BusyShare:
    """The NPU's busy share of a real call: accelerator time ÷ DELEGATE_CALL, p50 over warm runs."""
    p50: float
    runs: int
    basis: str


@dataclass(frozen=True)
class PerRun:
    """The partition's levels per run (index: its runs, in order; None where a run lacks one)."""
    delegate_call_us: list
    qnn_execute_us: list
    accel_us: list
    accel_excl_wait_us: list
    accel_cycles: list
    node_cycles_sum: list
    clock_mhz_est: list
    clock_mhz_used: list
    power_on_us: list
    vtcm_acquire_us: list
    container_us: list              # the measured time the per-op times are shares of
    ops_share_us: list              # the ops' shares of it
    ops_raw_us: list                # Σ per-op cycles ÷ the clock used


@dataclass(frozen=True)
class LevelMean:
    name: str
    us_mean: float | None


@dataclass(frozen=True)
class OpTimes:
    """What the per-op times are shares of, means per run (``analysis.qnn.container``)."""
    estimate: str
    how: str
    container: str
    levels: tuple[LevelMean, ...]
    container_us_mean: float | None
    ops_us_mean: float | None
    ops_raw_us_mean: float | None
    container_clipped_runs: int
    bound: str
    bound_us_mean: float | None
    runs_compared: int
    runs_over: int
    over_runs: list
    over_raw_us_mean: float | None
    over_bound_us_mean: float | None
    over_clock_mhz_used: float | None
    over_clock_mhz_to_fit: float | None


@dataclass(frozen=True)
class OpRow:
    """One QNN op of the partition: its cycles over runs, its graph node, its QHAS/optrace flags."""
    qnn_name: str
    base: str | None
    op_id: int | None
    token: int | None
    graph_op: bool                  # False for QNN's own Input/Output/nameless rows
    unit: str
    node: str | None
    op_type: str | None
    source: str | None
    module: str | None
    runs: int
    cycles_p50: float | None
    cycles_mean: float | None
    est_us_p50: float | None
    est_is_estimate: bool
    share: float | None
    hmx: bool | None
    hvx: bool | None
    dma: bool | None
    htp_ops: list | None
    dram_read: int | None
    dram_write: int | None
    vtcm_read: int | None
    vtcm_write: int | None
    dominant_path_cycles: int | None
    qhas_cycles: int | None
    est_us_at_clock: float | None   # cycles p50 ÷ the partition's clock used
    us_in_container: float | None   # its share of the measured container, mean per run


@dataclass(frozen=True)
class Partition:
    """One QNN partition analysed (p50 over its steady runs unless a field says otherwise)."""
    key: str
    instruction_id: int | None
    source: str                     # "etdump" | the QNN profile file's kind
    runs: int
    delegate_call_ms: float | None
    qnn_execute_us: float | None
    rpc_us: float | None
    qnn_accel_us: float | None
    accel_us: float | None
    accel_excl_wait_us: float | None
    accel_cycles: float | None
    clock_mhz_est: float | None
    clock_mhz_est_range: tuple
    clock_basis: str
    clock_is_estimate: bool
    clock_mhz_bounds: tuple                 # (low, high), None where unbounded
    clock_bound: str | None
    clock_mhz_est_per_run_range: tuple | None
    clock_mhz_measured: float | None
    clock_mhz_measured_per_execute: tuple | None
    clock_source: str | None
    clock_mhz_used: float | None
    clock_measured_within_bounds: bool | None
    clock_measured_per_run: bool | None
    clock_warning: str | None
    cold_runs: tuple
    npu_busy_per_call: BusyShare | None
    accumulating: bool
    levels: tuple[TimeLevel | CyclesLevel, ...]
    counts: dict                    # event name -> p50 (QNN's count events)
    bytes: dict                     # event name -> p50 (QNN's byte events)
    other_events: tuple[OtherEvent, ...]
    per_run: PerRun
    op_times: OpTimes
    ops: tuple[OpRow, ...]
    ops_matched_to_graph: int
    ops_named: int
    unmatched_ops: tuple
    checks: tuple[Check, ...]
    notes: tuple
    nesting: Nesting
    headline: str
    backend: str | None = field(default=None, metadata=OPTIONAL)   # with an ETDump: its instruction's
    # Leading warm-up runs of the ETDump left out of every statistic over runs (p50s, means, per-op
    # rows; ``stats.steady_runs``); ``runs``, ``per_run``, ``cold_runs`` and ``checks`` keep every run.
    warmup_runs_left_out: int | None = field(default=None, metadata=OPTIONAL)
