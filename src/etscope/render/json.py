"""JSON output: one object on stdout, NaN written as null."""
from __future__ import annotations

import json
import math
import re

import numpy as np


def _clean(x):
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        return None
    if isinstance(x, np.ndarray):
        return _clean(x.tolist())
    return x


# json escapes C0 controls only; DEL and C1 (U+009B is CSI on some terminals) are escaped too, and
# the invisible direction marks and line/paragraph separators (same string, written as escapes).
_C1 = {c: f"\\u{c:04x}" for c in [*range(0x7F, 0xA0), 0x61C, 0x200E, 0x200F, 0x2028, 0x2029]}
# Lone surrogates (undecodable bytes of a file name) cannot be UTF-8: written as the text \xNN.
_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(obj, indent: int | None = 2) -> str:
    text = json.dumps(_clean(obj), indent=indent, ensure_ascii=False, allow_nan=False).translate(_C1)
    if _SURROGATE.search(text):
        from etscope.paths import display

        text = _SURROGATE.sub(lambda m: display(m.group()).replace("\\", "\\\\"), text)
    return text
