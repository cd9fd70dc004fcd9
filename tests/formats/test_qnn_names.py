"""qnn_names: event-name parsing, FX candidates, units, input helpers."""
import os
import re
from pathlib import Path

import pytest

from etscope.errors import FormatError
from etscope.formats import qnn_names as N
from etscope.formats.qnn_names import QnnEventName, fx_node_candidates, parse_qnn_event_name

# The shared data as tests/conftest.py finds it: ETSCOPE_SHARED_DATA, else beside the checkout.
from shared_data import SHARED  # noqa: E402

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "qnn"


@pytest.mark.parametrize("name, expected", [
    ("aten_relu_default_3:OpId_60 (cycles)", ("aten_relu_default_3", 60, "cycles", None)),
    ("MatMul_0:OpId_18 (cycles)", ("MatMul_0", 18, "cycles", None)),
    ("OpId_17 (cycles)", ("", 17, "cycles", None)),
    ("Input OpId_2 (cycles)", ("Input", 2, "cycles", None)),
    ("Output OpId_3 (cycles)", ("Output", 3, "cycles", None)),
    ("QNN (execute) time (us)", ("QNN (execute) time", None, "us", None)),
    ("QNN (execute) time", ("QNN (execute) time", None, None, None)),
    ("Number of HVX threads used (count)", ("Number of HVX threads used", None, "count", None)),
    ("Accelerator (execute) time (cycles)", ("Accelerator (execute) time", None, "cycles", None)),
    ("Accelerator (execute) time (us)", ("Accelerator (execute) time", None, "us", None)),
    ("Peak memory (bytes)", ("Peak memory", None, "bytes", None)),
    ("aten_mm_default_token_3:OpId_5 (cycles)", ("aten_mm_default", 5, "cycles", 3)),
    ("aten_mm_default_token_12", ("aten_mm_default", None, None, 12)),
    ("Transpose_token_8:OpId_17 (cycles)", ("Transpose", 17, "cycles", 8)),
    ("/resnet/pooler/GlobalAveragePool_token_325_2:OpId_467 (cycles)",
     ("/resnet/pooler/GlobalAveragePool", 467, "cycles", 325)),
    ("/blocks.0/attn/k_proj/MatMul_output_0_QuantizeLinear_OutputReshape:OpId_50 (cycles)",
     ("/blocks.0/attn/k_proj/MatMul_output_0_QuantizeLinear_OutputReshape", 50, "cycles", None)),
    ("MatMul_0:OpId_18", ("MatMul_0", 18, None, None)),
    ("a:b:OpId_3 (cycles)", ("a:b", 3, "cycles", None)),
    ("Unknown event type", ("Unknown event type", None, None, None)),
    ("", ("", None, None, None)),
    ("_token_3", ("_token_3", None, None, None)),       # no stem: not a token suffix
])
def test_parse_examples(name, expected):
    got = parse_qnn_event_name(name)
    assert isinstance(got, QnnEventName)
    assert tuple(got) == expected
    base, op_id, unit, token = got          # plain 4-tuple unpacking works
    assert got.base == base and got.op_id == op_id and got.unit == unit and got.token == token


def test_parse_never_raises_on_odd_input():
    for s in [None, 17, "(cycles)", " (us)", "OpId_", "OpId_x (cycles)", ":OpId_1", "x" * 100000 + ":OpId_1",
              "name\n:OpId_1 (cycles)", "\x00\udcff", "OpId_99999999999999999999999 (cycles)"]:
        r = parse_qnn_event_name(s)
        assert isinstance(r.base, str)


def test_split_token():
    assert N.split_token("Conv_token_13_2") == ("Conv", 13, 2)
    assert N.split_token("Conv_token_13") == ("Conv", 13, None)
    assert N.split_token("Conv") == ("Conv", None, None)
    assert N.split_token("my_token_list") == ("my_token_list", None, None)


@pytest.mark.parametrize("name, expected", [
    ("aten_mm_default_token_3:OpId_5 (cycles)", ["aten_mm_default_token_3", "aten_mm_default"]),
    ("aten_mm_default_token_3", ["aten_mm_default_token_3", "aten_mm_default"]),
    ("aten_relu_default_3:OpId_60 (cycles)", ["aten_relu_default_3"]),
    ("aten_relu_default_3", ["aten_relu_default_3"]),
    ("MatMul_0_pre_reshape:OpId_16 (cycles)", ["MatMul_0_pre_reshape", "MatMul_0"]),
    ("aten_argmin_default_cast", ["aten_argmin_default_cast", "aten_argmin_default"]),
    ("x_cast", ["x_cast", "x"]),
    ("OpId_17 (cycles)", []),
    ("Input OpId_2 (cycles)", []),
    ("Output OpId_3 (cycles)", []),
    ("", []),
])
def test_fx_node_candidates(name, expected):
    assert fx_node_candidates(name) == expected


def test_fx_node_candidates_non_str():
    assert fx_node_candidates(None) == []  # type: ignore[arg-type]


@pytest.mark.parametrize("raw, unit", [
    ("US", "us"), ("MICROSEC", "us"), ("us", "us"), ("CYCLES", "cycles"), ("cycles", "cycles"),
    ("COUNT", "count"), ("BYTES", "bytes"), ("OBJECT", "object"), ("object", "object"),
    ("MILLISEC", "ms"), ("NANOSEC", "ns"), ("BACKEND", "backend"), (None, ""), (" Weird ", "weird"),
])
def test_normalise_unit(raw, unit):
    assert N.normalise_unit(raw) == unit


# ---- every NODE name in the real data ------------------------------------------------------------

_NODE_LINE_TXT = re.compile(r"^\s{2,}(.+?) : ")
_NODE_MD = re.compile(r"^\|\s*Execute\s*\|\s*([^|]+?OpId_\d+ \(cycles\))\s*\|")


def _names_from(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    out = set()
    if path.suffix == ".csv":
        for line in text.splitlines():
            parts = line.split(",", 6)
            if len(parts) == 7 and parts[1] == "NODE":
                name = parts[6]
                if name.startswith('"') and name.endswith('"'):
                    name = name[1:-1]
                out.add(name)
    elif path.suffix == ".txt":
        for line in text.splitlines():
            m = _NODE_LINE_TXT.match(line)
            if m and "OpId_" in m.group(1):
                out.add(m.group(1))
    elif path.suffix == ".md":
        for line in text.splitlines():
            m = _NODE_MD.match(line)
            if m:
                out.add(m.group(1))
    elif path.name.endswith(".qnn_profile.json"):
        out.update(re.findall(r'"identifier": "([^"]*OpId_\d+[^"]*)"', text))
    return out


def _all_node_names() -> set[str]:
    files = list(FIX.glob("*"))
    if SHARED.is_dir():
        files += list(SHARED.glob("qnn-device/*")) + list(SHARED.glob("qnn-htp-emulator/*/*/qnn_profile.csv"))
    names: set[str] = set()
    for f in files:
        if f.is_file() and f.suffix in (".csv", ".txt", ".md", ".json"):
            names |= _names_from(f)
    return names


_FULL = re.compile(r"^(?:(?P<raw>.+?)(?P<sep>:| ))?OpId_(?P<id>\d+) \(cycles\)$")


def test_every_real_node_name():
    names = _all_node_names()
    assert len(names) >= 150      # fixtures alone hold well over 150 distinct NODE names
    for name in names:
        r = parse_qnn_event_name(name)
        m = _FULL.match(name)
        assert m, name
        assert r.op_id == int(m.group("id")), name
        assert r.unit == "cycles", name
        raw = m.group("raw") or ""
        tok = re.search(r"_token_(\d+)(?:_\d+)?$", raw)
        if tok:
            assert r.token == int(tok.group(1)), name
            assert r.base == raw[: tok.start()], name
        else:
            assert r.token is None and r.base == raw, name
        assert "_token_" not in r.base or not re.search(r"_token_\d+(_\d+)?$", r.base), name
        cands = fx_node_candidates(name)
        if m.group("sep") == ":":
            assert cands[0] == raw and r.base in cands, name
        else:
            assert cands == [], name          # Input/Output/nameless ops have no FX node


def test_named_examples_are_in_the_data():
    names = _all_node_names()
    for expected in ["aten_relu_default_3:OpId_60 (cycles)", "MatMul_0:OpId_18 (cycles)",
                     "OpId_17 (cycles)", "Input OpId_2 (cycles)", "Transpose_token_8:OpId_17 (cycles)"]:
        assert expected in names


# ---- input helpers -------------------------------------------------------------------------------

def test_read_input_bytes_cap(tmp_path, monkeypatch):
    p = tmp_path / "f.txt"
    p.write_bytes(b"x" * 100)
    assert N.read_input_bytes(p) == b"x" * 100
    with pytest.raises(FormatError, match="limit"):
        N.read_input_bytes(p, max_bytes=99)
    monkeypatch.setattr(N, "MAX_INPUT_BYTES", 50)
    with pytest.raises(FormatError, match="limit") as ei:
        N.read_input_bytes(p)
    assert ei.value.file == str(p)


def test_read_input_bytes_errors(tmp_path):
    with pytest.raises(FormatError, match="no such file"):
        N.read_input_bytes(tmp_path / "missing.csv")
    with pytest.raises(FormatError, match="directory"):
        N.read_input_bytes(tmp_path)


def test_decode_text():
    assert N.decode_text(b"\xef\xbb\xbfabc") == "abc"
    assert N.decode_text("\ufeffabc") == "abc"
    assert N.decode_text("héllo".encode("utf-16")) == "héllo"
    with pytest.raises(FormatError, match="not UTF-8") as ei:
        N.decode_text(b"ab\xff\xfecd", name="x.csv")
    assert ei.value.offset == 2 and ei.value.file == "x.csv"
    with pytest.raises(FormatError):
        N.decode_text(12)  # type: ignore[arg-type]


@pytest.mark.parametrize("data", [b"{", b"[" * 100000, b"1" * 5000, b"{\"a\": }", b"\xff"])
def test_load_json_errors(data):
    with pytest.raises(FormatError):
        N.load_json(data)


def test_head_text_never_raises():
    assert N.head_text(b"\xff\xfeabc") is not None
    assert N.head_text(None) == ""  # type: ignore[arg-type]
