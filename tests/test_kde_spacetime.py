"""Spatiotemporal KDE (issue 15 section 3) against a NumPy reference; edge correction in space and
time; conditional slices; figures."""
from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ndtr

sys.path.insert(0, str(Path(__file__).parent))
import naive_kde as nk  # noqa: E402

import hphawkes_py as hp  # noqa: E402
from hphawkes_py.kde import Window  # noqa: E402

from engines import CUDA_ENGINES  # noqa: E402


def _data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    p = np.vstack([rng.uniform(0, 1, (n // 2, 2)), np.clip(rng.normal(0.7, 0.08, (n - n // 2, 2)), 0.01, 0.99)])
    t = np.concatenate([rng.uniform(0, 10, n // 2), rng.uniform(6, 10, n - n // 2)])
    return p, t, Window.rectangle(0, 1, 0, 1, 1 / 40)


def _reference(p, t, w, h, lam, cutoff, edge, q, tk, t0=0.0, t1=10.0):
    e = 1 / nk.edge_masses(p, np.full(len(p), h), w.mask, w.x0, w.y0, w.cell_size) if edge else np.ones(len(p))
    c = 1 / (ndtr((t1 - t) / lam) - ndtr((t0 - t) / lam)) if edge else np.ones(len(p))
    u = (tk - t) / lam
    L = np.exp(-0.5 * u * u) / (math.sqrt(2 * math.pi) * lam)
    if math.isfinite(cutoff):
        L[np.abs(u) >= cutoff] = 0
    return nk.intensity(q, p, np.full(len(p), h), e * c * L, cutoff), float((c * L).sum())


@pytest.mark.parametrize("cutoff", [3.0, math.inf])
@pytest.mark.parametrize("edge", [True, False])
def test_slices_match_numpy_reference(cutoff, edge):
    p, t, w = _data()
    st = hp.kde.spacetime(p, t, w, h=0.1, lam=1.5, time_window=(0, 10), cutoff=cutoff, edge_correction=edge,
                          backend="cpu")
    keep = np.arange(0, w.n_inside, 37)
    for tk in (0.0, 3.3, 8.0, 10.0):
        (s,) = st.slices([tk])
        ref, marg = _reference(p, t, w, 0.1, 1.5, cutoff, edge, w.cell_centres()[keep], tk)
        got = s.values[w.mask][keep]
        pos = ref > 0
        assert np.all(got[~pos] == 0) and np.max(np.abs(got[pos] / ref[pos] - 1)) < 1e-10
        assert st.marginal([tk])[0] == pytest.approx(marg, rel=1e-12)
        (c,) = st.slices([tk], conditional=True)
        assert np.allclose(c.values[w.mask][keep], got / marg, rtol=1e-12, atol=0)
        assert st.intensity_at(w.cell_centres()[keep[:5]], tk) == pytest.approx(got[:5], rel=1e-12)


def test_conditional_slices_integrate_to_one_and_the_intensity_to_n():
    p, t, w = _data(seed=1)
    st = hp.kde.spacetime(p, t, w, h=0.08, lam=1.0, time_window=(0, 10), cutoff=math.inf, backend="cpu")
    for s in st.slices([0.0, 5.0, 9.9], conditional=True):
        assert s.integral() == pytest.approx(1.0, abs=2e-3)
    tg = np.linspace(0, 10, 401)
    total = sum(s.integral() for s in st.slices(tg)) * (tg[1] - tg[0])
    assert total == pytest.approx(len(p), rel=5e-3)
    # the cluster appears only late: its conditional density rises over time
    row, col = w.cell_index(np.array([[0.7, 0.7]]))
    early, late = st.slices([2.0, 9.0], conditional=True)
    assert late.values[row[0], col[0]] > 2 * early.values[row[0], col[0]]


def test_default_bandwidths_are_terrells():
    p, t, w = _data(seed=2)
    st = hp.kde.spacetime(p, t, w, backend="cpu")
    assert st.h == pytest.approx(hp.kde.oversmoothing_bandwidth(p), rel=1e-15)
    lam = hp.kde.temporal_oversmoothing_bandwidth(t)
    # 1-D Terrell: 3 (R(K) / (35 n))^(1/5) s = 1.1439 s n^(-1/5) for the Gaussian kernel
    s = np.std(t, ddof=1)
    assert lam == pytest.approx(3 * (1 / (2 * math.sqrt(math.pi)) / (35 * len(t))) ** 0.2 * s, rel=1e-12)
    assert st.lam == lam and st.time_window == (t.min(), t.max())


def test_slice_figures_and_animation(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    p, t, w = _data(seed=3)
    st = hp.kde.spacetime(p, t, w, h=0.1, lam=1.0, time_window=(0, 10), backend="cpu")
    fig = st.plot_slices([1.0, 4.0, 7.0, 9.5])
    assert sum(ax.get_visible() for ax in fig.axes if ax.images) == 4
    fig.savefig(tmp_path / "slices.png")
    anim = st.animation([1.0, 5.0, 9.0])
    anim._func(2)  # draw the last frame
    assert anim._fig.axes[0].get_title() == "t = 9"
    plt.close("all")


@pytest.mark.parametrize("backend", CUDA_ENGINES)
def test_cuda_engine_gives_the_same_slices(backend):
    p, t, w = _data(n=120, seed=4)
    w = Window.rectangle(0, 1, 0, 1, 1 / 16)
    a = hp.kde.spacetime(p, t, w, h=0.1, lam=1.0, time_window=(0, 10), backend="cpu")
    b = hp.kde.spacetime(p, t, w, h=0.1, lam=1.0, time_window=(0, 10), backend=backend)
    assert b.backend == backend and np.allclose(a.edge_factors, b.edge_factors, rtol=1e-12)
    for sa, sb in zip(a.slices([2.0, 8.0]), b.slices([2.0, 8.0])):
        assert np.nanmax(np.abs(sa.values - sb.values) / np.maximum(sa.values, 1e-300)) < 1e-10
