"""How close the HTP runs to the hardware's limits, from what the files measure.

- Per QNN op: achieved DRAM and VTCM bytes/s (its QHAS bytes ÷ its cycles at the stated clock), its
  cycles split (``htp_ops``), and a label of what bounds it, from those two alone.
- The SoC's DRAM bandwidth: the table below, where every figure carries its public source; a SoC
  not in it has no figure ("bandwidth unknown"), and ``--dram-gbps`` sets one. These are
  theoretical peaks of the memory interface (channels × width × transfer rate), not sustained
  throughput: the HTP shares that bus with the CPU, GPU and display.
- For an LLM: weight bytes streamed per token × decode tokens/s ÷ DRAM bandwidth, how close the
  decode runs to the memory wall.

No compute ceiling (MAC/s of HMX/HVX) is claimed: none is published in a source we can cite. MAC/s
needs tensor shapes, which neither the ETRecord nodes read here nor QHAS's per-op rows give with
their meaning (which dimension is reduced), so it is not computed.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from etscope.analysis.qnn.htp_ops import HtpBreakdown, QnnOpHtp
from etscope.formats.backends import is_qnn
from etscope.formats.qnn_compile_spec import QnnSoc

# SoC model (QNN compile spec) -> (theoretical peak DRAM bandwidth GB/s, memory, source).
DRAM_BANDWIDTH = {
    "SM8550": (67.2, "LPDDR5X, 4 × 16-bit channels at 4200 MHz (Snapdragon 8 Gen 2)",
               "https://gist.github.com/EwoutH/754fa40ad9ddc93d55084fc46569c759 (Snapdragon SoC comparison "
               "table, 'Memory Controller' row: '4x 16-bit CH @ 4200MHz LPDDR5X / 67.2GB/s')"),
    "SM8650": (76.8, "LPDDR5X, 4 × 16-bit channels at 4800 MHz (Snapdragon 8 Gen 3)",
               "https://gist.github.com/EwoutH/754fa40ad9ddc93d55084fc46569c759 (Snapdragon SoC comparison "
               "table, 'Memory Controller' row: '4x 16-bit CH @ 4800MHz LPDDR5X / 76.8GB/s')"),
    "SM8750": (84.8, "LPDDR5X at 5300 MHz, 10,600 MT/s (Snapdragon 8 Elite)",
               "https://geektopia.es/es/technology/2024/10/22/noticias/amp/qualcomm-anuncia-el-snapdragon-8-elite-"
               "para-moviles-de-gama-alta.html (2024-10-22: 'LPDDR5X a 5300 MHz (10 600 MT/s) ... 84.8 GB/s')"),
}
# An op whose DMA (transfers + waits) takes at least this share of its cycles is "mostly DMA".
MOSTLY = 0.5
# Achieved DRAM bytes/s at or above this share of the SoC's peak: the op is near the bandwidth limit.
NEAR_PEAK = 0.5


@dataclass(frozen=True)
class Bandwidth:
    gbps: float | None          # None: unknown
    source: str                 # where the figure comes from, or why there is none
    soc: str | None = None
    # what the views print: a field (not a property) so a typed result holding it writes it to JSON
    text: str = field(init=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "text", f"{self.gbps:g} GB/s ({self.source})" if self.gbps else
                           f"bandwidth unknown ({self.source})")


def dram_bandwidth(soc_model: str | None, override_gbps: float | None = None) -> Bandwidth:
    """The DRAM bandwidth to compare with: ``--dram-gbps`` when given, else the SoC's sourced figure."""
    if override_gbps is not None:
        return Bandwidth(float(override_gbps), "--dram-gbps", soc_model)
    if soc_model and soc_model.upper() in DRAM_BANDWIDTH:
        gbps, memory, src = DRAM_BANDWIDTH[soc_model.upper()]
        return Bandwidth(gbps, f"{soc_model} theoretical peak, {memory}; source: {src}", soc_model)
    why = (f"{soc_model} has no sourced figure here" if soc_model else
           "SoC unknown: give the .pte (its QNN compile spec names the SoC)")
    return Bandwidth(None, why + "; set one with --dram-gbps", soc_model)


@dataclass(frozen=True)
class OpLimit:
    """What bounds one QNN op, from its cycles split and its achieved bytes/s."""
    qnn_op: str
    time_us: float | None          # its cycles ÷ the clock
    dram_gbps: float | None        # achieved: DRAM bytes ÷ time
    vtcm_gbps: float | None
    dram_share_of_peak: float | None
    largest: str | None            # the category with most of its cycles
    largest_share: float | None
    bound: str                     # the label
    basis: str                     # what the label rests on


def op_limit(o: QnnOpHtp, clock_mhz: float | None, bw: Bandwidth) -> OpLimit:
    """The split that decides is the op's dominant-path cycles when the file has them (what its
    latency waited on: a DMA wait overlapping other work is not on the path), else its cycles."""
    split = o.dominant_by_category if o.dominant_by_category else o.by_category
    of = "dominant-path cycles" if o.dominant_by_category else "cycles"
    active = [(x.category, x.cycles) for x in split if x.category != "idle"]
    total = sum(v for _, v in active)
    largest, share = (max(active, key=lambda cv: cv[1]) if active else (None, 0.0))
    share = share / total if total else None
    time_us = o.cycles / clock_mhz if clock_mhz and o.cycles else None
    dram = o.dram_bytes / time_us / 1e3 if time_us and o.dram_bytes is not None else None    # B/µs -> GB/s
    vtcm = o.vtcm_bytes / time_us / 1e3 if time_us and o.vtcm_bytes is not None else None
    of_peak = dram / bw.gbps if dram is not None and bw.gbps else None
    if largest is None:
        bound, basis = "no HTP op", "no cycles"
    elif of_peak is not None and of_peak >= NEAR_PEAK:
        bound = "DRAM bandwidth"
        basis = f"achieves {dram:.1f} GB/s, {of_peak:.0%} of the {bw.gbps:g} GB/s peak"
    else:
        bound = {"hmx": "HMX compute", "hvx": "HVX compute", "layout": "layout conversion",
                 "dma": "data movement (DMA)", "sync": "synchronisation"}.get(largest, "unknown")
        if share is not None and share < MOSTLY:
            bound = f"mixed (largest: {bound})"
        basis = f"{largest} {share:.0%} of its {of}" if share is not None else ""
        if dram is not None:
            basis += (f"; DRAM {dram:.2f} GB/s" + (f" = {of_peak:.1%} of the {bw.gbps:g} GB/s peak" if of_peak
                                                    is not None else ", bandwidth unknown"))
    return OpLimit(qnn_op=o.qnn_op, time_us=time_us, dram_gbps=dram, vtcm_gbps=vtcm, dram_share_of_peak=of_peak,
                   largest=largest, largest_share=share, bound=bound, basis=basis)


@dataclass(frozen=True)
class HtpLimits:
    """The limits of one breakdown's QNN ops at one clock, against one bandwidth."""
    clock_mhz: float | None
    clock_source: str | None
    clock_note: str
    bandwidth: Bandwidth
    ops: tuple[OpLimit, ...]
    macs_note: str = ("MAC/s not computed: no tensor shapes with their meaning in the inputs "
                      "(the ETRecord nodes read here carry none)")
    compute_ceiling_note: str = "no HMX/HVX compute ceiling is stated: none is published in a citable source"


def limits(b: HtpBreakdown, clock: tuple, bw: Bandwidth) -> HtpLimits:
    """``clock``: (MHz, source, is_estimate, note) from ``htp_timeline.timeline_clock``, the one rule
    for the clock of the optrace run's first inference."""
    mhz, source, _est, note = clock
    return HtpLimits(clock_mhz=mhz, clock_source=source, clock_note=note, bandwidth=bw,
                     ops=tuple(op_limit(o, mhz, bw) for o in b.ops if o.cycles))


# ---- LLM: the decode's distance from the memory wall ------------------------------------------------
@dataclass(frozen=True)
class MemoryWall:
    """weight bytes per token × decode tokens/s ÷ DRAM bandwidth."""
    weight_bytes_per_token: float | None
    weight_bytes_from: str
    decode_tokens_per_s: float | None
    tokens_from: str
    bandwidth: Bandwidth
    streamed_gbps: float | None        # bytes/token × tokens/s, GB/s
    share_of_bandwidth: float | None   # streamed ÷ bandwidth
    synthetic: bool                    # the tokens/s come from a synthetic fixture
    text: str
    prefill_hmx_busy_share: float | None = None
    prefill_hmx_from: str = "needs the prefill graph's QHAS (its HMX cycles used ÷ timeline cycles)"

    def to_dict(self) -> dict:       # the llm result's (a dict today): the fields, bandwidth with its text
        return asdict(self)


def weight_bytes_per_token(program, method: str | None) -> tuple[float | None, str]:
    """Bytes a decode step may stream: the QNN delegate blobs (context binaries: weights plus graph)
    its method calls, plus the program's constant data. An upper bound on the weights read per token:
    the blob holds the graph too, and weights that stay in VTCM or caches are not re-read."""
    if program is None:
        return None, "no .pte: give --pte (its delegate blobs and constants hold the weights)"
    methods = [m for m in program.methods if m.name == method] if method else []
    whose = f"method {method}" if methods else "the program"
    if not methods:
        methods = [m for m in program.methods if m.delegates]   # a blob shared by methods counts once
    seen, total = set(), 0
    for m in methods:
        for d in m.delegates:
            key = (d.location, d.data_index)
            if key not in seen:
                seen.add(key)
                total += d.blob_size
    total += program.constant_bytes
    if not seen and not program.constant_bytes:
        return None, "the .pte holds no delegate blob and no constant data"
    what = (f"{len(seen)} delegate blob(s) of {whose} + {program.constant_bytes:,} bytes of constants, from the .pte (an upper bound: a QNN context binary "
            "holds the graph too, and weights kept in VTCM or caches are not re-read per token)")
    return float(total), what


def memory_wall(program, decode_method: str | None, tokens_per_s: float | None, tokens_from: str,
                bw: Bandwidth, synthetic: bool, prefill_resources: list[dict] | None = None,
                prefill_path: str | None = None) -> MemoryWall:
    per_token, from_ = weight_bytes_per_token(program, decode_method)
    streamed = per_token * tokens_per_s / 1e9 if per_token is not None and tokens_per_s else None
    share = streamed / bw.gbps if streamed is not None and bw.gbps else None
    syn = " (tokens/s from a synthetic fixture: the figure shows the arithmetic, not a device)" if synthetic else ""
    if per_token is None or not tokens_per_s:
        text = "decode's distance from the memory wall cannot be decided: " + (
            from_ if per_token is None else "no decode tokens/s (give --prompt-tokens/--decode-tokens or the .pte)")
    elif share is None:
        text = (f"decode streams at most {per_token:,.0f} B/token × {tokens_per_s:,.1f} tokens/s = {streamed:.3f} GB/s; "
                f"{bw.text}: how close that is to the memory wall cannot be said{syn}")
    else:
        text = (f"decode streams at most {per_token:,.0f} B/token × {tokens_per_s:,.1f} tokens/s = {streamed:.3f} GB/s, "
                f"{share:.2%} of the {bw.gbps:g} GB/s DRAM peak: " +
                ("near the memory wall" if share >= NEAR_PEAK else "far below the memory wall (weights are not "
                 "what limits this decode)") + syn)
    hmx_share, hmx_from = None, MemoryWall.prefill_hmx_from
    for r in prefill_resources or []:
        if r.get("type") == "HMX" and r.get("cycles_used") is not None and r.get("timeline_cycles"):
            hmx_share = r["cycles_used"] / r["timeline_cycles"]
            hmx_from = (f"QHAS of the prefill graph{' (' + prefill_path + ')' if prefill_path else ''}: HMX cycles used "
                        f"{r['cycles_used']:,.0f} ÷ timeline {r['timeline_cycles']:,.0f}"
                        + (" (a synthetic fixture)" if _synthetic(prefill_path) else ""))
            break
    return MemoryWall(weight_bytes_per_token=per_token, weight_bytes_from=from_, decode_tokens_per_s=tokens_per_s,
                      tokens_from=tokens_from, bandwidth=bw, streamed_gbps=streamed, share_of_bandwidth=share,
                      synthetic=synthetic, text=text, prefill_hmx_busy_share=hmx_share, prefill_hmx_from=hmx_from)


def _synthetic(path) -> bool:
    """A file made by a script: the project names them ``synthetic_*``."""
    return bool(path) and str(path).replace("\\", "/").rsplit("/", 1)[-1].startswith("synthetic_")


def llm_memory_wall(program, llm, soc: QnnSoc | None, dram_gbps: float | None, sources,
                    prefill_resources: list[dict] | None = None, prefill_path: str | None = None) -> MemoryWall | None:
    """The memory wall of an LLM result (``analysis.llm``'s ``LlmRuns``) whose program has a QNN
    delegate; None otherwise. ``sources``: the input paths (an ETDump named ``synthetic_*`` is a
    fixture made by a script: the figure then says so)."""
    if program is None or not llm or not any(is_qnn(d.backend_id) for m in program.methods
                                             for d in m.delegates):
        return None
    decode = llm.phase("decode")
    if decode is None:
        return None
    tps = llm.decode_tokens_per_s
    tokens_from = (f"decode p50 {decode.ms_per_token:.3f} ms per token over {decode.steady_runs} steady "
                   f"run(s); tokens per run: {decode.tokens_from or 'unknown'}") if tps else "unknown"
    bw = dram_bandwidth(soc.soc_model if soc is not None else None, dram_gbps)
    synthetic = any(_synthetic(s) for s in sources or ())
    return memory_wall(program, decode.method, tps, tokens_from, bw, synthetic,
                       prefill_resources=prefill_resources, prefill_path=prefill_path)
