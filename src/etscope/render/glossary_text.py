"""The glossary (``analysis.glossary``) as the README's Markdown: the levels of the nesting, the
statistics and the words, each once. ``python -m etscope.render.glossary_text README.md`` rewrites
the README's glossary between its markers; a test keeps them equal."""
from __future__ import annotations

import sys

from etscope.analysis import glossary

START, END = "<!-- glossary:start (generated from analysis/glossary.py) -->", "<!-- glossary:end -->"


def _cell(text: str | None) -> str:
    return (text or "—").replace("|", "\\|")


def markdown() -> str:
    rows = ["**Levels of the nesting**, outside in (a level contains the next):", "",
            "| level | event in the files | unit | what it measures | what it adds over the next |",
            "|---|---|---|---|---|"]
    rows += [f"| {_cell(lv.label)} | `{lv.event}` | {lv.unit} | {_cell(lv.meaning)} | {_cell(lv.adds)} |"
             for lv in (*glossary.NESTING, glossary.ACCELERATOR_CYCLES)]
    rows += ["", "**Statistics** (every view; a column says when it shows another):", "",
             "| column | over which runs | meaning |", "|---|---|---|"]
    rows += [f"| {_cell(s.label)} | {_cell(s.runs)} | {_cell(s.meaning)} |" for s in glossary.STATISTICS]
    rows += ["", "**Words**:", "", "| word | meaning |", "|---|---|"]
    rows += [f"| {_cell(t.word)} | {_cell(t.meaning)} |" for t in glossary.TERMS]
    return "\n".join(rows)


def with_glossary(readme: str) -> str:
    """``readme`` with the text between the glossary markers replaced by :func:`markdown`."""
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{markdown()}\n{END}{tail}"


if __name__ == "__main__":
    path = sys.argv[1]
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(with_glossary(text))
