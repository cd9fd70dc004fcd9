"""What an ETDump reader gives: its RunData and the file's data as plain columns (``EtdumpData``).
Kept apart from the reader (``formats.etdump``, which re-exports both) so that the records stay
small to read."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from etscope.formats.etdump_tensors import DebugTensors


@dataclass
class RunData:
    name: str
    bundled_input_index: int
    allocators: list[str]
    first_event: int
    event_count: int


@dataclass
class EtdumpData:
    """Plain data read from one ETDump file. ``events`` columns are aligned numpy arrays."""

    path: str
    version: int
    size_bytes: int
    runs: list[RunData]
    strings: list[str]
    events: dict[str, np.ndarray] = field(default_factory=dict)
    tensors: DebugTensors | None = None   # debug events' tensors (None: the file has no debug event)
    # Per RunData, the earlier run whose events this one repeats, event for event, in every column
    # but start/end (its bytes compared equal, see etdump_repeats); -1: read on its own. None when
    # no run repeats another, or once events were selected (a subset's runs no longer line up).
    repeats_of: np.ndarray | None = None
    _run_columns: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def event_count(self) -> int:
        return int(self.events["kind"].shape[0])     # "kind": every event has one (a Profile may drop "run")

    def run_counts(self) -> np.ndarray:
        """Each RunData's ``event_count`` (int64, read-only): made once, not by a loop over the
        runs each time (29,000 runs: ~10 ms a loop)."""
        return self._run_arrays()[0]

    def run_firsts(self) -> np.ndarray:
        """Each RunData's ``first_event`` (int64, read-only)."""
        return self._run_arrays()[1]

    def set_run_arrays(self, counts: np.ndarray, firsts: np.ndarray) -> None:
        """What ``run_counts`` / ``run_firsts`` give, from whoever made the RunData."""
        counts, firsts = np.array(counts, dtype=np.int64), np.array(firsts, dtype=np.int64)
        counts.flags.writeable = firsts.flags.writeable = False
        self._run_columns = (self.runs, counts, firsts)

    def with_events(self, events: dict[str, np.ndarray]) -> "EtdumpData":
        """A copy with other event columns (the same runs: their arrays come along)."""
        new = dataclasses.replace(self, events=events)
        new._run_columns = self._run_columns
        return new

    def _run_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        got = self._run_columns
        if got is None or got[0] is not self.runs or len(got[1]) != len(self.runs):
            self.set_run_arrays(np.fromiter((r.event_count for r in self.runs), dtype=np.int64, count=len(self.runs)),
                                np.fromiter((r.first_event for r in self.runs), dtype=np.int64, count=len(self.runs)))
            got = self._run_columns
        return got[1], got[2]
