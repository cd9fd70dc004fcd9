"""Which candidate tensor stands for which reference tensor, per compared run (``numerics.compare``).

Within one program (both ETRecords hold the same graph) by edge-node name; across programs by the
source node each tensor stands for (``numerics.pairing``); without ETRecords by instruction and
output position (valid only for one program run twice: said in the notes). Taps (``formats.taps``)
pair by the node they tap.
"""
from __future__ import annotations

from dataclasses import dataclass

from etscope.analysis.numerics.identity import TensorId
from etscope.analysis.numerics.pairing import (BY_TAP_PROVENANCE, LOOKED_THROUGH, Identities, Keyed, handles_agree,
                                               hidden_keys, keyed, same_program)
from etscope.profile import Profile

MODE_NAMES = {"instruction": "instruction", "name": "node", "source": "source node"}


def graph_of(p: Profile):
    """The edge graph of the profile's method (None without an ETRecord)."""
    er = p.etrecord
    return er.graphs.get(p.method or "forward") if er is not None else None


@dataclass(frozen=True)
class Pairing:
    """The pairs and what could not be paired (``match``)."""

    pairs: list[tuple[TensorId, TensorId, str]]      # (candidate, reference, how matched)
    mode: str                                        # "instruction" | "name" | "source"
    unmatched_cand: list[str]
    unmatched_ref: list[str]
    notes: list[str]
    ref_nodes: int = 0          # distinct reference nodes logged in the compared runs
    hidden: int = 0             # of those, inside a candidate partition (never logged by the backend)
    paired_nodes: int = 0       # of the others, paired in some compared run

    @property
    def coverage(self) -> float | None:
        seen = self.ref_nodes - self.hidden
        return self.paired_nodes / seen if seen > 0 else None


def match(pc: Profile, ids_c: list[TensorId], pr: Profile, ids_r: list[TensorId],
          ref_to_cand: dict[int, int] | None = None) -> Pairing:
    """Pairs (candidate, reference, rule) per compared run (``numerics.pairing``); ``ref_to_cand``:
    which candidate run each reference run is compared with (default: the same)."""
    gc, gr = graph_of(pc), graph_of(pr)
    notes = []
    taps = any(t.tap is not None for t in ids_c) or any(t.tap is not None for t in ids_r)
    if (gc is None and gr is None) or ((gc is None or gr is None) and not taps):
        mode = "instruction"
        notes.append("matched by instruction and output position (an ETRecord on each side matches by graph "
                     "node instead): valid only when both ETDumps come from the same program")
    elif gc is not None and gr is not None and same_program(gc, gr):
        mode = "name"
    else:           # two programs; or taps on a side without an ETRecord (a tapped program has none)
        mode = "source"
        if gc is None or gr is None:
            notes.append(f"the {'candidate' if gc is None else 'reference'} has no ETRecord: only its taps and "
                         "program outputs can be paired")
    use_handles = mode == "source" and gc is not None and gr is not None and handles_agree(gc, gr)
    ic, ir = Identities(gc, mode, use_handles), Identities(gr, mode, use_handles)
    ic.compare_groups(ir)
    if ref_to_cand is None:
        ref_to_cand = {r: r for r in range(pr.n_runs)}
    cand_runs = {c: c for c in ref_to_cand.values()}          # only the candidate runs compared
    kc, kr = keyed(ids_c, ic, cand_runs), keyed(ids_r, ir, ref_to_cand)
    _alias_taps(kc, kr, ir)
    _alias_taps(kr, kc, ic)
    pairs = []
    for k, c in kc.items():
        r = kr.get(k)
        if r is None:
            continue
        how = c.rule if c.rule == r.rule else f"{c.rule} / {r.rule}"
        if c.looked_through or r.looked_through:
            how += LOOKED_THROUGH
        if c.tensor.role == "delegate_output" and mode != "instruction":
            how = "delegate output (value leaving its partition): " + how
        pairs.append((c.tensor, r.tensor, how))
    un_c = _unmatched(kc, kr)
    un_r = _unmatched(kr, kc)
    hidden = hidden_keys(pc, gc, ic, kc) if mode == "source" else set()
    ref_nodes = {k[1:] for k in kr if k[1] != "output"}
    paired = {k[1:] for k in kr if k[1] != "output" and k in kc}
    if mode == "source" and gc is not None and not ic.keys:
        notes.append("the candidate's edge graph has no node provenance: nothing paired by source node")
    return Pairing(pairs, mode, un_c, un_r, notes, len(ref_nodes), len(ref_nodes & hidden), len(paired - hidden))


def _alias_taps(mine: dict, theirs: dict, their_ident) -> None:
    """A tap (keyed by its node name) facing a graph without that tap: re-keyed to the group of the
    other graph whose provenance names the tapped node (``Identities.ep_key``)."""
    for k in [k for k in mine if k[1] == "tap" and k not in theirs]:
        other = their_ident.ep_key(k[2])
        if other is not None and (k[0], *other) not in mine:
            v = mine.pop(k)
            mine[(k[0], *other)] = Keyed(v.tensor, BY_TAP_PROVENANCE, v.looked_through)


def _unmatched(mine: dict, theirs: dict) -> list[str]:
    """Names of tensors with no partner in some compared run (a tensor matched in every run where
    it was logged is not listed), each once, in first-seen order."""
    return list(dict.fromkeys(v.tensor.name for k, v in mine.items() if k not in theirs))

