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
