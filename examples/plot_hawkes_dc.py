"""
Hawkes process: self-excitation in the DC gunshots
===================================================

Holbrook et al. (2021) fit a spatiotemporal Hawkes process to Washington DC's ShotSpotter
gunshots: a smooth background of events plus bursts of gunshots triggered by earlier ones. Here
the 2010 events (the data set of hpHawkes' examples) are fitted with a short adaptive
Metropolis-Hastings run, with the background bandwidths fixed as in the paper; the posterior gives
the trigger's spatial scale ``h`` (km), its mean delay ``1/omega`` (hours) and the expected number
of offspring ``theta``, and each event's probability of having been triggered.
"""

import matplotlib.pyplot as plt
import numpy as np

import hphawkes_py as hp

dc = hp.datasets.load_dc_gunshots("2010").iloc[:1500]  # the first 1,500 events of 2010: km, hours
x, t = dc[["x_km", "y_km"]].to_numpy(), dc["t_hours"].to_numpy()

# %%
# Fit
# ---
# ``init="mode"`` starts both chains at the posterior mode, so a short run is already informative.
post = hp.hawkes.mcmc(x, t, n_iter=300, burn_in=100, chains=2, fixed={"tau_x": 1.6, "tau_t": 336.0},
                      init="mode", seed=2021, progress=False, backend="cpu")
post.summary()

# %%
# In natural units: the trigger spreads over tens of metres and acts within minutes.
h_m = 1000 * post.draws["h"]
delay_min = 60 / post.draws["omega"]
print(f"h: {np.median(h_m):.0f} m, mean delay 1/omega: {np.median(delay_min):.1f} min, "
      f"theta: {np.median(post.draws['theta']):.3f}")

# %%
# Which events were triggered?
# ----------------------------
# The posterior mean of each event's self-excitation probability pi_n.
pi = hp.hawkes.self_excitation(post, n_draws=100, seed=1, progress=False)
fig, ax = plt.subplots(figsize=(6, 6))
order = np.argsort(pi["mean"].to_numpy())
sc = ax.scatter(x[order, 0], x[order, 1], c=pi["mean"].to_numpy()[order], s=6, vmin=0, vmax=1)
ax.set_aspect("equal")
ax.set_xlabel("x (km)")
ax.set_ylabel("y (km)")
fig.colorbar(sc, ax=ax, label="posterior mean of $\\pi_n$")
ax.set_title("DC gunshots 2010: probability of being triggered")

# %%
# The chains
# ----------
post.plot_trace()
