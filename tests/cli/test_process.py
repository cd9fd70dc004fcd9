"""cli/process.py: what the etscope command sets for its own process."""
from __future__ import annotations

import os

from etscope.cli import process

BUDDYINFO = """\
Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3
Node 0, zone    DMA32      2      4      2      2      1      2      0      3      3      1    753
Node 0, zone   Normal   7478   2415   1279    621    420   1296    765    326     72     83    340
"""


def test_free_huge_page_bytes_counts_blocks_of_a_huge_page_and_larger(tmp_path):
    buddy, huge = tmp_path / "buddyinfo", tmp_path / "hpage_pmd_size"
    buddy.write_text(BUDDYINFO)
    huge.write_text("2097152\n")
    page = os.sysconf("SC_PAGE_SIZE")
    order = (2097152 // page).bit_length() - 1              # 9 with 4 KiB pages
    want = 0
    for line in BUDDYINFO.splitlines():
        counts = [int(c) for c in line.split()[4:]]
        want += sum(c * (page << o) for o, c in enumerate(counts) if o >= order)
    assert process.free_huge_page_bytes(str(buddy), str(huge)) == want > 0
    huge.write_text(str(page << 11))                        # larger than any block listed: none
    assert process.free_huge_page_bytes(str(buddy), str(huge)) == 0
    assert process.free_huge_page_bytes(str(tmp_path / "missing"), str(huge)) == 0
    buddy.write_text("garbage\nNode 0, zone Normal x y\n")
    huge.write_text("2097152")
    assert process.free_huge_page_bytes(str(buddy), str(huge)) == 0


def test_huge_pages_turned_off_only_without_free_blocks(monkeypatch):
    for free, want in ((0, "0"), (process.HUGE_PAGES_FREE_MIN, None)):
        monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
        monkeypatch.setattr(process, "free_huge_page_bytes", lambda free=free: free)
        monkeypatch.setattr(process.sys, "platform", "linux")
        monkeypatch.setattr(process, "_set_malloc_options", lambda: None)
        process.tune()
        assert os.environ.get("NUMPY_MADVISE_HUGEPAGE") == want
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")           # the user's own choice stays
    monkeypatch.setattr(process, "free_huge_page_bytes", lambda: 0)
    process.tune()
    assert os.environ["NUMPY_MADVISE_HUGEPAGE"] == "1"
