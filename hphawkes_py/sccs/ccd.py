"""Cyclic coordinate descent for the Bayesian SCCS model (Suchard et al. 2013, Algorithm 1).

Written once against an engine (:class:`~.cpu.CpuEngine` or :class:`~.gpu.GpuEngine`) that
owns the data and the state::

    g, h = engine.gradient_hessian(j)   # fused reduction over coordinate j's non-zeros
    delta = newton step with the prior, Laplace exact at zero, trust region
    engine.update(j, delta)              # sparse update of time*exp(eta) and D_s

The model, priors and stopping rules are described in :mod:`.model`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._progress import progress_bar
from .engine import stratum_runs
from .priors import PriorSpec

__all__ = ["MLEWarning", "coordinate_descent", "CCDResult", "newton_step", "kkt_residual", "infinite_coefficients",
           "separation_directions", "infinite_signs", "INITIAL_BOUND", "MAX_STEP_HALVINGS"]

class MLEWarning(UserWarning):
    """The maximum-likelihood estimate of some coefficients does not exist (it is infinite)."""


#: Initial trust-region half-width per coordinate (Genkin et al.; Cyclops' initialBound).
INITIAL_BOUND = 2.0


def newton_step(g: float, h: float, beta: float, prior: int, lam: float, inv_var: float) -> float:
    """Step for one coordinate. g = dl/db, h = -d2l/db2 (>= 0). prior: 0 none, 1 normal, 2 laplace."""
    if prior == 1:
        return (g - beta * inv_var) / (h + inv_var)
    if prior == 0:
        return g / h if h > 0 else 0.0
    # Laplace (Genkin et al. / Cyclops): minimise -l + lam|b| along the coordinate.
    if h <= 0:  # no information in the data: the prior's mode
        return -beta
    if beta == 0.0:
        # moving up costs lam, moving down gains lam: move only if |g| > lam (soft threshold)
        if g > lam:
            return (g - lam) / h
        if g < -lam:
            return (g + lam) / h
        return 0.0
    sgn = 1.0 if beta > 0 else -1.0
    delta = (g - sgn * lam) / h
    if (beta + delta) * sgn <= 0.0:  # would cross (or hit) zero: stop exactly at zero
        return -beta
    return delta


def kkt_residual(g: float, beta: float, prior: int, lam: float, inv_var: float) -> float:
    """``|subgradient|`` of the log posterior along one coordinate (0 exactly at its optimum)."""
    if prior == 1:
        return abs(g - beta * inv_var)
    if prior == 2:
        if beta == 0.0:
            return max(abs(g) - lam, 0.0)
        return abs(g - (lam if beta > 0 else -lam))
    return abs(g)


@dataclass(frozen=True)
class CCDResult:
    """Where a coordinate descent ended: coefficients, log-likelihood and log prior there,
    cycles run, whether and by which rule it stopped, the last cycle's largest KKT residual
    and the number of undone cycles."""

    beta: np.ndarray
    log_likelihood: float
    log_prior: float
    iterations: int
    converged: bool
    stopped_by: str
    kkt: float
    step_halvings: int


#: How often a cycle whose log posterior is not finite (exp overflow) is retried from the
#: previous cycle's coefficients with trust regions shrunk 8-fold before the fit gives up.
MAX_STEP_HALVINGS = 40


def coordinate_descent(engine, *, spec: PriorSpec, tolerance, max_iterations, beta0=None, convergence="relative",
                       fixed=None, progress=False, desc=None) -> CCDResult:
    """Cyclic coordinate descent on ``engine``.

    ``convergence="relative"`` stops when ``|lp - lp_old| / (|lp| + 1) < tolerance`` after a
    cycle (lp = log posterior); ``"gradient"`` when the largest KKT residual of the cycle,
    ``max_j |subgradient_j|``, is ``< tolerance * (|lp| + 1)`` (each coordinate's residual is taken
    just before its own step; when every residual of a cycle is that small every step was
    too, so the residuals at the final point are of the same size). Coordinates in ``fixed``
    (bool mask) are not moved (profile likelihoods). A cycle that ends with a non-finite log
    posterior (exp overflow after a long step) is undone and retried with trust regions shrunk
    8-fold; a non-finite log posterior at ``beta0`` is an error.
    """
    J = engine.n_covariates
    beta = np.zeros(J) if beta0 is None else np.array(beta0, dtype=np.float64)
    engine.set_beta(beta)
    codes = spec.codes.tolist()
    # per coordinate: Laplace rate sqrt(2 / v) and Normal precision 1 / v (0 where unused)
    lams = [math.sqrt(2.0 / v) if c == 2 else 0.0 for c, v in zip(codes, spec.variances.tolist())]
    inv_vars = [1.0 / v if c == 1 else 0.0 for c, v in zip(codes, spec.variances.tolist())]
    coords = [j for j in range(J) if fixed is None or not fixed[j]]
    bound = [INITIAL_BOUND] * J
    b = beta.tolist()
    ll = engine.log_likelihood(beta)
    lp_old = ll + spec.log_prior(beta)
    if not math.isfinite(lp_old):
        eta = np.abs(beta).max() if J else 0.0
        raise ValueError(
            f"start: the log-likelihood is not finite at the starting coefficients (largest |start| = {eta:g}; "
            "time * exp(x'b) overflows or underflows); give starting values of moderate size (|b| < 50)"
        )
    converged = False
    stopped_by = "max_iterations"
    kkt_max = math.inf
    halvings = 0
    it = 0
    gh = engine.gradient_hessian
    upd = engine.update
    with progress_bar(total=max_iterations, desc=desc or "CCD cycles", enabled=progress) as bar:
        while it < max_iterations:
            it += 1
            b_prev, bound_prev = list(b), list(bound)
            kkt_max = 0.0
            for j in coords:
                g, h = gh(j)
                code = codes[j]
                lam, inv_var = lams[j], inv_vars[j]
                r = kkt_residual(g, b[j], code, lam, inv_var)
                if r > kkt_max:
                    kkt_max = r
                delta = newton_step(g, h, b[j], code, lam, inv_var)
                # Genkin's trust region: |delta| <= Delta_j, then Delta_j = max(2|delta|, Delta_j / 2)
                bj = bound[j]
                if delta > bj:
                    delta = bj
                elif delta < -bj:
                    delta = -bj
                ad = abs(delta)
                bound[j] = max(2.0 * ad, 0.5 * bj)
                if delta != 0.0:
                    upd(j, delta)
                    nb = b[j] + delta
                    # a Laplace step that stops at zero must land exactly on zero
                    b[j] = 0.0 if (code == 2 and delta == -b[j]) else nb
            beta = np.asarray(b)
            ll = engine.log_likelihood(beta)
            lp = ll + spec.log_prior(beta)
            bar.update(1)
            if not math.isfinite(lp):
                halvings += 1
                if halvings > MAX_STEP_HALVINGS:
                    raise FloatingPointError(
                        f"CCD: the log posterior stayed non-finite after {MAX_STEP_HALVINGS} step reductions "
                        f"(cycle {it}); the model cannot be evaluated at these coefficients"
                    )
                b = b_prev
                bound = [x / 8.0 for x in bound_prev]
                engine.set_beta(np.asarray(b))
                continue
            if convergence == "gradient":
                if kkt_max < tolerance * (abs(lp) + 1.0):
                    converged, stopped_by = True, "gradient"
                    break
            elif abs(lp - lp_old) / (abs(lp) + 1.0) < tolerance:
                converged, stopped_by = True, "relative"
                break
            lp_old = lp
    beta = np.asarray(b)
    if not math.isfinite(ll):  # the last cycle was undone: evaluate where the fit stands
        ll = engine.log_likelihood(beta)
    return CCDResult(beta, ll, spec.log_prior(beta), it, converged, stopped_by,
                     float(kkt_max), halvings)


#: |b_j| from which an unpenalised coefficient is checked for an infinite MLE (RR > 148).
DIVERGENCE_CHECK_MIN = 5.0
#: The check moves b_j this much further out; a finite MLE loses log-likelihood there.
DIVERGENCE_CHECK_STEP = 10.0


def separation_directions(data, weights=None) -> np.ndarray:
    """Per covariate, the direction in which its maximum-likelihood estimate is infinite
    whatever the other coefficients and the convergence tolerance: -1, +1 or 0 (int8).

    The conditional log-likelihood of stratum ``s`` is ``sum_i y_i log p_i`` with
    ``p_i = t_i exp(x_i'b) / sum_k t_k exp(x_k'b)``. If in every stratum that counts (weight
    > 0 and events) every row with events has the stratum's smallest value of ``x_j``, each
    of those ``p_i`` grows as ``b_j`` decreases, so the log-likelihood never decreases along
    ``b_j -> -inf`` and strictly increases once some such stratum has rows with a larger
    ``x_j``: the MLE is at ``-inf`` (-1), e.g. an exposure whose person-time has no events.
    Every event at the stratum's largest value gives ``+inf`` (+1), e.g. an exposure that
    covers every event. Unlike a check of where the fit stopped, this reads only the data.
    """
    J = data.n_covariates
    out = np.zeros(J, dtype=np.int8)
    if data.nnz == 0:
        return out
    w = np.ones(data.n_strata) if weights is None else np.asarray(weights, dtype=np.float64)
    active = (w > 0) & (data.n_events > 0)
    run_start, run_stratum, col_run_ptr = stratum_runs(data)
    starts = run_start[:-1]
    vals = np.ones(data.nnz) if data.values is None else data.values
    event = data.y[data.row_idx] > 0
    # per run (one column's non-zeros in one stratum): the range of x_j over the stored
    # non-zeros, and over the stored non-zeros of rows with events
    vmin, vmax = np.minimum.reduceat(vals, starts), np.maximum.reduceat(vals, starts)
    emin = np.minimum.reduceat(np.where(event, vals, np.inf), starts)
    emax = np.maximum.reduceat(np.where(event, vals, -np.inf), starts)
    n_stored = np.diff(run_start)
    n_stored_event = np.add.reduceat(event.astype(np.int64), starts)
    rows = np.diff(data.stratum_ptr)[run_stratum]
    event_rows = np.bincount(data.row_stratum, weights=data.y > 0, minlength=data.n_strata)[run_stratum]
    # rows of the stratum without a stored non-zero have x_j = 0
    zero, event_zero = n_stored < rows, n_stored_event < event_rows
    xmin, xmax = np.where(zero, np.minimum(vmin, 0.0), vmin), np.where(zero, np.maximum(vmax, 0.0), vmax)
    emin = np.where(event_zero, np.minimum(emin, 0.0), emin)
    emax = np.where(event_zero, np.maximum(emax, 0.0), emax)
    act = active[run_stratum]
    col = np.repeat(np.arange(J), np.diff(col_run_ptr))

    def per_column(flag):
        return np.bincount(col, weights=(flag & act), minlength=J) > 0

    varies = per_column(xmax > xmin)
    out[varies & ~per_column(emax > xmin)] = -1
    out[varies & ~per_column(emin < xmax)] = 1
    return out


def infinite_coefficients(engine, beta, unpenalized) -> list[int]:
    """Unpenalised coordinates whose maximum-likelihood estimate is infinite (separation;
    survival::clogit warns the same way), found two ways:

    * from the data alone (:func:`separation_directions`), so that a fit stopped early by a
      loose tolerance on the flat likelihood is caught;
    * along the fit: the log-likelihood does not decrease beyond the estimate, i.e. moving
      b_j a further 10 units outwards loses less than 1e-3 (a finite MLE with a standard
      error below ~200 loses more), which also catches separation by a combination of
      covariates.
    """
    found = set()
    if np.any(unpenalized):
        found.update(np.flatnonzero(unpenalized & (separation_directions(engine.data, engine.weights) != 0)).tolist())
    candidates = np.flatnonzero(unpenalized & (np.abs(beta) >= DIVERGENCE_CHECK_MIN))
    if candidates.size:
        ll0 = engine.log_likelihood(beta)
        for j in candidates:
            step = math.copysign(DIVERGENCE_CHECK_STEP, beta[j])
            moved = beta.copy()
            moved[j] += step
            ll1 = engine.log_likelihood(moved)
            if not math.isfinite(ll1) or ll1 > ll0 - 1e-3:
                found.add(int(j))
        engine.set_beta(beta)
    return sorted(int(j) for j in found)


def infinite_signs(data, weights, beta, infinite) -> np.ndarray:
    """Direction (+1 or -1) of each infinite coefficient in ``infinite`` (indices): from the
    data where :func:`separation_directions` decides it, else the sign of where the fit stopped."""
    idx = np.asarray(infinite, dtype=np.int64)
    d = separation_directions(data, weights)[idx].astype(np.float64)
    return np.where(d != 0, d, np.where(np.asarray(beta)[idx] >= 0, 1.0, -1.0))
