"""Spatial scan statistics (Larew et al. 2010; SaTScan's Bernoulli and discrete Poisson models) in
Python: grave sites, New York leukaemia, New Mexico brain cancer adjusted for age group and sex.

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
# SaTScan's discrete Poisson model on SaTScan's own input files: the NY leukaemia clusters of
# SaTScan v9.6 (LLR 11.577255, 9.019716, ...), then with great-circle distances (v9.3.1: 14.780276)
S = hp.datasets.satscan_sample_path
nyp = hp.scan.read_satscan(S("ny_leukemia.cas"), population_file=S("ny_leukemia.pop"),
                           geo_file=S("ny_leukemia.geo"), model="poisson")
res_p = hp.scan.poisson(nyp[["x", "y"]].to_numpy(), nyp["cases"], nyp["population"], max_population=0.1,
                        n_replicates=n_rep, seed=3, location_ids=nyp["location_id"], progress=False,
                        backend=args.backend)
print(res_p.summary())
res_ll = hp.scan.poisson(nyp[["x", "y"]].to_numpy(), nyp["cases"], nyp["population"], distance="great_circle",
                         min_cases=0, n_replicates=n_rep, seed=3, location_ids=nyp["location_id"], progress=False,
                         backend=args.backend)
print(res_ll.clusters[["center", "radius", "cases", "expected", "log_likelihood_ratio", "p_value"]].head(3))
# a SaTScan parameter file, rerun unchanged
print(hp.scan.run_prm(S("ny_leukemia_poisson.prm"), n_replicates=n_rep, seed=3, progress=False,
                      backend=args.backend).clusters.log_likelihood_ratio.head(3).round(6).tolist())
# New Mexico brain cancer: expected counts by indirect standardisation over age group x sex
nm = hp.scan.read_satscan(S("nm.cas"), population_file=S("nm.pop"), geo_file=S("nm.geo"), model="poisson",
                          covariates=True)
res_nm = hp.scan.poisson(nm[["x", "y"]].to_numpy(), nm["cases"], nm["population"], covariates=nm["category"],
                         location_ids=nm["location_id"], distance="great_circle", n_replicates=n_rep, seed=4,
                         progress=False, backend=args.backend)
print(res_nm.summary())
ax = hp.scan.plot_clusters(res_nm)
ax.figure.savefig(Path(args.outdir) / "scan_nm.png", dpi=100)
# SaTScan's sample space-time permutation analysis (NYC emergency-room fever visits, prospective, circles
# up to 3 km, 1-7 days ending 2001/11/24), from its own parameter file: SaTScan 10.3 reports the 9 zip codes
# around 11418 on 22-24 November (4 cases, 0.67 expected, LLR 3.845418)
res_st = hp.scan.run_prm(S("NYCSpaceTimePermutation.prm"), n_replicates=n_rep, seed=5, progress=False,
                         backend=args.backend)
print(res_st.clusters[["location_ids", "start", "end", "cases", "expected", "log_likelihood_ratio",
                       "p_value"]].head(3).to_string())
print(f"figures in {args.outdir}")
