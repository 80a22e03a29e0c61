"""Performance and GPU tables read from ``benchmarks/results/*.json`` at build time.

In a page::

    .. perf-table:: scan-satscan

writes, for the named result file, one sentence with the machine, the command that reproduces
the figures and the peer they are compared with, then the table. No figure is typed into the
documentation: every number comes from the result files, so the pages cannot drift from what
was measured. A missing result file gives a one-line note instead of a table (a peer's result
that has not been measured yet, e.g. ``hawkes_hphawkes.json``).

``python docs/_ext/perf_tables.py --readme`` prints the README's summary table (Markdown) from
the same files.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

NA = "\u2014"  # an empty cell (a bare "-" would be read as a list item by reStructuredText)
RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"
GPU_REPORTS = {"h100": "gpu_h100_2026-11-26.json", "h200": "gpu_h200_2026-11-26b.json"}


# ----------------------------------------------------------------------------- helpers
def _load(name: str):
    p = RESULTS / name
    return json.loads(p.read_text()) if p.exists() else None


def _s(x, digits: int = 3) -> str:
    """Seconds (or any positive figure) to ``digits`` significant digits; an em dash when absent."""
    if x is None:
        return NA
    if isinstance(x, str):
        return x
    if x == 0:
        return "0"
    if abs(x) >= 10 ** digits:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


def _ratio(a, b) -> str:
    return NA if a is None or b is None or b == 0 else f"{a / b:.1f}x"


def _sentence(text: str) -> str:
    """A result file's note as a sentence: first letter up, a full stop at the end."""
    text = text.strip()
    return (text[:1].upper() + text[1:]).rstrip(".") + "."


def _find(d, *keys):
    """First of ``keys`` found in ``d`` or in its ``machine``/``meta`` sub-dicts."""
    for scope in (d, d.get("machine") if isinstance(d.get("machine"), dict) else {}, d.get("meta") or {}):
        for k in keys:
            if isinstance(scope, dict) and scope.get(k) not in (None, ""):
                return scope[k]
    return None


def machine_of(d: dict, threads=None) -> str:
    """The machine a result file records: CPU model when recorded, cores, threads, platform."""
    parts = []
    model = _find(d, "cpu_model", "cpu", "processor")
    parts.append(str(model) if model else "x86_64 host (CPU model not recorded in the result file)")
    cores = _find(d, "cpu_count", "cpus")
    if cores:
        parts.append(f"{cores} cores")
    threads = threads if threads is not None else _find(d, "threads", "numba_threads")
    if threads:
        parts.append(f"{threads} threads")
    platform = _find(d, "platform")
    if platform:
        parts.append(str(platform))
    return ", ".join(parts)


def list_table(header: list[str], rows: list[list[str]], widths: str | None = None) -> list[str]:
    out = [".. list-table::", "   :header-rows: 1", "   :class: perf-table", ""]
    if widths:
        out.insert(3, f"   :widths: {widths}")
    for row in [header] + rows:
        out.append(f"   * - {row[0]}")
        out += [f"     - {c}" for c in row[1:]]
    return out + [""]


def preamble(machine: str, command: str, peer: str, when: str | None = None) -> list[str]:
    out = [f"| **Machine:** {machine}", f"| **Command:** ``{command}``", f"| **Peer:** {peer}"]
    if when:
        out.append(f"| **Measured:** {when}")
    return out + [""]


def missing(name: str, what: str) -> list[str]:
    return [f".. note::", "", f"   ``benchmarks/results/{name}`` is not in this checkout: {what}", ""]


# ----------------------------------------------------------------------------- CPU tables
def _satscan_builds(d) -> str:
    """The compiler flags of the SaTScan binaries a table's rows ran (``peers/build_satscan.sh``'s
    ``BUILD_FLAGS``), or "flags unrecorded": an unoptimised build is slower, and its ratios overstate ours."""
    builds = sorted({p.get("satscan", {}).get("build") or "flags unrecorded" for p in d["problems"].values()})
    return ", ".join(builds)


def _versus_satscan(seconds, top_llr, p) -> list[str]:
    """The cells every table of ours beside SaTScan shares: our seconds, SaTScan's (``p["satscan"]``), their
    ratio, and both top LLRs."""
    sat = p.get("satscan", {})
    return [_s(seconds), _s(sat.get("seconds")), _ratio(sat.get("seconds"), seconds),
            f"{top_llr:.6f} / {sat.get('top_llr', float('nan')):.6f}"]


def scan_satscan() -> list[str]:
    d = _load("scan_satscan.json")
    if d is None:
        return missing("scan_satscan.json", "run ``benchmarks/bench_scan_satscan.py --satscan PATH``.")
    labels = {"bernoulli_synthetic": "Bernoulli, {L:,} locations (synthetic)",
              "poisson_ny": "discrete Poisson, NY leukaemia (281 tracts)"}
    rows = []
    for key, p in d["problems"].items():
        rows.append([labels.get(key, key).format(**p), f"{p['replicates']:,}"]
                    + _versus_satscan(p["seconds"], p["top_llr"], p))
    return (preamble(machine_of(d), "python benchmarks/bench_scan_satscan.py --satscan PATH/TO/SaTScan --threads 2",
                     "SaTScan's batch binary (" + _satscan_builds(d) + ") on the same machine, same threads, "
                     "all replicates")
            + list_table(["problem", "replicates", "hphawkes_py (s)", "SaTScan (s)", "SaTScan / ours",
                          "top LLR (ours / SaTScan)"], rows))


def scan_spacetime() -> list[str]:
    d = _load("scan_spacetime.json")
    if d is None:
        return missing("scan_spacetime.json", "run ``benchmarks/bench_scan_spacetime.py --satscan PATH``.")
    labels = {"nycfever_prospective_999": "space-time permutation, NYCfever (SaTScan's sample), prospective",
              "synthetic_retrospective_999": "space-time permutation, {L} locations x {T} days, {C:,} cases"}
    rows = []
    for key, p in d["problems"].items():
        rows.append([labels.get(key, key).format(**p)] + _versus_satscan(p["seconds"], p["top_llr"], p))
    return (preamble(machine_of(d), "python benchmarks/bench_scan_spacetime.py --satscan PATH/TO/SaTScan --threads 2",
                     "SaTScan's batch binary (" + _satscan_builds(d) + ") on the same machine, same threads, "
                     "999 permutations")
            + list_table(["problem", "hphawkes_py (s)", "SaTScan (s)", "SaTScan / ours",
                          "top LLR (ours / SaTScan)"], rows))


def scan_regimes(name="scan_regimes.json", options="") -> list[str]:
    d = _load(name)
    if d is None:
        return missing(name, f"run ``benchmarks/bench_scan_regimes.py --satscan PATH{options}``.")
    rows = []
    for key, p in d["problems"].items():
        run = p.get("pruned") or p.get("day_bounds") or p  # space-time rows: the pruned loop's run
        size = (f"{p['L']:,} locations x {p['T']} days, {p['C']:,} cases" if "T" in p
                else f"{p['L']:,} locations, {p['persons']:,} persons, {p['cases']:,} cases")
        load = run.get("loadavg")
        rows.append([key.replace("_", " "), size, f"{p['replicates']:,}"]
                    + _versus_satscan(run["seconds"], run["top_llr"], p) + [_s(load[0][0], 2) if load else NA])
    build = d.get("satscan_build", "unrecorded")
    return (preamble(machine_of(d), "python benchmarks/bench_scan_regimes.py --satscan PATH/TO/SaTScan --threads 2"
                     + options,
                     "SaTScan's batch binary (benchmarks/peers/build_satscan.sh, " + build
                     + ") on the same machine, same threads, all replicates, run right after ours")
            + list_table(["regime", "data", "replicates", "hphawkes_py (s)", "SaTScan (s)", "SaTScan / ours",
                          "top LLR (ours / SaTScan)", "load (1 min)"], rows))


def scan_samples() -> list[str]:
    d = _load("scan_samples.json")
    if d is None:
        return missing("scan_samples.json", "run ``benchmarks/bench_scan_samples.py --satscan PATH``.")
    rows = []
    for key, p in d["problems"].items():
        rows.append([key] + _versus_satscan(p["seconds"], p["top_llr"], p))
    return (preamble(machine_of(d), "python benchmarks/bench_scan_samples.py --satscan PATH/TO/SaTScan --threads 2",
                     "SaTScan's batch binary (" + _satscan_builds(d) + ") on the same machine, same threads, all "
                     "999 replicates, its parameter files unchanged")
            + list_table(["SaTScan's sample analysis", "hphawkes_py (s)", "SaTScan (s)", "SaTScan / ours",
                          "top LLR (ours / SaTScan)"], rows))


def scan_poisson_kernels() -> list[str]:
    d = _load("scan_poisson_shared_kernel.json")
    if d is None:
        return missing("scan_poisson_shared_kernel.json", "run ``benchmarks/bench_scan_poisson_kernels.py``.")
    rows = [[r["name"], f"{r['replicates']:,}", f"{r['entries']:,}", _s(r["seconds_poisson_kernel"]),
             _s(r["seconds_shared_kernel"]), f"{r['speedup_shared']:.2f}x", r["default"]] for r in d["rows"]]
    return (preamble(machine_of(d), "python benchmarks/bench_scan_poisson_kernels.py --threads 2",
                     "the other pruned kernel, same null replicates, same run (maxima equal); the default takes the "
                     f"shared kernel from {d['threshold_entries']:,} window entries")
            + list_table(["problem", "replicates", "window entries", "Poisson kernel (s)", "shared kernel (s)",
                          "Poisson / shared", "default"], rows))


def scan_normal_space_time() -> list[str]:
    return _satscan_rows("scan_normal_space_time.json", "benchmarks/bench_scan_normal_space_time.py",
                         "problem (locations x observations x days)")


def scan_categorical_space_time() -> list[str]:
    return _satscan_rows("scan_categorical_space_time.json", "benchmarks/bench_scan_categorical_space_time.py",
                         "problem (locations x cases x days)")


def scan_categorical() -> list[str]:
    return _satscan_rows("scan_categorical.json", "benchmarks/bench_scan_categorical.py", "problem (locations x cases)")


def scan_isotonic() -> list[str]:
    return _satscan_rows("scan_isotonic.json", "benchmarks/bench_scan_isotonic.py", "problem")


def _satscan_rows(name: str, script: str, first: str) -> list[str]:
    """The table of a benchmark beside SaTScan that runs the parameter file SaTScan runs (``name``, by ``script``)."""
    d = _load(name)
    if d is None:
        return missing(name, f"run ``{script}``.")
    rows = [[r["name"], f"{r['centres']:,}", _s(r["seconds"]), _s(r["satscan_seconds"]),
             f"{r['speedup_vs_satscan']:.1f}x", f"{r['top_llr']:.6f}"] for r in d["rows"]]
    return (preamble(machine_of(d), d["command"], f"SaTScan 10.3.2 ({d['satscan_build']}), same data, same threads, "
                                                  "one run; ours the median of 3 warm runs")
            + list_table([first, "centres", "hp.scan (s)", "SaTScan (s)", "SaTScan / hp.scan", "top LLR (both)"],
                         rows))


def scan_time_stratified() -> list[str]:
    return scan_regimes("scan_time_stratified.json", " --only spacetime_poisson_stratified spacetime_poisson --out "
                                                     "benchmarks/results/scan_time_stratified.json")


def scan_scaling() -> list[str]:
    d = _load("scan.json")
    if d is None:
        return missing("scan.json", "run ``benchmarks/bench_scan.py``.")
    rows = [[r["benchmark"].replace("_", " "), f"{r.get('locations', 0):,}", f"{r.get('replicates', 0):,}",
             _s(r.get("seconds", r.get("pruned_seconds"))), _s(r.get("loadavg_1min"), 2)]
            for r in d["results"]]
    note = d.get("meta", {}).get("note")
    return (preamble(machine_of(d), d.get("meta", {}).get("command", "python benchmarks/bench_scan.py"),
                     "none (the engine's own scaling; the pruned Monte Carlo beside the exhaustive one)")
            + ([_sentence(note), ""] if note else [])
            + list_table(["benchmark", "locations", "replicates", "seconds", "load (1 min)"], rows))


def kde_paper() -> list[str]:
    d = _load("kde.json")
    if d is None:
        return missing("kde.json", "run ``benchmarks/bench_kde.py sim ebird``.")
    rows = []
    for key, r in d.items():
        if "seconds_search" not in r:
            continue
        paper = r.get("paper_seconds", {})
        where = r.get("device") or f"CPU, {r['threads']} threads"
        rows.append([f"{r['points']} on {r['window']} (n = {r['n']:,})", where, _s(r["seconds_search"]),
                     _s(r["seconds_surface"]), str(r["likelihood_evaluations"]), f"{r['h']:.6g}",
                     f"{r['alpha']:.4g}", _s(paper.get("one_core")), _s(paper.get("32_cores")), _s(paper.get("gpu"))])
    first = next(iter(d.values()))
    return (preamble(machine_of(first) + " (GPU rows: the device named in the row)",
                     "python benchmarks/bench_kde.py sim ebird --threads 2",
                     "Zhang, Zhu & Huang (2017), Tables 1-3 (their hardware: one core, 32 cores, GPU)")
            + list_table(["problem", "where", "search (s)", "surface (s)", "evaluations", "h", "alpha",
                          "paper 1 core (s)", "paper 32 cores (s)", "paper GPU (s)"], rows))


def kde_relrisk() -> list[str]:
    d = _load("kde.json")
    rows = []
    for key, r in (d or {}).items():
        if "seconds_fixed" in r:
            rows.append([f"chorley, {r['cases']} cases / {r['controls']} controls, {r['n_replicates']} relabellings",
                         r.get("device") or f"CPU, {r['threads']} threads", _s(r["seconds_fixed"]),
                         _s(r["seconds_adaptive"])])
    if not rows:
        return missing("kde.json", "run ``benchmarks/bench_kde.py chorley``.")
    return (preamble("as above", "python benchmarks/bench_kde.py chorley --threads 2",
                     "the issue's goal (10 s on 2 cores); sparr's ``risk`` and ``tolerance`` beside ours "
                     "are timed in the next table")
            + list_table(["problem", "where", "fixed bandwidth (s)", "adaptive (s)"], rows))


def kde_sparr() -> list[str]:
    d = _load("kde_sparr.json")
    if d is None:
        return missing("kde_sparr.json", "run ``benchmarks/bench_kde_sparr.py`` (needs R's sparr).")
    peer = d["peer"]
    dens = []
    for r in d["density"].values():
        a, t = r["agreement"], r["time"]
        dens.append([r["data"], f"{r['h']:g}", f"{a['sparr_edge_diggle']['max_rel_diff']:.1e}",
                     f"{a['sparr_edge_diggle']['interior_max_rel_diff']:.1e}",
                     f"{a['snapped_sparr_edge_diggle']['max_rel_diff']:.1e}", _s(t["sparr"]["best_wall_s"]),
                     _s(t["hphawkes_py"]["best_wall_s"]), _s(t["hphawkes_py_cutoff3"]["best_wall_s"]),
                     _ratio(t["sparr"]["best_wall_s"], t["hphawkes_py"]["best_wall_s"])])
    rr = d["relative_risk"]["chorley"]
    a, t = rr["agreement"], rr["time"]
    threads = d["machine"].get("threads")
    cores = next((k for k in t if k.startswith("sparr_monte_carlo_") and not k.endswith("_1core")), None)
    risk = [["fixed bandwidth: log relative risk + asymptotic p-values (pooled reference density)",
             _s(t["sparr_asymptotic"]["best_wall_s"]),
             _s(t["hphawkes_py_asymptotic"]["best_wall_s"]),
             _ratio(t["sparr_asymptotic"]["best_wall_s"], t["hphawkes_py_asymptotic"]["best_wall_s"]),
             f"{a['asymptotic_reference_pooled']['p_max_abs_diff']:.1e} "
             f"(snapped {a['asymptotic_reference_pooled_snapped']['p_max_abs_diff']:.0e})",
             f"{a['asymptotic_reference_pooled']['cells_classified_differently_at_0.05']} "
             f"(snapped {a['asymptotic_reference_pooled_snapped']['cells_classified_differently_at_0.05']})"],
            ["sparr ``risk(tolerate = TRUE)``: the controls' density as reference (a different choice)",
             _s(t["sparr_risk_default"]["best_wall_s"]), NA, NA,
             f"{a['asymptotic_sparr_risk_default_reference_controls']['p_max_abs_diff']:.1e}",
             str(a["asymptotic_sparr_risk_default_reference_controls"]["cells_classified_differently_at_0.05"])],
            [f"Monte Carlo p-values, sparr on one core", _s(t["sparr_monte_carlo_1core"]["best_wall_s"]),
             _s(t["hphawkes_py_monte_carlo"]["best_wall_s"]),
             _ratio(t["sparr_monte_carlo_1core"]["best_wall_s"], t["hphawkes_py_monte_carlo"]["best_wall_s"]),
             f"{a['monte_carlo']['p_mean_abs_diff']:.2f} (mean; random relabellings)",
             str(a["monte_carlo"]["cells_classified_differently_at_0.05"])]]
    if cores:
        n_cores = cores.rsplit("_", 1)[1].replace("cores", "")
        risk.append([f"Monte Carlo p-values, sparr ``parallelise = {n_cores}``", _s(t[cores]["best_wall_s"]),
                     _s(t["hphawkes_py_monte_carlo"]["best_wall_s"]),
                     _ratio(t[cores]["best_wall_s"], t["hphawkes_py_monte_carlo"]["best_wall_s"]), NA, NA])
    ada = d["relative_risk"].get("chorley_adaptive")
    if ada:
        aa, ta = ada["agreement"], ada["time"]
        risk.append(["adaptive (Abramson's bandwidths from the pooled pilot) log relative risk surface: bandwidths "
                     f"differ by at most {aa['bandwidths_max_rel_diff']:.1e} (snapped "
                     f"{aa['snapped_bandwidths_max_rel_diff']:.0e}), the surface by {aa['log_rr_max_abs_diff']:.1e} "
                     f"(snapped {aa['snapped_log_rr_max_abs_diff']:.0e})", _s(ta["sparr"]["best_wall_s"]),
                     _s(ta["hphawkes_py"]["best_wall_s"]),
                     _ratio(ta["sparr"]["best_wall_s"], ta["hphawkes_py"]["best_wall_s"]),
                     "not compared: different variance formulas", NA])
    return (preamble(machine_of(d), d["command"],
                     f"sparr {peer['sparr']} (spatstat {peer['spatstat']}, "
                     f"spatstat.explore {peer['spatstat.explore']}) "
                     f"on R {peer['R']}, Debian's ``r-cran-sparr``; spatstat's FFT on one thread",
                     d.get("measured"))
            + [_sentence(d["note"]), ""]
            + [f"Fixed-bandwidth Gaussian intensity with Diggle's edge correction at every inside cell: relative "
               "difference from sparr's ``bivariate.density(edge = \"diggle\")`` over all cells, over the cells "
               "more than 4 h from the window's outside, and with our points moved to their cells' centres as "
               "spatstat's FFT does (snapped); best wall seconds of fit + surface (ours on "
               f"{threads} threads; the cutoff-3 column is our default truncated kernel, not the same quantity):", ""]
            + list_table(["data", "h", "max rel. diff", "interior", "snapped", "sparr (s)", "ours (s)",
                          "ours, cutoff 3 (s)", "speed-up (sparr / ours)"], dens)
            + [f"Relative risk, {rr['data']}, h = {rr['h']:g} km; {rr['monte_carlo']}. Best wall seconds; the "
               "p-value columns compare the p-value surfaces (maximum absolute difference, and the cells on "
               "opposite sides of 0.05):", ""]
            + list_table(["surfaces", "sparr (s)", "ours (s)", "speed-up (sparr / ours)", "p-value difference",
                          "cells differing at 0.05"], risk))


def sccs_fit() -> list[str]:
    d = _load("sccs.json")
    if d is None:
        return missing("sccs.json", "run ``benchmarks/bench_sccs.py``.")
    paper = ((_load(GPU_REPORTS["h100"]) or {}).get("bench", {}).get("results", {}).get("sccs", {}).get("paper_s"))
    rows = []
    for section in ("fit", "fit_rerun"):
        for r in d.get(section, {}).get("runs", []):
            rows.append([f"Laplace MAP fit, {d['n_cases']:,} cases x {d['n_drugs']:,} drugs", str(r["threads"]),
                         _s(r["seconds"]), str(r["iterations"]), str(r["nonzero"]), _s(paper)])
    cv = d.get("cv")
    if cv:
        rows.append([f"10-fold cross-validation, grid {cv['grid_kind']!r}, same data", str(cv["threads"]),
                     _s(cv["seconds"]), f"{cv['refit_iterations']} (refit)", NA, NA])
    return (preamble(machine_of(d), d.get("command", "python benchmarks/bench_sccs.py"),
                     "Suchard et al. (2013): the published GPU fit of the same size (their hardware)")
            + list_table(["workload", "threads", "seconds", "CCD cycles", "non-zero", "paper (s)"], rows))


def hawkes_loglik() -> list[str]:
    d = _load("hawkes_loglik.json")
    if d is None:
        return missing("hawkes_loglik.json", "run ``benchmarks/bench_hawkes_loglik.py``.")
    paper = ((_load(GPU_REPORTS["h100"]) or {}).get("bench", {}).get("results", {}).get("hawkes", {})
             .get("paper_titan_v_s"))
    rows = [[f"exact log-likelihood, N = {r['N']:,} uniform events", str(r["threads"]), _s(r["wall_s"]),
             f"{r['ordered_pairs_per_s_per_core'] / 1e6:,.0f}", _s(paper)] for r in d.get("exact", [])]
    w = d.get("dc_windowed")
    all_threads = str(d.get("machine", {}).get("numba_threads", "all"))
    if w:
        rows.append([f"DC gunshots, N = {w['N']:,}: windowed (exact to {w['max_rel_lambda_diff_windowed_vs_exact']:.0e})",
                     str(w["threads"] or all_threads), _s(w["full_windowed_s"]), NA, NA])
        rows.append([f"DC gunshots, N = {w['N']:,}: every pair", str(w["threads"] or all_threads), _s(w["exact_s"]),
                     NA, NA])
        rows.append(["DC gunshots: one h/omega MCMC move (windowed)", str(w["threads"] or all_threads),
                     _s(w["h_omega_move_s"]), NA, NA])
    m = d.get("memory")
    if m:
        rows.append([f"windowed, N = {m['N']:,} (peak memory {m['peak_rss_mb']:.0f} MB)", all_threads, _s(m["wall_s"]),
                     NA, NA])
    return (preamble(machine_of(d), "python benchmarks/bench_hawkes_loglik.py",
                     "Holbrook et al. (2021): the exact likelihood on a Titan V GPU (their hardware)")
            + list_table(["workload", "threads", "seconds", "M pairs / s / core", "paper GPU (s)"], rows))


def hawkes_hphawkes() -> list[str]:
    d = _load("hawkes_hphawkes.json")
    if d is None:
        return missing("hawkes_hphawkes.json",
                       "the comparison with hpHawkes (suchard-group/hawkes built from source) has not been "
                       "recorded yet.")
    try:
        return _hawkes_hphawkes_tables(d)
    except (KeyError, TypeError):  # a layout this page does not know yet: every scalar figure
        pass
    rows = []

    def walk(o, prefix=""):
        if isinstance(o, dict):
            for k, v in o.items():
                if k in ("machine", "command", "peer", "note"):
                    continue
                walk(v, f"{prefix}{k} / " if prefix or k else "")
        elif isinstance(o, bool) or o is None:
            rows.append([prefix.rstrip(" /"), str(o)])
        elif isinstance(o, (int, float)):
            rows.append([prefix.rstrip(" /"), _s(o, 4)])
        elif isinstance(o, str) and len(o) < 80:
            rows.append([prefix.rstrip(" /"), o])

    walk({k: v for k, v in d.items()})
    return (preamble(machine_of(d), d.get("command", "see the result file"),
                     d.get("peer", "hpHawkes (suchard-group/hawkes) built from source, same DC data"))
            + ([d["note"], ""] if isinstance(d.get("note"), str) else [])
            + list_table(["figure", "value"], rows))


def hawkes_forecast() -> list[str]:
    d = _load("hawkes_forecast.json")
    if d is None:
        return missing("hawkes_forecast.json", "run ``benchmarks/bench_hawkes_forecast.py``.")
    st = d.get("settings", {})
    rows = []
    for background, summary in d.get("summary", {}).items():
        for key, label in (("hawkes_vs_background_only", "Hawkes vs background only"),
                           ("hawkes_vs_poisson", "Hawkes vs homogeneous Poisson"),
                           ("background_only_vs_poisson", "background only vs homogeneous Poisson")):
            r = summary.get(key)
            if r:
                rows.append([f"{label} (background: {background})", f"{r['pooled_nats_per_event']:.2f}",
                             f"{r['pooled_se']:.2f}", f"{r['origins_with_positive_gain']} of {r['origins']}",
                             f"{r['events']:,}"])
    return (preamble(f"CPU, {st.get('threads', '?')} thread(s) (CPU model not recorded in the result file)",
                     (d.get("command") or "benchmarks/bench_hawkes_forecast.py").strip(),
                     "the background-only model and a homogeneous Poisson process, scored on the same events")
            + [f"{st.get('origins')} forecast origins, {st.get('horizon_hours'):g} h ahead each, the model refitted "
               f"on each origin's past ({st.get('n_iter')} MH iterations, {st.get('n_draws')} posterior draws).", ""]
            + list_table(["comparison", "gain (nats / event)", "s.e.", "origins with a gain", "events"], rows))


def _hawkes_hphawkes_tables(d: dict) -> list[str]:
    peer = d["peer"]
    ll, lt, st = d["log_likelihood"], d["loglik_time"], d["sampler_time"]
    label = {"hpHawkes": "hpHawkes", "hphawkes_py_exact": "hphawkes_py, every pair (``exact=True``)",
             "hphawkes_py_windowed": "hphawkes_py, windowed (default)"}
    agree = [[label["hphawkes_py_exact"], f"{ll['hphawkes_py_exact']:.10f}", f"{ll['rel_diff_exact']:.1e}"],
             [label["hphawkes_py_windowed"], f"{ll['hphawkes_py_windowed']:.10f}", f"{ll['rel_diff_windowed']:.1e}"],
             [label["hpHawkes"], f"{ll['hpHawkes']:.10f}", NA]]
    times = [[label[k], _s(v["best_wall_s"]), _s(v["median_wall_s"]), _s(v["best_cpu_s"])] for k, v in lt.items()]
    hp_it = st["hpHawkes"]
    sampler = [[f"hpHawkes ``sampler()``: one iteration updates one parameter, full likelihood",
                _s(hp_it["wall_s_per_iteration"]), _s(hp_it["cpu_s_per_iteration"])]]
    for key in ("hphawkes_py_exact", "hphawkes_py_windowed"):
        if key in st:
            r = st[key]
            sampler.append([f"{label[key]}: one sweep updates all four parameters", _s(r["wall_s_per_sweep"]),
                            _s(r["cpu_s_per_sweep"])])
    data = d.get("data", {})
    return (preamble(machine_of(d), d["command"],
                     f"{peer['name']} ({peer['source']} at ``{peer['source_commit'][:12]}``, built from source "
                     f"by ``{d.get('build', 'benchmarks/peers/build_hphawkes.sh')}``; {peer['engine']})")
            + ([_sentence(d["note"]), ""] if isinstance(d.get("note"), str) else [])
            + [f"Log-likelihood of the {data.get('name', 'DC data')} ({data.get('events', 0):,} events) at "
               + ", ".join(f"{k} = {v:g}" for k, v in d["params"].items()) + ", and its relative difference "
               "from hpHawkes':", ""]
            + list_table(["engine", "log-likelihood", "relative difference"], agree)
            + ["Time of one full log-likelihood evaluation (seconds):", ""]
            + list_table(["engine", "best wall", "median wall", "best CPU (all threads)"], times)
            + [f"Time per sampler step (seconds); {peer['sampler']}:", ""]
            + list_table(["sampler step", "wall", "CPU (all threads)"], sampler))


def hawkes_mcmc() -> list[str]:
    d = _load("hawkes_mcmc.json")
    if d is None:
        return missing("hawkes_mcmc.json", "run ``benchmarks/bench_hawkes_mcmc.py``.")
    rows = [[f"one adaptive-MH sweep (4 moves), N = {r['events']:,}", str(r["threads"]),
             _s(r["chain"]["seconds_per_sweep"] * 1e3), "ms"] for r in d.get("runs", [])]
    for key in ("quick", "full"):
        r = d.get("reproduce_dc_gunshots", {}).get(key)
        if r:
            rows.append([f"``{r['command']}`` ({r['chains']} chains x {r['n_iter']:,}, whole command)", "2",
                         _s(r["wall_seconds_whole_command"]), "s"])
    s = _load("hawkes_scale.json")
    if s:
        rows.append([f"{s['chain_iters']:,}-sweep chain at N = {s['N']:,} (peak memory {s['peak_rss_mb']:.0f} MB)",
                     str(s["threads"]), _s(s["chain_s"]), "s"])
    return (preamble(machine_of(d, threads="1-2"),
                     "python benchmarks/bench_hawkes_mcmc.py --threads 1 2; hphawkes reproduce dc-gunshots [--full]; "
                     "python benchmarks/bench_hawkes_scale.py",
                     "Holbrook et al. (2021): about 4 hours for the full run on a Titan V GPU")
            + list_table(["workload", "threads", "time", "unit"], rows))


def mixture_gibbs() -> list[str]:
    d = _load("mixture.json")
    if d is None:
        return missing("mixture.json", "run ``benchmarks/bench_mixture.py``.")
    paper = d.get("paper_n1e5_100_iter_s", {})
    rows = []
    for r in d.get("gibbs", []) + d.get("bem", []):
        is_paper_size = r["n"] == 100_000 and r["method"] == "gibbs"
        rows.append([f"{r['method']}, n = {r['n']:,}, p = {r['p']}, k = {r['k']}", r.get("dtype", "float64"),
                     str(r["iterations"]), _s(r["seconds"]),
                     " / ".join(_s(paper.get(k)) for k in ("cpu_1_core", "cpu_8_cores", "gtx285"))
                     if is_paper_size else NA])
    return (preamble(machine_of(d), "python benchmarks/bench_mixture.py --n 10000 100000 --skip-flow --skip-kernels",
                     "Suchard et al. (2010), n = 1e5, 100 iterations: one core / 8 cores / GTX 285 (their hardware)")
            + list_table(["fit", "dtype", "iterations", "seconds", "paper (s)"], rows))


def mixture_sklearn() -> list[str]:
    d = _load("mixture_goal.json")
    if d is None:
        return missing("mixture_goal.json", "run ``benchmarks/bench_mixture_goal.py``.")
    rows = [[r["case"], r["fit"], _s(r.get("seconds")), f"{r['heldout_minus_truth']:+.4f}",
             NA if r.get("clusters") is None else str(r["clusters"]),
             NA if r.get("components_over_5pct") is None else str(r["components_over_5pct"]),
             str(r["true_components"])] for r in d["rows"]]
    return (preamble(machine_of(d), "python benchmarks/bench_mixture_goal.py --cases 3c 10d --seed 0",
                     "scikit-learn's ``BayesianGaussianMixture`` (Dirichlet-process prior, 32 components)")
            + ["Held-out: mean log density of 20,000 fresh points minus that of the true density "
               "(nats per point; 0 is perfect).", ""]
            + list_table(["case", "fit", "seconds", "held-out vs truth", "clusters", "components > 5%",
                          "true components"], rows))


# ----------------------------------------------------------------------------- GPU tables
GPU_ROWS = [  # (workload key, label, paper's GPU, how to read the GPU and CPU seconds)
    ("hawkes", "Hawkes exact log-likelihood, N = 75,000", ("Titan V", "paper_titan_v_s"),
     lambda r: (r["gpu_float64"]["seconds"], r.get("cpu_float64", {}).get("seconds"))),
    ("hawkes-dc", "DC analysis, 4 x 10,000 MH (1 chain x 1,000 sweeps timed, x 40)", ("Titan V, about 4 h", None),
     lambda r: (r["gpu"]["mcmc"]["extrapolated_4x10000_s"], None)),
    ("kde", "adaptive KDE sim50000 on maskSim160000, search + surface", ("GTX 480", "paper_gtx480_s"),
     lambda r: (r["gpu"]["total_s"], r.get("cpu", {}).get("total_s"))),
    ("scan", "scan, 5,000 locations x 999 replicates", ("goal: 2x SaTScan", None),
     lambda r: (r["gpu"]["seconds"], r.get("cpu", {}).get("seconds"))),
    ("mixture", "mixture n = 1e5, p = 14, k = 256, 100 Gibbs sweeps", ("GTX 285", "paper_gtx285_s"),
     lambda r: (r["gpu"].get("sweeps_s", r["gpu"]["seconds"]),
                r.get("cpu", {}).get("sweeps_s", r.get("cpu", {}).get("seconds")))),
    ("sccs", "SCCS Laplace fit, 1M cases x 1,000 drugs", ("2011 GPU", "paper_s"),
     lambda r: (r["gpu"]["seconds"], r.get("cpu", {}).get("seconds"))),
]


def mixture_cytometry() -> list[str]:
    d = _load("mixture_cytometry_10x1000000.json")
    if d is None:
        return missing("mixture_cytometry_10x1000000.json",
                       "run ``benchmarks/bench_mixture_cytometry.py --events 1000000``.")
    data = d["data"]
    rows = []
    for r in d["rows"]:
        if "error" in r:
            rows.append([r["method"], NA, NA, NA, NA, f"failed: {r['error']}"])
            continue
        rows.append([r["method"], _s(r["fit_s"]), _s(r.get("s_per_sweep")), f"{r['peak_rss_mib']:,.0f}",
                     f"{r['ari']:.3f}", _ratio(r["fit_s"], d["rows"][0].get("fit_s")) if r is not d["rows"][0] else NA])
    what = (f"{data['samples']} samples x {data['events_per_sample']:,} events x {data['channels']} channels, "
            f"k = {data['k']}, {data['sweeps']} sweeps")
    return (preamble(machine_of(d), f"python benchmarks/bench_mixture_cytometry.py --events "
                     f"{data['events_per_sample']} --methods hdp flowsom",
                     "a FlowSOM-like baseline (MiniSom 10 x 10 and ward metaclustering) in the same run")
            + [_sentence(what), ""]
            + list_table(["method", "fit (s)", "s per sweep", "peak RSS (MiB)", "ARI vs truth", "time / HDP"], rows))


def gpu_rows(report: dict) -> list[list]:
    """(label, paper, goal, GPU s, CPU s) per workload; the DC row is the end-to-end ``--full`` run
    when the report has one."""
    res = report["bench"]["results"]
    dc = report.get("reproduce", {}).get("dc-gunshots", {})
    dc_full = dc.get("exit") == 0 and "--full" in dc.get("command", "")
    out = []
    for key, label, (device, paper_key), read in GPU_ROWS:
        r = res.get(key)
        paper = f"{device} {_s((r or {}).get(paper_key))} s" if paper_key and (r or {}).get(paper_key) else device
        goal = (r or {}).get("goal_s", (r or {}).get("goal_full_analysis_s"))
        if not r or not r.get("ok"):
            out.append([label, paper, goal, None, None])
            continue
        g, c = read(r)
        if key == "hawkes-dc" and dc_full:
            label, g = "DC full analysis, 4 x 10,000 MH (``reproduce dc-gunshots --full``, end to end)", dc["seconds"]
        out.append([label, paper, goal, g, c])
    return out


def gpu_table(which: str) -> list[str]:
    name = GPU_REPORTS[which]
    rep = _load(name)
    if rep is None:
        return missing(name, "run ``bash scripts/gpu_check.sh report.json`` on a GPU machine.")
    info = rep.get("info", {})
    gpu = info.get("gpu_device", "GPU").replace("NVIDIA ", "")
    short = gpu.split()[0]
    cores = info.get("cpu_count", "?")
    dc = rep.get("reproduce", {}).get("dc-gunshots", {})
    flags = " --dc-full" if "--full" in dc.get("command", "") else ""
    machine = (f"one NVIDIA {gpu} (driver {rep.get('nvidia_smi', '').split(', ', 1)[-1]}; {info.get('gpu_api')} "
               f"{info.get('gpu_cupy', info.get('pycuda', ''))}, compiler {info.get('gpu_compiler')}), "
               f"{cores}-core host; report ``benchmarks/results/{name}``")
    runs = rep["bench"].get("results", {}).get("kde", {}).get("gpu", {}).get("runs_s")
    rows = []
    for label, paper, goal, g, c in gpu_rows(rep):
        met = NA if g is None or goal is None else ("yes" if g <= goal else "no")
        rows.append([label, paper, f"<= {goal:g} s" if goal is not None else NA,
                     "not measured" if g is None else f"{_s(g)} s", NA if c is None else f"{_s(c)} s", met])
    return (preamble(machine, f"bash scripts/gpu_check.sh report.json --wheels DIR{flags}",
                     "each paper's published GPU time (their hardware) and the CPU engine on the same host",
                     f"{rep.get('started', '?')[:10]}, float64, "
                     + ("best of 3 runs per GPU row" if runs and len(runs) > 1 else "one run per row"))
            + list_table(["workload", "paper's GPU", "goal", short, f"CPU ({cores} cores)", "goal met"], rows))


def gpu_tests(which: str) -> list[str]:
    rep = _load(GPU_REPORTS[which]) or {}
    tests = rep.get("tests", [])
    if not tests:
        return ["This report ran the analyses and benchmarks only (``--skip tests``).", ""]
    counts: dict[str, int] = {}
    for t in tests:
        counts[t["status"]] = counts.get(t["status"], 0) + 1
    analyses = rep.get("reproduce", {})
    ok = sum(1 for a in analyses.values() if a.get("exit") == 0)
    return [f"GPU engine tests in this report: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
            + f"; ``reproduce`` analyses on the GPU: {ok} of {len(analyses)} ran to completion.", ""]


# ----------------------------------------------------------------------------- summary (README)
def summary_rows() -> list[list[str]]:
    """One row per method: 2-core CPU, the peer on the same 2 cores, the H100, the paper."""
    h100 = _load(GPU_REPORTS["h100"]) or {}
    gpu = {r[0]: r[3] for r in gpu_rows(h100)} if h100 else {}
    gpu_paper = {r[0]: r[1] for r in gpu_rows(h100)} if h100 else {}
    labels = [r[1] for r in GPU_ROWS]
    rows = []
    ll = _load("hawkes_loglik.json") or {}
    two = next((r for r in ll.get("exact", []) if r["threads"] == 2), None)
    rows.append(["Hawkes exact log-likelihood, N = 75,000", _s(two and two["wall_s"]), NA, _s(gpu.get(labels[0])),
                 gpu_paper.get(labels[0], NA)])
    hp = (_load("hawkes_hphawkes.json") or {}).get("loglik_time", {})
    if "hpHawkes" in hp and "hphawkes_py_exact" in hp:
        n = (_load("hawkes_hphawkes.json") or {}).get("data", {}).get("events", 0)
        rows.append([f"Hawkes log-likelihood, DC data (N = {n:,}): every pair / windowed",
                     f"{_s(hp['hphawkes_py_exact']['best_wall_s'])} / {_s(hp['hphawkes_py_windowed']['best_wall_s'])}",
                     f"hpHawkes {_s(hp['hpHawkes']['best_wall_s'])} s", NA, NA])
    kde = (_load("kde.json") or {}).get("sim50000_adaptive_cpu_2t")
    rows.append(["adaptive KDE, 50,000 points, search + surface",
                 _s(kde and kde["seconds_search"] + kde["seconds_surface"]), NA, _s(gpu.get(labels[2])),
                 f"1 core {_s(kde['paper_seconds']['one_core'])} s, GPU {_s(kde['paper_seconds']['gpu'])} s" if kde else NA])
    sat = (_load("scan_satscan.json") or {}).get("problems", {}).get("bernoulli_synthetic")
    rows.append(["Bernoulli scan, 5,000 locations x 999 replicates", _s(sat and sat["seconds"]),
                 f"SaTScan {_s(sat['satscan']['seconds'])} s" if sat else NA, _s(gpu.get(labels[3])), NA])
    mix = _load("mixture.json") or {}
    m64 = next((r for r in mix.get("gibbs", []) if r["n"] == 100_000 and r.get("dtype", "float64") == "float64"), None)
    rows.append(["DP mixture, n = 1e5, p = 14, k = 256, 100 Gibbs sweeps", _s(m64 and m64["seconds"]), NA,
                 _s(gpu.get(labels[4])), gpu_paper.get(labels[4], NA)])
    sc = _load("sccs.json") or {}
    runs = [r for r in sc.get("fit", {}).get("runs", []) + sc.get("fit_rerun", {}).get("runs", []) if r["threads"] == 2]
    rows.append(["SCCS Laplace fit, 1M cases x 1,000 drugs", _s(min(r["seconds"] for r in runs) if runs else None),
                 NA, _s(gpu.get(labels[5])), gpu_paper.get(labels[5], NA)])
    return rows


SUMMARY_HEADER = ["workload (seconds)", "2-core CPU", "peer, same 2 cores", "H100", "paper (its hardware)"]


def summary_rst() -> list[str]:
    return list_table(SUMMARY_HEADER, summary_rows())


def summary_markdown() -> str:
    rows = [SUMMARY_HEADER] + summary_rows()
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
    out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
    return "\n".join(out)


# ----------------------------------------------------------------------------- reproduce outputs
def reproduce_output(analysis: str) -> list[str]:
    """What ``hphawkes reproduce ANALYSIS`` printed in a full GPU check (the same numbers
    as on the CPU: the engines agree to rounding), progress bars and temporary paths left out."""
    # the latest check, or the one that ran the paper's full analysis (``--full``) when only one did
    name = GPU_REPORTS["h200"]
    for candidate in (GPU_REPORTS["h200"], GPU_REPORTS["h100"]):
        run = ((_load(candidate) or {}).get("reproduce", {}).get(analysis) or {})
        if "--full" in run.get("command", "") and run.get("exit") == 0:
            name = candidate
            break
    rep = _load(name) or {}
    r = rep.get("reproduce", {}).get(analysis)
    if not r:
        return missing(name, f"no ``reproduce {analysis}`` run in it.")
    lines = []
    for line in r["tail"].replace("\r", "\n").splitlines():
        fragment = line.strip().endswith("]") and len(line.strip()) < 12  # the tail of a progress bar
        if fragment or "it/s" in line or "Warning" in line or "print(" in line or "/tmp/" in line or not line.strip():
            continue
        lines.append(line.rstrip())
    cmd = r["command"].replace("-m hphawkes_py", "hphawkes").split(" --out")[0].replace(" --no-progress", "")
    return ([f"Output of ``{cmd}`` (from ``benchmarks/results/{name}``, {rep.get('started', '?')[:10]}; "
             "the CPU engine prints the same figures):", "", ".. code-block:: text", ""]
            + [f"   {line}" for line in lines[-45:]] + [""])


TABLES = {
    "summary": summary_rst,
    "scan-satscan": scan_satscan, "scan-spacetime": scan_spacetime, "scan-scaling": scan_scaling,
    "scan-regimes": scan_regimes, "scan-time-stratified": scan_time_stratified, "scan-samples": scan_samples,
    "scan-poisson-kernels": scan_poisson_kernels, "scan-normal-space-time": scan_normal_space_time,
    "scan-categorical-space-time": scan_categorical_space_time,
    "scan-isotonic": scan_isotonic,
    "scan-categorical": scan_categorical,
    "mixture-cytometry": mixture_cytometry,
    "kde-paper": kde_paper, "kde-relrisk": kde_relrisk, "kde-sparr": kde_sparr, "sccs": sccs_fit,
    "hawkes-loglik": hawkes_loglik, "hawkes-mcmc": hawkes_mcmc, "hawkes-forecast": hawkes_forecast, "hawkes-hphawkes": hawkes_hphawkes,
    "mixture-gibbs": mixture_gibbs, "mixture-sklearn": mixture_sklearn,
    "gpu-h100": lambda: gpu_table("h100"), "gpu-h200": lambda: gpu_table("h200"),
    "gpu-h100-tests": lambda: gpu_tests("h100"), "gpu-h200-tests": lambda: gpu_tests("h200"),
}
for _analysis in ("dc-gunshots", "kde-redwood", "kde-sim50000", "sccs-oxford", "scan-grave", "scan-ny",
                  "scan-nycfever", "mixture-faithful"):
    TABLES[f"reproduce-{_analysis}"] = (lambda a: (lambda: reproduce_output(a)))(_analysis)


# ----------------------------------------------------------------------------- Sphinx directive
def setup(app):
    from docutils.parsers.rst import Directive
    from docutils.statemachine import StringList
    from docutils import nodes

    class PerfTable(Directive):
        required_arguments = 1
        has_content = False

        def run(self):
            name = self.arguments[0]
            if name not in TABLES:
                raise self.error(f"unknown perf-table {name!r}; known: {', '.join(TABLES)}")
            env = self.state.document.settings.env
            for f in RESULTS.glob("*.json"):  # rebuild the page when a result file changes
                env.note_dependency(str(f))
            node = nodes.container()
            self.state.nested_parse(StringList(TABLES[name](), source=f"perf-table:{name}"), self.content_offset, node)
            return node.children

    app.add_directive("perf-table", PerfTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    if sys.argv[1:] == ["--readme"]:
        print(summary_markdown())
    else:
        for name in sys.argv[1:] or TABLES:
            print(f"== {name}")
            print("\n".join(TABLES[name]()))
