"""
Hawkes process: residuals and a forecast
========================================

After a fit, check it (Ogata's time-rescaled residuals should look like a unit-rate Poisson
process) and use it (the conditional intensity over the city an hour after the last event).
"""

import numpy as np

import hphawkes_py as hp

dc = hp.datasets.load_dc_gunshots("2010").iloc[:800]
x, t = dc[["x_km", "y_km"]].to_numpy(), dc["t_hours"].to_numpy()
post = hp.hawkes.mcmc(x, t, n_iter=200, burn_in=50, chains=1, fixed={"tau_x": 1.6, "tau_t": 336.0},
                      init="mode", seed=1, progress=False, backend="cpu")

# %%
# Check: time-rescaling residuals
# -------------------------------
# Under the model the rescaled inter-event times are unit exponentials. The KS test asks whether
# they are, per posterior draw; a small p-value says the fitted intensity misses part of the
# temporal structure of these 800 events, and the QQ plot shows where. This model has no daily
# cycle: its background is smoothed over two weeks (tau_t = 336 h), while gunshots follow the
# hour of the day.
res = hp.hawkes.residuals(post, x, t, n_draws=10, seed=1, progress=False)
print(res)
res.plot()

# %%
# Predict: the intensity an hour and a day ahead
# ----------------------------------------------
# Posterior mean of the conditional intensity (events per km² per hour) on a 0.5 km grid.
gx, gy = np.meshgrid(np.arange(x[:, 0].min(), x[:, 0].max(), 0.5), np.arange(x[:, 1].min(), x[:, 1].max(), 0.5))
grid = np.column_stack([gx.ravel(), gy.ravel()])
fc = hp.hawkes.forecast_intensity(post, x, t, [t.max() + 1.0, t.max() + 24.0], grid, n_draws=10, seed=1,
                                  progress=False, backend="cpu")
print(f"highest mean intensity: {float(fc.mean.max()):.3g} events per km^2 per hour")
fc.plot(time_index=0)
