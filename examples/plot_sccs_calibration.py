"""
SCCS empirical calibration and study diagnostics
================================================

Negative controls -- exposures believed not to cause the outcome -- show how far a study's
estimates stray when the true relative risk is 1. Their spread is the empirical null
distribution (Schuemie et al. 2014); calibrated p-values and intervals judge an estimate against
it instead of against 0. Before that, the diagnostics of OHDSI's SelfControlledCaseSeries say
whether the study can answer the question at all.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import hphawkes_py as hp

# %%
# A study with negative controls
# ------------------------------
# A simulated study of 21 drugs: one doubles the outcome's rate (the drug of interest), the other
# 20 have no effect (the negative controls).
obs, eras, outcomes, truth = hp.sccs.simulate(n_cases=1500, n_drugs=21, prevalence=0.25, fraction_positive=1 / 21,
                                              relative_risks=(2.0,), output="eras", seed=7)
interest_id = int(truth.idxmax())
controls = [c for c in truth.index if c != interest_id]
data = hp.sccs.SCCSData.from_eras(obs, eras, outcomes)
print(data, "drug of interest:", interest_id)

# %%
# Each negative control in its own model, as OHDSI studies fit them; then the null.
estimates = hp.sccs.fit_negative_controls(data, controls)
null = hp.sccs.EmpiricalNull.fit(estimates["log_rr"], estimates["se_log_rr"])
print(null)
print(f"expected absolute systematic error (EASE): {null.ease:.3f}")

# %%
# Study diagnostics for the drug of interest
# ------------------------------------------
# Minimum detectable relative risk, stability of the outcome rate over calendar time, a rise of the
# outcome just before exposure, and the rare-outcome check. Each reports its value, the OHDSI
# threshold and pass/fail.
checks = [
    hp.sccs.mdrr(data, interest_id),
    hp.sccs.time_stability(obs, outcomes),
    hp.sccs.pre_exposure_gain(obs, eras, outcomes, interest_id),
    hp.sccs.rare_outcome(n_persons=150_000, n_cases=data.n_strata, first_outcome_only=False),
]
table = pd.DataFrame([{k: d.to_dict()[k] for k in ("diagnostic", "value", "rule", "pass")} for d in checks])
print(table.to_string(index=False))

# %%
# The event-dependent observation check needs a probe window at the end of each observation period.
probe = hp.sccs.end_of_observation_eras(obs)
with_probe = hp.sccs.SCCSData.from_eras(obs, pd.concat([eras, probe]), outcomes)
fit = hp.sccs.fit(with_probe, prior="none", progress=False)
print(hp.sccs.event_observation_independence(fit))

# %%
# Calibrating an estimate
# -----------------------
# The drug of interest, estimated in its own model like the controls:
interest = hp.sccs.fit_negative_controls(data, [interest_id])
print(interest)
print("calibrated p-value:", null.calibrate_p(interest["log_rr"], interest["se_log_rr"]).round(4))
print(null.calibrate_ci(interest["log_rr"], interest["se_log_rr"])[["rr", "lower", "upper"]].round(3))

# %%
# A study with systematic error
# -----------------------------
# This simulation has no confounding, so its null sits near 0. Real studies are rarely so clean:
# EmpiricalCalibration's ``sccs`` example (45 negative controls for upper gastrointestinal
# bleeding, rounded here to 4 decimals) has a null with mean 0.79 -- every estimate is inflated
# about 2.2-fold -- and sertraline's relative risk of 2.08 (p < 1e-20 uncalibrated) is no longer
# significant once calibrated.
log_rr = np.array([0.4339, 0.6363, 0.9298, 1.6919, 0.5262, 0.8582, 0.8010, 0.8782, 0.7305, 0.7762, 0.7345, 1.2796,
                   0.5313, 0.1063, 0.4642, 1.2434, 1.3474, 0.1063, -0.6476, 0.8561, 1.3079, 1.1637, 0.8162, 0.1063,
                   1.5064, 0.7376, 0.6878, 0.6294, 0.7877, 0.0896, 0.7045, 0.6474, 0.2507, 1.9382, 1.1192, 0.3804,
                   0.5714, 0.5218, 1.0218, 0.4737, 0.7961, 0.8936, 1.0294, -0.8531, 1.1275])
se = np.array([0.7618, 0.1840, 0.2980, 0.5955, 0.1967, 0.1308, 0.1209, 0.3462, 0.1390, 0.2971, 0.2779, 0.2621,
               0.1340, 0.3311, 0.1387, 0.0908, 0.1160, 0.3311, 1.3135, 0.1609, 0.1941, 0.1175, 0.3874, 0.3311,
               0.1312, 0.8056, 0.0611, 0.1016, 0.0819, 0.5510, 0.0726, 0.2518, 0.2331, 0.8050, 0.1458, 0.1311,
               0.6765, 0.1267, 0.3111, 0.5034, 0.6476, 0.3760, 0.1417, 0.8100, 0.5730])
gi_null = hp.sccs.EmpiricalNull.fit(log_rr, se)
print(gi_null)
print("sertraline, calibrated p:", gi_null.calibrate_p([0.7326], [0.0737]).round(3))

fig, axes = plt.subplots(1, 2, figsize=(10, 4))
null.plot(estimates["log_rr"], estimates["se_log_rr"], ax=axes[0])
axes[0].set_title("simulated study: 20 negative controls")
gi_null.plot(log_rr, se, ax=axes[1])
axes[1].set_title("EmpiricalCalibration's sccs example")
fig.tight_layout()
plt.show()
