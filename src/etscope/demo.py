"""The samples shipped inside the package for `etscope demo`: a QNN run first (the NPU side), then
a CPU/XNNPACK run (provenance in ``data/README.md``)."""
from __future__ import annotations

from dataclasses import astuple, dataclass, fields, replace
from importlib import resources

QNN_SAMPLE_DESCRIPTION = (
    "a Snapdragon 8 Gen 3 (SM8650) run on the Qualcomm NPU (QNN HTP): a chain of 8 matmuls in one QNN "
    "partition, 3 executes. Measured on the device: every QNN level (QNN execute, RPC, accelerator "
    "times, per-op cycles) and the QHAS, optrace and runtrace. Simulated by etscope's fixture script "
    "(no public ETDump of a device run exists): the ETDump around them as ExecuTorch's QNN backend writes "
    "it, with DELEGATE_CALL = QNN execute + 30-80 µs, the framework overhead and Method::init made up; "
    "do not calibrate on those")
SAMPLE_DESCRIPTION = (
    "a real ExecuTorch 1.5.1 run on an x86-64 CPU: a small CNN (conv/relu/maxpool/linear) lowered to "
    "XNNPACK in one partition, plus cumsum, which XNNPACK cannot take and so falls back to the CPU "
    "portable kernel; 10 executes with ETDump, ETRecord and .pte")


def _data(name: str) -> str:
    return str(resources.files("etscope") / "data" / name)


@dataclass(frozen=True)
class QnnSample:
    """The QNN sample's files: the ETDump and the QNN files measured with it."""
    etdump: str
    qhas: str
    optrace: str
    runtrace: str

    def files(self) -> tuple[str, ...]:
        return astuple(self)


@dataclass(frozen=True)
class CpuSample:
    """The CPU/XNNPACK sample's files."""
    etdump: str
    etrecord: str
    pte: str

    def files(self) -> tuple[str, ...]:
        return astuple(self)


def qnn_sample_paths() -> QnnSample:
    return QnnSample(etdump=_data("synthetic_qnn_chain8.etdump"), qhas=_data("sample_qnn_chain8.qhas.json"),
                     optrace=_data("sample_qnn_chain8.optrace.json"), runtrace=_data("sample_qnn_chain8.runtrace.json"))


def sample_paths() -> CpuSample:
    return CpuSample(etdump=_data("sample_cnn.etdump"), etrecord=_data("sample_cnn.etrecord"),
                     pte=_data("sample_cnn.pte"))


def _quoted(sample, quote):
    """The sample with each path shell-quoted."""
    return replace(sample, **{f.name: quote(getattr(sample, f.name)) for f in fields(sample)})


def try_next(qnn: QnnSample, cpu: CpuSample, quote) -> list[str]:
    """Commands to run next on the samples (``quote``: shell quoting of a path)."""
    q, c = _quoted(qnn, quote), _quoted(cpu, quote)
    qnn_files = f"--qhas {q.qhas} --optrace {q.optrace} --runtrace {q.runtrace}"
    return [
        f"etscope qnn {q.etdump} {qnn_files}   # the QNN nesting, clock, per-op cycles, HMX/HVX",
        f"etscope report {q.etdump} {qnn_files} -o qnn-report.html",
        f"etscope trace {q.etdump} --runtrace {q.runtrace} -o qnn-trace.json   # open in ui.perfetto.dev",
        f"etscope qnn --optrace {q.optrace}   # a QNN file alone",
        f"etscope ops {c.etdump} --etrecord {c.etrecord} --pte {c.pte}   # the CPU sample's op table",
        f"etscope sql {c.etdump} \"SELECT op_type, sum(dur_us) FROM events GROUP BY 1 ORDER BY 2 DESC\"",
    ]
