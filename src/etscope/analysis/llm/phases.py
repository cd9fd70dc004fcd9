"""Phases of the runs (prefill / decode, or one per method), first rule that applies: runs the user
named (``--prompt-runs``, ``user_phases``, over all files), then per session (one ETDump,
``find_phases``): token counts from logged tensor shapes, what the runs executed (groups of runs
with the same events), then the cost profile inside each group (``cost_profile``). Sessions are
joined by phase name in ``sessions``."""
from __future__ import annotations

import numpy as np

from etscope.arrays import median, unique
from etscope.analysis.llm.result import PhaseSplit
from etscope.analysis.llm.cost_profile import CLOCK_CPU, CLOCK_DELEGATE, CLOCK_NONE, cost_split
from etscope.analysis.llm.runs import stack
from etscope.hashing import mix64

MAX_GROUPS = 8               # more distinct run structures than this: structure is not a phase


class RunIndexError(ValueError):
    """A run the user named (``--prompt-runs``) does not exist."""


def user_phases(files, n_total, prompt_runs, mode):
    """Phases the user gave over all runs (``--prompt-runs``: indices over every ETDump given;
    ``--phases none``; no runs at all), or None when the files' own evidence decides."""
    if n_total == 0:
        return np.zeros(0, dtype=np.int64), ["all"], PhaseSplit("none", "no Execute runs")
    if prompt_runs is not None:
        bad = [r for r in prompt_runs if r < 0 or r >= n_total]
        if bad:
            raise RunIndexError(f"run {bad[0]} does not exist (runs are 0..{n_total - 1})")
        pre = np.zeros(n_total, dtype=bool)
        pre[list(prompt_runs)] = True
        return _two(pre), _names2(pre), PhaseSplit("--prompt-runs", f"{int(pre.sum())} run(s) given")
    if mode == "none":
        return np.zeros(n_total, dtype=np.int64), [_single_name(files)], PhaseSplit("none", "--phases none")
    return None


def find_phases(files, file_of, local, perm, latency, tokens, token_evidence, warnings):
    """Phase index per run, phase names, and how the split was found, for the runs of one session
    (one ETDump: its parts are the ETDump, or its methods' runs). ``file_of`` holds the parts'
    ``file_index`` values; ``files`` are those parts (a slice of all the parts)."""
    n_total = len(file_of)
    if n_total == 0:
        return np.zeros(0, dtype=np.int64), ["all"], PhaseSplit("none", "no Execute runs")
    if token_evidence:
        pre = tokens > 1
        if pre.any() and not pre.all():
            return _two(pre), _names2(pre), PhaseSplit("token counts", "; ".join(token_evidence))
    # Structure groups (what the runs executed).
    groups, how = _structure_groups(files, file_of, perm)
    groups = _first_appearance_order(groups)
    n_groups = int(groups.max()) + 1
    if n_groups > MAX_GROUPS:
        warnings.append(f"runs executed {n_groups} different event sequences; not treated as phases")
        groups = np.zeros(n_total, dtype=np.int64)
        n_groups = 1
    labels, split_info = _cost_splits(files, file_of, local, groups, n_groups)
    if n_groups == 1:
        return _one_group_phases(files, labels, split_info)
    return _group_phases(files, file_of, local, latency, groups, labels, how, split_info)


def _by_index(files) -> dict:
    """The parts by their ``file_index`` (the values of ``file_of``)."""
    return {f.file_index: f for f in files}


def _cost_splits(files, file_of, local, groups, n_groups) -> tuple[np.ndarray, list[dict]]:
    """Cost split inside each group of 3+ runs: per run 1 for prefill-like, else 0; and per group
    split, what told it."""
    labels = np.zeros(len(groups), dtype=np.int64)   # 0 = whole group / decode-like, 1 = prefill-like
    split_info = []
    by_index = _by_index(files)
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
            names.append(iid if isinstance(iid, str) else by_index[fi].label_text(iid))
        split_info.append({"group": g, "prefill_runs": int(res["prefill"].sum()),
                           "other_runs": int((~res["prefill"]).sum()),
                           "token_dependent_instructions": int(len(res["ops"])),
                           "examples": list(dict.fromkeys(names))[:6],
                           "separation_x": float(2 ** res["gap_log2"]), "found_from": res["found_from"]})
    return labels, split_info


def _one_group_phases(files, labels, split_info):
    """All runs executed the same events: prefill / decode when the cost profile split them."""
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
        return _two(pre), _names2(pre), PhaseSplit("cost profile", ev)
    return np.zeros(len(labels), dtype=np.int64), [_single_name(files)], PhaseSplit(
        "none", "all runs executed the same events and no subset of runs costs several times more or "
                "less than the others in the same instructions (no prefill found)")


def _group_phases(files, file_of, local, latency, groups, labels, how, split_info):
    """Several groups: each group is a phase; a group may itself split by cost. Phases are
    numbered in the order of their first run."""
    n_groups = int(groups.max()) + 1
    keys = groups * 2 + (1 - labels)          # prefill-like part of a group first
    uniq, inv = np.unique(keys, return_inverse=True)
    uniq = (uniq // 2) * 2 + (1 - uniq % 2)    # back to group * 2 + label
    inv = inv.reshape(-1)
    names = _group_names(files, file_of, local, latency, uniq, inv, labels, groups)
    order = np.argsort([int(np.argmax(inv == j)) for j in range(len(names))], kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    inv = rank[inv]
    names = [names[j] for j in order]
    ev = f"{n_groups} groups of runs executed different events ({how})"
    if split_info:
        ev += "; split further by cost profile inside " + ", ".join(f"group {s['group'] + 1}" for s in split_info)
    return inv, names, PhaseSplit("instruction sequence" if how != "ETDump file" else "ETDump file", ev)


def _clock_classes(files, cols) -> np.ndarray:
    """cost_split's clock class per column: 0 per-op counters, 1 CPU instructions, 2 delegate calls."""
    by_index = _by_index(files)
    out = np.full(len(cols), CLOCK_NONE, dtype=np.int8)
    for j, (fi, iid) in enumerate(cols):
        if not isinstance(iid, str):
            ins = by_index[fi].profile.instructions.get(int(iid))
            out[j] = CLOCK_DELEGATE if ins is not None and ins.kind == "delegate" else CLOCK_CPU
    return out


def _first_appearance_order(g: np.ndarray) -> np.ndarray:
    """Renumber group ids 0, 1, ... in the order groups first appear."""
    uniq, first = np.unique(g, return_index=True)     # sorts (plain np.unique hashes, importing numpy.ma)
    order = np.argsort(first)
    remap = np.empty(len(order), dtype=np.int64)
    remap[uniq[order]] = np.arange(len(order))
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
    sig = stack([f.sig_full for f in files], perm)
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
            same = all(len(unique(g_full[file_of == f.file_index])) == 1 for f in files)
            if same:
                how = _parts_kind(files)
        return g_full, how
    sig = stack([f.sig_instr for f in files], perm)
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
            if _costlier(hi, lat, _cycles_p50(files, file_of, local, inv)) and cnt[hi] <= cnt[1 - hi]:
                names = ["prefill" if i == hi else "decode" for i in range(2)]
    # Unique names.
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} #{seen[n]}")
    return out


def _costlier(hi: int, lat: list[float], cycles: list[float]) -> bool:
    """Group ``hi`` (the slower) costs several times the other: 2x its latency, or 2x its HTP
    cycles when both log them (a per-call overhead of milliseconds, e.g. FastRPC on a sharded
    model, can keep the latency ratio of prefill to decode under 2 while the work is 9x)."""
    lo = 1 - hi
    return lat[hi] >= 2 * lat[lo] or (cycles[lo] > 0 and cycles[hi] >= 2 * cycles[lo])


def _cycles_p50(files, file_of, local, inv) -> list[float]:
    """Per group (0, 1): median over its runs of the cycles logged inside delegate calls per run."""
    by_index = _by_index(files)
    per_run = np.array([by_index[int(f)].delegate_cycles[int(r)] for f, r in zip(file_of, local)], dtype=np.float64)
    return [float(median(per_run[inv == i])) if (inv == i).any() else 0.0 for i in range(2)]


def _fitting_method(files, file_of, local, runs) -> str | None:
    """Name of the .pte method whose instructions fit these runs' instructions (one file only)."""
    fis = unique(file_of[runs])
    if len(fis) != 1:
        return None
    f = _by_index(files)[int(fis[0])]
    if f.from_split:
        return f.profile.method
    pte = f.profile.pte
    if pte is None or len(getattr(pte, "methods", [])) < 2:
        return f.profile.method if pte is not None else None
    in_rows = np.zeros(f.n, dtype=bool)
    in_rows[local[runs]] = True
    used = f.instructions_called(in_rows)
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
    f = _by_index(files)[int(part[np.argmax(count)])]
    mine = file_of[runs] == f.file_index
    cols = [(f.file_index, int(i)) for i in f.instr_ids] + [(f.file_index, name) for name in f.inner_names]
    rows = local[runs[mine]]
    if mine.all():      # every run is the part's: its tables as they are (read only), or joined
        whole = rows.size == f.n and bool((rows == np.arange(f.n)).all())
        tables = [t if whole else t[rows] for t in ([f.T, f.inner_T] if f.inner_names else [f.T])]
        return (tables[0] if len(tables) == 1 else np.concatenate(tables, axis=1)), cols
    T = np.full((len(runs), len(cols)), np.nan)
    T[mine, :len(f.instr_ids)] = f.T[rows]
    if f.inner_names:
        T[mine, len(f.instr_ids):] = f.inner_T[rows]
    return T, cols

