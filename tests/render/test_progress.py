"""The reading progress bar: rich is imported only when stderr may be a terminal."""
import subprocess
import sys

_CODE = """
import sys
from etscope.render.progress import reading
with reading(sys.argv[1]) as progress:
    shown = progress is not None
print(shown, 'rich' in sys.modules)
"""


def _run(path, **env):
    import os

    environ = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    environ.update(ETSCOPE_PROGRESS="1", **env)
    return subprocess.run([sys.executable, "-c", _CODE, str(path)], capture_output=True, text=True,
                          env=environ).stdout.split()


def test_redirected_stderr_shows_no_bar_and_imports_no_rich(tmp_path):
    f = tmp_path / "x.etdump"
    f.write_bytes(b"0" * 64)
    assert _run(f) == ["False", "False"]
    assert _run(f, TTY_COMPATIBLE="0") == ["False", "False"]


def test_the_environment_can_still_ask_rich_for_a_bar(tmp_path):
    f = tmp_path / "x.etdump"
    f.write_bytes(b"0" * 64)
    assert _run(f, TTY_COMPATIBLE="1") == ["True", "True"]
    assert _run(f, FORCE_COLOR="1") == ["True", "True"]


def test_a_redirected_batch_bar_imports_no_rich():
    """collect's bar (progress.batch) asks the same cheap question first: no terminal, no rich."""
    import os

    code = ("import sys\nfrom etscope.render.progress import batch\n"
            "with batch() as (set_total, advance):\n    set_total(2); advance('ok')\n"
            "print('rich' in sys.modules)")
    environ = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE", "ETSCOPE_PROGRESS")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environ)
    assert out.stdout.split() == ["False"] and out.stderr == ""
