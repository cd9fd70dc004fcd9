import numpy as np
import pytest

from etscope.errors import FormatError
from etscope.formats import etdump as E


def test_cnn_runs_and_events(real):
    d = E.read_etdump(real / "cnn.etdump")
    assert [r.name for r in d.runs] == ["Default"] + ["Execute"] * 10
    assert d.event_count == sum(r.event_count for r in d.runs) == 162
    names = [d.strings[c] for c in d.events["name"] if c >= 0]
    assert names.count("Method::execute") == 10
    assert names.count("DELEGATE_CALL") == 10
    assert names.count("native_call_cumsum.out") == 10
    # XNNPACK per-op events: unnamed, with the op in delegate_debug_id_str and the DELEGATE_CALL's instruction id.
    dstr = [d.strings[c] for c in d.events["delegate_id_str"] if c >= 0]
    assert dstr.count("Convolution (NHWC, F32) IGEMM #1") == 10
    conv = d.events["delegate_id_str"] == d.strings.index("Convolution (NHWC, F32) IGEMM #1")
    assert (d.events["instruction_id"][conv] == 0).all()
    assert (d.events["name"][conv] == -1).all()


def test_size_prefixed_and_plain_buffers_read_alike(real):
    data = (real / "cnn.etdump").read_bytes()
    prefixed = E.parse_etdump(data)
    plain = E.parse_etdump(data[4:])
    assert prefixed.strings == plain.strings
    for k in prefixed.events:
        np.testing.assert_array_equal(prefixed.events[k], plain.events[k])


def test_debug_events_carry_tensor_shapes(real):
    d = E.read_etdump(real / "llama.etdump")
    debug = d.events["kind"] == E.DEBUG
    assert debug.sum() > 1000
    shapes = {d.strings[c] for c in d.events["tensor_shape"][debug] if c >= 0}
    # Prefill of 8 tokens then 1-token decodes (dim 64): both token counts appear in tensor shapes.
    assert any(s.startswith("1x8x") for s in shapes)
    assert any(s.startswith("1x1x") for s in shapes)
    nbytes = d.events["tensor_nbytes"][debug]
    assert (nbytes[nbytes >= 0] % 1 == 0).all()


@pytest.mark.parametrize("cut", [0, 3, 8, 12, 100, 1000, 15000])
def test_truncated_file_is_a_format_error(real, tmp_path, cut):
    data = (real / "cnn.etdump").read_bytes()[:cut]
    p = tmp_path / "t.etdump"
    p.write_bytes(data)
    with pytest.raises(FormatError) as e:
        E.read_etdump(p)
    assert str(p) in str(e.value)


def test_wrong_kind_says_what_it_is(real):
    with pytest.raises(FormatError, match=r"\.pte"):
        E.parse_etdump((real.parent.parent.parent / "src/etscope/data/sample_cnn.pte").read_bytes())


def test_missing_file(tmp_path):
    with pytest.raises(FormatError, match="no such file"):
        E.read_etdump(tmp_path / "nope.etdump")


def test_offsets_pointing_outside_are_caught(real):
    data = bytearray((real / "cnn.etdump").read_bytes())
    # Corrupt the root offset to point past the end.
    data[4:8] = (len(data) * 2).to_bytes(4, "little")
    with pytest.raises(FormatError):
        E.parse_etdump(bytes(data))


def test_input_is_not_modified(real, tmp_path):
    p = tmp_path / "x.etdump"
    p.write_bytes((real / "cnn.etdump").read_bytes())
    before = p.read_bytes()
    E.read_etdump(p)
    assert p.read_bytes() == before


def test_run_arrays_are_the_run_data_s():
    """run_counts / run_firsts: what each RunData says, set by the reader or made from the runs,
    read-only, carried by with_events and made again for other runs."""
    import dataclasses
    from pathlib import Path

    from etscope.formats.etdump import read_etdump

    for path in sorted((Path(__file__).resolve().parents[1] / "fixtures").glob("**/*.etdump")):
        d = read_etdump(path)
        want = ([r.event_count for r in d.runs], [r.first_event for r in d.runs])
        made = dataclasses.replace(d)              # no arrays from the reader: made from the runs
        for x in (d, made, d.with_events(dict(d.events))):
            assert [x.run_counts().tolist(), x.run_firsts().tolist()] == list(want), path
            assert not x.run_counts().flags.writeable and not x.run_firsts().flags.writeable
        fewer = dataclasses.replace(d, runs=d.runs[:1])
        assert fewer.run_counts().tolist() == want[0][:1]
