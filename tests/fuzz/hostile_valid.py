#!/usr/bin/env python3
"""Small, well-formed ETDumps whose values are chosen to hurt (issue 12): the reproducers of the
tracebacks found with structure-aware, valid inputs. Built here with the fuzz harness's flatbuffers
writer (``fuzz_harness.build_etdump``), never as hand bytes.

    python tests/fuzz/hostile_valid.py OUT_DIR     # writes synthetic_hostile_<name>.etdump

Each builder returns the ETDump bytes; ``CASES`` maps a name to (builder, the CLI commands that
crashed on it).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fuzz_harness as H  # noqa: E402

# QNN's own top-level event names (as the Qualcomm backend logs them: domain.md).
QNN_TOP = ["QNN (execute) time (us)", "Accelerator (execute) time (cycles)"]


def _execute_run(body, start=1_000, end=9_000, method_execute=True):
    ev = [("P", "Method::execute", -1, 0, None, None, None, start, end)] if method_execute else []
    return dict(name="Execute", events=ev + body)


def _default_run():
    return dict(name="Default", events=[("P", "Method::init", -1, 0, None, None, None, 10, 50),
                                        ("P", "Program::load_method", -1, 0, None, None, None, 5, 60)])


def qnn_integer_debug_id(n_runs: int = 3) -> bytes:
    """A QNN partition whose delegate events carry QNN names, plus one event with only an integer
    delegate debug id (no string id, no name)."""
    runs = [_default_run()]
    for r in range(n_runs):
        t = 1_000 + r * 10_000
        body = [("P", None, 0, 0, None, QNN_TOP[0], None, 0, 700),
                ("P", None, 0, 0, None, QNN_TOP[1], None, 0, 5_000),
                ("P", None, 0, 0, 7, None, None, 0, 321),                 # integer debug id only
                ("P", "DELEGATE_CALL", 0, 0, None, None, None, t + 100, t + 900)]
        runs.append(_execute_run(body, t, t + 1_000))
    return H.build_etdump(runs)


def integer_debug_id_only(n_runs: int = 3) -> bytes:
    """A delegate partition whose every internal event has only an integer debug id."""
    runs = [_default_run()]
    for r in range(n_runs):
        t = 1_000 + r * 10_000
        body = [("P", None, 0, 0, 3, None, None, t + 200, t + 300),
                ("P", None, 0, 0, 4, None, None, t + 300, t + 700),
                ("P", "DELEGATE_CALL", 0, 0, None, None, None, t + 100, t + 900)]
        runs.append(_execute_run(body, t, t + 1_000))
    return H.build_etdump(runs)


def huge_timestamp(n_runs: int = 2) -> bytes:
    """Timestamps at and past 2**63 (uint64 in the schema); every timed event is that late, so the
    time origin (the first timed event) is too."""
    big = 2 ** 63
    runs = []
    for r in range(n_runs):
        t = big + r * 10_000
        body = [("P", "native_call_add.out", 0, 1, None, None, None, t + 10, t + 20),
                ("P", "OPERATOR_CALL", 0, 1, None, None, None, t + 5, t + 30)]
        runs.append(_execute_run(body, t, t + 1_000))
    runs.append(_execute_run([], 2 ** 64 - 2, 2 ** 64 - 1))
    return H.build_etdump(runs)


def zero_length_execute(n_runs: int = 3) -> bytes:
    """``Method::execute`` events that last 0 ns (start == end)."""
    runs = [_default_run()]
    for r in range(n_runs):
        t = 1_000 + r * 10_000
        body = [("P", "native_call_add.out", 0, 1, None, None, None, t, t),
                ("P", "OPERATOR_CALL", 0, 1, None, None, None, t, t)]
        runs.append(_execute_run(body, t, t))
    return H.build_etdump(runs)


def no_execute_runs() -> bytes:
    """Only the ``Default`` block (load events), no Execute run."""
    return H.build_etdump([_default_run()])


def empty_execute_runs(n_runs: int = 2) -> bytes:
    """Execute RunData blocks with no events at all."""
    return H.build_etdump([dict(name="Execute", events=[]) for _ in range(n_runs)])


def odd_tensor_shapes(n_runs: int = 2) -> bytes:
    """Debug (intermediate output) events whose tensors have empty, zero, huge and negative sizes."""
    runs = [_default_run()]
    shapes = [[], [0], [0, 5], [2 ** 31, 2 ** 31, 2 ** 31], [-1, 3], [1] * 16, [2 ** 62, 4],
              [2 ** 62] * 20,                 # element count past float64's range (2**1024)
              [2 ** 63 - 1] * 20 + [0],       # ... times 0
              [2 ** 63 - 1] * 5 + [-(2 ** 63)]]
    for r in range(n_runs):
        t = 1_000 + r * 10_000
        body = [("P", "native_call_add.out", 0, 1, None, None, None, t + 10, t + 20),
                ("P", "OPERATOR_CALL", 0, 1, None, None, None, t + 5, t + 30)]
        body += [("D", "tensor", 0, 1, None, None, (1, 6, s)) for s in shapes]
        body += [("D", "list", 0, 1, None, None, ("list", 6, s)) for s in shapes[:3]]
        runs.append(_execute_run(body, t, t + 1_000))
    return H.build_etdump(runs)


def normal(n_runs: int = 24) -> bytes:
    """A plain CPU run series (the other side of a diff, and for --runs checks)."""
    runs = [_default_run()]
    for r in range(n_runs):
        t = 1_000 + r * 10_000
        body = [("P", "native_call_add.out", 0, 1, None, None, None, t + 10, t + 20 + r),
                ("P", "OPERATOR_CALL", 0, 1, None, None, None, t + 5, t + 30 + r)]
        runs.append(_execute_run(body, t, t + 1_000 + r))
    return H.build_etdump(runs)


CASES = {
    "qnn_integer_debug_id": qnn_integer_debug_id,
    "integer_debug_id_only": integer_debug_id_only,
    "huge_timestamp": huge_timestamp,
    "zero_length_execute": zero_length_execute,
    "no_execute_runs": no_execute_runs,
    "empty_execute_runs": empty_execute_runs,
    "odd_tensor_shapes": odd_tensor_shapes,
    "normal": normal,
}


def write_all(out_dir) -> dict[str, Path]:
    out = Path(out_dir)
    paths = {}
    for name, build in CASES.items():
        p = out / f"synthetic_hostile_{name}.etdump"
        p.write_bytes(build())
        paths[name] = p
    return paths


if __name__ == "__main__":
    for p in write_all(sys.argv[1] if len(sys.argv) > 1 else ".").values():
        print(p)
