"""The one way the benchmark scripts hand back their numbers: JSON on stdout, and in a file when asked."""
from __future__ import annotations

import json
from pathlib import Path


def emit(result: dict, path: str | None) -> int:
    """Print ``result`` as JSON; also write it to ``path`` when given. Returns the exit code 0."""
    text = json.dumps(result, indent=1, default=float)
    print(text)
    if path:
        Path(path).write_text(text + "\n")
    return 0
