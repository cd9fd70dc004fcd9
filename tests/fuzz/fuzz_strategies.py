"""Structure-aware hypothesis strategies: inputs that get past the readers' first checks.

Each strategy builds a file the way its producer would (ETDump with the ``flatbuffers`` Builder,
QNN text/CSV line by line, QNN JSON/QHAS/optrace as documents, ETRecords as zips of JSON entries),
with hostile values in every slot: huge and negative numbers, NaN, wrong types, control
characters, markup, and long repeated patterns (the inputs that make backtracking regexes and
per-item loops blow up).
"""
from __future__ import annotations

import json
import os
import pickle
import re

from hypothesis import HealthCheck, note, settings
from hypothesis.control import currently_in_test_context
from hypothesis import strategies as st

import fuzz_harness as H

LONG = os.environ.get("ETSCOPE_FUZZ_LONG", "") not in ("", "0")
SCALE = float(os.environ.get("ETSCOPE_FUZZ_SCALE", "25" if LONG else "1"))
SAVE = os.environ.get("ETSCOPE_FUZZ_SAVE", "") not in ("", "0")


def examples(n: int) -> int:
    """The CI example count of a test, scaled in long mode."""
    return max(1, int(n * SCALE))


def fuzz_settings(n: int, **kw):
    """hypothesis settings for a fuzz test: ``n`` examples in CI, derandomized (same inputs every
    run); no per-example deadline (the harness checks time against the input size itself)."""
    return settings(max_examples=examples(n), deadline=None, derandomize=not LONG, database=None,
                    suppress_health_check=list(HealthCheck), print_blob=True, **kw)


COUNTS: dict[str, int] = {}
# tracemalloc makes numpy-heavy readers ~3x slower: in CI memory is measured on every third input
# of the random tests (always in long mode and in the hand-made attacks, which pass memory=True).
MEMORY_EVERY = 1 if LONG else 3


def contract(reader: str, data: bytes, fn=None, *, size: int | None = None, memory: bool | None = None) -> str:
    """Check one input (``fn`` defaults to the reader); on failure note the input's start and,
    with ETSCOPE_FUZZ_SAVE=1, store it under crashers/new/."""
    n = COUNTS[reader] = COUNTS.get(reader, 0) + 1
    if memory is None:
        memory = n % MEMORY_EVERY == 0
    try:
        if fn is None:
            return H.check(reader, data, measure_memory=memory)
        return H.run_contract(reader, fn, data, size=size, measure_memory=memory)
    except H.FuzzFailure as e:
        say = note if currently_in_test_context() else H.log
        say(f"{reader} input ({len(data)} bytes) starts {data[:64]!r}")
        if SAVE:   # overwritten while hypothesis shrinks: the last one written is the minimal input
            kind = re.sub(r"[^a-z]+", "-", e.why.split(":")[0].split(" (")[0].lower()).strip("-")[:30]
            path = H.CRASHERS / "new" / f"{reader}_{kind}_latest.bin"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            say(f"saved as {path}")
        raise

# ---- building blocks ---------------------------------------------------------------------------------

HOSTILE_TEXT = ["", " ", "\x1b[31mred\x1b[0m", "\x1b]0;title\x07", "\x00", "\r", "\u202e", "\x9b", "é",
                "<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "=HYPERLINK(\"http://x\")",
                "+1", "-1+2", "@SUM(1)", "a,b", '"q"', "UNKNOWN", "nan", "OpId_", "_token_"]


@st.composite
def pumped(draw, patterns=H.PUMPS, max_reps: int = 40000):
    """A short word, a pattern repeated many times, another word (ReDoS / quadratic-loop bait)."""
    return (draw(st.sampled_from(["", "a", "x:", "QNN ", "native_call_", "aten_"]))
            + draw(st.sampled_from(patterns)) * draw(st.integers(100, max_reps))
            + draw(st.sampled_from(["", "x", "OpId_x", " x y", "(us", "1 us", ":OpId_1 (cycles)"])))


def text_values(real=()):
    return st.one_of(st.sampled_from(list(real) + HOSTILE_TEXT), st.text(max_size=24), pumped(max_reps=5000))


def hostile_scalars(real_text=()):
    return st.one_of(
        st.none(), st.booleans(),
        st.integers(-(2 ** 70), 2 ** 70), st.sampled_from([0, -1, 1, 2 ** 31 - 1, -(2 ** 31), 2 ** 63, 2 ** 64, 10 ** 400]),
        st.floats(allow_nan=True, allow_infinity=True),
        text_values(real_text),
    )


def json_values(real_text=()):
    return st.recursive(hostile_scalars(real_text),
                        lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                        max_leaves=12)


def dumps(doc) -> bytes:
    return json.dumps(doc, allow_nan=True).encode("utf-8")


# ---- ETDump ----------------------------------------------------------------------------------------------

EVENT_NAMES = ["Method::execute", "DELEGATE_CALL", "OPERATOR_CALL", "native_call_add.out", "native_call_cumsum.out",
               "Program::load_method", "Method::init", "aten::add.out", "QNN (execute) time (us)",
               "aten_relu_default_3:OpId_60 (cycles)", "Accelerator (execute) time (cycles)",
               "Convolution (NHWC, F32) IGEMM #1", "Number of HVX threads used (count)", "Input OpId_2 (cycles)"]
I32 = st.one_of(st.sampled_from([-1, 0, 1, 2, 3, 2 ** 31 - 1, -(2 ** 31)]), st.integers(-(2 ** 31), 2 ** 31 - 1))
U64 = st.one_of(st.sampled_from([0, 1, 1000, 2 ** 63, 2 ** 64 - 1]), st.integers(0, 2 ** 64 - 1))


def _etdump_names(pumps: bool):
    base = [st.sampled_from(EVENT_NAMES + HOSTILE_TEXT), st.text(max_size=16), st.none()]
    if pumps:
        base.append(pumped(max_reps=4000))
    return st.one_of(*base)


def etdump_events(pumps: bool = True):
    names = _etdump_names(pumps)
    prof = st.tuples(st.just("P"), names, st.one_of(st.none(), I32), st.one_of(st.none(), I32),
                     st.one_of(st.none(), I32), names, st.one_of(st.none(), st.binary(max_size=8)),
                     st.one_of(st.none(), U64), st.one_of(st.none(), U64))
    alloc = st.tuples(st.just("A"), I32, U64)
    value = st.one_of(st.none(),
                      st.tuples(st.integers(-128, 127), st.integers(-128, 127),
                                st.one_of(st.none(), st.lists(st.integers(-(2 ** 63), 2 ** 63 - 1), max_size=5))),
                      st.tuples(st.just("list"), st.integers(-128, 127),
                                st.lists(st.integers(-(2 ** 63), 2 ** 63 - 1), max_size=4)))
    debug = st.tuples(st.just("D"), names, st.one_of(st.none(), U64), st.one_of(st.none(), I32),
                      st.one_of(st.none(), I32), names, value)
    return st.one_of(prof, prof, prof, alloc, debug)


@st.composite
def etdump_docs(draw, pumps: bool = True, max_events: int = 12):
    runs = draw(st.lists(st.fixed_dictionaries({
        "name": st.one_of(st.sampled_from(["Default", "Execute", "Execute", ""]), st.none(), st.text(max_size=8)),
        "bundled": st.one_of(st.none(), I32),
        "allocators": st.lists(st.one_of(st.sampled_from(["a", "\x1b[2J"]), st.text(max_size=6)), max_size=3),
        "events": st.lists(etdump_events(pumps), max_size=max_events),
    }), max_size=6))
    version = draw(st.sampled_from([0, 1, 2 ** 32 - 1]))
    return runs, version


# ---- QNN viewer text --------------------------------------------------------------------------------------

TEXT_HEADINGS = ["Init Stats:", "Execute Stats:", "Execute Stat 1", "Execute Stat 2", "Finalize Stats:",
                 "De-Init Stats:", "Create From Binary Stats:", "Qnn Init/Prepare/Finalize/De-Init/Execute/Lib-Load Statistics:",
                 "Printing All Data Received From Back End", "------------", "Graph 0 (model) Stats:"]
QNN_NAMES = ["QNN (execute) time", "QNN (finalize) time", "RPC (execute) time", "Accelerator (execute) time (cycles)",
             "MatMul_0:OpId_18 (cycles)", "Input OpId_2 (cycles)", "OpId_17 (cycles)", "Number of HVX threads used",
             "Unknown event type", "Conv_token_13_2:OpId_37 (cycles)", "NetRun", "Backend (RPC (load binary) time)"]
NUMBERS = ["0", "12", "-1", "3.5", "1e309", "nan", "UNKNOWN", "", "9" * 60, "0x10", "1,000", "+7", ".5"]
UNITS = ["us", "cycles", "count", "bytes", "object", "", "US", "CYCLES", "MICROSEC", "x y"]


@st.composite
def qnn_text_files(draw) -> bytes:
    name = st.one_of(st.sampled_from(QNN_NAMES + HOSTILE_TEXT), st.text(max_size=20), pumped(max_reps=20000))
    number = st.one_of(st.sampled_from(NUMBERS), st.integers().map(str), st.floats().map(repr),
                       pumped(patterns=("1", " ", "1 ", "e1", "0."), max_reps=20000))
    unit = st.sampled_from(UNITS)
    indent = st.sampled_from(["", "    ", "\t", "  "])
    line = st.one_of(
        st.sampled_from(TEXT_HEADINGS),
        st.builds(lambda i, n, v, u: f"{i}{n} : {v}  {u}", indent, name, number, unit),
        st.builds(lambda n, v, u: f"    {n}: {v} {u}", name, number, unit),
        st.builds(lambda k, v: f"{k}: {v}", st.sampled_from(["Time Scale", "Epoch Timestamp", "Input Log File Location",
                                                             "Generated using"]), name),
        st.builds(lambda i, n: f"{i}{n}", indent, name),
    )
    lines = draw(st.lists(line, max_size=40))
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    return nl.join(lines).encode("utf-8")


# ---- QNN CSV -----------------------------------------------------------------------------------------------

CSV_HEADER = ["Msg Timestamp", "Message", "Time", "Unit of Measurement", "Timing Source", "Event Level",
              "Event Identifier"]


@st.composite
def qnn_csv_files(draw) -> bytes:
    cols = list(CSV_HEADER)
    if draw(st.booleans()):
        cols = draw(st.permutations(cols))
    if draw(st.integers(0, 9)) == 0:
        cols = cols + draw(st.lists(st.sampled_from(["Extra", "Time", ""]), max_size=2))
    field = {
        "Msg Timestamp": st.one_of(st.sampled_from(["0", "", "x", "1e999"]), st.integers().map(str)),
        "Message": st.sampled_from(["FINALIZE", "BACKEND", "EXECUTE", "NODE", "UNKNOWN", "", "INIT", "DEINIT"]),
        "Time": st.one_of(st.sampled_from(NUMBERS), st.integers().map(str), st.floats().map(repr)),
        "Unit of Measurement": st.sampled_from(["US", "CYCLES", "OBJECT", "BYTES", "COUNT", "", "MICROSEC"]),
        "Timing Source": st.sampled_from(["BACKEND", "", "APP"]),
        "Event Level": st.sampled_from(["ROOT", "SUB-EVENT", "SUBEVENT", "root", "", "LEAF"]),
        "Event Identifier": st.one_of(st.sampled_from(QNN_NAMES + HOSTILE_TEXT + ['"a,b"', 'x,y,z']),
                                      st.text(max_size=20), pumped(max_reps=20000)),
    }
    rows = []
    for _ in range(draw(st.integers(0, 30))):
        rows.append(",".join(draw(field.get(c, st.text(max_size=5))) for c in cols))
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    return nl.join([",".join(cols)] + rows).encode("utf-8")


# ---- QNN profile JSON, QHAS, optrace ----------------------------------------------------------------------

@st.composite
def qnn_json_docs(draw) -> bytes:
    v = hostile_scalars(QNN_NAMES)
    event = st.recursive(
        st.fixed_dictionaries({"identifier": st.one_of(st.sampled_from(QNN_NAMES), v), "value": v,
                               "unit": st.one_of(st.sampled_from(["US", "CYCLES", "COUNT", "OBJECT"]), v),
                               "type": st.one_of(st.sampled_from(["EXECUTE", "NODE", "BACKEND"]), v)}),
        lambda inner: st.fixed_dictionaries({"identifier": st.sampled_from(QNN_NAMES), "value": v,
                                             "sub-events": st.lists(inner, max_size=4)}),
        max_leaves=10)
    doc = {
        "header": draw(st.one_of(st.just({"artifact_type": "QNN_PROFILE"}), st.fixed_dictionaries({"artifact_type": v}),
                                 v)),
        "metadata": draw(st.one_of(st.dictionaries(st.text(max_size=6), v, max_size=3), v)),
        "messages": draw(st.one_of(st.lists(st.fixed_dictionaries({
            "method": st.one_of(st.sampled_from(["BACKEND_EXECUTE", "BACKEND_FINALIZE", "APP_EXECUTE", ""]), v),
            "profilingEvents": st.one_of(st.lists(event, max_size=5), v)}), max_size=5), v)),
    }
    return dumps(doc)


QHAS_FIELDS = ["time_us", "cycles", "op", "qnn_op", "htp_op", "hmx", "hvx", "dma", "tid", "type", "utilization",
               "start_cycle", "dram_read", "vtcm_write", "percent_idle", "dims", "num_dominant_path_cycles_htp_0",
               "input_nodes", "peak_vtcm_alloc", "htp_resources", "x"]
QHAS_TABLES = ["htp_overall_summary", "qnn_op_types", "qnn_op_instances_nodes", "htp_op_types", "htp_op_instances",
               "dominant_path_htp_0", "dominant_path_htp_99999999999999999999", "unknown_table"]


def _qhas_value(field: str):
    """Mostly the right type for the field (to get past the type checks), sometimes anything."""
    from etscope.formats import qhas
    if field in qhas.FLAG_FIELDS:
        good = st.booleans()
    elif field in qhas.STRING_FIELDS:
        good = st.one_of(st.sampled_from(["HMX", "HVX", "Conv2d", "UNK"]), st.text(max_size=8), pumped(max_reps=5000))
    elif field in qhas.LIST_FIELDS:
        good = st.lists(st.integers(-2, 2 ** 40), max_size=4)
    else:
        good = st.one_of(st.integers(-(2 ** 64), 2 ** 64), st.floats(allow_nan=True, allow_infinity=True))
    return st.one_of(*[good] * 9, json_values())


@st.composite
def _qhas_row(draw, depth: int = 0):
    row = {}
    for f in draw(st.lists(st.sampled_from(QHAS_FIELDS), max_size=8, unique=True)):
        if f == "htp_resources" and depth == 0:
            row[f] = draw(st.one_of(st.fixed_dictionaries({"data": st.lists(_qhas_row(depth=1), max_size=3)}),
                                    st.lists(_qhas_row(depth=1), max_size=3), json_values()))
        else:
            row[f] = draw(_qhas_value(f))
    return row


@st.composite
def qhas_docs(draw) -> bytes:
    v = json_values()
    row = st.one_of(*[_qhas_row()] * 9, v)
    table = st.one_of(*[st.fixed_dictionaries({"data": st.lists(row, max_size=5)})] * 6, st.lists(row, max_size=3), v)
    header = st.fixed_dictionaries({"artifact_type": st.just("QHAS"), "version": st.one_of(
        *[st.fixed_dictionaries({"major": st.integers(0, 3), "minor": st.just(0), "patch": st.just(0)})] * 6, v)})
    doc = {
        "header": draw(st.one_of(*[header] * 9, v)),
        "data": draw(st.one_of(*[st.dictionaries(st.sampled_from(QHAS_TABLES), table, max_size=5)] * 9, v)),
    }
    if draw(st.booleans()):
        doc["model_id"] = draw(v)
    return dumps(doc)


def _optrace_event(hostile: bool):
    v = hostile_scalars(["Core 0 Overview", "QNN::MatMul_0", "Type: HMX", "Non Executed Tensors", "VTCM alloc"])

    def pick(good):
        return st.one_of(*[good] * 9, v) if hostile else good

    num = st.one_of(st.integers(-(2 ** 64), 2 ** 64), st.floats(allow_nan=True, allow_infinity=True),
                    st.sampled_from(["12", "1e400", " 7 "]))
    names = st.one_of(st.sampled_from(["Core 0 Overview", "QNN::MatMul_0", "Type: HMX", "Type: HVX",
                                       "Non Executed Tensors", "Core:0 Type: HMX Tid: 256"]), st.text(max_size=10),
                      pumped(max_reps=5000))
    return st.fixed_dictionaries({"ph": pick(st.sampled_from(["X", "X", "M", "M", "C", "s", "f", "i"]))}, optional={
        "name": pick(st.sampled_from(["process_name", "thread_name", "process_sort_index", "q::Conv", "VTCM alloc"])),
        "pid": pick(st.integers(-3, 3)), "tid": pick(st.sampled_from([256, 512, 1, "0x100"])),
        "ts": pick(num), "dur": pick(num), "cat": pick(st.text(max_size=4)),
        "id": pick(st.one_of(st.integers(), st.text(max_size=4))),
        "args": pick(st.dictionaries(st.sampled_from(["name", "sort_index", "", "opid", "x"]), st.one_of(names, num),
                                     max_size=3)),
    })


@st.composite
def optrace_docs(draw) -> bytes:
    hostile = draw(st.integers(0, 3)) == 0
    events = draw(st.lists(_optrace_event(hostile), max_size=25))
    shape = draw(st.integers(0, 9))
    if shape == 0:
        doc = events
    elif shape == 1:
        doc = [{"artifact_type": draw(st.sampled_from(["OP_TRACE", "QHAS"]))}] + events
    elif shape == 2:
        doc = {"header": draw(json_values()), "traceEvents": draw(json_values())}
    else:
        doc = {"header": {"artifact_type": "OP_TRACE"}, "traceEvents": events}
    return dumps(doc)


# ---- ETRecord zips -------------------------------------------------------------------------------------------

class _Boom:
    """Pickled, this would create a file when loaded: the reader must never unpickle anything."""

    def __init__(self, path: str):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def evil_pickle(path: str) -> bytes:
    return pickle.dumps(_Boom(path))


TARGETS = ["torch.ops.aten.relu.default", "executorch.exir.dialects.edge.ops.aten.add.Tensor",
           "torch.ops.higher_order.executorch_call_delegate", "_operator.getitem", ""]


def _arg():
    name = st.one_of(st.sampled_from(["x", "y", "out", "p_w"]), st.text(max_size=6), pumped(max_reps=5000))
    return st.recursive(
        st.one_of(st.builds(lambda n: {"as_tensor": {"name": n}}, name),
                  st.builds(lambda n: {"as_sym_int": {"as_name": n}}, name),
                  st.builds(lambda n: {"as_string": n}, st.one_of(name, st.just('{"backend_id": "QnnBackend", '
                            '"compile_specs": [{"key": "k", "value": "!!notb64"}], "processed_bytes": "=", '
                            '"original_module": {"graph_module": {"graph": {"nodes": []}}}}'))),
                  hostile_scalars()),
        lambda inner: st.one_of(st.builds(lambda xs: {"as_tensors": xs}, st.lists(inner, max_size=3)),
                                st.builds(lambda x: {"as_optional_tensor": x}, inner)),
        max_leaves=6)


def _node():
    meta = st.fixed_dictionaries({}, optional={
        "debug_handle": st.one_of(st.integers(-5, 10 ** 20), st.text(max_size=10), st.sampled_from(["[1, 2]", "(3,)", "1,2"]),
                                  st.lists(st.integers(-5, 5), max_size=3), hostile_scalars()),
        "stack_trace": st.one_of(st.just('File "/a/model.py", line 12, in forward\n  x'), st.text(max_size=30),
                                 pumped(patterns=('File "', "a", " "), max_reps=5000)),
        "nn_module_stack": st.one_of(st.just("L__self__,m.layers.0,torch.nn.Linear;x,y,z"), st.text(max_size=20),
                                     pumped(patterns=("[(", ",", ";"), max_reps=5000)),
    })
    return st.fixed_dictionaries({"name": st.one_of(st.text(max_size=8), hostile_scalars())}, optional={
        "target": st.one_of(st.sampled_from(TARGETS), hostile_scalars()),
        "inputs": st.one_of(st.lists(st.fixed_dictionaries({"name": st.text(max_size=4), "arg": _arg()}), max_size=3),
                            hostile_scalars()),
        "outputs": st.lists(_arg(), max_size=2),
        "metadata": st.one_of(meta, hostile_scalars()),
    })


def _program():
    return st.fixed_dictionaries({"graph_module": st.fixed_dictionaries({"graph": st.fixed_dictionaries({
        "nodes": st.lists(_node(), max_size=6),
        "inputs": st.lists(_arg(), max_size=2), "outputs": st.lists(_arg(), max_size=2)}),
        "signature": st.one_of(st.fixed_dictionaries({"input_specs": st.lists(st.dictionaries(
            st.sampled_from(["parameter", "user_input", "buffer"]),
            st.fixed_dictionaries({"arg": _arg(), "parameter_name": st.text(max_size=4)}), max_size=1), max_size=2)}),
            hostile_scalars()),
    })}, optional={"dialect": hostile_scalars(), "verifiers": st.lists(hostile_scalars(), max_size=2)})


def _id_map(values):
    return st.dictionaries(st.one_of(st.sampled_from(["forward", "decode"]), st.text(max_size=5)),
                           st.dictionaries(st.one_of(st.integers(-3, 10 ** 20).map(str), st.text(max_size=4)), values,
                                           max_size=4), max_size=2)


ENTRY_NAMES = ["ETRECORD_V0", "ETRECORD_V1", "debug_handle_map", "delegate_map", "instruction_id_to_num_outs_map",
               "export_graph_id", "edge_dialect_exported_program", "edge_dialect_exported_program/forward",
               "exported_program", "edge_after_transform/forward", "../../evil", "/abs/evil", "a/../b", "C:/x",
               "x\\..\\y", "reference_outputs", "exported_program_state_dict", "e" * 1500, "dup"]


@st.composite
def etrecord_zips(draw, pickle_target: str = "/nonexistent/etscope-fuzz-pwned") -> bytes:
    handles = st.one_of(st.integers(-5, 10 ** 20), st.lists(st.integers(-5, 100), max_size=3), hostile_scalars())
    entries: list[tuple[str, bytes]] = []
    if draw(st.integers(0, 9)):
        entries.append(("ETRECORD_V0", b""))
    content = {
        "debug_handle_map": st.one_of(_id_map(handles), json_values()).map(dumps),
        "delegate_map": st.one_of(_id_map(st.fixed_dictionaries({"name": st.one_of(st.just("QnnBackend"), hostile_scalars()),
                                                                 "delegate_map": st.one_of(st.dictionaries(
                                                                     st.text(max_size=3), handles, max_size=3),
                                                                     hostile_scalars())})),
                                  json_values()).map(dumps),
        "instruction_id_to_num_outs_map": st.one_of(_id_map(st.one_of(st.integers(), hostile_scalars())),
                                                    json_values()).map(dumps),
        "export_graph_id": json_values().map(dumps),
        "program": st.one_of(_program(), json_values()).map(dumps),
        "pickle": st.just(evil_pickle(pickle_target)),
        "junk": st.binary(max_size=64),
    }
    for _ in range(draw(st.integers(0, 8))):
        name = draw(st.one_of(st.sampled_from(ENTRY_NAMES), st.text(max_size=12)))
        if name in content:
            kind = name
        elif name.startswith(("edge_", "exported_program", "edge_after")) and "state_dict" not in name:
            kind = "program"
        else:
            kind = draw(st.sampled_from(["pickle", "junk", "program"]))
        entries.append((name, draw(content[kind])))
    return H.write_zip(entries)
