"""The text fields of a torch.export graph node, parsed: the op target without its namespace
prefixes, the source line of a stack trace (the innermost frame outside torch/executorch), and the
``nn_module_stack`` string. Each distinct text is parsed once (nodes of one model share a few)."""
from __future__ import annotations

import re
from functools import lru_cache

_TARGET_PREFIXES = re.compile(r"^(?:torch\.ops\.|executorch\.exir\.dialects\.(?:edge|backend)\.ops\.)")
_INTERNAL_FRAME = re.compile(
    r"(?:^|/)torch/|(?:^|/)executorch/(?:exir|devtools|backends|extension|runtime|export|kernels)/"
    r"|^<frozen |^<eval_with_key>|(?:^|/)torch_xla/|(?:^|/)functorch/")
_FRAME_RE = re.compile(r'File "([^"\n]+)", line (\d+)')


def normalise_target(target: str | None) -> str | None:
    """``torch.ops.aten.cumsum.default`` / ``executorch.exir.dialects.edge.ops.aten.cumsum.default``
    -> ``aten.cumsum.default``; ``_operator.getitem`` -> ``operator.getitem``."""
    if not target:
        return target
    t = _TARGET_PREFIXES.sub("", target)
    if t.startswith("_operator."):
        t = t[1:]
    return t


def source_of(stack_trace: str | None) -> tuple[str | None, str | None, int | None]:
    """(``file.py:LINE``, full path, line) of the innermost frame outside torch/executorch internals;
    the innermost frame when all are internal; Nones when there is no trace."""
    if not stack_trace:
        return None, None, None
    return _source_of(stack_trace)


# Nodes of one model share a few distinct stack traces and module stacks: parse each text once.
@lru_cache(maxsize=4096)
def _source_of(stack_trace: str) -> tuple[str | None, str | None, int | None]:
    frames = [(m.group(1), int(m.group(2))) for m in _FRAME_RE.finditer(stack_trace)]
    if not frames:
        return None, None, None
    user = [fr for fr in frames if not _is_internal(fr[0])]
    path, line = (user or frames)[-1]
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    return f"{base}:{line}", path, line


@lru_cache(maxsize=4096)
def _is_internal(path: str) -> bool:
    """A frame in torch/executorch internals (traces of one model share a few files: asked once each)."""
    return _INTERNAL_FRAME.search(path.replace("\\", "/")) is not None


def _split_top(s: str) -> list[str]:
    """Split on commas outside brackets/parentheses (as torch.export's deserializer does)."""
    if "[" not in s and "(" not in s and ")" not in s and "]" not in s:
        return s.split(",")
    out, depth, start = [], 0, 0
    for i, c in enumerate(s):
        if c in "[(":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "," and depth == 0:
            out.append(s[start:i])
            start = i + 1
    out.append(s[start:])
    return out


def parse_nn_module_stack(s) -> tuple[tuple[str, tuple[str, str]], ...]:
    """``"key,path,type;key,path,type"`` -> ((key, (path, type)), ...), outermost first."""
    if not isinstance(s, str) or not s:
        return ()
    return _parse_nn_module_stack(s)


@lru_cache(maxsize=4096)
def _parse_nn_module_stack(s: str) -> tuple[tuple[str, tuple[str, str]], ...]:
    out = []
    for item in s.split(";"):
        parts = _split_top(item)
        if len(parts) < 3:
            parts += [""] * (3 - len(parts))
        key, path, ty = parts[0], parts[1], ",".join(parts[2:])
        out.append((key, (path, ty)))
    return tuple(out)
