"""Per-part run data of ``etscope llm``: for each part (an ETDump, or one method's runs of it) the
runs' latency, what they executed (signatures), the (runs x instructions) time table within a
budget tied to the input, the per-op values logged inside delegates, and token counts."""
from __future__ import annotations

import numpy as np

from etscope import profile as P
from etscope import units
from etscope.analysis.ops import placement
from etscope.analysis.llm.tokens import tokens_from_debug
from etscope.arrays import unique, unique_inverse
from etscope.formats import etdump as etdump_format
from etscope.hashing import MIX3, mix64, sum_u64
from etscope.profile.repeats import identical_runs

# The (runs x instructions) tables hold at most this many cells per event of the file, plus a base
# (8 MB of float64); past that the least-called instructions are left out of them (and said so).
MAX_TABLE_CELLS_PER_EVENT = 16
MAX_TABLE_CELLS_BASE = 1 << 20


class FileRuns:
    """Per-run data of one profile: latency, structure signature, per-instruction times, tokens."""

    def __init__(self, profile: P.Profile, file_index: int, source: int = 0, from_split: bool = False):
        self.profile = profile
        self.file_index = file_index              # index of this part
        self.source = source                      # index of the input profile it comes from
        self.from_split = from_split              # one method's runs of an ETDump holding several
        self.n = profile.n_runs
        self.latency_ns = np.asarray(profile.runs["latency_ns"], dtype=np.float64)
        self.etdump_run = np.asarray(profile.runs["etdump_run"], dtype=np.int64)
        self.instr_ids, self.instructions_total, self.T = _time_table(profile)
        self.sig_full, self.sig_instr = _run_signatures(profile)
        self.tokens, self.token_evidence = tokens_from_debug(profile)
        self.parts = placement.per_run_parts(profile)
        self.inner_T, self.inner_names = _inner_matrix(profile, self.sig_full)
        self.delegate_cycles = _delegate_cycles(profile)

    def instructions_called(self, in_rows: np.ndarray) -> np.ndarray:
        """Instruction ids called by the runs where ``in_rows`` (a mask over this part's runs),
        including those the tables leave out."""
        ev = self.profile.events
        rows = placement.instruction_rows(self.profile)
        return unique(ev["instruction_id"][rows][in_rows[ev["execute"][rows]]])

    def label_text(self, iid: int) -> str:
        lab = self.label(iid)
        return instruction_name(lab["instruction_id"], lab["placement"], lab["op_type"], lab["kernel"])

    def label(self, iid: int) -> dict:
        ins = self.profile.instructions.get(int(iid))
        if ins is None:
            return {"instruction_id": int(iid), "placement": None, "op_type": None, "kernel": None,
                    "source": None}
        return {"instruction_id": int(iid), "placement": ins.backend, "op_type": ins.op_type,
                "kernel": ins.kernel, "source": ins.source}


def _time_table(profile: P.Profile) -> tuple[np.ndarray, int, np.ndarray]:
    """The instructions given a column (ids, ascending), how many instructions there are, and the
    (runs x instructions) table of their summed times per run (NaN: not called in that run)."""
    ev = profile.events
    n = profile.n_runs
    identical = placement.identical_instruction_table(profile)  # every run calls every instruction
    if identical is not None and len(identical[0]) <= _column_cap(n, profile.n_events):
        ids, _, table = identical
        return ids, len(ids), table
    rows = placement.instruction_rows(profile)                # every call, in file order
    ids, inv = unique_inverse(ev["instruction_id"][rows])
    kept, inv = _columns_within_budget(np.bincount(inv.reshape(-1), minlength=len(ids)), inv.reshape(-1),
                                       n, profile.n_events)
    total = len(ids)
    ids = ids[kept]
    k = len(ids)
    if not (inv >= 0).all():
        on = inv >= 0
        rows, inv = rows[on], inv[on]
    flat = ev["execute"][rows].astype(np.int64)
    flat *= max(k, 1)
    flat += inv
    del inv
    size = n * k
    table = np.bincount(flat, weights=ev["value"][rows], minlength=size).reshape(n, k) if size else np.zeros((n, k))
    called = np.zeros(size, dtype=bool)
    called[flat] = True
    table[~called.reshape(n, k)] = np.nan
    return ids, total, table


def _delegate_cycles(profile: P.Profile) -> np.ndarray:
    """Per run, the sum of the cycle counts logged inside delegate calls (QNN's accelerator cycles
    and per-op rows: twice the HTP's cycles, a measure for comparing runs, not a count of them)."""
    ev = profile.events
    sel = (ev["execute"] >= 0) & (ev["role"] == P.ROLE_DELEGATE_INTERNAL) & (ev["unit"] == units.CYCLES)
    return np.bincount(ev["execute"][sel], weights=ev["value"][sel].astype(np.float64), minlength=profile.n_runs)


def _column_cap(n_runs: int, n_events: int) -> int:
    """Most instruction columns the (runs x instructions) tables may have (see _columns_within_budget)."""
    return (MAX_TABLE_CELLS_PER_EVENT * n_events + MAX_TABLE_CELLS_BASE) // max(n_runs, 1)


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
    cap = _column_cap(n_runs, n_events)
    if k <= cap:
        return np.arange(k), column_of_call
    kept = np.sort(np.argsort(-calls, kind="stable")[:cap])
    column = np.full(k, -1, dtype=np.int64)
    column[kept] = np.arange(len(kept))
    return kept, column[column_of_call]


def label_text(op) -> str:
    """Short name of an instruction for people (``op``: a ``result.TopInstruction``, or anything with
    its ``instruction_id``, ``placement``, ``op_type`` and ``kernel``)."""
    return instruction_name(op.instruction_id, op.placement, op.op_type, op.kernel)


def instruction_name(instruction_id: int, placement: str | None, op_type: str | None, kernel: str | None) -> str:
    """Op type, else kernel, else the delegate call, else the instruction's index."""
    if op_type:
        return str(op_type)
    if kernel:
        return str(kernel)
    if placement and placement != P.CPU:
        return f"{placement} call (instr {instruction_id})"
    return f"instruction {instruction_id}"


def _run_signatures(profile: P.Profile, chunk: int = 1 << 20) -> tuple[np.ndarray, np.ndarray]:
    """Per run, an order-independent hash of what it executed: the multiset of (role, instruction,
    name) of all its profile events (full), and of its instruction-level events only. Computed
    over chunks of events, so memory stays bounded on huge files; when every run logged the same
    events (a static graph, checked column by column), from the first run alone."""
    n = profile.n_runs
    full = np.zeros(n, dtype=np.uint64)
    instr_sig = np.zeros(n, dtype=np.uint64)
    counts = np.zeros(n, dtype=np.int64)
    rows = identical_runs(profile)
    if rows is not None:
        _add_signatures(profile.events, rows, full[:1], instr_sig[:1], counts[:1])
        full[:], instr_sig[:], counts[:] = full[0], instr_sig[0], counts[0]
    else:
        for a in range(0, profile.n_events, chunk):
            _add_signatures(profile.events, slice(a, a + chunk), full, instr_sig, counts)
    with np.errstate(over="ignore"):
        full = full + counts.astype(np.uint64) * MIX3
    return full, instr_sig


def _add_signatures(ev, sl: slice, full: np.ndarray, instr_sig: np.ndarray, counts: np.ndarray) -> None:
    """The events of ``sl`` added to the per-run sums (runs by their ``execute`` index)."""
    n = full.size
    ex = ev["execute"][sl]
    sel = (ex >= 0) & (ev["kind"][sl] == etdump_format.PROFILE)
    if not sel.any():
        return
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


def _inner_matrix(profile: P.Profile, sig_full: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Per run, the values of the events logged inside delegate calls (XNNPACK per-op times, QNN
    per-op cycles), when every run logged the same event sequence: (runs x events) and names."""
    n = profile.n_runs
    empty = (np.zeros((n, 0)), [])
    if n < 3 or not (sig_full == sig_full[0]).all():    # one signature (uint64): np.unique hashes, slowly
        return empty
    ev = profile.events
    counts = np.asarray(profile.runs["event_count"], dtype=np.int64)
    k = int(counts[0])
    if k == 0 or (counts != k).any():
        return empty
    firsts = profile.etdump.run_firsts()[np.asarray(profile.runs["etdump_run"], dtype=np.int64)]
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


def stack(arrays: list[np.ndarray], perm: np.ndarray) -> np.ndarray:
    """Per-part arrays (one value per run) as one array over all runs, in the order they ran."""
    return np.concatenate(arrays)[perm] if arrays else np.zeros(0, np.int64)

