"""Bayesian SCCS (Suchard et al. 2013) in Python: simulation, cross-validation, bootstrap, results table.

    python vignettes/python/sccs.py --quick
"""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import hphawkes_py as hp  # noqa: E402
from _common import parse  # noqa: E402

args = parse(__doc__)
# quick mode: few cases, so exposure must be common for the signal to show
data, truth = hp.sccs.simulate(n_cases=800 if args.quick else 20000, n_drugs=30 if args.quick else 1000,
                               prevalence=0.1 if args.quick else None, seed=1)
print(data)
cv = hp.sccs.cross_validate(data, prior="laplace", folds=3 if args.quick else 10,
                            grid=[0.01, 0.1, 1.0] if args.quick else None, seed=2, backend=args.backend)
print(cv)
print(cv.scores)
fit = cv.fit
est = fit.coefficients.reindex(truth.index)
print("non-zero truth vs estimate:")
print(((truth != 0).astype(int) * 2 + (est != 0).astype(int)).value_counts()
      .rename({3: "both", 2: "missed", 1: "false positive", 0: "both zero"}))
bs = hp.sccs.bootstrap(data, prior="laplace", variance=cv.variance, replicates=20 if args.quick else 200,
                       seed=3, backend=args.backend)
s = bs.summary()
s["truth"] = truth
print(s.reindex(s["estimate"].abs().sort_values(ascending=False).index).head(10))

# the study table analysts report: IRR with a profile-likelihood interval, p, cases and exposure counts,
# for the three largest positive estimates (exposures of interest are fitted without prior)
top = list(fit.coefficients.sort_values(ascending=False).index[:3])
mle = hp.sccs.fit(data, prior="laplace", variance=cv.variance, exclude=top, backend=args.backend)
table = mle.results_table(top, method="profile")
table["true_irr"] = np.exp(truth.reindex(top).to_numpy())
print(table.to_string())

# ---------------------------------------------------------------------------------------------
# A complete study from person-level data with age and season adjustment. Simulated children
# (0-7 years at the start, followed 1-3 years) whose outcome rate varies with age and season,
# two drugs with IRR 2; drug 1 gets a risk window on drug and a 30-day pre-exposure window.
import pandas as pd  # noqa: E402

from hphawkes_py.sccs import RiskWindow, SCCSData  # noqa: E402
from hphawkes_py.sccs.plot import plot_pre_exposure, plot_spline_effects, plot_time_to_event  # noqa: E402


def age_effect(a):
    return 0.8 * np.sin(np.asarray(a, dtype=float) / 600.0)


def season_effect(m):
    return 0.5 * np.cos(2 * np.pi * np.asarray(m, dtype=float) / 12.0)


obs, eras, outcomes, truth2 = hp.sccs.simulate(
    n_cases=4000 if args.quick else 40000, n_drugs=2, prevalence=0.3, fraction_positive=1.0, relative_risks=(2.0,),
    observation_days=(365, 1000), age_at_start=(0, 2500), age_effect=age_effect, season_effect=season_effect,
    output="eras", seed=3)
eras["covariate_id"] = "drug" + eras["covariate_id"].astype(str)
windows = {"drug1": [RiskWindow("on_drug1", 0, 0, "start", "end"), RiskWindow("pre_drug1", -30, -1, "start", "start")]}
study = SCCSData.from_eras(obs, eras, outcomes, windows=windows, age_knots=5, season_knots=4)
print(study)
print("age knots (days):", study.spline_term("age").knots)
sfit = hp.sccs.fit(study, prior="none", spline_prior="none", tolerance=1e-10, backend=args.backend)
results = sfit.results_table()
results["true_irr"] = [2.0, 2.0, 1.0]  # drug2, on_drug1, pre_drug1 (in the table's order)
print(results.loc[["drug2", "on_drug1", "pre_drug1"]].to_string())

# the recovered age and season curves against the truth (differences to a reference point)
effects = sfit.spline_effects(n=9)
for name, fun, ref in (("age", age_effect, 1700.0), ("season", season_effect, 6.5)):
    term = study.spline_term(name)
    x = effects.loc[effects.term == name, "x"].to_numpy()
    ids = list(term.covariate_ids)
    est = (term.basis(x) - term.basis([ref])) @ sfit.coefficients[ids].to_numpy()
    print(pd.DataFrame({name: x, "estimate": est, "truth": fun(x) - fun(ref)}).round(3).to_string(index=False))
fig = plot_spline_effects(sfit, path=f"{args.outdir}/sccs_spline_effects.png")
plot_time_to_event(eras, outcomes, "drug1", path=f"{args.outdir}/sccs_time_to_event.png")
plot_pre_exposure(sfit, "pre_drug1", path=f"{args.outdir}/sccs_pre_exposure.png")
print("figures in", args.outdir)
