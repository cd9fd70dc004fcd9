"""What ``etscope sql`` lets DuckDB do: read the tables etscope registers, nothing else.

Two layers, both built from DuckDB itself rather than from the query's text:

1. The connection (``config`` at connect, then ``lock``): no file system or network
   (``enable_external_access``: COPY TO, EXPORT, ATTACH of a file, INSTALL, read_csv / read_text /
   glob / 'file.csv' scans all fail), no extension install or autoload, no Python replacement
   scans (a query cannot name a variable of the calling Python program), no temp folder (nothing
   spills to disk), a memory limit, and the configuration locked so that no statement can SET,
   RESET or PRAGMA any of it back.
2. The statements (``refusal``): DuckDB's parser types every statement of the query; only the
   types that read are run (``ALLOWED``), and a query with several statements runs only if every
   one of them is allowed. EXPLAIN is allowed when what it explains is a SELECT (EXPLAIN ANALYZE
   runs it); PRAGMA only for the pragmas that show something (``READ_PRAGMAS``).
"""
from __future__ import annotations

import os

# Shown in ``etscope sql --help`` and in the refusal message.
ALLOWED = ("SELECT (also WITH, VALUES, FROM ..., UNPIVOT, PIVOT ... IN (...))", "DESCRIBE", "SHOW", "SUMMARIZE",
           "EXPLAIN [ANALYZE] SELECT ...", "PRAGMA table_info, show, show_tables and the other pragmas that only show")

# Pragmas that only show something (DuckDB's pragma functions minus those that change settings,
# checkpoint, import a database or run serialized SQL).
READ_PRAGMAS = frozenset({
    "collations", "database_list", "database_size", "functions", "metadata_info", "platform", "show",
    "show_databases", "show_tables", "show_tables_expanded", "storage_info", "table_info", "user_agent",
    "version",
})


def _memory_limit() -> str:
    """A quarter of the machine's memory (at least 512 MiB; DuckDB's default is 80%): the Arrow copy
    of the result and etscope's own tables live beside DuckDB's buffers. Nothing spills to disk."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        total = 4 << 30
    return f"{max(512 << 20, total // 4) >> 20}MB"


def _threads() -> int:
    """The CPUs this process may run on (DuckDB would count every core of the machine)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def config() -> dict:
    """DuckDB's settings for etscope's connections, given at connect; ``lock`` adds the rest."""
    return {
        "temp_directory": "",
        "max_temp_directory_size": "0B",
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_community_extensions": False,
        "allow_unsigned_extensions": False,
        "allow_persistent_secrets": False,
        "python_enable_replacements": False,
        "python_scan_all_frames": False,
        "memory_limit": _memory_limit(),
        "threads": _threads(),
    }


# Set by ``lock`` after connect, in this order: external access (in the connect config DuckDB may
# apply it before temp_directory, which it then refuses to set), the progress bar (a session
# setting, refused in the config), then the lock.
SESSION = ("SET enable_external_access = false",
           "SET enable_progress_bar = false",          # DuckDB draws one on the terminal after 2 s
           "SET lock_configuration = true")


def lock(con) -> None:
    """The session settings, then ``lock_configuration``: no SET, RESET or PRAGMA of the query can
    change any setting afterwards (before it, no query has run on ``con``)."""
    for stmt in SESSION:
        con.execute(stmt)


def refusal(sql: str) -> str | None:
    """Why ``sql`` may not run (one line), or None when every statement in it only reads. A query
    DuckDB cannot parse is left to DuckDB (its error says where)."""
    import duckdb

    if _nesting(sql) > MAX_NESTING:
        return (f"the query nests brackets or CASE deeper than {MAX_NESTING} levels (deeper results cannot "
                "be carried as Arrow data, and DuckDB's planning cost grows with the depth)")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error:
        return None                     # a syntax error: DuckDB's own message when it is run
    for st in statements:
        try:
            why = _statement_refusal(st)
        except ValueError:              # a statement type this duckdb's Python API cannot name
            why = _refused("this statement")
        if why is not None:
            return why
    return None


# Deeper than this is refused from DuckDB's tokens, before any parse tree is built. DuckDB's own
# max_expression_depth (1000) fails only after a parse tree of ~1.4 KB per byte of query (a 120 kB
# query of nested calls: +170 MB), and a 500-deep list literal cost 2.9 s of planning before Arrow
# refused its type (Arrow carries 64 levels of nested types): the issue-31 campaign's seed sql-2114.
MAX_NESTING = 64
_DEPTH = {"(": 1, "[": 1, "{": 1, "case": 1, ")": -1, "]": -1, "}": -1, "end": -1}


def _nesting(sql: str) -> int:
    """The deepest nesting of brackets and CASE ... END in ``sql`` (DuckDB's tokens: strings and
    comments do not count)."""
    import duckdb

    try:
        toks = duckdb.tokenize(sql)
    except (duckdb.Error, RuntimeError):   # pragma: no cover - DuckDB's parser reports it
        return 0
    depth = deepest = 0
    ends = [pos for pos, _ in toks[1:]] + [len(sql)]
    counted = (duckdb.token_type.operator, duckdb.token_type.keyword)
    for (pos, kind), end in zip(toks, ends):
        # the token and the blanks up to the next one (8 characters hold every counted token)
        step = _DEPTH.get(sql[pos:min(end, pos + 8)].strip().lower(), 0) if kind in counted else 0
        if step:
            depth += step
            deepest = max(deepest, depth)
    return deepest


def _refused(what: str) -> str:
    return f"{what} is not allowed: etscope sql only reads its tables (allowed: {', '.join(ALLOWED)})"


def _statement_refusal(st) -> str | None:
    import duckdb

    kind = st.type
    if kind == duckdb.StatementType.SELECT:
        return None
    if kind == duckdb.StatementType.EXPLAIN:
        return _explain_refusal(st.query)
    if kind == duckdb.StatementType.PRAGMA:
        name = _pragma_name(st.query)
        return None if name in READ_PRAGMAS else _refused(f"PRAGMA {name or '?'}")
    label = {duckdb.StatementType.MULTI: "a PIVOT without IN (...) (it creates a type first)",
             duckdb.StatementType.LOAD: "INSTALL / LOAD"}.get(kind, kind.name.replace("_", " "))
    return _refused(label)


def _words(text: str) -> list[tuple[int, str]]:
    """DuckDB's tokens of ``text`` without comments: (start, token text)."""
    import duckdb

    toks = duckdb.tokenize(text)
    ends = [pos for pos, _ in toks[1:]] + [len(text)]
    return [(pos, text[pos:end].strip()) for (pos, kind), end in zip(toks, ends)
            if kind != duckdb.token_type.comment]


def _pragma_name(text: str) -> str | None:
    words = _words(text)
    if len(words) < 2 or words[0][1].lower() != "pragma":
        return None
    return words[1][1].strip('"').lower()


def _explain_refusal(text: str) -> str | None:
    """EXPLAIN [ANALYZE] [(options)] STATEMENT: allowed when STATEMENT is one SELECT."""
    import duckdb

    words = _words(text)
    i = 1 if words and words[0][1].lower() == "explain" else len(words)
    if i < len(words) and words[i][1].lower() == "analyze":
        i += 1
    if i < len(words) and words[i][1] == "(":
        depth = 0
        for j in range(i, len(words)):
            depth += {"(": 1, ")": -1}.get(words[j][1], 0)
            if depth == 0:
                i = j + 1
                break
        else:
            return _refused("this EXPLAIN")
    if i >= len(words):
        return _refused("this EXPLAIN")
    try:
        inner = duckdb.extract_statements(text[words[i][0]:])
        kinds = [st.type for st in inner]
    except (duckdb.Error, ValueError):
        return _refused("this EXPLAIN")
    if kinds != [duckdb.StatementType.SELECT]:
        return _refused(f"EXPLAIN {kinds[0].name if len(kinds) == 1 else '?'}")
    return None
