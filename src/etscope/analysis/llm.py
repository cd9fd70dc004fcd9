"""LLM runs: the run series, phases (prefill / decode, or one per method), warm-up, tokens/s, time to
first token and how decode latency drifts with the position in the generation.

Where each number comes from:

* **Run series**: ``Method::execute`` of every Execute run, in file order (several ETDumps are
  concatenated in the order given).
* **Phases**, first rule that applies:

  1. ``--prompt-runs``: the listed runs are prefill, all others decode.
  2. Debug events with tensor shapes: the dimension that changes between runs in the logged
     tensors (``1x8x64`` vs ``1x1x64``) is the token count of each run; runs with more than one
     token are prefill.
  3. What the runs executed: runs whose events differ (another method, e.g. QNN's separate
     prefill and decode graphs, or another ETDump) form separate groups.
  4. Cost profile, inside each group (one dynamic-shape method serving both): a prefill run is
     one where the same set of token-dependent instructions (matmuls, KV-cache updates, masks)
     costs several times its median over the runs while the other instructions do not. The
     instructions that gave the decision are reported.

* **Warm-up**: the first runs of a phase each over 2x the median latency of the phase's runs
  after it (at most 10% of the phase, at least one; phases of 4+ runs; ``stats.leading_warmup``,
  the rule ``diff`` uses too). They are listed and left out of the steady-state
  statistics; all runs stay in the series.
* **Tokens/s**: 1000 / (decode p50 ms per token). **TTFT**: the prefill latency (p50 over steady
  prefill runs; the first prefill is also given).
* **Drift**: decode latency against the position in the generation (token index when the prompt
  length is known, else decode steps since the last prefill), with a least-squares slope on the
  median latency per position (weighted by runs) and its 95% interval. Stated as a drift only when
  the interval excludes zero, the positions span at least 32, and the fitted change over the range
  exceeds the run-to-run spread (IQR of the runs' residuals around the fit).
* **First decode after a prefill**: stated as slower only when there are at least 5 prefill->decode
  transitions, the first decode is above the upper quartile of the other decodes in at least 80% of
  them (each would be with probability 1/4 if it were like the others: 4 of 5 by chance 1.6%), and
  its median exceeds theirs by more than their IQR. Causes are offered as possibilities.

Every finding (``findings[]``) states its basis: how many runs or instances, and their spread.
"""
from __future__ import annotations

import numpy as np

from etscope import profile as P
from etscope.hashing import MIX3, mix64, sum_u64
from etscope.analysis import placement
from etscope.analysis.stats import WARMUP_FACTOR, describe, leading_warmup
from etscope.formats import etdump as etdump_format

SCHEMA = "etscope.llm/1"

MIN_OPS_FOR_COST_SPLIT = 8   # instructions with >= 1 µs median needed to split by cost
MIN_OP_NS = 1000.0
SENSITIVE_LOG2 = 1.0         # an instruction "costs several times" more or less: >= 2x (after centring)
MIN_SENSITIVE_OPS = 3
LONE_RUN_EVIDENCE_LOG2 = 20.0  # a group of one run: its pattern summed over instructions, log2 (10 at 4x)
PREFILL_MAX_SHARE = 0.6      # a group of costlier runs must be fewer than this share of the runs
DECODE_MAX_SHARE = 0.75      # a group of cheaper runs likewise
CLOCK_NONE, CLOCK_CPU, CLOCK_DELEGATE = 0, 1, 2   # cost_split's column classes (see there)
# The (runs x instructions) tables hold at most this many cells per event of the file, plus a base
# (8 MB of float64); past that the least-called instructions are left out of them (and said so).
MAX_TABLE_CELLS_PER_EVENT = 16
MAX_TABLE_CELLS_BASE = 1 << 20
MAX_GROUPS = 8               # more distinct run structures than this: structure is not a phase
# A finding is stated only when the data carry it (issue: three values once made a "fact"):
FIRST_DECODE_MIN_INSTANCES = 5   # prefill->decode transitions needed to judge the first decode
FIRST_DECODE_MIN_SHARE = 0.8     # ... above the other decodes' upper quartile in this share of them
FIRST_DECODE_HINT_RATIO = 1.3    # a median ratio past this is mentioned even when not established
DRIFT_MIN_POSITIONS = 32         # a narrower range of positions cannot show a drift


# ---- per-file preparation --------------------------------------------------------------------------
class _FileRuns:
    """Per-run data of one profile: latency, structure signature, per-instruction times, tokens."""

    def __init__(self, profile: P.Profile, file_index: int, source: int = 0, from_split: bool = False):
        self.profile = profile
        self.file_index = file_index              # index of this part
        self.source = source                      # index of the input profile it comes from
        self.from_split = from_split              # one method's runs of an ETDump holding several
        self.n = profile.n_runs
        self.latency_ns = np.asarray(profile.runs["latency_ns"], dtype=np.float64)
        self.etdump_run = np.asarray(profile.runs["etdump_run"], dtype=np.int64)
        it = placement.instruction_times(profile)
        self.call_run, self.call_instr = it["execute"], it["instruction_id"]   # every call, sparse
        ids, inv = np.unique(it["instruction_id"], return_inverse=True)
        kept, inv = _columns_within_budget(np.bincount(inv.reshape(-1), minlength=len(ids)), inv.reshape(-1),
                                           self.n, len(profile.events["run"]))
        self.instructions_total = len(ids)
        self.instr_ids = ids[kept]
        k = len(self.instr_ids)
        on = inv >= 0
        flat = it["execute"][on].astype(np.int64) * max(k, 1) + inv[on]
        size = self.n * k
        self.T = np.bincount(flat, weights=it["ns"][on], minlength=size).reshape(self.n, k) if size else \
            np.zeros((self.n, k))
        counts = np.bincount(flat, minlength=size).reshape(self.n, k) if size else np.zeros((self.n, k))
        self.T[counts == 0] = np.nan
        self.sig_full, self.sig_instr = _run_signatures(profile)
        self.tokens, self.token_evidence = _tokens_from_debug(profile)
        self.parts = placement.per_run_parts(profile)
        self.inner_T, self.inner_names = _inner_matrix(profile, self.sig_full)

    def label_text(self, iid: int) -> str:
        return label_text(self.label(iid))

    def label(self, iid: int) -> dict:
        ins = self.profile.instructions.get(int(iid))
        if ins is None:
            return {"instruction_id": int(iid), "placement": None, "op_type": None, "kernel": None,
                    "source": None}
        return {"instruction_id": int(iid), "placement": ins.backend, "op_type": ins.op_type,
                "kernel": ins.kernel, "source": ins.source}


def _columns_within_budget(calls: np.ndarray, column_of_call: np.ndarray, n_runs: int,
                           n_events: int) -> tuple[np.ndarray, np.ndarray]:
    """Which instructions get a column in the (runs x instructions) tables: all of them while the
    table fits MAX_TABLE_CELLS_PER_EVENT cells per event of the file plus MAX_TABLE_CELLS_BASE, else
    the most-called ones (a valid file can give every run instructions of its own: runs x
    instructions from runs + instructions events). In an honest profile every run calls every
    instruction, so the table holds fewer cells than the file has events and nothing is left out.

    Returns the kept instructions' indices (ascending, so columns stay in instruction order) and
    each call's column among them (-1 for a call of an instruction left out)."""
    k = len(calls)
    cap = (MAX_TABLE_CELLS_PER_EVENT * n_events + MAX_TABLE_CELLS_BASE) // max(n_runs, 1)
    if k <= cap:
        return np.arange(k), column_of_call
    kept = np.sort(np.argsort(-calls, kind="stable")[:cap])
    column = np.full(k, -1, dtype=np.int64)
    column[kept] = np.arange(len(kept))
    return kept, column[column_of_call]


def label_text(lab: dict) -> str:
    """Short name of an instruction for people: op type, else kernel, else the delegate call."""
    if lab.get("op_type"):
        return str(lab["op_type"])
    if lab.get("kernel"):
        return str(lab["kernel"])
    if lab.get("placement") and lab["placement"] != P.CPU:
        return f"{lab['placement']} call (instr {lab['instruction_id']})"
    return f"instruction {lab['instruction_id']}"


def _run_signatures(profile: P.Profile, chunk: int = 1 << 20) -> tuple[np.ndarray, np.ndarray]:
    """Per run, an order-independent hash of what it executed: the multiset of (role, instruction,
    name) of all its profile events (full), and of its instruction-level events only. Computed
    over chunks of events, so memory stays bounded on huge files."""
    ev = profile.events
    n = profile.n_runs
    full = np.zeros(n, dtype=np.uint64)
    instr_sig = np.zeros(n, dtype=np.uint64)
    counts = np.zeros(n, dtype=np.int64)
    total = len(ev["run"])
    for a in range(0, total, chunk):
        sl = slice(a, min(total, a + chunk))
        ex = ev["execute"][sl]
        sel = (ex >= 0) & (ev["kind"][sl] == etdump_format.PROFILE)
        if not sel.any():
            continue
        role = ev["role"][sl][sel]
        dstr = ev["delegate_id_str"][sl][sel]
        name = ev["name"][sl][sel]
        name = np.where(role == P.ROLE_DELEGATE_INTERNAL, np.where(dstr >= 0, dstr, name), name)
        instr = ev["instruction_id"][sl][sel].astype(np.int64) + 1
        with np.errstate(over="ignore"):
            key = mix64(role.astype(np.uint64) * np.uint64(1 << 56)
                       + (instr.astype(np.uint64) << np.uint64(28)) + (name.astype(np.int64) + 1).astype(np.uint64))
            run = ex[sel].astype(np.int64)
            full += sum_u64(run, key, n)
            top = (role == P.ROLE_DELEGATE_CALL) | (role == P.ROLE_OPERATOR_CALL) | (role == P.ROLE_KERNEL)
            instr_sig += sum_u64(run[top], key[top], n)
        counts += np.bincount(run, minlength=n)
    with np.errstate(over="ignore"):
        full = full + counts.astype(np.uint64) * MIX3
    return full, instr_sig


def _tokens_from_debug(profile: P.Profile) -> tuple[np.ndarray, str | None]:
    """Token count per run from the shapes of logged tensors (debug events), -1 when unknown.

    For every debug-event signature (instruction, occurrence) whose tensor keeps its rank but
    changes in exactly one dimension across runs, that dimension per run is a candidate; the
    candidate most signatures agree on is the token count.
    """
    n = profile.n_runs
    none = np.full(n, -1, dtype=np.int64)
    ev = profile.events
    if "tensor_shape" not in ev or n < 2:
        return none, None
    sel = (ev["kind"] == etdump_format.DEBUG) & (ev["execute"] >= 0)
    idx = np.nonzero(sel)[0]
    if idx.size == 0:
        return none, None
    shape = ev["tensor_shape"][idx].astype(np.int64)
    run = ev["execute"][idx].astype(np.int64)
    from etscope.analysis.ops import occurrences

    instr = ev["instruction_id"][idx].astype(np.int64)
    occ = occurrences(run, instr, np.zeros_like(run))
    codes = np.unique(shape[shape >= 0])
    dims = {}
    for c in codes:
        s = profile.strings[int(c)]
        try:
            dims[int(c)] = tuple(int(x) for x in s.split("x")) if s and s != "scalar" else ()
        except ValueError:
            dims[int(c)] = None
    # Matrix of shape codes: signature x run, for the signatures logged in every run (only those
    # can give a token count per run; the others would make it signatures x runs from as many events).
    key = instr * (int(occ.max()) + 1 if occ.size else 1) + occ
    sig, sinv = np.unique(key, return_inverse=True)
    sinv = sinv.reshape(-1)
    everywhere = np.bincount(sinv, minlength=len(sig)) == n
    row_of = np.cumsum(everywhere) - 1
    in_all = everywhere[sinv]
    M = np.full((int(row_of[-1]) + 1, n), -2, dtype=np.int64)
    M[row_of[sinv[in_all]], run[in_all]] = shape[in_all]
    votes: dict[tuple, int] = {}
    for row in M:
        if (row < 0).any():
            continue
        u = np.unique(row)
        if len(u) < 2 or len(u) > 64:
            continue
        ds = [dims.get(int(c)) for c in u]
        if any(d is None for d in ds) or len({len(d) for d in ds}) != 1 or not ds[0]:
            continue
        arr = np.array(ds)
        varying = np.nonzero((arr != arr[0]).any(axis=0))[0]
        if len(varying) != 1:
            continue
        pos = int(varying[0])
        lookup = {int(c): d[pos] for c, d in zip(u, ds)}
        cand = tuple(lookup[int(c)] for c in row)
        votes[cand] = votes.get(cand, 0) + 1
    if not votes:
        return none, None
    best, count = max(votes.items(), key=lambda kv: kv[1])
    tokens = np.array(best, dtype=np.int64)
    if (tokens < 1).any():
        return none, None
    return tokens, (f"debug events: the token dimension of {count} logged tensor(s) "
                    f"(of {len(sig)} per run) changes between runs")


# ---- cost split ---------------------------------------------------------------------------------------
def cost_split(T: np.ndarray, timed: np.ndarray | None = None) -> dict | None:
    """Split runs (rows of T, ns per instruction, NaN = not run) into prefill-like runs and the rest
    by their cost profile, whichever phase has more runs.

    Costs are compared in log2. A run is *off* in an instruction when it is at least 2x away from
    the instruction's median over the other runs (those outside the group being tested, so the
    reference is the other phase whatever its share) and beyond its usual spread over them (upper
    quartile + 3 IQR). A group is grown from a seed run (one of those with most off
    instructions): the token-dependent instructions are those off in at least half the group, the
    group is the runs where at least half of them are off; both are refined until they agree. It
    is kept only when it is clean (every other run, but one in 200, shows at most a third of the
    pattern and at least 0.3 less of it than any run of the group), shared (enough instructions
    off in two thirds of the group: unrelated spikes are not), spread (its wall-time columns span
    at least half the run: token-dependent operators recur in every layer, a spell of contention
    slows one stretch) and not in delegate calls alone while enough CPU instructions keep their
    cost (a thread pool slowed by contention). A group of one run, one test among many runs, must
    also be off by log2 20 summed over its instructions, each counted up to 8x (a dozen
    instructions 3-7x costlier, as a prompt makes them; not two contention spikes of 50x). Among
    the seeds the best separated, broadest wins.
    The searches, first found wins:

    1. runs cheaper (decode-like) than the median of all runs, seen when decodes are fewer than
       half the runs (prefills are the majority).
    2. runs costlier (prefill-like) that stand out from the spread of all runs: a few prompts
       among many decodes; fewer than 60% of the runs, >= 4 instructions (8 for a single run).
    3. runs cheaper than the upper quartile of all runs, at least half of them: decodes are 50%
       to 75% of the runs, too many for 1 and leaving too many prefills for 2.

    Noise rarely makes a run cheaper, but it can (a run that escaped contention), so a group of
    cheaper runs needs two runs and 8 instructions. Runs slower or faster everywhere are the
    machine, not the token count: each run's own level over the wall-time columns is taken out
    (for costlier runs its lower quartile; for cheaper runs its upper quartile, and only when that
    is below the reference, so a run slowed in some instructions by contention does not make its
    other instructions look cheap). ``timed`` (per column, default all 1) gives each column its
    clock class: 0 = not wall time (cycle counts do not slow down with the machine; compared as
    they are), 1 = CPU instructions, 2 = delegate calls. The level is taken out per class of at
    least 8 columns (smaller classes join class 1): contention slows a delegate's thread pool
    (spin-waiting threads descheduled) while single-threaded CPU operators keep their speed, so
    a run slower in its delegate calls alone is the machine too.

    Returns {"prefill": bool mask, "ops": column indices of the token-dependent instructions (most
    separated first), "strength_log2": their prefill / other log2 cost ratio (medians),
    "gap_log2": the median of those, "score": per-run share of the pattern, "found_from":
    "cheaper runs" | "costlier runs"} or None.
    """
    n, k = T.shape
    if n < 3 or k == 0:
        return None
    prepared = _log_costs(T, timed)
    if prepared is None:
        return None
    R, tm, cols = prepared
    searches = (  # (direction, seeds measured against, at least this many runs, instructions)
        (-1, "median", 2, MIN_OPS_FOR_COST_SPLIT),
        (+1, "spread", 1, 4),
        (-1, "upper quartile", max(2, (n + 1) // 2), MIN_OPS_FOR_COST_SPLIT),
    )
    for direction, seeds, min_runs, min_ops in searches:
        max_share = PREFILL_MAX_SHARE if direction > 0 else DECODE_MAX_SHARE
        found = _cost_pattern(R, tm, direction, seeds, max_share, min_runs, min_ops)
        if found is not None:
            break
    else:
        return None
    group, ops, score = found
    pre = group if direction > 0 else ~group
    strength = np.median(R[pre][:, ops], axis=0) - np.median(R[~pre][:, ops], axis=0)
    order = np.argsort(-strength, kind="stable")
    return {"prefill": pre, "ops": cols[ops][order], "strength_log2": strength[order], "score": score,
            "gap_log2": float(np.median(strength)),
            "found_from": "costlier runs" if direction > 0 else "cheaper runs"}


def _log_costs(T: np.ndarray, timed) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """log2 costs of the columns usable for a cost split (logged in >= 90% of the runs, median
    >= 1 µs), missing values at the median: (runs x columns, timed per column, column indices)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        keep = np.isfinite(T).mean(axis=0) >= 0.9
        base = _nanmedian_cols(T)
        keep &= base >= MIN_OP_NS
        if keep.sum() < MIN_OPS_FOR_COST_SPLIT:
            return None
        R = np.log2(np.maximum(T[:, keep], 1.0))
        R = np.where(np.isfinite(R), R, np.log2(base[keep]))
    tm = np.ones(R.shape[1], dtype=np.int8) if timed is None else np.asarray(timed, dtype=np.int8)[keep]
    for c in np.unique(tm[tm > CLOCK_CPU]):
        if (tm == c).sum() < MIN_OPS_FOR_COST_SPLIT:
            tm[tm == c] = CLOCK_CPU
    return R, tm, np.nonzero(keep)[0]


def _relative_costs(R: np.ndarray, rest: np.ndarray, tm: np.ndarray, direction: int,
                    ref_q: float = 50) -> np.ndarray:
    """log2 cost against each column's median (or ``ref_q`` percentile) over ``rest``, each run's
    own level over the timed columns taken out (see cost_split); positive = off in ``direction``
    (+1 costlier, -1 cheaper)."""
    L = R - np.percentile(R[rest], ref_q, axis=0)
    for c in np.unique(tm[tm != CLOCK_NONE]):
        cls = tm == c
        if direction > 0:
            level = np.percentile(L[:, cls], 25, axis=1, keepdims=True)
        else:
            level = np.minimum(np.percentile(L[:, cls], 75, axis=1, keepdims=True), 0.0)
        L[:, cls] -= level
    return direction * L


def _cost_pattern(R, tm, direction: int, seeds: str, max_share: float, min_runs: int, min_ops: int):
    """The group of runs off in ``direction`` in a common set of columns (see cost_split), grown
    from seeds measured against the ``seeds`` reference ("spread", "median", "upper quartile"):
    (group mask, column mask, per-run score) or None."""
    n = R.shape[0]

    def off(rest: np.ndarray, spread: bool = True, ref_q: float = 50) -> np.ndarray:
        C = _relative_costs(R, rest, tm, direction, ref_q)
        if not spread:
            return C > SENSITIVE_LOG2
        q25, q75 = np.percentile(C[rest], [25, 75], axis=0)
        return C > np.maximum(SENSITIVE_LOG2, q75 + 3 * (q75 - q25))

    everyone = np.ones(n, dtype=bool)
    ref_q = 75 if seeds == "upper quartile" else 50
    F0 = off(everyone) if seeds == "spread" else off(everyone, spread=False, ref_q=ref_q)
    s0 = F0.sum(axis=1)
    best = None
    for seed in np.argsort(-s0, kind="stable")[:5]:
        if s0[seed] < MIN_SENSITIVE_OPS:
            break
        group = np.zeros(n, dtype=bool)
        group[seed] = True
        F = F0 if seeds == "spread" else off(~group, spread=False, ref_q=ref_q)
        found = None
        for _ in range(12):
            ops = F[group].mean(axis=0) >= (0.5 if group.sum() > 1 else 1.0)
            if ops.sum() < MIN_SENSITIVE_OPS:
                break
            score = F[:, ops].mean(axis=1)
            new = score >= 0.5
            if (new == group).all():
                found = (group, ops, score)
                break
            group = new
            if group.sum() == 0 or group.sum() > max_share * n:
                break
            F = off(~group)
        if found is None:
            continue
        group, ops, score = found
        # Among hundreds of other runs a few may show part of the pattern by chance (a burst of
        # contention): one in 200 is allowed above the line.
        outside = np.sort(score[~group])
        out_max = float(outside[-(1 + outside.size // 200)])
        margin = float(score[group].min()) - out_max
        need = min_ops if group.sum() > 1 else max(min_ops, 8)
        shared = (F[group][:, ops].mean(axis=0) >= 2 / 3).sum()   # noise spikes are not shared
        if out_max > 0.34 or margin < 0.3 or group.sum() < min_runs or shared < need:
            continue
        if group.sum() == 1 and _evidence_log2(R, group, ops, direction) < LONE_RUN_EVIDENCE_LOG2:
            continue
        if _only_delegate_calls(ops, tm) or _in_one_stretch(ops, tm):
            continue
        quality = margin * int(ops.sum())
        if best is None or quality > best[0]:
            best = (quality, group, ops, score)
    return None if best is None else best[1:]


def _evidence_log2(R: np.ndarray, group: np.ndarray, ops: np.ndarray, direction: int) -> float:
    """How far the group is off in its pattern, as measured (no level taken out): the sum over
    the pattern's instructions of log2(group / others) in ``direction``, each counted up to 8x
    (a contention spike can make one instruction 50x slower; tokens make many several times)."""
    off = direction * (R[group][:, ops].mean(axis=0) - np.median(R[~group][:, ops], axis=0))
    return float(np.clip(off, 0.0, 3.0).sum())


def _only_delegate_calls(ops: np.ndarray, tm: np.ndarray) -> bool:
    """Contention, not tokens: the pattern is in delegate calls while the CPU instructions of the
    same runs (enough of them to tell) keep their cost."""
    delegate = tm == CLOCK_DELEGATE
    return bool(delegate.any() and (~delegate).sum() >= MIN_OPS_FOR_COST_SPLIT
                and (ops & ~delegate).sum() < MIN_SENSITIVE_OPS)


def _in_one_stretch(ops: np.ndarray, tm: np.ndarray) -> bool:
    """A burst, not tokens: token-dependent operators recur in every layer, so they spread over
    the run; a spell of contention slows one stretch of it (here: under half of it)."""
    timed = np.nonzero(tm != CLOCK_NONE)[0]          # columns are in execution order
    if timed.size < 2 * MIN_OPS_FOR_COST_SPLIT:
        return False
    at = np.searchsorted(timed, np.nonzero(ops & (tm != CLOCK_NONE))[0])
    return at.size >= 2 and (at.max() - at.min() + 1) < timed.size / 2


def _nanmedian_cols(T: np.ndarray) -> np.ndarray:
    if not np.isnan(T).any():
        return np.median(T, axis=0)
    out = np.full(T.shape[1], np.nan)
    for j in range(T.shape[1]):
        col = T[:, j]
        col = col[~np.isnan(col)]
        if col.size:
            out[j] = np.median(col)
    return out


# ---- the report -----------------------------------------------------------------------------------------
def llm_report(profiles, prompt_runs: list[int] | None = None, phases: str = "auto", top: int = 8,
               all_methods: bool = False) -> dict:
    """The ``etscope llm`` result as plain data (schema ``etscope.llm/1``).

    A profile of an ETDump holding runs of several methods (see ``profile.MethodSplit``) holds
    one method's runs; with ``all_methods`` the runs of every method are read, in the order they
    ran (unless --method picked that method)."""
    if isinstance(profiles, P.Profile):
        profiles = [profiles]
    splits = [_analysed_split(p, all_methods) for p in profiles]
    parts = _parts(profiles, splits)
    files = [_FileRuns(p, i, source, splits[source] is not None) for i, (source, p, _) in enumerate(parts)]
    warnings = _warnings(profiles, splits, parts)
    left_out = _columns_left_out(files, profiles, warnings)
    n_total = sum(f.n for f in files)
    # Parts (files, or the methods of one file) are stacked; perm puts their runs in the order they ran.
    perm = np.argsort(np.concatenate([g for _, _, g in parts]), kind="stable") if parts else np.zeros(0, np.int64)
    file_of = _stack([np.full(f.n, f.file_index, dtype=np.int64) for f in files], perm)
    local = _stack([np.arange(f.n, dtype=np.int64) for f in files], perm)
    latency = _stack([f.latency_ns for f in files], perm) / 1e6
    tokens = _stack([f.tokens for f in files], perm)
    token_evidence = [f.token_evidence for f in files if f.token_evidence]
    if tokens.size and (tokens < 0).any():
        tokens = np.full(n_total, -1, dtype=np.int64)
        token_evidence = []

    assign, phase_names, split = _phases(files, n_total, file_of, local, perm, latency, tokens,
                                         token_evidence, prompt_runs, phases, warnings)
    # Per phase: warm-up and statistics.
    warm = np.zeros(n_total, dtype=bool)
    warm_notes = []
    for j, name in enumerate(phase_names):
        runs = np.nonzero(assign == j)[0]
        w, note = _warmup(runs, latency, name)
        warm[w] = True
        warm_notes.extend(note)
    steps, positions = _positions(assign, phase_names, tokens)
    phase_rows = [_phase_row(files, j, name, assign, warm, latency, tokens, file_of, local, top)
                  for j, name in enumerate(phase_names)]

    decode = next((r for r in phase_rows if r["name"] == "decode"), None)
    prefill = next((r for r in phase_rows if r["name"] == "prefill"), None)
    tps = None
    if decode and decode["latency_ms"] and decode["latency_ms"]["p50"]:
        per_tok = decode["latency_ms"]["p50"] / (decode["tokens_per_run"] or 1)
        tps = 1000.0 / per_tok if per_tok > 0 else None
    ttft = prefill["latency_ms"]["p50"] if prefill and prefill["latency_ms"] else None
    ttft_first = float(latency[prefill["runs"][0]]) if prefill and prefill["runs"] else None
    drift = _drift(assign, phase_names, warm, latency, steps, positions, decode)

    series = {
        "latency_ms": [float(x) for x in latency],
        "phase": [phase_names[int(a)] for a in assign],
        "warmup": [bool(x) for x in warm],
        "tokens": [int(t) if t >= 0 else None for t in tokens],
        "step": [int(s) if s >= 0 else None for s in steps],
        "position": [int(p) if p >= 0 else None for p in positions],
        "etdump_run": _stack([f.etdump_run for f in files], perm).tolist(),
    }
    if len(profiles) > 1:
        source = np.array([f.source for f in files], dtype=np.int64)[file_of]
        first_run = np.concatenate([[0], np.cumsum([_runs_in(p, sp) for p, sp in zip(profiles, splits)])[:-1]])
        series["file"] = [int(x) for x in source]
        series["file_run"] = [int(x) for x in np.arange(n_total) - first_run[source]]
    if any(f.from_split for f in files):
        method_of_part = [f.profile.method for f in files]
        series["method"] = [method_of_part[i] for i in file_of.tolist()]
    named = _name_lookalike_phases(profiles, splits, phase_rows, series, warnings)
    findings = _findings(phase_rows, tps, ttft, drift, warm_notes, split)
    return {
        "schema": SCHEMA,
        "inputs": [dict(p.sources) for p in profiles],
        "method": named or ([_methods(p, sp) for p, sp in zip(profiles, splits)] if len(profiles) > 1 else
                            _methods(profiles[0], splits[0])),
        "llm": {
            "runs": n_total,
            "warmup_runs": [int(i) for i in np.nonzero(warm)[0]],
            "warmup": warm_notes,
            "phase_split": split,
            "phases": phase_rows,
            "decode_tokens_per_s": tps,
            "ttft_ms": ttft,
            "ttft_first_ms": ttft_first,
            "drift": drift,
            "series": series,
            **({"instructions_left_out": left_out} if left_out else {}),
        },
        "findings": findings,
        "warnings": warnings,
    }


def _name_lookalike_phases(profiles, splits, phase_rows, series, warnings) -> list[str] | None:
    """One ETDump, one program whose methods execute the same instructions (QNN hybrid
    prefill/kv): name the prefill and decode phases after them (``analysis.lookalike``); the
    methods named, in phase order, or None."""
    if len(profiles) != 1 or splits[0] is not None:
        return None
    from etscope.analysis.lookalike import name_phases

    p = profiles[0]
    done = name_phases(phase_rows, p.pte, p.method, p.etrecord)
    if done is None:
        return None
    if "warning" in done:
        warnings.append(done["warning"])
        return None
    warnings[:] = [w for w in warnings if not w.startswith("several methods fit the ETDump")]
    method_of = {r["name"]: r["method"] for r in phase_rows}
    series["method"] = [method_of.get(ph) for ph in series["phase"]]
    return [r["method"] for r in phase_rows]


def _file_name(profile: P.Profile, i: int) -> str:
    return profile.sources.get("etdump") or f"ETDump #{i + 1}"


def _analysed_split(profile: P.Profile, all_methods: bool):
    """The profile's MethodSplit when all its methods are read (not when --method picked one)."""
    split = profile.method_split
    return split if all_methods and split is not None and not split.explicit else None


def _parts(profiles, splits) -> list[tuple[int, P.Profile, np.ndarray]]:
    """What the runs are read from: each input profile, or one profile per method when all the
    methods of an ETDump are read. Per part: input index, profile, its runs' indices over all
    inputs (in the order they ran)."""
    parts, offset = [], 0
    for i, (p, split) in enumerate(zip(profiles, splits)):
        if split is None:
            parts.append((i, p, offset + np.arange(p.n_runs, dtype=np.int64)))
        else:
            parts.extend((i, split.profiles[name], offset + split.runs_of(name)) for name in split.names)
        offset += _runs_in(p, split)
    return parts


def _runs_in(profile: P.Profile, split) -> int:
    return len(split.of_run) if split is not None else profile.n_runs


def _methods(profile: P.Profile, split):
    return list(split.names) if split is not None else profile.method


def _warnings(profiles, splits, parts) -> list[str]:
    """Warnings of every part, once each; a split's note (which says that only one method is
    shown) does not apply when all methods are read."""
    out: list[str] = []
    for source, p, _ in parts:
        split = splits[source]
        for w in p.warnings:
            if split is not None and w == split.note:
                continue
            w = w if len(profiles) == 1 else f"{_file_name(profiles[source], source)}: {w}"
            if w not in out:
                out.append(w)
    return out


def _columns_left_out(files, profiles, warnings) -> dict | None:
    """Instructions left out of the per-instruction tables (``_columns_within_budget``), counted
    over all parts, each part's left-out count said in a warning; None when nothing was left out."""
    total = left = 0
    for f in files:
        total += f.instructions_total
        out = f.instructions_total - len(f.instr_ids)
        if not out:
            continue
        left += out
        where = "" if len(profiles) == 1 else f"{_file_name(profiles[f.source], f.source)}: "
        where += f"method {f.profile.method}: " if f.from_split else ""
        warnings.append(f"{where}{out:,} of {f.instructions_total:,} instructions, those called least often, "
                        f"are left out of the per-instruction tables (top instructions, cost-profile phase "
                        f"split): {f.n:,} runs x {f.instructions_total:,} instructions would exceed "
                        f"the table budget ({MAX_TABLE_CELLS_PER_EVENT} cells per event of the file + "
                        f"{MAX_TABLE_CELLS_BASE:,})")
    return {"instructions": total, "left_out": left} if left else None


def _stack(arrays: list[np.ndarray], perm: np.ndarray) -> np.ndarray:
    """Per-part arrays (one value per run) as one array over all runs, in the order they ran."""
    return np.concatenate(arrays)[perm] if arrays else np.zeros(0, np.int64)


def _phases(files, n_total, file_of, local, perm, latency, tokens, token_evidence, prompt_runs, mode, warnings):
    """Phase index per run, phase names, and how the split was found."""
    assign = np.zeros(n_total, dtype=np.int64)
    if n_total == 0:
        return assign, ["all"], {"by": "none", "evidence": "no Execute runs"}
    if prompt_runs is not None:
        bad = [r for r in prompt_runs if r < 0 or r >= n_total]
        if bad:
            raise ValueError(f"run {bad[0]} does not exist (runs are 0..{n_total - 1})")
        pre = np.zeros(n_total, dtype=bool)
        pre[list(prompt_runs)] = True
        return _two(pre), _names2(pre), {"by": "--prompt-runs", "evidence": f"{int(pre.sum())} run(s) given"}
    if mode == "none":
        return assign, [_single_name(files)], {"by": "none", "evidence": "--phases none"}
    if token_evidence:
        pre = tokens > 1
        if pre.any() and not pre.all():
            return _two(pre), _names2(pre), {"by": "token counts", "evidence": "; ".join(token_evidence)}
    # Structure groups (what the runs executed), over all files.
    groups, how = _structure_groups(files, file_of, perm)
    groups = _first_appearance_order(groups)
    n_groups = int(groups.max()) + 1
    if n_groups > MAX_GROUPS:
        warnings.append(f"runs executed {n_groups} different event sequences; not treated as phases")
        groups = np.zeros(n_total, dtype=np.int64)
        n_groups = 1
    # Cost split inside each group.
    labels = np.zeros(n_total, dtype=np.int64)   # 0 = whole group / decode-like, 1 = prefill-like
    split_info = []
    for g in range(n_groups):
        runs = np.nonzero(groups == g)[0]
        if len(runs) < 3:
            continue
        T, cols = _group_costs(files, file_of, local, runs)
        res = cost_split(T, timed=_clock_classes(files, cols))
        if res is None:
            continue
        labels[runs[res["prefill"]]] = 1
        names = []
        for c in res["ops"]:
            fi, iid = cols[c]
            names.append(iid if isinstance(iid, str) else files[fi].label_text(iid))
        split_info.append({"group": g, "prefill_runs": int(res["prefill"].sum()),
                           "other_runs": int((~res["prefill"]).sum()),
                           "token_dependent_instructions": int(len(res["ops"])),
                           "examples": list(dict.fromkeys(names))[:6],
                           "separation_x": float(2 ** res["gap_log2"]), "found_from": res["found_from"]})
    if n_groups == 1:
        pre = labels == 1
        if pre.any():
            ex = split_info[0]
            ev = (f"{ex['token_dependent_instructions']} instructions or per-op counters "
                  f"({', '.join(ex['examples'])}) cost {ex['separation_x']:.1f}x more (median) in "
                  f"{ex['prefill_runs']} run(s) than in the other {ex['other_runs']}, while the rest do not "
                  f"(found from the {ex['found_from']})")
            if int(pre.sum()) == 1 and bool(pre[0]):
                ev += ("; only the first run differs, which warm-up alone could also explain: "
                       "pass --prompt-runs to be sure")
            return _two(pre), _names2(pre), {"by": "cost profile", "evidence": ev}
        return assign, [_single_name(files)], {
            "by": "none", "evidence": "all runs executed the same events and no subset of runs costs "
                                      "several times more or less than the others in the same instructions "
                                      "(no prefill found)"}
    # Several groups: each group is a phase; a group may itself split by cost.
    keys = groups * 2 + (1 - labels)          # prefill-like part of a group first
    uniq, inv = np.unique(keys, return_inverse=True)
    uniq = (uniq // 2) * 2 + (1 - uniq % 2)    # back to group * 2 + label
    inv = inv.reshape(-1)
    names = _group_names(files, file_of, local, latency, uniq, inv, labels, groups)
    # Phases in order of their first run.
    order = np.argsort([int(np.argmax(inv == j)) for j in range(len(names))], kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    inv = rank[inv]
    names = [names[j] for j in order]
    ev = f"{n_groups} groups of runs executed different events ({how})"
    if split_info:
        ev += "; split further by cost profile inside " + ", ".join(f"group {s['group'] + 1}" for s in split_info)
    return inv, names, {"by": "instruction sequence" if how != "ETDump file" else "ETDump file",
                        "evidence": ev}


def _clock_classes(files, cols) -> np.ndarray:
    """cost_split's clock class per column: 0 per-op counters, 1 CPU instructions, 2 delegate calls."""
    by_index = {f.file_index: f for f in files}
    out = np.full(len(cols), CLOCK_NONE, dtype=np.int8)
    for j, (fi, iid) in enumerate(cols):
        if not isinstance(iid, str):
            ins = by_index[fi].profile.instructions.get(int(iid))
            out[j] = CLOCK_DELEGATE if ins is not None and ins.kind == "delegate" else CLOCK_CPU
    return out


def _first_appearance_order(g: np.ndarray) -> np.ndarray:
    """Renumber group ids 0, 1, ... in the order groups first appear."""
    _, first = np.unique(g, return_index=True)
    order = np.argsort(first)
    remap = np.empty(len(order), dtype=np.int64)
    remap[np.unique(g)[order]] = np.arange(len(order))
    return remap[g]


def _two(pre: np.ndarray) -> np.ndarray:
    # Phase 0 is prefill, 1 decode (prefill listed first).
    return np.where(pre, 0, 1).astype(np.int64)


def _names2(pre) -> list[str]:
    return ["prefill", "decode"]


def _single_name(files) -> str:
    methods = {f.profile.method for f in files if f.profile.method}
    return methods.pop() if len(methods) == 1 else "all runs"


def _structure_groups(files, file_of, perm) -> tuple[np.ndarray, str]:
    sig = _stack([f.sig_full for f in files], perm)
    fid = file_of.astype(np.uint64)
    with np.errstate(over="ignore"):
        key_full = sig ^ mix64(fid)
    _, g_full = np.unique(key_full, return_inverse=True)
    g_full = g_full.reshape(-1)
    n_full = int(g_full.max()) + 1
    # Phases repeat: more groups than half the runs (e.g. QNN events accumulating over executes,
    # every run a little longer than the last) is not a phase structure.
    if n_full <= MAX_GROUPS and (n_full <= 2 or n_full <= len(g_full) / 2):
        how = "events per run" if len(files) == 1 else "events per run and ETDump file"
        if len(files) > 1 and n_full == len(files):
            same = all(len(np.unique(g_full[file_of == i])) == 1 for i in range(len(files)))
            if same:
                how = _parts_kind(files)
        return g_full, how
    sig = _stack([f.sig_instr for f in files], perm)
    with np.errstate(over="ignore"):
        key = sig ^ mix64(fid)
    _, g = np.unique(key, return_inverse=True)
    return g.reshape(-1), "instruction sequence per run"


def _parts_kind(files) -> str:
    """What tells the parts apart: ETDump files, methods (of one ETDump), or both."""
    if len({f.source for f in files}) == len(files):
        return "ETDump file"
    if len({f.source for f in files}) == 1:
        return "method, matched on the instructions each run executed"
    return "ETDump file and method"


def _group_names(files, file_of, local, latency, uniq, inv, labels, groups) -> list[str]:
    """Name each final group: prefill/decode when the method names or costs say so."""
    names = []
    for j, key in enumerate(uniq):
        g, lab = int(key) // 2, int(key) % 2
        runs = np.nonzero(inv == j)[0]
        method = _fitting_method(files, file_of, local, runs)
        base = method or f"group {g + 1}"
        if lab == 1:
            names.append("prefill" if "prefill" not in names else f"prefill ({base})")
        elif (labels[groups == g] == 1).any():
            names.append("decode" if "decode" not in names else f"decode ({base})")
        else:
            names.append(base)
    # Two plain groups: by method name, else the costlier one with fewer runs is prefill.
    plain = [i for i, n in enumerate(names) if n not in ("prefill", "decode")]
    if len(names) == 2 and len(plain) == 2:
        low = [n.lower() for n in names]
        pre = [i for i, n in enumerate(low) if "prefill" in n or "prompt" in n]
        dec = [i for i, n in enumerate(low) if "decode" in n or "kv" in n or "token" in n]
        lat = [float(np.nanmedian(latency[inv == i])) for i in range(2)]
        cnt = [int((inv == i).sum()) for i in range(2)]
        if len(pre) == 1 and len(dec) == 1 and pre != dec:
            names = ["prefill" if i == pre[0] else "decode" for i in range(2)]
        else:
            hi = int(np.argmax(lat))
            if lat[hi] >= 2 * lat[1 - hi] and cnt[hi] <= cnt[1 - hi]:
                names = ["prefill" if i == hi else "decode" for i in range(2)]
    # Unique names.
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} #{seen[n]}")
    return out


def _fitting_method(files, file_of, local, runs) -> str | None:
    """Name of the .pte method whose instructions fit these runs' instructions (one file only)."""
    fis = np.unique(file_of[runs])
    if len(fis) != 1:
        return None
    f = files[int(fis[0])]
    if f.from_split:
        return f.profile.method
    pte = f.profile.pte
    if pte is None or len(getattr(pte, "methods", [])) < 2:
        return f.profile.method if pte is not None else None
    in_rows = np.zeros(f.n, dtype=bool)
    in_rows[local[runs]] = True
    used = np.unique(f.call_instr[in_rows[f.call_run]])
    fits = []
    for m in pte.methods:
        by_index = {ins.index: ins for ins in m.instructions}
        ok = True
        for iid in used:
            ins = f.profile.instructions.get(int(iid))
            pi = by_index.get(int(iid))
            if pi is None or ins is None or (ins.kind == "delegate") != (pi.kind == "delegate"):
                ok = False
                break
        if ok:
            fits.append(m.name)
    return fits[0] if len(fits) == 1 else None


def _group_costs(files, file_of, local, runs) -> tuple[np.ndarray, list[tuple]]:
    """The cost matrix of a group of runs (rows in the order they ran): each instruction's wall time
    (ns), then the per-op values logged inside delegates (ns, or cycles for QNN per-op rows).
    Columns are (part, instruction id) or (part, name of the delegate's own event).

    Only the part holding at least 90% of the group's runs gives columns: a column must be logged
    in that share of the runs to take part in a cost split (``_log_costs``), and each part's
    columns are logged only in its own runs. Groups are found inside one part anyway (their key
    holds the part), unless there are too many groups and all runs form one."""
    part, count = np.unique(file_of[runs], return_counts=True)
    if not part.size or count.max() / len(runs) < 0.9:
        return np.zeros((len(runs), 0)), []
    f = files[int(part[np.argmax(count)])]
    mine = file_of[runs] == f.file_index
    cols = [(f.file_index, int(i)) for i in f.instr_ids] + [(f.file_index, name) for name in f.inner_names]
    T = np.full((len(runs), len(cols)), np.nan)
    rows = local[runs[mine]]
    T[mine, :len(f.instr_ids)] = f.T[rows]
    if f.inner_names:
        T[mine, len(f.instr_ids):] = f.inner_T[rows]
    return T, cols


def _inner_matrix(profile: P.Profile, sig_full: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Per run, the values of the events logged inside delegate calls (XNNPACK per-op times, QNN
    per-op cycles), when every run logged the same event sequence: (runs x events) and names."""
    from etscope import units

    n = profile.n_runs
    empty = (np.zeros((n, 0)), [])
    if n < 3 or len(np.unique(sig_full)) != 1:
        return empty
    ev = profile.events
    counts = np.asarray(profile.runs["event_count"], dtype=np.int64)
    k = int(counts[0])
    if k == 0 or (counts != k).any():
        return empty
    firsts = np.array([profile.etdump.runs[int(r)].first_event for r in profile.runs["etdump_run"]],
                      dtype=np.int64)
    t0 = int(firsts[0])
    tmpl = slice(t0, t0 + k)
    unit = ev["unit"][tmpl]
    # Cycle counts only (QNN per-op rows): they do not depend on the CPU's load or clock, so a run
    # where they are all several times higher processed more tokens. Delegate-internal wall times
    # (XNNPACK, 1 µs resolution) add noise and are already inside the DELEGATE_CALL time.
    pos = np.nonzero((ev["role"][tmpl] == P.ROLE_DELEGATE_INTERNAL) & (unit == units.CYCLES))[0]
    if pos.size == 0 or pos.size > 4096:
        return empty
    # Same signature everywhere means same event at the same position (order-independent hash:
    # check the positions hold the same names and roles).
    idx = firsts[:, None] + pos[None, :]
    codes = ev["delegate_id_str"][t0 + pos]
    if not (ev["delegate_id_str"][idx] == codes).all() or not (ev["role"][idx] == P.ROLE_DELEGATE_INTERNAL).all():
        return empty
    vals = ev["value"][idx].astype(np.float64)
    names = [profile.name_of(int(c)) or f"event {int(t0 + p)}" for c, p in zip(codes, pos)]
    return vals, names


# ---- warm-up, positions, drift ---------------------------------------------------------------------
def _warmup(runs: np.ndarray, latency: np.ndarray, name: str) -> tuple[list[int], list[dict]]:
    """The phase's leading warm-up runs (stats.leading_warmup) and a note on each: its latency and
    the median of the phase's runs after it, which it was compared with."""
    lat = latency[runs]
    out, notes = [], []
    for i in range(leading_warmup(lat)):
        rest = lat[i + 1:]
        rest = rest[np.isfinite(rest)]
        med = float(np.median(rest))
        q25, q75 = (float(v) for v in np.percentile(rest, [25, 75]))
        out.append(int(runs[i]))
        notes.append({"run": int(runs[i]), "phase": name, "latency_ms": float(lat[i]),
                      "phase_p50_ms": med, "ratio": float(lat[i] / med) if med else None,
                      "later_runs": int(rest.size), "later_iqr_ms": [q25, q75]})
    return out, notes


def _positions(assign, names, tokens) -> tuple[np.ndarray, np.ndarray]:
    """Per run: decode step since the last prefill (1, 2, ...) and token position when known."""
    n = len(assign)
    steps = np.full(n, -1, dtype=np.int64)
    pos = np.full(n, -1, dtype=np.int64)
    if "decode" not in names:
        return steps, pos
    d = names.index("decode")
    p = names.index("prefill") if "prefill" in names else -1
    step = 0
    cur = -1
    seen_prefill = False
    for i in range(n):
        a = int(assign[i])
        if a == p:
            seen_prefill = True
            step = 0
            cur = int(tokens[i]) if tokens[i] > 0 else -1
        elif a == d:
            step += 1
            steps[i] = step
            if cur >= 0:
                pos[i] = cur
                cur += int(tokens[i]) if tokens[i] > 0 else 1
    if not seen_prefill:
        steps[:] = np.where(assign == d, np.cumsum(assign == d), -1)
    return steps, pos


def _drift(assign, names, warm, latency, steps, positions, decode) -> dict | None:
    if decode is None or "decode" not in names:
        return None
    d = names.index("decode")
    sel = (assign == d) & ~warm & np.isfinite(latency) & (steps > 0)
    first = None
    if "prefill" in names and (sel & (steps == 1)).any() and (sel & (steps > 1)).any():
        # The first decode after a prefill may pay for the shape change: judged on its own (see
        # _first_decode) and left out of the fit either way.
        first = _first_decode(latency[sel & (steps == 1)], latency[sel & (steps > 1)])
        sel &= steps > 1
    if sel.sum() < 3:
        return None
    use_pos = (positions[sel] >= 0).all()
    x = (positions if use_pos else steps)[sel].astype(np.float64)
    y = latency[sel]
    if np.ptp(x) == 0:
        return None
    ux, inv = np.unique(x, return_inverse=True)
    inv = inv.reshape(-1)
    order = np.argsort(inv, kind="stable")
    bounds = np.searchsorted(inv[order], np.arange(len(ux) + 1))
    med = np.array([np.median(y[order[bounds[j]:bounds[j + 1]]]) for j in range(len(ux))])
    cnt = np.diff(bounds)
    by = [[int(v), int(c), float(m)] for v, c, m in zip(ux, cnt, med)]
    # Least squares on the per-position medians (weighted by runs): robust to noisy single runs.
    slope, intercept = np.polyfit(ux, med, 1, w=np.sqrt(cnt))
    base = float(intercept + slope * ux[0])
    ci = _slope_ci95(ux, med, cnt, slope, intercept)
    resid = y - (intercept + slope * x)
    spread = float(np.subtract(*np.percentile(resid, [75, 25])))
    change = float(abs(slope) * (ux[-1] - ux[0]))
    shown = bool(ux[-1] - ux[0] >= DRIFT_MIN_POSITIONS and ci is not None and (ci[0] > 0 or ci[1] < 0)
                 and change > spread)
    return {
        "x": "token position" if use_pos else "decode step since the last prefill",
        "positions": [int(ux[0]), int(ux[-1])],
        "slope_ms_per_100_tokens": float(slope * 100),
        "slope_ci95_ms_per_100_tokens": [ci[0] * 100, ci[1] * 100] if ci else None,
        "relative_per_100_tokens": float(slope * 100 / base) if base > 0 else None,
        "intercept_ms": float(intercept),
        "runs": int(sel.sum()),
        "change_over_range_ms": change,
        "spread_ms": spread,
        "drift_shown": shown,
        "first_decode_after_prefill": first,
        "by_position": {"columns": ["position", "runs", "p50_ms"], "rows": by},
    }


def _first_decode(first: np.ndarray, others: np.ndarray) -> dict:
    """The first decodes after a prefill against the other decodes: is it slower, and how surely."""
    q25, q50, q75 = (float(v) for v in np.percentile(others, [25, 50, 75]))
    f50 = float(np.median(first))
    slower = int((first > q75).sum())
    n = int(first.size)
    holds = bool(n >= FIRST_DECODE_MIN_INSTANCES and slower >= FIRST_DECODE_MIN_SHARE * n and f50 - q50 > q75 - q25)
    return {"p50_ms": f50, "ratio": f50 / q50 if q50 else None, "instances": n,
            "range_ms": [float(first.min()), float(first.max())], "above_upper_quartile": slower,
            "others_runs": int(others.size), "others_p50_ms": q50, "others_iqr_ms": [q25, q75],
            "slower": holds}


def _slope_ci95(x, y, w, slope, intercept) -> tuple[float, float] | None:
    """95% interval of a weighted least-squares slope (weights ``w``), t distribution."""
    df = len(x) - 2
    if df < 1:
        return None
    xm = np.average(x, weights=w)
    sxx = float(np.sum(w * (x - xm) ** 2))
    if sxx <= 0:
        return None
    s2 = float(np.sum(w * (y - intercept - slope * x) ** 2)) / df
    half = _t975(df) * (s2 / sxx) ** 0.5
    return float(slope - half), float(slope + half)


def _t975(df: int) -> float:
    """97.5% quantile of Student's t: table to df 4, then the Cornish-Fisher expansion (within 0.2%)."""
    z = 1.959963984540054
    if df <= 4:
        return (12.706, 4.303, 3.182, 2.776)[df - 1]
    return z + (z ** 3 + z) / (4 * df) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * df ** 2) \
        + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * df ** 3)


# ---- per-phase tables ------------------------------------------------------------------------------------
def _phase_row(files, j, name, assign, warm, latency, tokens, file_of, local, top) -> dict:
    runs = np.nonzero(assign == j)[0]
    steady = runs[~warm[runs]]
    if steady.size == 0:
        steady = runs
    lat = latency[steady]
    lat = lat[np.isfinite(lat)]
    lat_ms = None
    if lat.size:
        s = describe(lat)
        lat_ms = {k: s[k] for k in ("p50", "p90", "p99", "max", "min", "mean")}
    tok = tokens[steady]
    tpr = None
    if tok.size and (tok > 0).all():
        u = np.unique(tok)
        tpr = int(u[0]) if len(u) == 1 else float(tok.mean())
    elif name == "decode":
        tpr = 1
    by_file = {}
    for r in steady:
        by_file.setdefault(int(file_of[r]), []).append(int(local[r]))
    methods = sorted({files[fi].profile.method for fi in by_file if files[fi].profile.method})
    ops = _top_ops(files, by_file, float(lat.mean()) if lat.size else float("nan"))
    return {
        "name": name,
        "runs": [int(r) for r in runs],
        "steady_runs": int(steady.size),
        "warmup_runs": [int(r) for r in runs if warm[r]],
        "method": methods[0] if len(methods) == 1 else (methods or None),
        "tokens_per_run": tpr,
        "latency_ms": lat_ms,
        "ms_per_token": (lat_ms["p50"] / tpr) if lat_ms and tpr else None,
        "breakdown": _breakdown(files, by_file, lat),
        "top_ops": ops[:top] if top else ops,
        "top_fallback_ops": [o for o in ops if o["kind"] == "cpu"][:top or None],
        "fallback_op_types": _by_op_type([o for o in ops if o["kind"] == "cpu"])[:top or None],
    }


def _by_op_type(ops: list[dict]) -> list[dict]:
    agg: dict[str, dict] = {}
    for o in ops:
        key = label_text(o)
        a = agg.setdefault(key, {"op_type": key, "instructions": [], "mean_ms": 0.0, "share": 0.0})
        a["instructions"].append(o["instruction_id"])
        a["mean_ms"] += o["mean_ms"]
        a["share"] += o["share"] or 0.0
    return sorted(agg.values(), key=lambda a: -a["mean_ms"])


def _breakdown(files, by_file, lat) -> list[dict]:
    """Method::execute split into delegate calls per backend, CPU kernels and framework overhead."""
    parts: dict[tuple, list] = {}
    for fi, rows in by_file.items():
        f = files[fi]
        rows = np.asarray(rows)
        for b in f.profile.backends():
            parts.setdefault(("delegate", b), [[], []])
            parts[("delegate", b)][0].append(f.parts[f"delegate:{b}"][rows])
            parts[("delegate", b)][1].append(f.parts[f"calls:{b}"][rows])
        for kind, calls in (("cpu_ops", "calls:cpu"), ("framework_overhead", None)):
            parts.setdefault((kind, None), [[], []])
            parts[(kind, None)][0].append(f.parts[kind][rows])
            if calls:
                parts[(kind, None)][1].append(f.parts[calls][rows])
    mean_lat = float(lat.mean()) if lat.size else float("nan")
    out = []
    order = sorted(parts, key=lambda k: {"delegate": 0, "cpu_ops": 1, "framework_overhead": 2}[k[0]])
    for kind, backend in order:
        vals = np.concatenate(parts[(kind, backend)][0]) / 1e6
        ok = np.isfinite(vals)
        vals = vals[ok]
        row = {"kind": kind}
        if backend:
            row["backend"] = backend
        calls = parts[(kind, backend)][1]
        if calls:
            c = np.concatenate(calls)[ok]
            row["calls_per_run"] = float(c.mean()) if c.size else 0.0
        row["mean_ms"] = float(vals.mean()) if vals.size else 0.0
        row["p50_ms"] = float(np.median(vals)) if vals.size else 0.0
        row["p10_ms"], row["p90_ms"] = (float(v) for v in np.percentile(vals, [10, 90])) if vals.size else (0.0, 0.0)
        row["share"] = float(row["mean_ms"] / mean_lat) if vals.size and mean_lat else 0.0
        out.append(row)
    return out


def _top_ops(files, by_file, mean_lat) -> list[dict]:
    """Instructions by mean time per run in this phase (steady runs), largest first."""
    agg: dict[tuple, dict] = {}
    for fi, rows in by_file.items():
        f = files[fi]
        rows = np.asarray(rows)
        if not f.instr_ids.size:
            continue
        T = np.nan_to_num(f.T[rows], nan=0.0) / 1e6
        single = len(by_file) == 1
        means = T.mean(axis=0) if single else None
        meds = np.median(T, axis=0) if single else None
        for c, iid in enumerate(f.instr_ids):
            lab = f.label(iid)
            key = (lab["instruction_id"], lab["placement"], lab["op_type"], lab["kernel"])
            a = agg.setdefault(key, {**lab, "_vals": []})
            if single:
                a["mean_ms"], a["p50_ms"] = float(means[c]), float(meds[c])
            else:
                a["_vals"].append(T[:, c])
    rows = []
    for a in agg.values():
        vals = a.pop("_vals")
        if vals:
            vals = np.concatenate(vals)
            a["mean_ms"] = float(vals.mean()) if vals.size else 0.0
            a["p50_ms"] = float(np.median(vals)) if vals.size else 0.0
        a.setdefault("mean_ms", 0.0)
        a.setdefault("p50_ms", 0.0)
        a["share"] = float(a["mean_ms"] / mean_lat) if mean_lat and np.isfinite(mean_lat) else None
        a["kind"] = "cpu" if a["placement"] == P.CPU else "delegate"
        rows.append(a)
    rows.sort(key=lambda r: -r["mean_ms"])
    return rows


# ---- plain-language findings ---------------------------------------------------------------------------
# Each sentence says what it rests on (runs or instances, and their spread); effects are stated only
# past the tests in _first_decode / _drift; causes are offered as possibilities.
def _findings(phases, tps, ttft, drift, warm_notes, split) -> list[str]:
    out = []
    by_name = {ph["name"]: ph for ph in phases}
    if split and split.get("by") not in (None, "none"):
        out.append(f"Phases found by {split['by']}: {split['evidence']}.")
    for w in warm_notes:
        out.append(f"Run {w['run']} ({w['phase']}) is warm-up: {w['latency_ms']:.3f} ms, "
                   f"{w['ratio']:.1f}x the median of the phase's {w['later_runs']} later runs (rule: over "
                   f"{WARMUP_FACTOR:g}x; their IQR {w['later_iqr_ms'][0]:.3f}–{w['later_iqr_ms'][1]:.3f} ms); "
                   "left out of the steady-state numbers.")
    if ttft is not None:
        out.append(f"Time to first token (prefill latency, p50): {ttft:.3f} ms"
                   + _basis(by_name.get("prefill")) + ".")
    if tps is not None:
        out.append(f"Decode: {tps:,.1f} tokens/s (1000 / p50 ms per token" + _basis(by_name.get("decode"), ", ")
                   + ").")
    for ph in phases:
        bd = {(b["kind"], b.get("backend")): b for b in ph["breakdown"]}
        cpu = bd.get(("cpu_ops", None))
        if cpu and cpu["share"] >= 0.1:
            tops = ph["fallback_op_types"][:3]
            detail = ", ".join(f"{t['op_type']} x{len(t['instructions'])} ({t['share']:.0%})" for t in tops)
            kv = any("index_put" in t["op_type"] or "update_cache" in t["op_type"] for t in tops)
            n = ph["steady_runs"]
            basis = (f"over {n} steady runs; per run p10–p90 {cpu['p10_ms']:.3f}–{cpu['p90_ms']:.3f} ms" if n > 1
                     else "in its one steady run")
            msg = (f"{ph['name']}: CPU fallback kernels take {cpu['share']:.0%} of the mean run "
                   f"({cpu['mean_ms']:.3f} ms {basis})"
                   + (f"; largest: {detail}" if detail else ""))
            if kv:
                msg += " (index_put in an LLM is most likely the KV-cache update, here on the CPU)"
            out.append(msg + ".")
    first = drift.get("first_decode_after_prefill") if drift else None
    if first:
        out.extend(_first_decode_finding(first))
    if drift:
        out.append(_drift_finding(drift))
    if tps is None and len(phases) == 1 and phases[0]["latency_ms"] and phases[0]["latency_ms"]["p50"]:
        p50 = phases[0]["latency_ms"]["p50"]     # 0 when Method::execute lasted 0 ns: no rate
        out.append(f"No prefill/decode split was found; if every run is a one-token decode, that is "
                   f"{1000 / p50:,.1f} tokens/s (p50 of {phases[0]['steady_runs']} runs; use --prompt-runs to "
                   "name the prefill runs).")
    return out


def _basis(ph: dict | None, sep: str = " (") -> str:
    """' (n steady runs, p10–p90 a–b ms)' for a phase row; '' without one."""
    if not ph or not ph.get("latency_ms"):
        return ""
    lat = ph["latency_ms"]
    n = ph["steady_runs"]
    if n == 1:
        return f"{sep}one run" + (")" if sep == " (" else "")
    return f"{sep}{n} steady runs, range {lat['min']:.3f}–{lat['max']:.3f} ms" + (")" if sep == " (" else "")


def _first_decode_finding(f: dict) -> list[str]:
    others = (f"other decodes p50 {f['others_p50_ms']:.3f} ms (IQR {f['others_iqr_ms'][0]:.3f}–"
              f"{f['others_iqr_ms'][1]:.3f} ms, {f['others_runs']} runs)")
    lo, hi = f["range_ms"]
    if f["slower"]:
        return [f"The first decode after a prefill is slower: p50 {f['p50_ms']:.3f} ms, {f['ratio']:.1f}x the "
                f"{others}; above their upper quartile in {f['above_upper_quartile']} of {f['instances']} "
                f"prefill→decode transitions (range {lo:.3f}–{hi:.3f} ms). A possible cause: the delegates "
                "re-planning for the new input shape."]
    if (f["ratio"] or 0) <= FIRST_DECODE_HINT_RATIO:
        return []
    if f["instances"] < FIRST_DECODE_MIN_INSTANCES:
        return [f"Too few prefill→decode transitions ({f['instances']}; {FIRST_DECODE_MIN_INSTANCES} needed) to "
                f"tell whether the first decode after a prefill is slower: first decodes {lo:.3f}–{hi:.3f} ms "
                f"(p50 {f['p50_ms']:.3f}), {others}."]
    return [f"The first decode after a prefill is not consistently slower: above the other decodes' upper "
            f"quartile in {f['above_upper_quartile']} of {f['instances']} transitions (first decodes p50 "
            f"{f['p50_ms']:.3f} ms, range {lo:.3f}–{hi:.3f}; {others})."]


def _drift_finding(d: dict) -> str:
    lo, hi = d["positions"]
    ci = d["slope_ci95_ms_per_100_tokens"]
    ci_text = f"95% interval {ci[0]:+.3f}..{ci[1]:+.3f}" if ci else "no interval: too few positions"
    basis = (f"{d['x']} {lo}..{hi}, {d['runs']} runs; slope {d['slope_ms_per_100_tokens']:+.3f} ms per 100 "
             f"tokens, {ci_text}; change over the range {d['change_over_range_ms']:.3f} ms, run-to-run spread "
             f"(IQR around the fit) {d['spread_ms']:.3f} ms")
    if hi - lo < DRIFT_MIN_POSITIONS:
        return f"Decode positions {lo}..{hi} are too few to tell a drift with position ({basis})."
    if d["drift_shown"]:
        rel = d["relative_per_100_tokens"]
        return (f"Decode latency drifts by {d['slope_ms_per_100_tokens']:+.3f} ms"
                + (f" ({rel:+.0%})" if rel is not None else "") + f" per 100 tokens ({basis}; fit on the "
                "median latency per position).")
    return f"No drift of decode latency with position is shown ({basis})."
