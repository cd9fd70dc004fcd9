"""A typed summary (``analysis.views.summary_result.Summary``) for a test: every part empty but
those given, as a profile with no runs would have it."""
from etscope.analysis.ops.latency import LatencyMs, RunLatency
from etscope.analysis.views.summary import SCHEMA
from etscope.analysis.views.summary_result import Memory, OpTypeTime, Summary


def summary(**given) -> Summary:
    base = dict(schema=SCHEMA, inputs={}, method=None, phase=None, etdump=None, runs=RunLatency(0, None),
                breakdown=(), fallback_ops=(), top_fallback_op_types=(), delegate_calls=(), load=(), memory=Memory(),
                qnn=None, qnn_compile=None, warnings=())
    return Summary(**{**base, **given})


def latency(count: int, p50: float, mean: float, lo: float, hi: float) -> RunLatency:
    return RunLatency(count, LatencyMs(p10=None, p50=p50, p90=None, p99=None, mean=mean, min=lo, max=hi, total=None))


def op_type(**given) -> OpTypeTime:
    return OpTypeTime(**{**given, "sources": tuple(given.get("sources", ()))})
