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
from .priors import PriorSpec

__all__ = ["coordinate_descent", "CCDResult", "newton_step", "kkt_residual", "infinite_coefficients",
           "INITIAL_BOUND", "MAX_STEP_HALVINGS"]

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


def infinite_coefficients(engine, beta, unpenalized) -> list[int]:
    """Unpenalised coordinates along which the log-likelihood does not decrease beyond the
    estimate: moving b_j a further 10 units outwards loses less than 1e-3 (a finite MLE with a
    standard error below ~200 loses more), i.e. the maximum lies at infinity (separation, e.g.
    the exposure covers every event of every case; survival::clogit warns the same way)."""
    candidates = np.flatnonzero(unpenalized & (np.abs(beta) >= DIVERGENCE_CHECK_MIN))
    if candidates.size == 0:
        return []
    ll0 = engine.log_likelihood(beta)
    out = []
    for j in candidates:
        step = math.copysign(DIVERGENCE_CHECK_STEP, beta[j])
        moved = beta.copy()
        moved[j] += step
        ll1 = engine.log_likelihood(moved)
        if not math.isfinite(ll1) or ll1 > ll0 - 1e-3:
            out.append(int(j))
    engine.set_beta(beta)
    return out
