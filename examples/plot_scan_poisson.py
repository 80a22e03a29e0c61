"""
Poisson scan from SaTScan files: New York leukaemia
===================================================

SaTScan's discrete Poisson model on its own sample files (281 census tracts of upstate New York),
read with ``read_satscan`` and scanned with circles up to 10% of the population. The same
analysis can be rerun from SaTScan's parameter file with ``hp.scan.run_prm``.
"""

import hphawkes_py as hp

S = hp.datasets.satscan_sample_path
ny = hp.scan.read_satscan(S("ny_leukemia.cas"), population_file=S("ny_leukemia.pop"),
                          geo_file=S("ny_leukemia.geo"), model="poisson")
res = hp.scan.poisson(ny[["x", "y"]].to_numpy(), ny["cases"], ny["population"], max_population=0.1,
                      n_replicates=999, seed=3, location_ids=ny["location_id"], progress=False, backend="cpu")
res.clusters[["cases", "expected", "relative_risk", "log_likelihood_ratio", "p_value"]].head()

# %%
# SaTScan's location table: each location of the reported clusters.
res.location_table().head()

# %%
hp.scan.plot_clusters(res)
