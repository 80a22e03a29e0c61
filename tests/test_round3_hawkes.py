"""Issue 34 (round 3), Hawkes: thread-count determinism of the CPU engine, the forecast score of an
empty window and of a lookback holding no event, ``mcmc``'s public signature, and the hawkes CLI's
output checks (before the work, naming the option that gave the path)."""
from __future__ import annotations

import inspect
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import hphawkes_py as hp
from hphawkes_py.cli import main as cli_main

PARAMS = dict(mu0=0.5, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)


def _events(duration=50.0):
    return hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=duration, seed=1)


# ------------------------------------------------------------------ thread-count determinism
_THREADS_SCRIPT = textwrap.dedent("""
    import numpy as np
    import hphawkes_py as hp
    from hphawkes_py.hawkes import log_likelihood, self_excitation_probabilities

    x, t = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=80.0, seed=1)
    x, t = x[:300], t[:300]
    base = dict(mu0=0.3, tau_x=0.5, tau_t=5.0, theta=0.5, omega=2.0, h=0.1)
    kernels = [("exponential", {}), (("power-law", 1.7), {}), ("exp2", dict(omega2=0.3, w=0.6))]
    bad = []
    for kernel, extra in kernels:
        for spatial in ("gaussian", ("power-law", 2.0)):
            for exact in (True, False):
                for dtype in (np.float64, np.float32):
                    kw = dict(exact=exact, kernel=kernel, spatial_kernel=spatial, dtype=dtype, backend="cpu")
                    p = dict(base, **extra)
                    # 3 threads first: the thread pool then really runs 3 workers
                    ll = [log_likelihood(x, t, p, threads=k, **kw) for k in (3, 2, 1)]
                    pi = [self_excitation_probabilities(x, t, p, threads=k, **kw) for k in (3, 2, 1)]
                    case = (kernel, spatial, exact, np.dtype(dtype).name)
                    if not (ll[0] == ll[1] == ll[2]):
                        bad.append(("log_likelihood", case, [float(v) for v in ll]))
                    for k, v in zip((2, 1), pi[1:]):
                        if not np.array_equal(pi[0], v):
                            bad.append(("self_excitation_probabilities", case, k, int((pi[0] != v).sum())))
    post = hp.hawkes.mcmc(x, t, n_iter=30, burn_in=10, chains=1, fixed={"tau_x": 0.5, "tau_t": 5.0}, seed=1,
                          progress=False, backend="cpu", threads=3)
    se = []
    for k in (3, 2, 1):
        post.engine_factory = post.engine_factory.replace(threads=k)
        se.append(hp.hawkes.self_excitation(post, n_draws=10, seed=1, progress=False).to_numpy())
    if not (np.array_equal(se[0], se[1]) and np.array_equal(se[0], se[2])):
        bad.append(("self_excitation", [int((se[0] != v).sum()) for v in se[1:]]))
    print("BAD", bad) if bad else print("OK")
""")


def test_cpu_engine_results_are_bit_identical_for_1_2_and_3_threads():
    # Numba starts with as many threads as NUMBA_NUM_THREADS allows; 3 must be allowed for threads=3
    env = dict(os.environ, NUMBA_NUM_THREADS="3")
    r = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().splitlines()[-1] == "OK", r.stdout[-3000:]


def test_scatter_chunks_depend_on_the_number_of_events_only():
    from hphawkes_py.hawkes.cpu import scatter_chunks

    assert [scatter_chunks(n) for n in (1, 300, 349_525, 1_000_000, 10**9)] == [48, 48, 48, 16, 2]


# ------------------------------------------------------------------ forecast_score
def _empty_window(t):
    """(origin, horizon) of a window with no events: the widest gap between events of the second half."""
    ts = np.sort(t)
    half = ts.size // 2
    gaps = np.diff(ts[half:])
    i = half + int(np.argmax(gaps))
    return float(ts[i]) + 0.25 * float(gaps.max()), 0.5 * float(gaps.max())


def test_forecast_score_of_an_empty_window_reports_the_gain_minus_the_count_difference():
    x, t = _events()
    origin, horizon = _empty_window(t)
    sc = hp.hawkes.forecast_score(hp.hawkes.HawkesParams(**PARAMS), x, t, origin=origin, horizon=horizon,
                                  backend="cpu")
    assert sc.n_events == 0
    # no events: each log score is minus its expected count, and so is the gain
    assert sc.log_score == pytest.approx(-sc.expected_count, rel=1e-12)
    assert math.isfinite(sc.information_gain)
    assert sc.information_gain == pytest.approx(sc.background_expected_count - sc.expected_count, rel=1e-12)
    assert sc.information_gain == sc.log_score - sc.background_log_score
    assert sc.information_gain_vs_poisson == sc.log_score - sc.poisson_log_score
    assert sc.information_gain > 0  # the trigger adds expected events that did not come
    assert sc.to_dict()["information_gain"] == sc.information_gain
    summary = sc.summary()
    assert np.isfinite(summary["per_event"].to_numpy()).all()
    assert summary.loc["background", "hawkes_gain_per_event"] == sc.information_gain


def test_forecast_score_gain_per_event_unchanged_with_events():
    x, t = _events()
    sc = hp.hawkes.forecast_score(hp.hawkes.HawkesParams(**PARAMS), x, t, origin=40.0, horizon=8.0, backend="cpu")
    assert sc.n_events == 17
    assert sc.information_gain == (sc.log_score - sc.background_log_score) / 17


@pytest.mark.parametrize("lookback", [1e-9, 1e-3])
def test_forecast_score_refuses_a_poisson_lookback_holding_no_event(lookback):
    x, t = _events()
    ts = np.sort(t)
    last = float(ts[np.searchsorted(ts, 40.0, side="right") - 1])
    assert 40.0 - last > 1e-3  # the lookbacks hold no event
    with pytest.raises(ValueError, match=r"poisson_lookback must be > origin - t_last = .*got " + f"{lookback!r}"):
        hp.hawkes.forecast_score(hp.hawkes.HawkesParams(**PARAMS), x, t, origin=40.0, horizon=8.0, backend="cpu",
                                 poisson_lookback=lookback)
    # just past the last event: one event, a finite rate and score
    ok = hp.hawkes.forecast_score(hp.hawkes.HawkesParams(**PARAMS), x, t, origin=40.0, horizon=8.0, backend="cpu",
                                  poisson_lookback=(40.0 - last) * 1.01)
    assert ok.poisson_rate > 0 and math.isfinite(ok.information_gain_vs_poisson)


# ------------------------------------------------------------------ mcmc's signature
def test_mcmc_has_no_private_parameter_and_the_debug_run_has_its_own_route():
    from hphawkes_py.hawkes.sampler import _mcmc_debug

    params = inspect.signature(hp.hawkes.mcmc).parameters
    assert not [n for n in params if n.startswith("_")], list(params)
    with pytest.raises(TypeError, match="_debug"):
        hp.hawkes.mcmc(*_events(20.0), n_iter=2, burn_in=0, chains=1, fixed={"tau_x": 0.5, "tau_t": 5.0},
                       progress=False, backend="cpu", _debug=True)
    x, t = _events(20.0)
    kw = dict(n_iter=3, burn_in=1, chains=1, fixed={"tau_x": 0.5, "tau_t": 5.0}, seed=1, progress=False,
              backend="cpu")
    post = _mcmc_debug(x, t, **kw)
    assert len(post._debug[0]) == 12
    for _, _, cached, fresh in post._debug[0]:
        assert cached == pytest.approx(fresh, rel=1e-12)
    plain = hp.hawkes.mcmc(x, t, **kw)
    assert plain._debug == [[]]  # the debug setting does not leak into later runs
    for n in post.draws:
        assert np.array_equal(post.draws[n], plain.draws[n])


# ------------------------------------------------------------------ the hawkes CLI's outputs
needs_proc = pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc (no files can be made)")


@pytest.fixture
def events_csv(tmp_path):
    csv = tmp_path / "events.csv"
    assert cli_main(["hawkes", "simulate", "--mu", "0.5", "--theta", "0.5", "--omega", "2", "--h", "0.1",
                     "--region", "2", "--duration", "20", "--seed", "1", "--out", str(csv)]) == 0
    return csv


@needs_proc
def test_hawkes_mcmc_refuses_an_unwritable_out_before_the_mcmc(events_csv, monkeypatch, capsys):
    import hphawkes_py.hawkes.sampler as sampler

    calls = []
    monkeypatch.setattr(sampler, "mcmc", lambda *a, **k: calls.append(1))
    rc = cli_main(["hawkes", "mcmc", str(events_csv), "--n-iter", "5", "--burn-in", "1", "--chains", "1",
                   "--tau-x", "0.5", "--tau-t", "5", "--out", "/proc/unwritable", "--no-progress", "--backend", "cpu"])
    err = capsys.readouterr().err
    assert rc == 2 and not calls
    assert "--out /proc/unwritable: cannot write" in err and "tmp-" not in err and ".lock" not in err


@needs_proc
def test_reproduce_dc_refuses_an_unwritable_out_naming_it(capsys):
    rc = cli_main(["reproduce", "dc-gunshots", "--out", "/proc/unwritable", "--n-iter", "2", "--burn-in", "1",
                   "--chains", "1", "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "--out /proc/unwritable: cannot write" in err and ".lock" not in err


RESID = ["--mu0", "0.5", "--tau-x", "0.5", "--tau-t", "5", "--theta", "0.5", "--omega", "2", "--h", "0.1"]


@needs_proc
@pytest.mark.parametrize("flag", ["--png", "--out"])
def test_hawkes_residuals_unwritable_file_names_its_own_option(events_csv, flag, capsys):
    rc = cli_main(["hawkes", "residuals", str(events_csv), *RESID, flag, "/proc/x.file"])
    err = capsys.readouterr().err
    assert rc == 2 and f"{flag} /proc/x.file: cannot write in folder /proc" in err, err


def test_hawkes_residuals_png_is_a_png_whatever_the_suffix(events_csv, tmp_path, capsys):
    png = tmp_path / "qq.figure"
    assert cli_main(["hawkes", "residuals", str(events_csv), *RESID, "--png", str(png), "--out",
                     str(tmp_path / "r.csv")]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
