"""Where the text views print, and how they fit its width (one mechanism for every text view).

- On a terminal: lines fit the width (COLUMNS when set, else the terminal's). Prose and text
  cells wrap; names are shortened in the middle, never at their unique tail (``…:OpId_18``,
  ``…former.py:415``, ``… #2``); numbers are never cut. Columns that do not fit move to an
  indented line under their row, and past that each row is written as ``column: value`` lines.
- Piped: nothing is shortened or left out. Lines wrap at COLUMNS when it is set; when it is not
  set there is no width limit (one table row a line, as wide as it needs).

Cells are already safe text (``display``); widths are terminal cells (wide characters count 2).
"""
from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field

from rich.cells import cell_len as _rich_cell_len
from rich.cells import chop_cells, get_character_cell_size
from rich.console import Console
from rich.text import Text

ELLIPSIS = "…"
GAP = 2                      # spaces between table columns
COMFORTABLE = 24             # a shortened name column keeps at least this many cells before columns move
# ":OpId_18 (cycles)", " OpId_2 (cycles)", " #2", "(XnnpackBackend #2)", ".out"
_TAIL = re.compile(r"(?:[: ]OpId_\d+.*|:[^:]*|\s#\d+|\([^()]*#\d+\)|\.[A-Za-z_]\w*)$")
_MAX_TAIL = 32
# An op id tail with its unit (":OpId_85 (cycles)"): when the whole tail would leave the name
# fewer than MIN_HEAD cells of its start, the id's number alone ("_85") tells the rows apart, and
# the start says what the op is ("aten_linear…_85", not "at…:OpId_85 (cycles)").
_OPID_TAIL = re.compile(r"[: ]OpId_(\d+)(?: \([^()]*\))?")
MIN_HEAD = 10


def cell_len(s: str) -> int:
    """Terminal cells of ``s`` (ASCII: its length, the common case, fast)."""
    return len(s) if s.isascii() else _rich_cell_len(s)


def columns_from_env(environ=os.environ) -> int | None:
    """COLUMNS as a width (None when unset or not a positive number)."""
    v = (environ.get("COLUMNS") or "").strip()
    return int(v) if v.isdigit() and int(v) > 0 else None


class Screen:
    """A rich Console plus the width policy: ``limit`` (None: no width limit) and ``terminal``
    (True: shorten names to fit; False: never shorten, show everything)."""

    def __init__(self, console: Console, limit: int | None, terminal: bool):
        self.console, self.limit, self.terminal = console, limit, terminal
        self._codes: dict[str, tuple[str, str]] = {}

    @property
    def complete(self) -> bool:
        """Piped output lists everything (no "… N more" rows); a terminal may elide long lists."""
        return not self.terminal

    @property
    def width(self) -> int:
        return self.limit if self.limit is not None else sys.maxsize

    def print(self, obj="", style=None, **_ignored) -> None:
        """A line of prose (str or rich Text: wrapped to the width, never cut) or a :class:`Table`."""
        if isinstance(obj, Table):
            self._write_lines(obj.lines(self.limit, self.terminal))
            return
        text = obj.copy() if isinstance(obj, Text) else Text(str(obj))
        if style:
            text.stylize(style)
        if self.limit is None:
            self.console.print(text, soft_wrap=True, highlight=False, markup=False, crop=False)
        else:
            self.console.print(text, width=self.limit, overflow="fold", no_wrap=False, highlight=False,
                               markup=False, crop=False)

    def lines(self, lines, style=None) -> None:
        """Lines already laid out (tables, heap): each wrapped at the width when it is longer."""
        for line in lines:
            self.print(line, style)

    def _write_lines(self, lines: list[tuple[str, str | None]]) -> None:
        """Laid-out lines (each fits the width). Plain ones go straight to the file: through rich
        a line costs ~0.3 ms, too slow for tables of 10,000s of rows. Styles only on a terminal;
        a recording console (tests) gets every line through rich."""
        c = self.console
        if c.record:
            for line, style in lines:
                c.print(Text(line, style=style or ""), soft_wrap=True, highlight=False, markup=False, crop=False)
            return
        out = [self._styled(line, style) for line, style in lines]
        c.file.write("".join(ln + "\n" for ln in out))
        c.file.flush()

    def _styled(self, line: str, style: str | None) -> str:
        if not style or not self.console.is_terminal or not line:
            return line
        codes = self._codes.get(style)
        if codes is None:     # the terminal's codes for the style, asked of rich once
            with self.console.capture() as cap:
                self.console.print(Text("\0", style=style), end="", soft_wrap=True)
            codes = self._codes[style] = tuple(cap.get().split("\0", 1)) if "\0" in cap.get() else ("", "")
        return codes[0] + line + codes[1]


def screen(console: Console | None = None, stderr: bool = False) -> Screen:
    """The Screen for ``console`` (tests give one: its width and terminal-ness) or for stdout
    (``stderr``: for standard error, the same policy)."""
    if isinstance(console, Screen):
        return console
    if console is not None:
        return Screen(console, console.width, console.is_terminal)
    stream = sys.stderr if stderr else sys.stdout
    terminal = stream.isatty()
    limit = columns_from_env()
    if limit is None and terminal:
        try:
            limit = os.get_terminal_size(stream.fileno()).columns or None
        except OSError:
            limit = None
    c = Console(highlight=False, width=limit or 10_000, soft_wrap=limit is None, stderr=stderr)
    return Screen(c, limit, terminal)


# ---- names: shortened in the middle ----------------------------------------------------------------
def _suffix(s: str, width: int) -> str:
    """The longest end of ``s`` that fits ``width`` cells."""
    n, i = 0, len(s)
    while i > 0 and n + get_character_cell_size(s[i - 1]) <= width:
        i -= 1
        n += get_character_cell_size(s[i])
    return s[i:]


def _prefix(s: str, width: int) -> str:
    return chop_cells(s, width)[0] if s and width > 0 else ""


def tail_of(name: str) -> str:
    """The part of a name that tells it from its neighbours: ``:OpId_18 (cycles)``, `` #2``, ``.out``."""
    m = _TAIL.search(name)
    return m.group(0) if m and len(m.group(0)) <= _MAX_TAIL else ""


def compact_tail(tail: str) -> str:
    """The shortest end that still tells a name from its neighbours: an op id's number (``_85`` for
    ``:OpId_85 (cycles)``); any other tail as it is."""
    m = _OPID_TAIL.fullmatch(tail)
    return f"_{m.group(1)}" if m else tail


def shorten(name: str, width: int) -> str:
    """``name`` in at most ``width`` cells: its start, "…", and its end, the unique tail kept whole
    (when even the tail does not fit, only its end: the tail is what tells rows apart). An op id
    tail that would leave fewer than MIN_HEAD cells of the start shrinks to its number
    (``aten_linear…_85``)."""
    if cell_len(name) <= width:
        return name
    indent = name[: len(name) - len(name.lstrip(" "))]
    body, room = name[len(indent):], width - len(indent)
    if room < 2:
        return _suffix(name, width)
    tail = tail_of(body)
    short = compact_tail(tail)
    if short != tail and room - 1 - cell_len(tail) < MIN_HEAD and room - 1 - cell_len(short) >= 2:
        head = body[: len(body) - len(tail)]
        return indent + _prefix(head, room - 1 - cell_len(short)) + ELLIPSIS + short
    keep_end = max(cell_len(tail), (room - 1) // 2)
    if keep_end >= room - 1:
        return indent + ELLIPSIS + _suffix(body, room - 1)
    return indent + _prefix(body, room - 1 - keep_end) + ELLIPSIS + _suffix(body, keep_end)


def fold_name(name: str, width: int) -> list[str]:
    """``name`` in lines of ``width`` cells, nothing lost and the unique tail never split (it
    starts a line of its own when it does not fit the last one)."""
    if cell_len(name) <= width:
        return [name]
    tail = tail_of(name.lstrip(" "))
    head = name[: len(name) - len(tail)]
    lines = _fold(head, width) if head else []
    tail_lines = wrap(tail.strip(" "), width) if tail else []
    if lines and tail_lines and cell_len(lines[-1] + tail) <= width:
        lines[-1] += tail
        tail_lines = []
    return (lines + tail_lines) or [""]


def _fold(text: str, width: int) -> list[str]:
    """Cut into pieces of ``width`` cells (nothing lost)."""
    return chop_cells(text, max(width, 1)) or [""]


def wrap(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    """Word-wrap to ``width`` cells, the first line after ``first``, the others after ``rest``;
    words longer than a line are folded (nothing lost)."""
    out: list[str] = []
    line, prefix = "", first
    for word in text.split(" "):
        candidate = f"{line} {word}" if line else word
        room = max(1, width - cell_len(prefix))
        if cell_len(candidate) <= room:
            line = candidate
            continue
        if line:
            out.append(prefix + line)
            prefix = rest
            room = max(1, width - cell_len(prefix))
        pieces = _fold(word, room)
        for piece in pieces[:-1]:
            out.append(prefix + piece)
            prefix = rest
        line = pieces[-1]
    out.append(prefix + line)
    return out


def _wrap(text: str, width: int) -> list[str]:
    return wrap(text, width)


# ---- tables ------------------------------------------------------------------------------------------
@dataclass
class Column:
    header: str
    justify: str = "left"
    kind: str = "name"        # num: never cut; name: shortened in the middle on a terminal; text: wrapped
    detail: int = 0           # > 0: may move to a line under its row when the width is short (highest first)


@dataclass
class Table:
    """A table laid out for the Screen (the rich Table's add_column / add_row, a subset)."""
    title: str | None = None
    caption: str | None = None
    columns: list[Column] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)
    row_styles: list[str | None] = field(default_factory=list)
    title_style: str = "bold"

    def __init__(self, title=None, caption=None, **_ignored):
        self.title, self.caption, self.columns, self.rows, self.title_style = title, caption, [], [], "bold"
        self.row_styles = []

    def add_column(self, header: str, justify: str = "left", kind: str | None = None, detail: int | bool = 0,
                   **_ignored) -> None:
        """``kind``: num (never cut), name (shortened in the middle on a terminal) or text (wrapped);
        by default num when right-aligned, else name. ``detail``: see :class:`Column`."""
        self.columns.append(Column(header, justify, kind or ("num" if justify == "right" else "name"), int(detail)))

    def add_row(self, *cells, style: str | None = None) -> None:
        """``style``: a rich style for the whole row on a terminal (e.g. a regression in red)."""
        self.rows.append([c.plain if isinstance(c, Text) else "" if c is None else str(c) for c in cells])
        self.row_styles.append(style or None)

    # -- layout --
    def lines(self, limit: int | None, terminal: bool) -> list[tuple[str, str | None]]:
        out: list[tuple[str, str | None]] = []
        if self.title:
            out += [(ln, self.title_style) for ln in (_wrap(self.title, limit) if limit else [self.title])]
        cols = self.columns
        lens = [[cell_len(v) for v in r] for r in self.rows]       # once per cell: the costly part
        values = [max([0] + [ln[i] for ln in lens]) for i in range(len(cols))]
        nat = [max(v, cell_len(c.header)) for c, v in zip(cols, values)]
        if limit is not None and sum(nat) + GAP * (len(nat) - 1) > limit:
            # Too wide: a number column's header may take two lines ("calls/" over "run").
            nat = [max(v, max(cell_len(w) for w in _header_words(c.header))) if c.kind == "num" else n
                   for c, v, n in zip(cols, values, nat)]
        plan = _plan(cols, self.rows, nat, limit, terminal)
        if plan is None:
            out += _records(cols, self.rows, limit)
        else:
            shown, widths, detail = plan
            heads = [_header_lines(cols[i].header, w) for i, w in zip(shown, widths)]
            height = max(len(h) for h in heads)
            heads = [[""] * (height - len(h)) + h for h in heads]      # bottom-aligned over the rule
            for k in range(height):
                out.append((_join([h[k] for h in heads], widths, [cols[i].justify for i in shown]), "bold"))
            out.append((_join(["-" * w for w in widths], widths, ["left"] * len(widths)), None))
            indent = " " * min(8, limit // 4 if limit else 8)
            for k, r in enumerate(self.rows):
                out += [(ln, self.row_styles[k]) for ln in _row_lines(cols, shown, widths, r, terminal, lens[k])]
                items = [f"{cols[i].header}: {r[i]}" for i in detail if r[i] not in ("", "—")]
                if items:
                    out += [(indent + ln, "dim") for ln in _wrap_items(items, limit - len(indent) if limit else None)]
        if self.caption:
            out += [(ln, "dim") for ln in (_wrap(self.caption, limit) if limit else [self.caption])]
        return out


def _header_words(header: str) -> list[str]:
    return re.findall(r"[^ /]*/|[^ /]+", header) or [header]


def _header_lines(header: str, width: int) -> list[str]:
    """The header in lines of at most ``width`` cells, broken after spaces and slashes."""
    if cell_len(header) <= width:
        return [header]
    lines, line = [], ""
    for word in _header_words(header):
        joined = line + ("" if not line or line.endswith("/") else " ") + word
        if line and cell_len(joined) > width:
            lines.append(line)
            line = word
        else:
            line = joined
    return lines + [line]


def _min_width(col: Column, i: int, rows, nat: int) -> int:
    if col.kind == "num":
        return nat
    head = max(cell_len(w) for w in _header_words(col.header))
    if col.kind == "text":
        return min(nat, max(head, 12))
    tail = max((cell_len(tail_of(r[i].lstrip(" "))) + len(r[i]) - len(r[i].lstrip(" ")) for r in rows), default=0)
    return min(nat, max(head, 8, tail + 2))


def _readable_width(col: Column, i: int, rows, nat: int, hard: int) -> int:
    """A name column's floor before names are cut to their tails: MIN_HEAD cells of the start, "…"
    and the compact tail (``aten_linea…_85``); other columns keep their hard floor."""
    if col.kind != "name":
        return hard
    head = max(cell_len(w) for w in _header_words(col.header))
    tail = max((cell_len(compact_tail(tail_of(r[i].lstrip(" ")))) + len(r[i]) - len(r[i].lstrip(" "))
                for r in rows), default=0)
    return min(nat, max(head, MIN_HEAD + 1 + tail))


def _plan(cols, rows, nat, limit, terminal):
    """(shown column indices, their widths, detail column indices), or None: one record per row.
    Tried in order: names kept at a comfortable width, moving detail columns (the last first) under
    their rows as needed; then names as narrow as their unique tails allow; then records."""
    every = list(range(len(cols)))
    if limit is None:
        return every, nat, []
    hard = [_min_width(c, i, rows, nat[i]) for i, c in enumerate(cols)]
    # Comfortable: a name keeps COMFORTABLE cells and a dozen before its tail, text COMFORTABLE.
    comfy = [n if c.kind == "num" else min(n, max(h + (12 if c.kind == "name" else 0), COMFORTABLE))
             for c, n, h in zip(cols, nat, hard)]
    # Readable: names keep MIN_HEAD cells of their start and a compact tail, tried before names are
    # cut down to their tails (moving detail columns under the rows costs less than unreadable names).
    readable = [_readable_width(c, i, rows, nat[i], h) for i, (c, h) in enumerate(zip(cols, hard))]
    movable = sorted((i for i in every if cols[i].detail), key=lambda i: -cols[i].detail)
    for floor in (comfy, readable, hard):
        for k in range(len(movable) + 1):
            detail = sorted(movable[:k])
            shown = [i for i in every if i not in detail]
            widths = _fit([nat[i] for i in shown], [floor[i] for i in shown], limit - GAP * (len(shown) - 1))
            if widths is not None:
                return shown, widths, detail
    return None


def _fit(nat: list[int], floor: list[int], room: int) -> list[int] | None:
    """Widths between ``floor`` and ``nat`` summing to at most ``room`` (the widest columns give
    way first), or None when even the floors do not fit."""
    if sum(floor) > room:
        return None
    if sum(nat) <= room:
        return nat
    lo, hi = 0, max(nat)
    while lo < hi:                                   # the largest cap that fits
        cap = (lo + hi + 1) // 2
        if sum(max(f, min(n, cap)) for n, f in zip(nat, floor)) <= room:
            lo = cap
        else:
            hi = cap - 1
    return [max(f, min(n, lo)) for n, f in zip(nat, floor)]


def _cell_lines(col: Column, text: str, width: int, terminal: bool) -> list[str]:
    if cell_len(text) <= width:
        return [text]
    if col.kind == "text":
        return _wrap(text, width)
    return [shorten(text, width)] if terminal else fold_name(text, width)


def _row_lines(cols, shown, widths, row, terminal, lens) -> list[str]:
    just = [cols[i].justify for i in shown]
    if all(lens[i] <= w for i, w in zip(shown, widths)):      # one line: the common case
        parts = []
        for i, w, j in zip(shown, widths, just):
            pad = " " * (w - lens[i])
            parts.append(pad + row[i] if j == "right" else row[i] + pad)
        return [(" " * GAP).join(parts).rstrip()]
    cells = [_cell_lines(cols[i], row[i], w, terminal) for i, w in zip(shown, widths)]
    height = max(len(c) for c in cells)
    return [_join([c[k] if k < len(c) else "" for c in cells], widths, just) for k in range(height)]


def _join(values, widths, justify) -> str:
    parts = []
    for v, w, j in zip(values, widths, justify):
        pad = " " * max(0, w - cell_len(v))
        parts.append(pad + v if j == "right" else v + pad)
    return (" " * GAP).join(parts).rstrip()


def _wrap_items(items: list[str], width: int | None) -> list[str]:
    """``items`` on lines of ``width`` cells, two spaces apart, an item split only when longer than a line."""
    if width is None:
        return ["  ".join(items)]
    lines, line = [], ""
    for item in items:
        joined = f"{line}  {item}" if line else item
        if cell_len(joined) <= width:
            line = joined
            continue
        if line:
            lines.append(line)
        pieces = wrap(item, width)
        lines += pieces[:-1]
        line = pieces[-1]
    return lines + [line]


def _records(cols, rows, limit) -> list[tuple[str, str | None]]:
    """Too narrow for columns: each row as ``header: value`` lines, a blank line between rows."""
    out: list[tuple[str, str | None]] = []
    for k, r in enumerate(rows):
        if k:
            out.append(("", None))
        for c, v in zip(cols, r):
            if v:
                out += [(ln, None) for ln in _wrap(f"{c.header}: {v}", limit)]
    return out
