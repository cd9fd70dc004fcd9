"""Structure-aware generators: VALID files of every input kind with adversarial values.

Each ``gen_<kind>(rng)`` returns the bytes of a well-formed file (it parses with the producer's own
schema / grammar) whose values are chosen to hit cost cliffs rather than parser errors: ids near
2**31 and 2**63, one instruction called tens of thousands of times, thousands of runs, tracks or
ops, distinct names everywhere or one name repeated, extreme and reversed timestamps, deep and
wide JSON, runs sharing event vectors or events sharing tables (FlatBuffers allow both; ExecuTorch
never writes them), every zip compression method. Sizes stay in the tens to hundreds of kB so a
case runs in about a second when the code is linear; a quadratic path shows up as seconds to
minutes.

``campaign.COMMANDS[kind]`` lists the CLI commands that read a kind; ``campaign.py`` runs each
(file, command) in a child process with a wall-time limit and measures its CPU time and peak RSS.
A generator takes ``rng`` (a ``random.Random``: the same seed gives the same bytes) and optionally
``shape`` (one of its cases, else drawn).
"""
from __future__ import annotations

import io
import json
import random
import zipfile

import fuzz_harness as H

BIG_I32 = [2 ** 31 - 1, 2 ** 31 - 2, 2 ** 30, 10 ** 9, 65535, 0, -1, -(2 ** 31)]
BIG_U64 = [0, 1, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1, 2 ** 62, 10 ** 18]


# ---- ETDump ---------------------------------------------------------------------------------------

def build_etdump_shared(runs, *, share_tables: bool = False, version: int = 0) -> bytes:
    """Like :func:`fuzz_harness.build_etdump` (same event tuples), plus sharing FlatBuffers allows:

    * ``share_tables``: identical events are written once and referenced from every slot;
    * a run given as ``{"events_of": k}`` points at run ``k``'s events vector (shared vector).
    Strings are written once per distinct value.
    """
    import flatbuffers

    b = flatbuffers.Builder(1 << 16)
    b.ForceDefaults(True)
    strings: dict[str, int] = {}

    def string(s):
        if s is None:
            return None
        if s not in strings:
            strings[s] = b.CreateString(s)
        return strings[s]

    def vec_offsets(offs):
        return H.fb_offsets(b, offs)

    def table(fields):
        return H.fb_table(b, fields)

    cache: dict[tuple, int] = {}

    def event(ev):
        if share_tables and ev in cache:
            return cache[ev]
        if ev[0] == "P":
            _, name, chain, instr, did_int, did_str, start, end = ev
            n, ds = string(name), string(did_str)
            pe = table([(0, "off", n), (1, "i32", chain), (2, "i32", instr), (3, "i32", did_int),
                        (4, "off", ds), (6, "u64", start), (7, "u64", end)])
            off = table([(0, "off", pe)])
        else:
            ae = table([(0, "i32", ev[1]), (1, "u64", ev[2])])
            off = table([(1, "off", ae)])
        cache[ev] = off
        return off

    vectors: list[int] = []
    run_offs = []
    for run in runs:
        if "events_of" in run:
            evs = vectors[run["events_of"]]
        else:
            evs = vec_offsets([event(ev) for ev in run["events"]])
        vectors.append(evs)
        allocs = vec_offsets([table([(0, "off", string(a))]) for a in run.get("allocators", [])])
        run_offs.append(table([(0, "off", string(run.get("name", "Execute"))), (1, "i32", run.get("bundled", -1)),
                               (2, "off", allocs), (3, "off", evs)]))
    root = table([(0, "u32", version), (1, "off", vec_offsets(run_offs))])
    b.FinishSizePrefixed(root, file_identifier=b"ED00")
    return bytes(b.Output())


def _op_events(instr: int, op: str, t: int, dur: int, chain: int = 0):
    return [("P", "OPERATOR_CALL", chain, instr, None, None, t, t + dur),
            ("P", f"native_call_{op}.out", chain, instr, None, None, t, t + dur)]


def etdump_runs(rng: random.Random, shape: str | None = None) -> tuple[list[dict], bool, str]:
    """(runs, share_tables, shape): one adversarial ETDump plan."""
    shape = shape or rng.choice(ETDUMP_SHAPES)
    share = False
    ts = lambda: rng.choice([rng.randrange(1 << 40), rng.choice(BIG_U64)])   # noqa: E731
    if shape == "huge_ids":
        ids = [rng.choice(BIG_I32) for _ in range(rng.randint(1, 6))] + list(range(rng.randint(0, 50)))
        events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 6)]
        for i, iid in enumerate(ids):
            events += _op_events(iid, rng.choice(["add", "mul", "conv"]), 10 * i, 5,
                                 chain=rng.choice([0, 0, 2 ** 31 - 1, -1]))
            if rng.random() < 0.3:
                events.append(("P", "DELEGATE_CALL", 0, iid, rng.choice(BIG_I32), None, 10 * i, 10 * i + 9))
                events.append(("P", None, 0, iid, rng.choice(BIG_I32), f"x:OpId_{rng.choice(BIG_I32)} (cycles)",
                               0, rng.randrange(1 << 20)))
        runs = [dict(name="Execute", events=events) for _ in range(rng.randint(1, 4))]
    elif shape == "repeat_one_instruction":
        k = rng.choice([2000, 8000, 20000])
        events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 9)]
        for i in range(k):
            events += _op_events(rng.choice([0, 0, 0, 1]), "add", 10 * i, rng.randint(1, 9))
        runs = [dict(name="Execute", events=events) for _ in range(rng.randint(1, 2))]
    elif shape == "repeat_delegate_events":
        k = rng.choice([2000, 10000, 30000])
        name = rng.choice(["aten_add_tensor:OpId_1 (cycles)", "Accelerator (execute) time (cycles)",
                           "QNN (execute) time (us)"])
        events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 9),
                  ("P", "DELEGATE_CALL", 0, 0, None, None, 1, 10 ** 9 - 1)]
        events += [("P", None, 0, 0, None, name if rng.random() < 0.8 else f"op_{i}:OpId_{i} (cycles)", 0,
                    rng.randint(1, 1000)) for i in range(k)]
        runs = [dict(name="Execute", events=events) for _ in range(rng.randint(1, 3))]
    elif shape == "many_runs":
        n = rng.choice([1000, 5000, 20000])
        runs = [dict(name=rng.choice(["Execute", "Execute", "Default", f"r{i}"]),
                     events=[("P", "Method::execute", None, None, None, None, 100 * i, 100 * i + 50)]
                     + _op_events(rng.randrange(3), "add", 100 * i + 1, 3)) for i in range(n)]
    elif shape == "new_instruction_per_run":
        # Every run calls an instruction no other run calls: per-run x per-instruction tables
        # become runs^2.
        runs = [dict(name="Execute", events=[("P", "Method::execute", None, None, None, None, 100 * i, 100 * i + 50)]
                     + _op_events(i, "add", 100 * i + 1, 3)) for i in range(rng.choice([1000, 8000]))]
    elif shape == "many_instructions":
        n = rng.choice([5000, 20000])
        events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 9)]
        for i in range(n):
            events += _op_events(i if rng.random() < 0.9 else rng.choice(BIG_I32), f"op{i % 97}", 10 * i, 5)
        runs = [dict(name="Execute", events=events)]
    elif shape == "distinct_names":
        n = rng.choice([5000, 20000])
        events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 9)]
        events += [("P", None, 0, 0, i, f"node_{i}_{'x' * rng.randint(0, 30)}:OpId_{i} (cycles)", 0, i)
                   for i in range(n)]
        events.insert(1, ("P", "DELEGATE_CALL", 0, 0, None, None, 1, 10 ** 9 - 1))
        runs = [dict(name="Execute", events=events) for _ in range(rng.randint(1, 3))]
    elif shape == "names_differ_per_run":
        runs, k = [], 0
        per = rng.choice([20, 50])
        for _ in range(rng.choice([200, 1000])):
            events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 6),
                      ("P", "DELEGATE_CALL", 0, 0, None, None, 1, 10 ** 6 - 1)]
            for i in range(per):
                events.append(("P", None, 0, 0, None, f"n{k}:OpId_{k} (cycles)", 0, i))
                k += 1
            runs.append(dict(name="Execute", events=events))
    elif shape == "dense_events":
        # The fewest bytes a valid event takes (16): empty or near-empty ProfileEvent tables.
        blank = ("P", None, None, None, None, None, None, None)
        events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 9)]
        events += [blank if rng.random() < 0.7 else ("P", "OPERATOR_CALL", 0, i % 50, None, None, i, i + 1)
                   for i in range(rng.choice([10000, 100000]))]
        runs = [dict(name="Execute", events=events)]
    elif shape == "many_partitions":
        events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 9)]
        for i in range(rng.choice([2000, 10000])):
            events += [("P", None, 0, i, None, "QNN (execute) time (us)", 0, 5),
                       ("P", None, 0, i, None, f"a:OpId_{i} (cycles)", 0, 7),
                       ("P", "DELEGATE_CALL", 0, i, None, None, 10 * i, 10 * i + 9)]
        runs = [dict(name="Execute", events=events) for _ in range(2)]
    elif shape == "extreme_timestamps":
        events = [("P", "Method::execute", None, None, None, None, ts(), ts())]
        for i in range(rng.choice([10, 1000, 10000])):
            events += _op_events(i % 50, "add", ts(), 0)
            events[-1] = events[-1][:6] + (ts(), ts())
        runs = [dict(name="Execute", events=events) for _ in range(rng.randint(1, 3))]
    elif shape == "shared_vectors":
        k = rng.choice([200, 2000])
        pad = "x" * rng.choice([0, 400])   # long distinct names: sharing then fits the event-count bound
        events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 6)]
        for i in range(k):
            events += _op_events(i % 20, "add", 10 * i, 5)
            events.append(("P", f"e{i}{pad}", 0, i % 20, None, None, 10 * i, 10 * i + 1))
        runs = [dict(name="Execute", events=events)] + [{"name": "Execute", "events_of": 0}
                                                         for _ in range(rng.randint(1, 30))]
    elif shape == "shared_tables":
        share = True
        k = rng.choice([2000, 20000])
        events = [("P", "Method::execute", None, None, None, None, 0, 10 ** 6)]
        events += _op_events(0, "add", 10, 5) * k
        runs = [dict(name="Execute", events=events) for _ in range(rng.randint(1, 3))]
    elif shape == "allocations":
        events = [("A", rng.choice(BIG_I32), rng.choice(BIG_U64)) for _ in range(rng.choice([100, 10000]))]
        runs = [dict(name="Execute", allocators=[f"a{i}" for i in range(rng.randint(0, 50))], events=events)]
    else:
        raise ValueError(shape)
    return runs, share, shape


ETDUMP_SHAPES = ("huge_ids", "repeat_one_instruction", "repeat_delegate_events", "many_runs", "many_instructions",
                 "distinct_names", "names_differ_per_run", "many_partitions", "dense_events", "new_instruction_per_run", "extreme_timestamps", "shared_vectors", "shared_tables", "allocations")


def gen_etdump(rng: random.Random, shape: str | None = None) -> bytes:
    runs, share, _ = etdump_runs(rng, shape)
    return build_etdump_shared(runs, share_tables=share, version=rng.choice([0, 0, 1, 2 ** 32 - 1]))


# ---- QNN: QHAS, optrace, profile CSV / viewer text / JSON ------------------------------------------

def _real_json(name: str):
    return json.loads(H.seed_bytes(H.QNN / name).decode("utf-8-sig"))


def gen_qhas(rng: random.Random, shape: str | None = None) -> bytes:
    """The real chain8 QHAS with its tables scaled: tens of thousands of HTP ops under one QNN op,
    tens of thousands of QNN ops, huge cycle and byte counts, deep ``dims``."""
    doc = _real_json("chain8_sm8650.qhas.json")
    data = doc["data"]
    shape = shape or rng.choice(["many_htp_under_one", "many_qnn_ops", "dominant_path", "extreme_values"])
    n = rng.choice([2000, 20000, 60000])
    htp0 = {k: data["htp_op_instances"]["data"][1][k] for k in ("htp", "tid", "qnn_op_type", "cycles", "hmx", "hvx")
            if k in data["htp_op_instances"]["data"][1]}
    qnn0 = data["qnn_op_instances_nodes"]["data"][0]
    if shape == "many_htp_under_one":
        data["htp_op_instances"]["data"] = [{"htp_op": f"q::Op_{i}", "qnn_op": qnn0["qnn_op"], "hmx": i % 2 == 0}
                                            for i in range(n)]
    elif shape == "many_qnn_ops":
        data["qnn_op_instances_nodes"]["data"] = [dict(qnn0, qnn_op=f"op_{i}", cycles=i) for i in range(n)]
        data["htp_op_instances"]["data"] = [dict(htp0, op_id=hex(i), qnn_op=f"op_{i}") for i in range(n)]
    elif shape == "dominant_path":
        row = data["dominant_path_htp_0"]["data"][0]
        data["dominant_path_htp_0"]["data"] = [dict(row, op_id=hex(i % 7), start_cycle=rng.choice(BIG_U64))
                                               for i in range(n)]
    else:
        for table in data.values():
            for row in table.get("data", []) if isinstance(table, dict) else []:
                for k, v in list(row.items()):
                    if isinstance(v, (int, float)) and not isinstance(v, bool):
                        row[k] = rng.choice([2 ** 63, -(2 ** 63), 10 ** 30, 1e308, 0, -1])
                    elif k == "dims":
                        d = [1]
                        for _ in range(rng.choice([10, 200])):
                            d = [d]
                        row[k] = d
    return json.dumps(doc).encode()


def gen_optrace(rng: random.Random, shape: str | None = None, lean: bool | None = None) -> bytes:
    """An optrace shaped like the real one (``Core 0 Overview`` process with per-unit threads, one
    process per QNN op) with thousands of tracks, events per track, or extreme timestamps.
    ``lean``: overview events only, without args (more events per byte)."""
    shape = shape or rng.choice(["tracks_x_events", "one_track_many_events", "many_tracks", "extreme_ts"])
    lean = rng.random() < 0.3 if lean is None else lean
    tracks, per = {"tracks_x_events": (400, 50), "one_track_many_events": (1, 20000),
                   "many_tracks": (8000, 1), "extreme_ts": (4, 2000)}[shape]
    ev = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "Core 0 Overview"}}]
    for t in range(tracks):
        pid, tid = 1 + t // 4, 256 * (1 + t % 4)
        unit = ["HMX", "HVX", "DMA", "HMX"][t % 4]
        ev.append({"ph": "M", "name": "thread_name", "pid": 0, "tid": tid + t, "args": {"name": f"Type: {unit}"}})
        if not lean:
            ev.append({"ph": "M", "name": "process_name", "pid": pid,
                       "args": {"name": f"QNN::op_{pid}", "opid": hex(pid)}})
            ev.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                       "args": {"name": f"Core:0 Type: {unit} Tid: {tid}"}})
        for i in range(per):
            ts = rng.choice([0, 1e300, -1e300, 2 ** 63, i]) if shape == "extreme_ts" else i * 2
            if lean:
                ev.append({"ph": "X", "name": "q::Op", "pid": 0, "tid": tid + t, "ts": ts, "dur": 2})
                continue
            args = {"HTP Op Type": f"q::Op_{i % 300}", "QNN Op Name": f"op_{pid}", "QNN Op Type": "Conv2d",
                    "Flags": [unit.lower()], "Duration (cycles)": 2}
            ev.append({"ph": "X", "name": f"q::Op_{i % 300}", "pid": 0, "tid": tid + t, "ts": ts, "dur": 2,
                       "args": args})
            ev.append({"ph": "X", "name": f"q::Op_{i % 300}", "pid": pid, "tid": tid, "ts": ts, "dur": 2,
                       "args": args})
    return json.dumps({"header": {"artifact_type": "OP_TRACE", "version": {"major": 1, "minor": 1, "patch": 0}},
                       "traceEvents": ev}).encode()


def gen_qnn_csv(rng: random.Random, shape: str | None = None) -> bytes:
    n = rng.choice([1000, 10000, 30000])
    rows = ["Msg Timestamp,Message,Time,Unit of Measurement,Timing Source,Event Level,Event Identifier"]
    repeat = rng.random() < 0.5
    for e in range(rng.choice([1, 3])):
        rows.append(f"{e},EXECUTE,100,US,BACKEND,ROOT,QNN (execute) time")
        rows.append(f"{e},EXECUTE,{10 ** 6},CYCLES,BACKEND,ROOT,Accelerator (execute) time (cycles)")
        for i in range(n):
            name = "aten_add_0:OpId_1 (cycles)" if repeat else f"op_{i}:OpId_{rng.choice(BIG_I32) if i % 7 == 0 else i}"
            rows.append(f"{e},NODE,{rng.choice([i, 2 ** 63, 0])},CYCLES,BACKEND,SUB-EVENT,{name}")
    return "\n".join(rows).encode()


def gen_qnn_text(rng: random.Random, shape: str | None = None) -> bytes:
    n = rng.choice([1000, 10000, 30000])
    lines = ["Input Log File Location: x", "Time Scale: 1e-06", "Execute Stats:", "----",
             "    QNN (execute) time : 100 us", "    Accelerator (execute) time (cycles) : 1000000 cycles"]
    repeat = rng.random() < 0.5
    for e in range(rng.choice([1, 3])):
        lines.append(f"Execute Stat {e + 1}")
        for i in range(n):
            name = "aten_add_0:OpId_1" if repeat else f"op_{i}:OpId_{i}"
            lines.append(f"        {name} (cycles) : {rng.choice([i, 2 ** 63])} cycles")
    return "\n".join(lines).encode()


def gen_qnn_json(rng: random.Random, shape: str | None = None) -> bytes:
    n = rng.choice([1000, 10000])
    shape = shape or rng.choice(["wide", "deep"])
    if shape == "wide":
        subs = [{"identifier": f"op_{i}:OpId_{i}" if rng.random() < 0.5 else "aten_add:OpId_1",
                 "value": rng.choice([i, 2 ** 63]), "unit": "CYCLES", "type": "NODE"} for i in range(n)]
    else:
        subs = "@SUBS@"     # nested as text below: json.dumps recurses
    deep = rng.choice([100, 900, 5000]) if shape == "deep" else 0
    ev = [{"identifier": "QNN (execute) time", "value": 100, "unit": "US", "type": "EXECUTE"},
          {"identifier": "Accelerator (execute) time (cycles)", "value": 10 ** 6, "unit": "CYCLES",
           "type": "BACKEND", "sub-events": subs}]
    doc = {"header": {"artifact_type": "QNN_PROFILE"}, "metadata": {},
           "messages": [{"method": "BACKEND_EXECUTE", "profilingEvents": ev}] * rng.choice([1, 3])}
    text = json.dumps(doc)
    if deep:
        nested = '[{"identifier": "x:OpId_1", "value": 1, "unit": "CYCLES", "sub-events": ' * deep + "[]" + "}]" * deep
        text = text.replace('"@SUBS@"', nested)
    return text.encode()


def gen_runtrace(rng: random.Random, shape: str | None = None) -> bytes:
    """A QNN RUN_TRACE (``QNN DSP Execute`` then its VTCM / power-on / graph spans, per execute) with
    tens of thousands of executes, thousands of spans inside one execute, many graphs, or spans
    before any execute; ticks and cycles near 2**43 as on a device."""
    shape = shape or rng.choice(RUNTRACE_SHAPES)
    if shape == "dense_executes":
        # The fewest bytes an execute takes: a bare span (each one execute; ~35 bytes).
        return dense_runtrace(rng.choice([20000, 100000, 300000]))
    lean = rng.random() < 0.5      # spans with only their time (more spans per byte)
    executes, inner = {"many_executes": (rng.choice([2000, 10000, 40000]), rng.choice([0, 3])),
                       "one_long_execute": (1, rng.choice([5000, 40000])),
                       "many_graphs": (rng.choice([2000, 5000]), 3),
                       "before_any_execute": (rng.choice([10, 1000]), 3)}[shape]
    ev = [{"ph": "M", "name": "process_name", "pid": 0, "args": {"name": "HTP"}}]
    t0, c0 = 31091395371990, 7997465468216

    def span(name, k, graph):
        ticks = rng.randint(1, 20000)
        if lean:
            return {"name": name, "ph": "X", "ts": k, "args": {"summary_time_us": ticks // 19}}
        cycles = int(ticks / 19.2 * rng.choice([845.711, 1870.0]))
        args = {"graph_name": graph, "stat_start_ticks": t0 + k, "stat_end_ticks": t0 + k + ticks,
                "stat_start_cycles": c0 + k, "stat_end_cycles": c0 + k + cycles,
                "summary_time_us": ticks / 19.2}
        return {"name": name, "ph": "X", "tid": 0, "pid": 0, "ts": k, "dur": ticks, "args": args}

    if shape == "before_any_execute":
        ev += [span("Graph Execute", i, "g") for i in range(rng.choice([1000, 50000]))]
    names = ["VTCM Acquire", "Resource Power On", "Graph Execute"]
    for e in range(executes):
        graph = f"graph_{e}" if shape == "many_graphs" else "model_encoded"
        ev.append(span("QNN DSP Execute", 100 * e, graph))
        ev += [span(names[i % 3], 100 * e + i, graph) for i in range(inner)]
    return json.dumps({"header": {"version": {"major": 1, "minor": 1, "patch": 0}, "artifact_type": "RUN_TRACE"},
                       "traceEvents": ev}, separators=(",", ":")).encode()


RUNTRACE_SHAPES = ("many_executes", "one_long_execute", "many_graphs", "before_any_execute", "dense_executes")


def dense_runtrace(n: int) -> bytes:
    """``n`` bare ``QNN DSP Execute`` spans (no args): the most executes per byte."""
    body = ",".join(['{"ph":"X","name":"QNN DSP Execute"}'] * n)
    return ('{"header":{"artifact_type":"RUN_TRACE"},"traceEvents":[' + body + "]}").encode()


# ---- ETRecord (zip) and .pte -----------------------------------------------------------------------

COMPRESSIONS = [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA]


def gen_etrecord(rng: random.Random, shape: str | None = None) -> bytes:
    shape = shape or rng.choice(["shared_handles", "many_nodes", "deep_args", "compressed"])
    n = rng.choice([500, 5000])
    node = lambda i, h: {"name": f"aten_add_{i}", "target": "executorch.exir.dialects.edge.ops.aten.add.Tensor",  # noqa: E731
                         "inputs": [], "outputs": [{"as_tensor": {"name": f"v{i}"}}],
                         "metadata": {"debug_handle": h, "stack_trace": "File \"m.py\", line 1"}}
    if shape == "shared_handles":
        nodes = [node(i, 1) for i in range(n)]
        dmap = {"forward": {"1": [1] * n, **{str(i): [1] for i in range(2, n)}}}
    elif shape == "many_nodes":
        nodes = [node(i, rng.choice([i, 2 ** 63, -1])) for i in range(n)]
        dmap = {"forward": {str(i): [i] for i in range(n)}}
    elif shape == "deep_args":
        depth = rng.choice([50, 500, 5000])      # written as text: json.dumps itself recurses
        arg = '{"as_tensors": [' * depth + '{"as_tensor": {"name": "x"}}' + "]}" * depth
        nodes = [dict(node(0, 0), inputs=[{"name": "x", "arg": "@ARG@"}])]
        dmap = {}
    else:
        nodes = [node(i, i) for i in range(n)]
        dmap = {"forward": {str(i): [i] for i in range(n)}}
    program = {"graph_module": {"graph": {"nodes": nodes, "inputs": [], "outputs": []}}}
    program_text = json.dumps(program)
    if shape == "deep_args":
        program_text = program_text.replace('"@ARG@"', arg)
    entries = [("ETRECORD_V0", b""), ("debug_handle_map", json.dumps(dmap).encode()),
               ("edge_dialect_exported_program", program_text.encode())]
    return zip_entries(entries, rng.choice(COMPRESSIONS))


def zip_entries(entries, method) -> bytes:
    """A zip holding ``entries`` ((name, bytes) pairs), each compressed with ``method``."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, payload in entries:
            info = zipfile.ZipInfo(name)
            info.compress_type = method
            z.writestr(info, payload)
    return buf.getvalue()


def build_pte(methods, *, version: int = 0, plan_copies: int = 1) -> bytes:
    """A .pte (``ET12`` FlatBuffer, no extended header) from plain data, with the field slots of
    program.fbs: ``methods = [dict(name, operators=[(name, overload)], instructions=[(kind, first,
    args)], frames=[(file, line, name)] (one stack trace, shared by every instruction),
    delegates=[(backend_id, inline_index)], inline=[bytes], values=N | [(kind, value)], outputs=[int],
    spec=bytes)]``.

    Sharing FlatBuffers allow and ExecuTorch never writes: ``values_of=k`` points the method at
    method ``k``'s values vector; every delegate of a method with ``spec`` shares one compile-spec
    vector holding ``qnn_compile_spec = spec``; ``share_inline=True`` (on the first method) writes
    each distinct inline blob once and points equal entries at it; ``plan_copies``: the plans vector
    lists the first method's table that many times. ``values`` as a list: EValues
    ``(2, int) | (3, bool) | (4, float) | (6, str)``; a method without ``instructions`` has one
    empty chain (a constant method)."""
    import flatbuffers

    b = flatbuffers.Builder(1 << 16)
    b.ForceDefaults(True)
    strings: dict[str, int] = {}

    def string(x):
        if x not in strings:
            strings[x] = b.CreateString(x)
        return strings[x]

    def vec(offs):
        return H.fb_offsets(b, offs)

    def ivec(xs):
        b.StartVector(4, len(xs), 4)
        for x in reversed(xs):
            b.PrependInt32(x)
        return b.EndVector()

    def table(n, fields):
        return H.fb_table(b, fields, n)

    evalues: dict[tuple, int] = {}

    def evalue(kind, value):
        """An EValue table; equal ones are written once and shared."""
        if (kind, value) not in evalues:
            evalues[(kind, value)] = _evalue(kind, value)
        return evalues[(kind, value)]

    def _evalue(kind, value):
        if kind == 2:
            val = table(1, [(0, "i64", value)])
        elif kind == 3:
            val = table(1, [(0, "u8", int(bool(value)))])
        elif kind == 4:
            b.StartObject(1)
            b.PrependFloat64Slot(0, value, 0.0)
            val = b.EndObject()
        elif kind == 6:
            val = table(1, [(0, "off", string(value))])
        else:
            val = table(1, [])
        return table(2, [(0, "u8", kind), (1, "off", val)])

    inline_all = []
    plans = []
    values_vectors: list[int] = []
    for m in methods:
        ops = vec([table(2, [(0, "off", string(n)), (1, "off", string(o))]) for n, o in m.get("operators", [])])
        frames = [table(3, [(0, "off", string(f)), (1, "i32", ln), (2, "off", string(nm))])
                  for f, ln, nm in m.get("frames", [])]
        stack = table(1, [(0, "off", vec(frames))]) if frames else None
        instrs = []
        for kind, first, args in m.get("instructions", []):
            if kind in (1, 2):
                call = table(2, [(0, "i32", first), (1, "off", ivec(args))])
            else:
                call = table(2, [(0, "i32", first), (1, "i32", args if isinstance(args, int) else 0)])
            instrs.append(table(2, [(0, "u8", kind), (1, "off", call)]))
        stacks = vec([stack] * len(instrs)) if stack is not None else None
        chain_fields = [(2, "off", vec(instrs))] + ([(3, "off", stacks)] if stacks is not None else [])
        chain = table(4, chain_fields)
        specs = None
        if m.get("spec") is not None:
            specs = vec([table(2, [(0, "off", string("qnn_compile_spec")), (1, "off", b.CreateByteVector(m["spec"]))])])
        dels = []
        for backend, index in m.get("delegates", []):
            ref = table(2, [(0, "i8", 0), (1, "u32", index)])
            dels.append(table(3, [(0, "off", string(backend)), (1, "off", ref),
                                  (2, "off", specs if specs is not None else vec([]))]))
        if "values_of" in m:
            values = values_vectors[m["values_of"]]
        elif isinstance(m.get("values"), list):
            values = vec([evalue(k, v) for k, v in m["values"]])
        else:
            values = vec([table(2, [])] * m.get("values", 0)) if m.get("values") else vec([])
        values_vectors.append(values)
        plans.append(table(9, [(0, "off", string(m.get("name", "forward"))), (2, "off", values),
                               (3, "off", ivec([])), (4, "off", ivec(m.get("outputs", []))), (5, "off", vec([chain])),
                               (6, "off", ops), (7, "off", vec(dels))]))
        inline_all += m.get("inline", [])
    data, blobs = [], {}
    share = bool(methods) and methods[0].get("share_inline", False)
    for blob in inline_all:
        if share and blob in blobs:
            data.append(blobs[blob])
            continue
        bv = b.CreateByteVector(blob)
        data.append(table(1, [(0, "off", bv)]))
        blobs[blob] = data[-1]
    if plan_copies > 1:
        plans = [plans[0]] * plan_copies
    root = table(8, [(0, "u32", version), (1, "off", vec(plans)), (3, "off", vec(data))])
    b.Finish(root, file_identifier=b"ET12")
    return bytes(b.Output())


def _qnn_spec_bytes(rng: random.Random) -> bytes:
    """A real-layout QNN compile spec (one of the synthetic fixtures, each decodes)."""
    specs = sorted((H.FIXTURES / "qnn_pte").glob("synthetic_compile_spec_*.bin"))
    return H.seed_bytes(rng.choice(specs))


PTE_SHAPES = ("many_instructions", "huge_indices", "deep_stack", "many_methods", "many_delegates",
              "shared_blobs", "constants_shared_values", "long_names", "many_constant_methods", "shared_plans")


def gen_pte(rng: random.Random, shape: str | None = None) -> bytes:
    """Valid programs with many instructions calling out-of-range or huge operator indices, many
    operators, deep shared stack traces, many methods, huge value counts; delegates sharing a few
    blobs and one compile spec (``program`` once listed every delegate with every other: quadratic);
    constant methods sharing one values vector (each once decoded all of it); names of 100 kB."""
    shape = shape or rng.choice(PTE_SHAPES)
    n = rng.choice([1000, 10000, 30000])
    ops = [("aten::add", "out"), ("aten::mul", "out"), ("aten::convolution", "out")]
    m = dict(name="forward", operators=ops, instructions=[(1, i % 3, [0, 1]) for i in range(n)])
    if shape == "huge_indices":
        m["instructions"] = [(rng.choice([1, 2, 3, 4, 5]), rng.choice(BIG_I32), [rng.choice(BIG_I32)] * 3)
                             for _ in range(n // 10)]
    elif shape == "deep_stack":
        m["instructions"] = m["instructions"][:n // 10]
        m["frames"] = [(f"/src/model_{i}.py", rng.choice(BIG_I32), f"fn_{i}") for i in range(rng.choice([100, 2000]))]
    elif shape == "many_methods":
        return build_pte([dict(name=f"m{i}", operators=ops, instructions=[(1, 0, [0])]) for i in range(n // 10)])
    elif shape == "many_delegates":
        m["delegates"] = [("QnnBackend", i % 4) for i in range(n // 10)]
        m["inline"] = [b"\x00" * 16] * 4
        m["instructions"] = [(2, i, [0]) for i in range(n // 10)]
    elif shape == "shared_blobs":
        # Thousands of delegates over a few blobs, in one or several methods, all with one QNN
        # compile spec (one spec vector): the shape of a QNN hybrid LLM's shared context binary,
        # multiplied.
        k = rng.choice([1000, 3000])
        n_blobs = rng.choice([1, 4])
        n_methods = rng.choice([1, 1, 10])
        blob = bytes(rng.randrange(256) for _ in range(rng.choice([16, 4096])))
        spec = _qnn_spec_bytes(rng)
        per = k // n_methods
        methods = [dict(name=f"forward_{j}", delegates=[("QnnBackend", i % n_blobs) for i in range(per)],
                        instructions=[(2, i, [0]) for i in range(per)], spec=spec)
                   for j in range(n_methods)]
        methods[0]["inline"] = [blob + bytes([i]) for i in range(n_blobs)]
        return build_pte(methods)
    elif shape == "constants_shared_values":
        # Constant methods (an LLM export's get_max_seq_len, ...) all pointing at one long values
        # vector, each returning a few of them.
        v = rng.choice([2000, 20000, 200_000])
        distinct = [(2, rng.choice(BIG_U64) % 2 ** 63), (3, True), (4, 1e308), (6, "s" * rng.randint(0, 300))]
        values = [rng.choice(distinct) if rng.random() < 0.01 else (2, 7) for _ in range(v)]
        k = rng.choice([1000, 3000])
        methods = [dict(name="get_0", values=values, outputs=[0, v - 1])]
        methods += [dict(name=f"get_{i}", values_of=0, outputs=[rng.randrange(v) for _ in range(rng.choice([1, 64]))])
                    for i in range(1, k)]
        return build_pte(methods + [dict(name="forward", operators=ops, instructions=[(1, 0, [0])])])
    elif shape == "shared_plans":
        # Every method is the same ExecutionPlan table (refused: ExecuTorch writes one per method).
        return build_pte([m], version=0, plan_copies=rng.choice([2, 1000, 100_000]))
    elif shape == "many_constant_methods":
        return build_pte([dict(name=f"get_{i}", values=[(2, i)], outputs=[0]) for i in range(n // 5)]
                         + [dict(name="forward", operators=ops, instructions=[(1, 0, [0])])])
    elif shape == "long_names":
        # Names of up to 100 kB (methods, operators, backends), all distinct or all one.
        size = rng.choice([1000, 100_000])
        distinct = rng.random() < 0.5
        name = lambda i: (f"{i}_" if distinct else "") + "n" * size   # noqa: E731
        count = max(2, 200_000 // size)
        m["name"] = name(-1)
        m["operators"] = [(name(i), name(i)) for i in range(count)]
        m["instructions"] = [(1, i % count, [0]) for i in range(count)]
        m["delegates"] = [(name(i), 0) for i in range(count)]
        m["inline"] = [b"x"]
        extra = [dict(name=name(i) + "_const", values=[(6, name(i))], outputs=[0]) for i in range(count)]
        return build_pte([m] + extra, version=rng.choice([0, 2 ** 32 - 1]))
    elif shape == "many_instructions":
        m["operators"] = [(f"aten::op_{i}", "out") for i in range(n)]
        m["instructions"] = [(1, i, [i % 7]) for i in range(n)]
    return build_pte([m], version=rng.choice([0, 2 ** 32 - 1]))


def gen_ort_profile(rng: random.Random, shape: str | None = None) -> bytes:
    """ONNX Runtime's profile JSON (a list of Chrome-trace events: Session model_run, Node
    <name>_kernel_time with args.provider): many runs, many distinct node names (grouping must not
    be quadratic), nodes outside any run, runs out of order or overlapping, odd values."""
    shape = shape or rng.choice(ORT_SHAPES)
    ev = [{"cat": "Session", "name": "session_initialization", "ph": "X", "ts": 0, "dur": 411228, "args": {}}]
    n_runs, per_run = {"many_runs": (rng.choice([5000, 30000]), 3), "many_names": (rng.choice([20, 200]), 2000),
                       "outside_runs": (10, 5), "unordered": (2000, 3), "odd_values": (50, 4)}[shape]
    t = 1000
    for r in range(n_runs):
        ts = t if shape != "unordered" else rng.randint(0, 10 ** 9)
        ev.append({"cat": "Session", "name": "model_run", "ph": "X", "ts": ts, "dur": per_run * 100 + 50, "args": {}})
        for k in range(per_run):
            qnn = k % 3 == 1
            name = f"n{r}_{k}" if shape == "many_names" else f"node{k}"
            dur = rng.choice([30, 25030, 0, -5, 1e308, "x", None, True]) if shape == "odd_values" else 30 + k
            ev.append({"cat": "Node", "name": f"{name}_kernel_time", "ph": "X", "ts": ts + 10 + 100 * k, "dur": dur,
                       "args": {"provider": "QNN" if qnn else "CPUExecutionProvider",
                                "op_name": f"QNN_123_{k}" if qnn else "QuantizeLinear"}})
        t += per_run * 100 + 100
    if shape == "outside_runs":
        ev += [{"cat": "Node", "name": f"late{i}_kernel_time", "ph": "X", "ts": t + i, "dur": 5,
                "args": {"provider": "QNN", "op_name": "QNN_9_0"}} for i in range(50000)]
    rng.shuffle(ev) if shape == "unordered" else None
    return json.dumps(ev, separators=(",", ":")).encode()


ORT_SHAPES = ("many_runs", "many_names", "outside_runs", "unordered", "odd_values")


GENERATORS = {"etdump": gen_etdump, "qhas": gen_qhas, "optrace": gen_optrace, "qnn_csv": gen_qnn_csv,
              "qnn_text": gen_qnn_text, "qnn_json": gen_qnn_json, "etrecord": gen_etrecord, "pte": gen_pte,
              "runtrace": gen_runtrace, "ort_profile": gen_ort_profile}
