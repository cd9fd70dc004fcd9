"""``etscope program`` as text for people, fitting the width (80 columns by default; ``--json`` for
machines). With ``complete`` (piped output) no list is cut short, except the other users of a
shared blob named per delegate (the first 8 and a count: the analysis keeps no more)."""
from __future__ import annotations

from etscope import units

from etscope.analysis.ops.program import DelegateView, MethodView, ProgramReport, QnnSpecView
from etscope.display import without_controls
from etscope.render.screen import wrap

WIDTH = 80
_CONSTANT_NAMES_SHOWN = 10
# On a terminal (not ``complete``) long lists are cut with a count; piped output lists each item
# once, and nothing is listed per delegate that grows with the number of delegates (a blob shared
# by thousands of delegates is named with its first users and a count): the text stays linear in
# the program's size.
_DELEGATES_SHOWN = 50
_CALLS_SHOWN = 20
_USERS_SHOWN = 20
_LABELS_SHOWN = 8


def _bytes(n: int | None) -> str:
    if n is None:
        return "?"
    if n >= 1e6:
        return f"{units.bytes_to_mb(n):.2f} MB"
    if n >= 1e3:
        return f"{units.bytes_to_kb(n):.1f} kB"
    return f"{n} B"


class _Lines:
    """How the lines are made: ``width`` (None: one line per item) and ``complete`` (list everything)."""

    def __init__(self, width: int | None, complete: bool):
        self.width, self.complete = width, complete

    def wrap(self, text: str, indent: str = "  ", first: str | None = None) -> list[str]:
        head = indent if first is None else first
        text = " ".join(without_controls(text).split())
        if self.width is None:
            return [head + text]
        return wrap(text, self.width, head, indent + "  ")

    def first(self, items: list, n: int) -> list:
        return items if self.complete else items[:n]


def _n(n: int, what: str) -> str:
    return f"{n} {what}" + ("" if n == 1 else "s")


def _constant(m: MethodView, L: _Lines) -> str:
    """``get_max_seq_len = 128``; values only when read and all scalar (lists of them shortened)."""
    if not m.values:
        return m.name
    vals = [f"{v:.6g}" if isinstance(v, float) else str(v) for v in m.values]
    more = len(vals) - len(L.first(vals, 3))
    return f"{m.name} = " + (vals[0] if len(vals) == 1 else "(" + ", ".join(L.first(vals, 3))
                             + (f", … {more} more" if more else "") + ")")


def _mix(m: MethodView) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in m.mix.items()) or "no instructions"


def _yes(v: bool | None) -> str:
    return "n/a" if v is None else ("yes" if v else "no")


def _qnn_lines(q: QnnSpecView, shared: bool, L: _Lines) -> list[str]:
    hw = [q.soc_model]
    if q.htp_arch:
        hw.append(f"HTP {q.htp_arch}" + (" (SoC table)" if q.htp_arch_source == "soc table" else ""))
    if q.vtcm_mb:
        hw.append(f"{q.vtcm_mb} MB VTCM" + (" (SoC table)" if q.vtcm_source == "soc table" else ""))
    lines = L.wrap(", ".join(hw) + f"; {q.backend_type} backend", "    ")
    lines += L.wrap(f"performance mode {q.performance_mode or 'n/a'}, precision {q.precision or 'n/a'}, "
                   f"profile level {q.profile_level}", "    ")
    graphs = ("not in the compile spec (layout " + q.schema + ")" if q.graph_names is None
              else ", ".join(q.graph_names) or "none")
    multiple = _yes(q.multiple_graphs)
    if q.multiple_graphs is None and shared:
        multiple = "n/a in this layout; the blob is shared (several graphs)"
    lines += L.wrap(f"shared buffer {_yes(q.shared_buffer)}, weight sharing {_yes(q.weight_sharing)}, "
                   f"multi contexts {_yes(q.multi_contexts)}, multiple graphs {multiple}", "    ")
    lines += L.wrap(f"graph names: {graphs}", "    ")
    return lines


def _listed(items: list[str], shown: int, L: _Lines, sep: str = ", ", total: int | None = None) -> str:
    """``items`` joined, cut to ``shown`` on a terminal; ``total``: how many there are in all
    (more than ``items`` when the list was already cut by the analysis)."""
    listed = L.first(items, shown)
    more = (len(items) if total is None else total) - len(listed)
    return sep.join(listed) + (f"{sep}… {more} more" if more > 0 else "")


def _delegate_line(d: DelegateView, L: _Lines) -> list[str]:
    where = f"segment {d.data_index}" if d.location == "segment" else f"inline data {d.data_index}"
    instr = _listed([str(i) for i in d.instructions], _CALLS_SHOWN, L, sep=",") or "none"
    text = f"#{d.index} instr {instr}: {d.backend}, {_bytes(d.blob_bytes)} in {where}"
    if d.shared_with:
        text += ", shared with " + _listed(list(d.shared_with), _LABELS_SHOWN, L, total=d.shared_by_others)
    return L.wrap(text, "    ")


def program_lines(r: ProgramReport, width: int | None = WIDTH, complete: bool = False) -> list[str]:
    """The text view, one string per line, none longer than ``width`` cells (None: no limit);
    ``complete``: no list cut short (piped output)."""
    L = _Lines(width, complete)
    out: list[str] = []
    n_const = sum(1 for m in r.methods if m.constant)
    head = (f"{r.file}: {_bytes(r.file_bytes)} (program {_bytes(r.program_bytes)}, "
            f"{_n(len(r.segments), 'segment')}), {_n(len(r.methods), 'method')}")
    out += L.wrap(head, "", first="")
    if r.constant_bytes:
        out += L.wrap(f"constant data {_bytes(r.constant_bytes)}"
                     + (f" in segment {r.constant_segment}" if r.constant_segment is not None else " inline")
                     + (f"; {r.named_data_keys} named data keys" if r.named_data_keys else ""), "")

    out.append("")
    out.append("Methods (instructions of chain 0; planned memory = non-constant buffers)")
    specs_shown: dict[QnnSpecView, tuple[list[str], bool]] = {}   # spec -> (its delegates, shared blob?)
    for m in r.methods:
        if m.constant:
            continue
        out += L.wrap(f"{m.name}: {_n(m.instructions, 'instruction')} ({_mix(m)}), planned "
                     f"{_bytes(m.planned_bytes)}, {_n(m.inputs, 'input')}, {_n(m.outputs, 'output')}", "  ")
        if m.operators:
            listed = L.first(list(m.operators.items()), 5)
            ops = ", ".join(f"{op} ×{n}" for op, n in listed)
            more = len(m.operators) - len(listed)
            out += L.wrap("CPU kernels: " + ops + (f", … {more} more" if more > 0 else ""), "    ")
        listed = L.first(list(m.delegates), _DELEGATES_SHOWN)
        for d in listed:
            out += _delegate_line(d, L)
            if d.qnn_spec_error:
                out += L.wrap(f"QNN compile spec does not decode: {d.qnn_spec_error}", "      ")
            if d.qnn_sdk_build:
                out += L.wrap(f"QNN SDK build {d.qnn_sdk_build} (recorded in its context binary)", "      ")
        if len(m.delegates) > len(listed):
            out += L.wrap(f"… {len(m.delegates) - len(listed)} more delegates (--json lists all)", "    ")
        for d in m.delegates:
            if d.qnn is not None:
                labels, _ = specs_shown.setdefault(d.qnn, ([], bool(d.shared_with)))
                labels.append(d.label)
    if n_const:
        consts = [m for m in r.methods if m.constant]
        listed = L.first(consts, _CONSTANT_NAMES_SHOWN)
        shown = ", ".join(_constant(m, L) for m in listed) + (
            f", … {len(consts) - len(listed)} more (--json lists all)" if len(consts) > len(listed) else "")
        out += L.wrap(f"{n_const} constant methods (no instructions, return stored values): {shown}", "  ")

    shared = {s.index for s in r.segments if sum(1 for u in s.used_by if "#" in u) > 1}
    if r.segments:
        out.append("")
        out.append("Segments")
        for s in r.segments:
            use = _listed(list(s.used_by), _USERS_SHOWN, L) or "unused"
            tag = " SHARED" if s.index in shared else ""
            out += L.wrap(f"{s.index}: {_bytes(s.size)} at byte {s.offset}{tag}: {use}", "  ")

    for spec, (labels, is_shared) in specs_shown.items():
        out.append("")
        title = "QNN compile spec of " + _listed(labels, _LABELS_SHOWN, L)
        if len(labels) > 1:
            title += " (identical)"
        out += L.wrap(title, "", first="")
        out += _qnn_lines(spec, is_shared, L)

    if r.checks:
        out.append("")
        out.append("Checks")
        for c in r.checks:
            out += L.wrap(f"{c.severity}: {c.text}", "  ")
    return out


def render_program(r: ProgramReport, console=None) -> None:
    """Print the text view fitted to the output (render.screen: width, complete when piped)."""
    from etscope.render.screen import screen

    out = screen(console)
    # The lines already fit the width: written as laid out (through rich each costs ~0.3 ms)
    out._write_lines([(line, None) for line in program_lines(r, out.limit, out.complete)])
