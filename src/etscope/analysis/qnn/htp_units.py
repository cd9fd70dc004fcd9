"""The HTP units of an optrace as timeline tracks, one builder for both traces (with an ETDump, and
QNN files alone): one track per HMX / HVX / DMA unit (and per extra lane where ops overlap without
nesting), each executed op a slice, cycles turned into µs here (never in render) with the clock of
the inference the optrace records (``htp_timeline.timeline_clock``: the runtrace's first Graph
Execute, else QHAS timeline cycles ÷ graph execute µs, else the ETDump partition's). The optrace
records one inference of a separate run: its time axis starts at 0 and is not the ETDump's."""
from __future__ import annotations

from dataclasses import dataclass

CLOCK_RULE = ("HTP unit tracks (optrace/QHAS: one inference of a separate run): cycles ÷ the clock of that "
              "inference (the runtrace's first Graph Execute, else QHAS timeline cycles ÷ graph execute µs, else "
              "the ETDump partition's clock); QNN per-op slices inside a DELEGATE_CALL: that run's share of the "
              "measured accelerator time (cycles ÷ that run's clock, scaled into the measured level when they "
              "exceed it)")


@dataclass(frozen=True)
class UnitTrack:
    key: int            # 1, 2, ...: the track's number within the units' process
    name: str


@dataclass(frozen=True)
class Slices:
    """Slices of a timeline as columns, entry k of each column the k-th slice (µs from the view's
    origin; ``track``: its track's id). A column per field, not an object per slice: an ETDump's
    trace holds a slice per event (millions). ``args``: each slice's details, the plain mappings the
    trace writes as they are (output data, built once here)."""
    name: tuple[str, ...]
    cat: tuple[str, ...]
    track: tuple[int, ...]
    ts: tuple[float, ...]
    dur: tuple[float, ...]
    args: tuple[dict, ...]

    @classmethod
    def of(cls, rows) -> Slices:
        """From ``(name, cat, track, ts, dur, args)`` rows, in their order."""
        cols = tuple(zip(*rows))
        return cls(*cols) if cols else cls((), (), (), (), (), ())

    def __len__(self) -> int:
        return len(self.name)


@dataclass(frozen=True)
class HtpUnits:
    process: str
    tracks: tuple[UnitTrack, ...]
    slices: Slices                       # track: the UnitTrack's key
    clock_mhz: float | None


def htp_units(tl, notes: list[str]) -> HtpUnits | None:
    """The unit tracks of ``tl`` (the QNN report's ``htp_timeline``, ``htp_timeline.TimelineView``);
    None without one; a line in
    ``notes`` when tracks are left out."""
    if tl is None or not tl.tracks:
        return None
    mhz = tl.clock_mhz
    if not mhz:
        notes.append("optrace HTP unit tracks left out: no clock to turn their cycles into time "
                     "(give QHAS or the runtrace of the optrace run)")
        return None
    how = "estimated" if tl.clock_is_estimate else "measured"
    tracks, rows = [], []
    key = 0
    for t in tl.tracks:
        sl = t.slices
        base = key
        for lane in range(max(t.lanes, 1)):
            key += 1
            tracks.append(UnitTrack(key, f"{t.kind} (tid {t.tid})" + (f" lane {lane + 1}" if lane else "")))
        for s, d, ln, op, qop, cat in zip(sl.start_cycles, sl.dur_cycles, sl.lane, sl.op,
                                          sl.qnn_op, sl.category):
            # Integer ns from cycles, so that µs values of touching ops touch exactly.
            start_ns, end_ns = round(s * 1000 / mhz), round((s + d) * 1000 / mhz)
            rows.append((op, f"htp_{cat}", base + 1 + ln, start_ns / 1000, (end_ns - start_ns) / 1000,
                         {"qnn_op": qop, "uses": cat, "cycles": d, "start_cycle": s, "clock_mhz": round(mhz, 1),
                          "clock": tl.clock_source, "estimated": bool(tl.clock_is_estimate)}))
        if t.slices_total > len(sl.start_cycles):
            notes.append(f"optrace {t.kind} tid {t.tid}: the {len(sl.start_cycles)} longest of "
                         f"{t.slices_total} ops are drawn")
    return HtpUnits(f"HTP units (optrace: one inference of its own run, from 0; cycles ÷ {mhz:,.0f} MHz {how})",
                    tuple(tracks), Slices.of(rows), float(mhz))
