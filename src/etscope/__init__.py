"""etscope: where an ExecuTorch model spends its time and memory (QNN/HTP first)."""
from etscope.errors import FormatError, MismatchError

__version__ = "0.1.0"
__all__ = ["FormatError", "MismatchError", "__version__", "load"]


def load(*args, **kwargs):
    """Load an ETDump (and optional ETRecord/.pte/QNN files) into a :class:`Profile`."""
    from etscope.profile import load as _load

    return _load(*args, **kwargs)
