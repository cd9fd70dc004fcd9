"""etscope: where an ExecuTorch model spends its time and memory (QNN/HTP first)."""
from etscope.errors import FormatError, MismatchError
from etscope.version import __version__

__all__ = ["FormatError", "MismatchError", "__version__", "load"]


def load(*args, **kwargs):
    """Load an ETDump (and optional ETRecord/.pte) into an ``etscope.api.NotebookProfile``: the
    :class:`Profile` with the notebook methods (``ops()``, ``runs()``, ``events()``, ``sql()``, ...)."""
    from etscope.api import load as _load

    return _load(*args, **kwargs)
