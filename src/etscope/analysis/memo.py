"""Explicit memoisation of analyses of a Profile: a function decorated with ``@per_profile``
computes its result once per profile, and again only if the profile's events or runs were replaced
(as removing accumulated copies does). No string keys: the function itself is the key, so what is
memoised, and by whom, is visible where the function is defined.

Results are held in a weak table keyed by the profile, so they go when the profile goes; a
memoised result must therefore not hold the profile itself (it would keep itself alive).
"""
from __future__ import annotations

import functools
import weakref
from collections.abc import Callable
from typing import TypeVar

from etscope import profile as P

R = TypeVar("R")

_results: "weakref.WeakKeyDictionary[P.Profile, dict]" = weakref.WeakKeyDictionary()


def per_profile(fn: Callable[[P.Profile], R]) -> Callable[[P.Profile], R]:
    """``fn(profile)`` computed once per profile (and per state of its events and runs)."""
    @functools.wraps(fn)
    def memoised(profile: P.Profile) -> R:
        done = _results.setdefault(profile, {})
        got = done.get(fn)
        if got is None or got[0] is not profile.events or got[1] is not profile.runs:
            got = done[fn] = (profile.events, profile.runs, fn(profile))
        return got[2]

    return memoised
