"""ONNX Runtime's view of a QNN session (``analysis.qnn.ort_view.OrtView``), as text."""
from __future__ import annotations

from rich.text import Text

from etscope.analysis.qnn.ort_view import OrtView
from etscope.render.screen import Table
from etscope.render.text import console_or_default, safe_text, shown
from etscope.units import fmt_us

CPU_SHOWN = 20


def _us(v) -> str:
    return fmt_us(v) if isinstance(v, (int, float)) and v == v else "—"


def render_ort(v: OrtView, top: int | None = None, console=None) -> None:
    c = console_or_default(console)
    c.print(Text(shown(f"ONNX Runtime session ({v.path})"), style="bold"))
    warm = v.warmup_runs
    c.print(safe_text(
        f"{v.runs} model_run(s)" + (f", {len(warm)} warm-up left out (runs {', '.join(map(str, warm))})" if warm else "")
        + f"; model_run p50 {_us(v.run_p50_us)} (mean {_us(v.run_mean_us)}). Of a run's time: QNN partitions "
        f"{v.qnn_share:.0%} (ORT's EP kernel time), CPU-fallback nodes {v.cpu_share:.0%}, the rest "
        f"{v.other_share:.0%} (ORT between nodes)."))
    if v.partitions:
        t = Table(title="QNN partitions: ORT's EP kernel ⊇ QNN (execute) ⊇ Accelerator (p50 of each file's runs)")
        for col in ("#", "partition", "QNN graph", "calls/run", "EP kernel", "QNN execute", "accelerator",
                    "outside QNN execute", "share"):
            t.add_column(col, justify="left" if col == "partition" else "right", detail=col == "partition")
        for p in v.partitions:
            q = p.qnn_execute_us
            outside = p.p50_us - q if isinstance(q, (int, float)) else None
            t.add_row(str(p.order), safe_text(p.name), safe_text(p.qnn_graph or "—"),
                      f"{p.calls_per_run:g}", _us(p.p50_us), _us(q), _us(p.accel_us),
                      (f"{_us(outside)} ({outside / p.p50_us:.0%})" if outside is not None and p.p50_us > 0
                       else "—"), f"{p.share:.1%}")
        c.print(t)
    c.print(safe_text(f"QNN graphs: {v.joined}."))
    cpu = v.cpu_nodes
    if cpu:
        n = len(cpu) if (top == 0 or c.complete) else min(len(cpu), top or CPU_SHOWN)
        t = Table(title=f"CPU-fallback nodes ({len(cpu)}, largest share first)")
        for col in ("op", "node", "calls/run", "p50", "mean", "share"):
            t.add_column(col, justify="left" if col in ("op", "node") else "right", detail=col == "node")
        for node in cpu[:n]:
            t.add_row(safe_text(node.op or "—"), safe_text(node.name), f"{node.calls_per_run:g}",
                      _us(node.p50_us), _us(node.mean_us), f"{node.share:.1%}")
        c.print(t)
        if n < len(cpu):
            c.print(safe_text(f"{len(cpu) - n} more CPU node(s): --top 0 lists all"))
    for note in v.notes:
        c.print(safe_text(f"note: {note}"))
    c.print()
