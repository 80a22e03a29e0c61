"""What the space-time scans of observations share: their circles, the best cylinder of every centre, the table.

The space-time normal scan (:mod:`.normal_space_time`) and the space-time ordinal and multinomial scans
(:mod:`.categorical_space_time`) score every cylinder (a circle x an interval of days) of one model each; around
their engines they do the same things, which live here:

1. the circles of the analysis, and with ``purely_temporal`` one more window holding every location, whose
   cylinders are the purely temporal clusters (:func:`observation_circles`);
2. from the best cylinder of every centre and interval, each centre's best (the first of equal ones in SaTScan's
   loop: the smallest circle, then the earliest interval in :func:`~.cpu_normal_space_time.intervals`' order,
   :func:`first_best`) and, retrospective, the best ones before and after it in time as SaTScan 10 lists them
   (:func:`interval_candidates`);
3. the cluster table of those candidates, with the model's own columns for each cylinder (:func:`cylinder_clusters`).
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .cpu_space_time import overlap_candidates
from .locations import _radius
from .result import Candidates, _clusters
from .space_time_scan import _MIN_LLR_RETAINED, circles, cylinder_overlap, day_of

__all__ = ["observation_circles", "first_best", "interval_candidates", "cylinder_clusters"]


def observation_circles(cm, size, purely_temporal: bool) -> tuple:
    """The circles of a space-time analysis (:func:`~.space_time_scan.circles` cut by ``size``, each location's
    observations) and, ``purely_temporal``, one more window of every location: ``(centres, centre_loc, points,
    cpoints, offsets, neighbors, boundary, m)``, ``m`` the number of circle centres (the extra window is row m)."""
    centres, centre_loc, points, cpoints, windows = circles(cm, size)
    offsets, neighbors, _, boundary = windows
    m = len(offsets) - 1
    if purely_temporal:
        L = len(size)
        offsets = np.append(offsets, len(neighbors) + L)
        neighbors = np.concatenate([neighbors, np.arange(L, dtype=neighbors.dtype)])
        boundary = np.concatenate([boundary, np.zeros(L - 1, dtype=np.uint8), np.ones(1, dtype=np.uint8)])
    return centres, centre_loc, points, cpoints, offsets, neighbors, boundary, m


def first_best(llr, entry) -> tuple:
    """``(best, a, j)`` of each row of the per-interval LLRs and entries (m, I): the largest LLR, the first of
    equal ones in SaTScan's loop (the smallest circle entry, then the earlier interval), -1 where none."""
    best = llr.max(axis=1) if llr.shape[1] else np.zeros(len(llr))
    tied = (llr == best[:, None]) & (entry >= 0)
    j = np.where(tied, entry, np.iinfo(np.int64).max).min(axis=1, initial=np.iinfo(np.int64).max)
    a = np.argmax(tied & (entry == j[:, None]), axis=1)
    none = ~(best > 0)
    return np.where(none, 0.0, best), np.where(none, -1, a), np.where(none, -1, j)


def interval_candidates(llr, entry, t1s, t2s, T: int, max_t: int, retrospective: bool) -> tuple:
    """The candidate cylinders from the observed data's per-interval best (``llr``, ``entry`` (m, I) over the
    intervals ``t1s..t2s``): ``(centre, LLR, circle entry, t1, t2)``, each centre's best (:func:`first_best`) and,
    in a ``retrospective`` analysis, the best ones before and after it in time as SaTScan 10 lists them
    (:func:`~.cpu_space_time.overlap_candidates`, over chunks of centres)."""
    m = len(llr)
    best, a, j = first_best(llr, entry)
    t1_of, t2_of = np.where(a < 0, 0, t1s[np.maximum(a, 0)]), np.where(a < 0, 0, t2s[np.maximum(a, 0)])
    if not retrospective:
        return np.arange(m), best, j, t1_of, t2_of
    chunk = max(1, 2_000_000 // max(T * max_t, 1))
    parts = []
    for lo in range(0, m, chunk):
        hi = min(m, lo + chunk)
        # every interval's best LLR and circle entry, by end day and length (overlap_candidates' layout)
        val = np.zeros((hi - lo, T, max_t))
        code = np.full((hi - lo, T, max_t), -1, dtype=np.int64)
        val[:, t2s, t2s - t1s] = llr[lo:hi]
        code[:, t2s, t2s - t1s] = entry[lo:hi]
        parts.append(overlap_candidates(val, code, best, j, t1_of, t2_of, lo, _MIN_LLR_RETAINED))
    if not parts:
        none = np.zeros(0, dtype=np.int64)
        return none, np.zeros(0), none, none, none
    return tuple(np.concatenate([p[q] for p in parts]) for q in range(5))


def cylinder_clusters(cm, circles_: tuple, found: tuple, pt, t1s, t2s, null_llr, purely_temporal: bool,
                      table) -> pd.DataFrame:
    """The cluster table of a space-time scan of observations (:func:`~.result._clusters`).

    ``circles_``: :func:`observation_circles`' tuple; ``found``: :func:`interval_candidates`' tuple; ``pt``: None,
    or the purely temporal window's ``(best, a)`` of :func:`first_best` (one candidate more, listed whatever it
    overlaps, as SaTScan's ``ShouldRetainCandidateCluster`` lists it); ``table(members, t1, t2)``: the model's
    columns of the cylinder of the locations ``members`` over the days ``t1..t2`` (a dict; its observations are
    the ``cases`` column). The columns ``start`` and ``end`` follow ``radius``; with ``purely_temporal`` the purely
    temporal cluster's ``center`` is "All"."""
    centres, centre_loc, points, cpoints, offsets, neighbors, _, m = circles_
    centre_of, best, j_of, t1_of, t2_of = found
    L = len(cm.loc_coords)
    radius_of = _radius(cm.geo, points, cpoints)
    tables = {}
    k_pt = -1  # the purely temporal candidate's index, if any
    cand_offsets, cand_centres, cand_loc, tiebreak = offsets[centre_of], centres[centre_of], centre_loc[centre_of], \
        centre_of
    if pt is not None and pt[0][0] > 0:
        k_pt = len(best)
        a = pt[1][0]
        cand_offsets = np.append(cand_offsets, offsets[m])
        cand_centres = np.vstack([cand_centres, [np.nan, np.nan]])
        cand_loc = np.append(cand_loc, -1)
        best, j_of = np.append(best, pt[0][0]), np.append(j_of, len(neighbors) - 1)
        t1_of, t2_of = np.append(t1_of, t1s[a]), np.append(t2_of, t2s[a])
        tiebreak = np.append(centre_of, m)
    overlap = cylinder_overlap(cm, L, not cm.prospective and cm.c_lt.shape[1] > 2, centre_of, t1_of, t2_of,
                               cpoints, points)

    def count(members, i):
        return cm.c_lt[members, t1_of[i]:t2_of[i] + 1].sum()

    def window_stats(members, c, j, i):
        tables[i] = table(members, t1_of[i], t2_of[i])
        return int(c), math.nan, math.nan

    def extra(i):
        more = {"start": day_of(cm.origin, t1_of[i]), "end": day_of(cm.origin, t2_of[i]), **tables[i]}
        return {**more, "purely_temporal": bool(i == k_pt)} if purely_temporal else more

    cand = Candidates(best, j_of, cand_offsets, neighbors, cand_centres, cand_loc)
    df = _clusters(cand, lambda members, k: math.nan if k == k_pt else radius_of(members, centre_of[k]), None,
                   [[mm[0]] for mm in cm.members], cm.ids, null_llr, window_stats, count=count, extra=extra,
                   tiebreak=tiebreak, overlap=overlap, exempt=k_pt)
    if purely_temporal:
        if "purely_temporal" not in df.columns:
            df["purely_temporal"] = pd.Series(dtype=bool)
        df["center"] = df["center"].astype(object)
        df.loc[df["purely_temporal"].astype(bool), "center"] = "All"
    for k, name in enumerate(("start", "end")):
        if name not in df.columns:  # no cluster at all: the same columns, empty
            df[name] = np.zeros(0, dtype=object)
        df.insert(df.columns.get_loc("radius") + 1 + k, name, df.pop(name))
    return df
