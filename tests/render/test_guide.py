"""The reading guide (text summary and HTML report) names what the summary holds, all of it."""
import etscope
from etscope import api
from etscope.render.guide import compact_sources, reading_guide
from views_helpers import REAL


def test_grouped_op_types_name_every_source_line():
    # gen_multipart: two CPU cumsums, at make_fixtures.py:563 and :564 (issue 19, defect 7).
    p = etscope.load(REAL / "gen_multipart.etdump", etrecord=REAL / "gen_multipart.etrecord")
    s = api.summary(p)
    top = s["top_fallback_op_types"][0]
    assert top["instructions"] == 2 and len(top["sources"]) == 2
    line = next(x for x in reading_guide(s) if "CPU kernel" in x)
    assert "aten.cumsum.default ×2 at make_fixtures.py:563, :564" in line
    assert all(src.rpartition(":")[2] in line for t in s["top_fallback_op_types"][:3] for src in t["sources"])


def test_compact_sources():
    assert compact_sources(["m.py:30"]) == "m.py:30"
    assert compact_sources(["m.py:30", "m.py:34", "u.py:5", "m.py:7"]) == "m.py:30, :34, u.py:5, m.py:7"
    assert compact_sources(["<unknown>", "C:/x.py:3", "C:/x.py:4"]) == "<unknown>, C:/x.py:3, :4"
