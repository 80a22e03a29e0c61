"""Kulldorff's spatial and space-time scan statistics on CPU and GPU (Larew et al. 2010; SaTScan).

The entry points (each function's docstring has a runnable example)::

    import hphawkes_py as hp
    res = hp.scan.bernoulli(coords, cases, controls, max_population=0.5, n_replicates=999)
    res = hp.scan.poisson(coords, cases, population, covariates=None, window="circle")
    res = hp.scan.space_time_permutation(coords, cases, dates, max_temporal=7, prospective=True)
    res = hp.scan.space_time(coords, cases, dates, population=population)   # space-time Poisson
    res = hp.scan.space_time(coords, cases, dates, model="bernoulli", controls=controls)
    res = hp.scan.normal(coords, values, weights=None)           # continuous measurements
    res = hp.scan.exponential(coords, times, censored)           # survival times with censoring
    res = hp.scan.space_time_exponential(coords, times, dates, censored)   # ... in space and time
    res = hp.scan.space_time_normal(coords, values, dates, weights=None)   # measurements in space and time
    res = hp.scan.temporal_normal(dates, values, weights=None)   # ... in time, the whole region
    res = hp.scan.temporal_exponential(dates, times, censored)   # survival in time, the whole region
    res = hp.scan.ordinal(coords, categories)                    # ordered categories (e.g. severity)
    res = hp.scan.multinomial(coords, categories)                # unordered categories (e.g. subtypes)
    res = hp.scan.continuous_poisson(points, ["X >= 0,X <= 1,Y >= 0,Y <= 1"])   # points in a region
    tr = hp.scan.temporal(dates, cases, population=None, prospective=False)   # purely temporal
    tr = hp.scan.seasonal(dates, cases)                          # days of the year as a closed loop
    sv = hp.scan.svtt(coords, dates, cases, population, time_aggregation=365)  # trends in time by place
    it = hp.scan.iterative_scan("poisson", coords, cases, population, max_iterations=10)
    pw = hp.scan.power(coords, n_cases, population, relative_risks)   # SaTScan's power evaluation
    res = hp.scan.bernoulli(coords, cases, controls, window="ellipse", penalty="medium")
    res = hp.scan.run_prm("analysis.prm")      # a SaTScan parameter file, rerun unchanged
    recs = hp.scan.read_source(hp.scan.DataSource(path, ...))   # SaTScan's CSV / dBase / shapefile sources
    ll = hp.scan.cluster_linelist(res, source)   # SaTScan's cluster line list (write_linelist: its CSV)
    res = hp.scan.declustered(x, pi, cell_size=0.5)   # background events of a Hawkes fit vs all events
    res.clusters          # most likely cluster first, then secondary clusters (no overlap)
    res.location_table()  # SaTScan's location information
    hp.scan.plot_clusters(res)
    hp.scan.write_satscan(res, "out/analysis.txt")   # SaTScan's report, .col/.gis/.rr/.llr tables
    hp.scan.cluster_map(res, "clusters.html")        # a self-contained HTML map

Semantics follow SaTScan's purely spatial Bernoulli, discrete Poisson, normal, exponential, ordinal
and multinomial analyses (circular or elliptic windows, Cartesian or great-circle distances), its
continuous Poisson model of points in a region of polygons, its
retrospective / prospective space-time permutation, discrete Poisson, Bernoulli, exponential, normal, ordinal and
multinomial analyses, its purely temporal and seasonal analyses and its spatial variation in temporal trends.
:func:`read_satscan` reads SaTScan's .cas/.ctl/.pop/.geo files.
"""
from ._prm import run_prm
from ._satscan import read_satscan
from .continuous_poisson_model import continuous_poisson
from .data_sources import DataSource, read_source
from .linelist import cluster_linelist, write_linelist
from .multinomial_model import multinomial
from .ordinal_model import ordinal
from .svtt_model import SVTTResult, svtt
from .temporal_model import TemporalResult, seasonal, temporal
from .declustering import DeclusteredScanResult, declustered
from .exponential_model import exponential
from .exponential_space_time import space_time_exponential
from .categorical_space_time import space_time_multinomial, space_time_ordinal, temporal_multinomial, temporal_ordinal
from .exponential_temporal import temporal_exponential
from .iterative import IterativeScanResult, iterative_scan
from .geometry import to_geojson, to_kml, write_geojson, write_kml, write_vector
from .maps import cluster_map
from .model import bernoulli, poisson
from .normal_model import normal
from .normal_space_time import space_time_normal
from .normal_temporal import temporal_normal
from .outputs import write_satscan
from .plot import plot_clusters
from .power_evaluation import PowerResult, power, read_alternative_hypotheses
from .result import ScanResult
from .spatiotemporal import space_time, space_time_permutation

__all__ = ["bernoulli", "poisson", "space_time_permutation", "space_time", "read_satscan", "run_prm", "ScanResult",
           "plot_clusters", "declustered", "DeclusteredScanResult", "write_satscan", "to_geojson", "write_geojson",
           "to_kml", "write_kml", "write_vector", "cluster_map", "normal", "exponential", "space_time_exponential",
           "space_time_normal", "temporal_normal", "temporal_exponential", "iterative_scan",
           "IterativeScanResult", "power", "PowerResult", "read_alternative_hypotheses", "ordinal", "multinomial",
           "temporal", "seasonal", "TemporalResult", "svtt", "SVTTResult", "DataSource", "read_source",
           "cluster_linelist", "write_linelist", "continuous_poisson", "space_time_ordinal", "space_time_multinomial",
           "temporal_ordinal", "temporal_multinomial"]
