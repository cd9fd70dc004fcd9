"""The reading guide (text summary and HTML report) names what the summary holds, all of it."""
import etscope
from etscope import api
from etscope.render.guide import compact_sources, reading_guide
from views_helpers import REAL


def test_grouped_op_types_name_every_source_line():
    # gen_multipart: two CPU cumsums, at make_fixtures.py:563 and :564 (issue 19, defect 7).
    p = etscope.load(REAL / "gen_multipart.etdump", etrecord=REAL / "gen_multipart.etrecord")
    s = api.results(p).summary
    top = s.top_fallback_op_types[0]
    assert top.instructions == 2 and len(top.sources) == 2
    line = next(x for x in reading_guide(s) if "CPU kernel" in x)
    assert "aten.cumsum.default ×2 at make_fixtures.py:563, :564" in line
    assert all(src.rpartition(":")[2] in line for t in s.top_fallback_op_types[:3] for src in t.sources)


def test_compact_sources():
    assert compact_sources(["m.py:30"]) == "m.py:30"
    assert compact_sources(["m.py:34", "m.py:30", "u.py:5", "m.py:31"]) == "m.py:30, :31, :34, u.py:5"
    assert compact_sources(["m.py:32", "m.py:30", "m.py:31", "m.py:34"]) == "m.py:30–32, :34"
    assert compact_sources(["m.py:30", "m.py:34", "u.py:5", "m.py:7"]) == "m.py:7, :30, :34, u.py:5"
    assert compact_sources(["<unknown>", "C:/x.py:3", "C:/x.py:5", "C:/x.py:3"]) == "<unknown>, C:/x.py:3, :5"


def test_grouped_sources_are_every_node_source_of_the_group():
    p = etscope.load(REAL / "gen_llama_mixed.etdump", etrecord=REAL / "gen_llama_mixed.etrecord",
                     pte=REAL / "gen_llama_mixed.pte")
    s = api.results(p).summary
    for t in s.top_fallback_op_types:
        ids = [f.instruction_id for f in s.fallback_ops if (f.op_type or f.kernel or "?") == t.op_type]
        assert len(ids) == t.instructions
        want = {src for i in ids for src in (p.instructions[i].sources or [p.instructions[i].source]) if src}
        assert set(t.sources) == want
        line = next(x for x in reading_guide(s) if "CPU kernel" in x)
        if t in s.top_fallback_op_types[:3] and want:
            assert f"{t.op_type} ×{t.instructions} at {compact_sources(t.sources)}" in line
