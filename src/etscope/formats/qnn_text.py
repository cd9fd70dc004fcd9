"""qnn-profile-viewer text output (``profile.txt``) -> :class:`~etscope.formats.qnn_profile.QnnProfile`.

The file (QNN 2.45, real sample ``chain8_sm8650.profile.txt``)::

    Input Log File Location: .../qnn-profiling-data_0.log        <- header: "key: value" lines
    Time Scale: 1e-06
    Epoch Timestamp: 1780423295833671 Steady Clock Timestamp: 1615942927823
    Generated using:
    qnn-profile-viewer: v2.45.0.260326154327
    ...
    Qnn Init/Prepare/Finalize/De-Init/Execute/Lib-Load Statistics:
    ------------------------------------------------------------
    Init Stats:                                                   <- application summary
    -----------
        NetRun: 24900 us
        Backend (RPC (load binary) time): 11969 us
    ...
    Printing All Data Received From Back End

    Create From Binary Stats:                                     <- backend events
    RPC (load binary) time : 11969  us
    QNN (load binary) time : 24883  us

    Execute Stats:

    Execute Stat 1

    Number of HVX threads used : 4  count
    Accelerator (execute) time (cycles) : 68365  cycles
        Input OpId_2 (cycles) : 7818  cycles                      <- indented: sub-event (NODE)
        MatMul_0:OpId_18 (cycles) : 32707  cycles
    Unknown event type :   object                                  <- no value: NaN
    QNN (execute) time : 3907  us

Backend events are ``name : value  unit`` (space-colon-space; names themselves contain ``:``),
indented lines are sub-events of the ROOT above them. Summary lines before "Printing All Data"
are ``name: value unit`` and go to ``QnnProfile.app_stats`` with their section.
Each unindented line without `` : `` starts a section; sections become blocks ("Execute Stat N"
-> execute, "Create From Binary Stats" -> init, ...), split further after each closing
``QNN (<phase>) time`` ROOT like the CSV.
"""
from __future__ import annotations

import re

from etscope.errors import FormatError
from etscope.formats.qnn_profile import ProfileBuilder, QnnProfile, parse_number
from etscope.formats.qnn_names import (decode_text, head_text, normalise_unit, parse_qnn_event_name,
                                       read_input_bytes)

__all__ = ["parse_qnn_text", "read_qnn_text", "sniff"]

_BACKEND_MARK = "printing all data received from back end"
# A summary line is ``name: value [unit]``, i.e. the regex
#   ^(?P<name>.+?):\s+(?P<value>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>\S*)\s*$
# which backtracks cubically (a 2 kB line of digits took minutes): _summary_line does the same
# match in linear time, trying each colon with only the value as a regex.
_SUMMARY_VALUE = re.compile(r"\s+([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
_HEADER_LINE = re.compile(r"^(?P<key>[A-Za-z][^:]{0,80}):\s?(?P<value>.*)$")
_RULE = re.compile(r"^\s*-{3,}\s*$")
_SECTION_KIND = (
    (re.compile(r"^execute stat\s*\d+", re.I), "execute"),
    (re.compile(r"create from binary|load binary|^init", re.I), "init"),
    (re.compile(r"finali[sz]e", re.I), "finalize"),
    (re.compile(r"de-?init", re.I), "deinit"),
    (re.compile(r"execute", re.I), "execute"),
)


def _section_kind(label: str) -> str | None:
    for rx, kind in _SECTION_KIND:
        if rx.search(label):
            return kind
    return None


def parse_qnn_text(data: bytes | str, name: str = "<input>", *, max_bytes: int | None = None) -> QnnProfile:
    """Parse qnn-profile-viewer text output (see the module docstring)."""
    try:
        return _parse(data, name, max_bytes)
    except FormatError as e:
        raise e.with_file(name) from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, RecursionError, OverflowError) as e:
        raise FormatError(f"qnn-profile-viewer text is malformed ({e.__class__.__name__}: {e})",
                          file=name) from None


def _summary_line(s: str) -> tuple[str, str, str] | None:
    """``"NetRun: 24900 us"`` -> ``("NetRun", "24900", "us")``; None if ``s`` (stripped) is not one.

    The name ends at the first colon followed by whitespace and a number after which at most one
    word (the unit, possibly glued to the number) remains.
    """
    if not s or s[-1].isspace():
        s = s.strip()
    # start of the last whitespace run: the number must end at or after it (else two words follow)
    r = len(s)
    while r > 0 and not s[r - 1].isspace():
        r -= 1
    while r > 0 and s[r - 1].isspace():
        r -= 1
    i = s.find(":", 1)
    while i >= 0:
        m = _SUMMARY_VALUE.match(s, i + 1)
        if m and m.end() >= r:
            return s[:i], m.group(1), s[m.end():].strip()
        i = s.find(":", i + 1)
    return None


def _is_heading(stripped: str) -> bool:
    """``Init Stats:``, ``Execute Stat 2``, ``Qnn Init/Prepare/...Statistics:``."""
    return bool(_HEADING.match(stripped)) or stripped.lower().startswith("qnn init/")


_HEADING = re.compile(r"^[A-Za-z][\w ./()+-]{0,80}?\bStats?\b[^:]*:?$|^Execute Stat \d+$", re.I)
_EVENT_REST = re.compile(r"^(?:(?P<value>\S+)(?:\s+(?P<unit>\S+))?)?$")


def _split_event(stripped: str):
    """``name : value  unit`` -> (name, value text, unit text) or None if it is not one."""
    if stripped.endswith(" :"):
        name, rest = stripped[:-2], ""
    elif " : " in stripped:
        name, _, rest = stripped.rpartition(" : ")
    else:
        return None
    m = _EVENT_REST.match(rest.strip())
    if not m or not name.strip():
        return None
    value, unit = m.group("value") or "", m.group("unit") or ""
    if value and not unit and not _looks_numeric(value):
        value, unit = "", value            # "Unknown event type :   object"
    return name.strip(), value, unit


def _looks_numeric(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return s.strip().lower() in ("unknown", "nan", "n/a")


def _parse(data, path: str, max_bytes) -> QnnProfile:
    text = decode_text(data, path, "qnn-profile-viewer text", max_bytes)
    b = ProfileBuilder("qnn_text", path)
    metadata: dict[str, str] = {}
    app_stats: list[tuple[str, str, float, str]] = []
    phase = "header"            # header -> summary -> backend
    section = ""                # current summary section (app_stats)
    pending: str | None = None  # last heading seen outside the backend part, if no stat followed
    saw_any = False
    for lineno, raw in enumerate(text.split("\n"), start=1):
        line = raw.rstrip("\r").rstrip()
        stripped = line.strip()
        if not stripped or _RULE.match(line):
            continue
        indented = line[:1] in (" ", "\t")
        if stripped.lower().startswith(_BACKEND_MARK):
            phase, section, pending, saw_any = "backend", "", None, True
            continue
        ev = _split_event(stripped)
        if ev is not None and (phase != "header" or _looks_numeric(ev[1]) or not ev[1]):
            if phase != "backend":
                # backend events without the marker line: the heading before them opens their block
                phase = "backend"
                if pending is not None:
                    _open_section(b, pending)
                pending = None
            name, value_text, unit_text = ev
            value = parse_number(value_text, f"line {lineno}", path) if value_text else float("nan")
            _add_event(b, name, value, normalise_unit(unit_text), indented, lineno)
            saw_any = True
            continue
        if phase != "header" and " : " in stripped:
            raise FormatError(f"line {lineno}: cannot read event {stripped[:60]!r}", file=path)
        if phase == "header":
            if not _is_heading(stripped):
                m = _HEADER_LINE.match(stripped)
                if m:
                    key, value = m.group("key").strip(), m.group("value").strip()
                    if key == "Epoch Timestamp" and "Steady Clock Timestamp:" in value:
                        value, _, steady = value.partition("Steady Clock Timestamp:")
                        value = value.strip()
                        metadata["Steady Clock Timestamp"] = steady.strip()
                    if value:
                        metadata[key] = value
                    saw_any = True
                continue
            phase = "summary"
        if phase == "summary":
            m = _summary_line(stripped)
            if m and not _is_heading(stripped):
                value = parse_number(m[1], f"line {lineno}", path)
                app_stats.append((section, m[0].strip(), value, normalise_unit(m[2])))
                pending = None
                saw_any = True
            else:
                section = pending = stripped.rstrip(":").strip()
            continue
        _open_section(b, stripped.rstrip(":").strip())
    if not saw_any:
        raise FormatError("not qnn-profile-viewer text output: no header, statistics or events found",
                          file=path)
    return b.build(metadata=metadata, app_stats=app_stats)


def _open_section(b: ProfileBuilder, label: str) -> None:
    """A heading in the backend part starts a block (``Execute Stats`` only groups the next ones)."""
    if label.lower() == "execute stats":
        return
    b.section(_section_kind(label), label)


def _add_event(b: ProfileBuilder, name: str, value: float, unit: str, indented: bool, lineno: int) -> None:
    level = "SUB-EVENT" if indented else "ROOT"
    type_ = ""
    if indented and (parse_qnn_event_name(name).op_id is not None or unit == "cycles"):
        type_ = "NODE"
    b.add(name, value, unit, level, type_, line=lineno)


def read_qnn_text(path, *, max_bytes: int | None = None) -> QnnProfile:
    """Read a qnn-profile-viewer text file (read-only, size-capped)."""
    data = read_input_bytes(path, max_bytes, "qnn-profile-viewer text")
    return parse_qnn_text(data, str(path), max_bytes=max_bytes)


def sniff(head: bytes | str) -> bool:
    """True if ``head`` looks like qnn-profile-viewer text output."""
    t = head_text(head, 65536)
    if t.lstrip().startswith(("{", "[")):
        return False
    return (re.search(r"^Qnn Init/Prepare/Finalize", t, re.M) is not None
            or re.search(r"^Execute Stat \d+\s*$", t, re.M) is not None
            or re.search(r"^Log File Created:.*\n(?:.*\n)?Time Scale:", t, re.M) is not None
            or re.search(r"^Printing All Data Received From Back End", t, re.M) is not None)
