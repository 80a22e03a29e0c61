"""Bernoulli spatial scan (Larew et al. 2010) in Python: grave sites and New York leukaemia.

    python vignettes/python/scan.py --quick
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import hphawkes_py as hp  # noqa: E402
from _common import parse  # noqa: E402

args = parse(__doc__)
n_rep = 99 if args.quick else 999
g = hp.datasets.load_grave()
res = hp.scan.bernoulli(g[["x", "y"]].to_numpy(), g["case"].to_numpy(), 1 - g["case"].to_numpy(),
                        n_replicates=n_rep, seed=1, progress=False, backend=args.backend)
print(res.summary())
ax = res.plot()
ax.figure.savefig(Path(args.outdir) / "scan_grave.png", dpi=100)

ny = hp.datasets.load_ny_leukemia()
res_ny = hp.scan.bernoulli(ny[["x", "y"]].to_numpy(), ny["cases_floor"].to_numpy(), ny["controls"].to_numpy(),
                           max_population=0.1, n_replicates=n_rep, seed=2, progress=False, backend=args.backend)
print(res_ny.summary())
ax = res_ny.plot()
ax.figure.savefig(Path(args.outdir) / "scan_ny.png", dpi=100)
print(f"figures in {args.outdir}")
