"""The one sentence a view says when warm-up runs were left out of its statistics
(``analysis.ops.latency.WarmupLeftOut``, the runs ``analysis.stats.steady_runs`` leaves out)."""
from __future__ import annotations

from etscope.units import fmt_ms


def warmup_sentence(w) -> str | None:
    """"1 warm-up run left out of the statistics (run 0: 0.145 ms, 4.6× the steady p50)"; None when
    ``w`` is None (no run was left out)."""
    if w is None or not w.count:
        return None
    each = [f"run {r}: {fmt_ms(ms)}" + (f", {x:.1f}× the steady p50" if x is not None else "")
            for r, ms, x in zip(w.runs, w.latency_ms, w.times_steady_p50)]
    shown = "; ".join(each[:3]) + (f"; {len(each) - 3} more" if len(each) > 3 else "")
    return f"{w.count} warm-up run{'s' if w.count != 1 else ''} left out of the statistics ({shown})"


def warmup_count_sentence(count: int | None) -> str | None:
    """The same when only the count is known (a QNN partition's ``warmup_runs_left_out``)."""
    if not count:
        return None
    return (f"{count} warm-up run{'s' if count != 1 else ''} of the ETDump left out of the statistics "
            "(the per-run series keep them)")

