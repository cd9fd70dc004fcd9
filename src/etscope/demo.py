"""The sample shipped inside the package for `etscope demo`."""
from __future__ import annotations

from importlib import resources

SAMPLE_DESCRIPTION = (
    "a real ExecuTorch 1.5.1 run on an x86-64 CPU: a small CNN (conv/relu/maxpool/linear) lowered to "
    "XNNPACK in one partition, plus cumsum, which XNNPACK cannot take and so falls back to the CPU "
    "portable kernel; 10 executes with ETDump, ETRecord and .pte")


def sample_paths() -> dict[str, str]:
    base = resources.files("etscope") / "data"
    return {"etdump": str(base / "sample_cnn.etdump"), "etrecord": str(base / "sample_cnn.etrecord"),
            "pte": str(base / "sample_cnn.pte")}
