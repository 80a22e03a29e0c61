"""SaTScan's criteria for reporting secondary clusters (``CriteriaForReportingSecondaryClusters``).

The clusters are the centres' best windows in decreasing order of their statistic; a candidate is listed
unless it conflicts with a cluster listed before it. ``"no-overlap"`` (0, the default) refuses a candidate
that shares a location with one (:func:`~.result._clusters`' default); the other criteria look at the
clusters' centres and radii (SaTScan's ``MostLikelyClustersContainer::ShouldRetainCandidateCluster``), a
centre lying in a circle when its distance to the circle's centre is at most the circle's radius (the
distance to its farthest location), both rounded to single precision as SaTScan compares them:

* ``"no-centres-in-others"`` (1): neither centre in the other's circle;
* ``"no-centres-in-more-likely"`` (2): the candidate's centre in no listed cluster;
* ``"no-centres-in-less-likely"`` (3): no listed cluster's centre in the candidate;
* ``"no-pairs-of-centres"`` (4): not both centres each in the other's circle;
* ``"no-restrictions"`` (5): every candidate listed.
"""
from __future__ import annotations

import numpy as np

__all__ = ["CRITERIA", "centre_overlap"]

#: the criteria by name, with SaTScan's CriteriaForReportingSecondaryClusters codes
CRITERIA = {"no-overlap": 0, "no-centres-in-others": 1, "no-centres-in-more-likely": 2,
            "no-centres-in-less-likely": 3, "no-pairs-of-centres": 4, "no-restrictions": 5}


def centre_overlap(criterion: str, centre_point, points: np.ndarray, times=None):
    """``overlap(members, i)`` for :func:`~.result._clusters`: whether candidate ``i`` (its centre
    ``centre_point(i)`` and the locations ``members``, rows of ``points``, in the working coordinates the windows
    were built in) conflicts under ``criterion`` (a key of :data:`CRITERIA` other than "no-overlap") with a
    cluster listed before it; a candidate that does not is recorded as listed. ``times(i)``: a retrospective
    space-time candidate's days ``(t1, t2)``; clusters apart in time (a day or more between them) never conflict,
    as in SaTScan."""
    code = CRITERIA[criterion]
    kept = []  # (centre, radius, days) of the listed clusters

    def overlap(members, i):
        if code == 5:
            return False
        c = np.asarray(centre_point(i), dtype=np.float64)
        r = float(np.sqrt(((points[members] - c) ** 2).sum(axis=1)).max())
        t1, t2 = times(i) if times is not None else (0, 0)
        for c2, r2, (a, b) in kept:
            if times is not None and (b + 1 < t1 or a > t2 + 1):
                continue
            d = np.float32(np.sqrt(((c - c2) ** 2).sum()))
            mine_in_other = d <= np.float32(r2)
            other_in_mine = d <= np.float32(r)
            if ((code == 1 and (mine_in_other or other_in_mine)) or (code == 2 and mine_in_other)
                    or (code == 3 and other_in_mine) or (code == 4 and mine_in_other and other_in_mine)):
                return True
        kept.append((c, r, (t1, t2)))
        return False

    return overlap
