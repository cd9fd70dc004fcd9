"""The DSP heap profile beside the memory the program plans: ``--qnn-heap`` on summary/qnn/report.

Three different memories, never added together:

* DSP heap (``htp_heap_usage.txt``): total heap in use on the DSP *before the first* QNN context
  was created and *after the last* was freed; the difference is heap the run did not give back.
  The peak while the model ran is not in the file;
* planned CPU memory (``.pte``, per method): the non-constant buffers ExecuTorch's memory planner
  laid out for activations on the CPU side;
* VTCM (``.pte`` QNN compile spec, else ExecuTorch's SoC table): the HTP's on-chip memory size.
"""
from __future__ import annotations

from dataclasses import dataclass

from etscope.formats import qnn_compile_spec as qcs
from etscope.formats.heap import HeapProfile


ABOUT = ("two checkpoints around the QNN contexts' lifetime, not the peak DSP heap while the model ran; "
         "neither VTCM nor CPU memory")


@dataclass(frozen=True)
class HeapView:
    """The DSP heap file beside the program's planned memory and VTCM (JSON: ``qnn_heap``)."""
    path: str
    before_bytes: int
    after_bytes: int | None              # None: the contexts were never freed (first line only)
    difference_bytes: int | None         # after - before; None without the second line
    contexts_freed: bool
    planned_cpu_bytes: dict[str, int]    # {method: bytes}, methods with instructions; empty without the .pte
    method: str | None                   # the runs' method, when known
    vtcm_bytes: int | None               # first QNN compile spec's (or the SoC table's)
    vtcm_source: str | None
    soc_model: str | None
    notes: tuple[str, ...]               # what this file shows: contexts not freed, heap kept
    about: str                           # what the numbers are (``ABOUT``)


def heap_view(heap: HeapProfile, program=None, method: str | None = None) -> HeapView:
    """The heap file's checkpoints, the planned CPU memory per method of ``program`` (the .pte, if
    given), the VTCM of its first QNN compile spec, and notes on what the file shows."""
    notes: list[str] = []
    diff = heap.difference_bytes
    if heap.after_bytes is None:
        notes.append("no DSP:after_context_freed line: the QNN contexts were not freed before the process "
                      "ended (or it stopped early), so what the run kept cannot be told")
    elif diff > 0:
        notes.append(f"{diff:,} bytes of DSP heap were still in use after the last QNN context was freed "
                     "(compared with before the first was created)")
    elif diff < 0:
        notes.append(f"the DSP heap was {-diff:,} bytes smaller after the contexts were freed than before "
                     "they were created (other DSP clients freed memory meanwhile?)")
    planned: dict[str, int] = {}
    vtcm = soc = vtcm_source = None
    if program is not None:
        for m in program.methods:
            if m.instructions:
                planned[m.name] = m.planned_memory_bytes
        vtcms = set()
        for (_, _), spec in qcs.find_qnn_compile_specs(program).items():
            if spec.vtcm_bytes is not None:
                vtcms.add(spec.vtcm_bytes)
                if vtcm is None:
                    vtcm, vtcm_source, soc = spec.vtcm_bytes, spec.vtcm_source, spec.soc_model
        if len(vtcms) > 1:
            notes.append("the program's QNN delegates name different VTCM sizes: "
                         + ", ".join(f"{v:,} bytes" for v in sorted(vtcms)) + "; the first is shown")
    return HeapView(heap.path, heap.before_bytes, heap.after_bytes, diff, heap.after_bytes is not None, planned,
                    method, vtcm, vtcm_source, soc, tuple(notes), ABOUT)
