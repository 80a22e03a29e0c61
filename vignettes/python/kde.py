"""Adaptive KDE (Zhang, Zhu & Huang 2017) in Python: redwood and the simulated 50,000-point problem.

    python vignettes/python/kde.py --quick
"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import numpy as np  # noqa: E402

import hphawkes_py as hp  # noqa: E402
from _common import parse  # noqa: E402

args = parse(__doc__)
pts, mask_path = hp.datasets.load_redwood()
win = hp.kde.Window.from_asc(mask_path)
for method in ("adaptive", "cv", "rule-of-thumb"):
    fit = hp.kde.fit(pts, win, method=method, backend=args.backend)
    print(f"redwood {method:>13}: h={fit.h:.5f} alpha={fit.alpha} loglik={fit.log_likelihood:.4f}")
fit = hp.kde.fit(pts, win, method="adaptive", backend=args.backend)
surface = fit.density_surface()
print(f"redwood surface integral {surface.integral():.3f} (n = {len(pts)})")

import matplotlib.pyplot as plt  # noqa: E402

ax = surface.plot()
ax.figure.savefig(Path(args.outdir) / "kde_redwood.png", dpi=100)
plt.close("all")

sim = hp.datasets.load_zhang2017_points("sim50000")
if args.quick:
    sim = sim[np.random.default_rng(1).choice(len(sim), 1000, replace=False)]
    win_sim = hp.kde.Window.rectangle(0, 1, 0, 1, 0.01)
else:
    win_sim = hp.kde.Window.from_asc(hp.datasets.zhang2017_mask_path("sim160000"))
t0 = time.perf_counter()
fit_sim = hp.kde.fit(sim, win_sim, method="adaptive", backend=args.backend)
print(f"sim50000 ({len(sim)} points): h={fit_sim.h:.5f} alpha={fit_sim.alpha} "
      f"in {time.perf_counter() - t0:.1f} s (backend {fit_sim.backend})")
ax = fit_sim.density_surface().plot(points=False)
ax.figure.savefig(Path(args.outdir) / "kde_sim50000.png", dpi=100)

# Relative risk: larynx cancers (cases) against lung cancers (controls) in Chorley-Ribble, with
# Monte Carlo tolerance contours where the risk is significantly raised.
ch = hp.datasets.load_point_pattern("chorley")
win_ch = hp.kde.Window.from_asc(hp.datasets.path("kde/chorley_mask_0.1km.asc.gz"))
cases = ch[ch["mark"] == "larynx"][["x", "y"]].to_numpy()
controls = ch[ch["mark"] == "lung"][["x", "y"]].to_numpy()
rr = hp.kde.relative_risk(cases, controls, win_ch, bandwidth="oversmoothing", backend=args.backend)
print(rr.summary())
p_mc = rr.p_values("monte_carlo", n_replicates=99 if args.quick else 999, seed=1)
print(f"cells with p < 0.05: {np.nanmean(p_mc.values < 0.05):.3f} of the window")
ax = rr.tolerance_contours([0.05, 0.01], p_values=p_mc)
ax.figure.savefig(Path(args.outdir) / "kde_chorley_relrisk.png", dpi=100)
plt.close("all")
print(f"figures in {args.outdir}")
