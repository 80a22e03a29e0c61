"""DC gunshot Hawkes analysis (Holbrook et al. 2021) in Python: the same steps as hawkes_dc.Rmd.

    python vignettes/python/hawkes_dc.py --quick
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import numpy as np  # noqa: E402

import hphawkes_py as hp  # noqa: E402
from _common import parse  # noqa: E402

args = parse(__doc__)
dc = hp.datasets.load_dc_gunshots("2010")
if args.quick:
    dc = dc.iloc[:300]
x, t = dc[["x_km", "y_km"]].to_numpy(), dc["t_hours"].to_numpy()
print(f"{len(dc)} events")

post = hp.hawkes.mcmc(x, t, n_iter=200 if args.quick else 5000, burn_in=50 if args.quick else 1000,
                      chains=2 if args.quick else 4, seed=2021, fixed={"tau_x": 1.6, "tau_t": 336.0},
                      progress=False, backend=args.backend)
print(post)
print(post.summary())
draws = {k: v for k, v in post.draws.items() if k in post.sampled}
print("posterior median mean delay 1/omega (h):", float(np.median(1 / draws["omega"])))
print("posterior median spread h (m):", float(np.median(1000 * draws["h"])))

se = hp.hawkes.self_excitation(post, n_draws=50 if args.quick else 1000, seed=1, progress=False)
print(se.describe())

# Hotspots of background risk, or of contagion? The Poisson scan of all events (uniform null over the
# grid cells that ever record a shot: the sensors' coverage) beside the same scan of the background
# events only: each event weighted by 1 - pi_n, background labels drawn once per posterior draw. An
# ordinary cluster whose window is no longer significant on the background events is contagion only.
pi_draws = post.self_excitation_draws(n_draws=20 if args.quick else 100, seed=1, progress=False)  # (draws, N)
dsc = hp.scan.declustered(x, pi_draws, cell_size=1.0 if args.quick else 0.5, n_replicates=99 if args.quick else 999,
                          seed=1, progress=False, backend=args.backend)
print(dsc.summary())
print(dsc.comparison[["cluster", "n_locations", "events", "p_value", "background", "expected_background",
                      "background_p_value", "draw_support", "verdict"]].round(3).to_string())
dsc.plot(path=Path(args.outdir) / "hawkes_declustered_scan.png")

# Is the model right? Time-rescaled residuals (Ogata): uniform under the model (KS test, QQ plot).
res = hp.hawkes.residuals(post, x, t, n_draws=20, seed=1, progress=False)
print(res, res.summary()["draws_ks_pvalue_q2.5_50_97.5"])
res.plot(path=Path(args.outdir) / "hawkes_residuals.png")

# What happens next? Posterior intensity over a 0.5 km grid one hour and one day after the last event.
gx, gy = np.meshgrid(np.arange(x[:, 0].min(), x[:, 0].max(), 0.5), np.arange(x[:, 1].min(), x[:, 1].max(), 0.5))
grid = np.column_stack([gx.ravel(), gy.ravel()])
fc = hp.hawkes.forecast_intensity(post, x, t, [t.max() + 1.0, t.max() + 24.0], grid, n_draws=20 if args.quick else 200,
                                  seed=1, progress=False, backend=args.backend)
print(fc, "highest mean intensity (events per km^2 per hour):", float(fc.mean.max()))
fc.plot(time_index=0, path=Path(args.outdir) / "hawkes_forecast.png")

# Posterior predictive checks: counts per bin, inter-event times and K(r, u) against simulations.
pp = hp.hawkes.posterior_predictive(post, x, t, n_draws=20 if args.quick else 100, seed=1, progress=False)
print(pp.summary().groupby(pp.summary()["summary"].str.split("[").str[0])["outside_band"].mean())
pp.plot(path=Path(args.outdir) / "hawkes_predictive.png")

import matplotlib.pyplot as plt  # noqa: E402

post.plot_density(path=Path(args.outdir) / "hawkes_densities.png")
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
order = np.argsort(se["mean"].to_numpy())
sc = axes[0].scatter(x[order, 0], x[order, 1], c=se["mean"].to_numpy()[order], s=3, vmin=0, vmax=1)
axes[0].set_aspect("equal"); axes[0].set_xlabel("x (km)"); axes[0].set_ylabel("y (km)")
fig.colorbar(sc, ax=axes[0], label="posterior mean of pi_n")
axes[1].scatter(t, se["mean"], s=3, alpha=0.5); axes[1].set_xlabel("t (hours)"); axes[1].set_ylabel("pi_n")
fig.savefig(Path(args.outdir) / "hawkes_pi.png", dpi=100)
try:
    post.to_coda()  # the same draws as an R coda::mcmc.list (needs rpy2)
    print("to_coda(): ok")
except ImportError as exc:
    print(f"to_coda() skipped: {exc}")
print(f"figures in {args.outdir}")
