"""benchmarks/bench.py rewrites only its own section of BENCHMARKS.md."""
import importlib.util
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location("bench", Path(__file__).resolve().parents[1] / "benchmarks/bench.py")
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)


def test_first_write_keeps_sections_others_wrote(tmp_path):
    md = tmp_path / "BENCHMARKS.md"
    md.write_text("# Benchmarks\n\n## Machine\n\nold\n\n## diff: false alarms\n\nkept 1\n\n## collect\n\nkept 2\n")
    text = bench.update_section(md, "# Benchmarks\n\n## Machine\n\nnew\n")
    assert "old" not in text and "new" in text
    assert text.index(bench.END) < text.index("## diff: false alarms\n\nkept 1\n\n## collect\n\nkept 2\n")


def test_rewrite_between_markers_only(tmp_path):
    md = tmp_path / "BENCHMARKS.md"
    md.write_text("intro\n" + bench.update_section(md, "# Benchmarks\n\nfirst\n") + "\n## trend\n\nkept\n")
    md.write_text(bench.update_section(md, "# Benchmarks\n\nsecond\n"))
    text = md.read_text()
    assert text.startswith("intro\n") and "first" not in text and "second" in text
    assert text.endswith("## trend\n\nkept\n") and text.count(bench.BEGIN) == 1
