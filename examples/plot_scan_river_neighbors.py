"""
Villages along a river: windows from lists of neighbours instead of circles
===========================================================================

Sixty villages line a meandering river, and a waterborne illness triples the rate at eight consecutive
villages along one stretch. Across a bend, villages on the next loops are close as the crow flies but far by
river, so a circle around the stretch takes them in before it takes the whole stretch: the circles find a
few of the villages, the lists of neighbours along the river all eight, with twice the LLR. SaTScan's non-Euclidean neighbors file gives each
village's neighbours in the order a window should take them; ``neighbors=`` of :func:`hphawkes_py.scan.bernoulli`
takes the same lists (here: by distance along the river), and every leading run of a list is a window.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import hphawkes_py as hp

rng = np.random.default_rng(11)
L = 60
along = np.cumsum(rng.uniform(0.8, 1.2, L))  # km along the river
xy = np.c_[3 * np.sin(along / 2.5), along / 5]  # the river meanders: its loops about 3 km apart
persons = rng.integers(40, 120, L)
stretch = np.arange(26, 34)
rate = np.full(L, 0.05)
rate[stretch] *= 3.0
cases = rng.binomial(persons, rate)
ids = [f"V{i}" for i in range(L)]
by_river = [[ids[j] for j in np.argsort(np.abs(along - a), kind="stable")] for a in along]

kw = dict(location_ids=ids, max_population=0.2, n_replicates=499, seed=1, progress=False, backend="cpu")
circles = hp.scan.bernoulli(xy, cases, persons - cases, **kw)
river = hp.scan.bernoulli(xy, cases, persons - cases, neighbors=by_river, **kw)
rows = []
for name, res in (("circles", circles), ("neighbours along the river", river)):
    top = res.most_likely
    inside = [int(v[1:]) for v in top.location_ids]
    rows.append({"windows": name, "villages": len(inside), "of the stretch": len(set(inside) & set(stretch)),
                 "cases": top.cases, "expected": round(top.expected, 1), "LLR": round(top.log_likelihood_ratio, 2),
                 "p": top.p_value})
pd.DataFrame(rows)

# %%
# The most likely cluster of each scan (rings) on the river; the stretch with the raised rate is marked.
fig, axes = plt.subplots(1, 2, figsize=(8, 6), sharey=True)
for ax, (name, res) in zip(axes, (("circles", circles), ("neighbours along the river", river))):
    ax.plot(xy[:, 0], xy[:, 1], color="tab:blue", lw=0.8, zorder=1)
    ax.scatter(xy[:, 0], xy[:, 1], s=12 + persons / 4, c="0.6", zorder=2)
    ax.scatter(xy[stretch, 0], xy[stretch, 1], s=12 + persons[stretch] / 4, c="tab:red", zorder=3,
               label="raised rate")
    inside = [int(v[1:]) for v in res.most_likely.location_ids]
    ax.scatter(xy[inside, 0], xy[inside, 1], s=140, facecolors="none", edgecolors="k", zorder=4,
               label=f"most likely cluster (p={res.most_likely.p_value:.3g})")
    ax.set_title(name)
    ax.set_aspect("equal")
    ax.legend(loc="lower left", fontsize=7)
fig.tight_layout()
