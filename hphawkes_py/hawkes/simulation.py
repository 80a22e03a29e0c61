"""Simulation of a spatiotemporal Hawkes process by its branching (cluster) construction.

Generation 0 (the *background*) is a homogeneous Poisson process with rate
``mu`` per unit area (volume) per unit time on ``region x [0, duration]``.
Every event then has ``Poisson(theta)`` children, each after an ``Exp(omega)``
delay (mean ``1/omega``) and displaced by ``N(0, h^2 I)`` from its parent (or by the isotropic
spatial power law with scale ``h``, ``spatial_kernel=("power-law", q)``: see :func:`draw_displacements`);
children have children in turn. Children born after ``duration`` are dropped
(with their descendants, which would be later still); children may land
outside ``region`` (the model's spatial integral is over all of R^D).

This is the triggering part of the fitting model exactly: its rate of
offspring is ``theta * omega * exp(-omega dt) * phi_D(dx; h)``. The
*background* of the fitting model, however, is the kernel-density-type term
``mu0 * sum_m phi_D(x - x_m; tau_x) phi_1(t - t_m; tau_t)`` with bandwidths
``tau_x``, ``tau_t``: ``mu0`` is a dimensionless weight (about the fraction
of background events), **not** the rate ``mu`` used here. With wide
bandwidths the fitted background approximates the homogeneous one, and
``theta``, ``omega`` and ``h`` are comparable between the two.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from .._validate import check_bool, check_int, check_positive, check_probability, check_random_state, describe
from .kernels import check_kernel, check_spatial_kernel
from .model import SUBMODELS

__all__ = ["simulate", "draw_delays", "draw_displacements"]


def draw_delays(rng, size: int, omega: float, p: float = 0.0, omega2: float | None = None,
                w: float | None = None) -> np.ndarray:
    """``size`` delays of children after their parents from the temporal kernel: Exp(omega)
    (``p = 0``), the power law (p - 1) omega (1 + omega dt)^(-p) (Lomax, by inversion) for ``p > 1``,
    or with ``omega2`` and ``w`` the mixture Exp(omega) with probability w, Exp(omega2) otherwise.
    The one delay sampler of :func:`simulate` and the posterior predictive simulations."""
    if omega2 is not None:  # the component of each child, then its exponential delay
        rate = np.where(rng.random(size) < w, omega, omega2)
        return rng.exponential(1.0, size=size) / rate
    if p == 0.0:
        return rng.exponential(1.0 / omega, size=size)
    # Lomax by inversion: (1 - U)^(-1/(p-1)) - 1, in logs for accuracy near U = 0
    return np.expm1(-np.log1p(-rng.random(size)) / (p - 1.0)) / omega


def draw_displacements(rng, size: int, dim: int, h: float, q: float = 0.0) -> np.ndarray:
    """``size`` displacements (size, dim) of children from their parents, from the spatial trigger
    kernel with scale ``h``: N(0, h^2 I) (``q = 0``; ``h`` times standard normals, the draws
    :func:`simulate` has always made) or the isotropic power law c_{D,q} h^(-D) (1 + r^2/h^2)^(-q)
    (``q > dim/2``), drawn exactly: a uniform direction (a normalised standard normal vector) times a
    radius by inversion of its CDF. With u = r^2/h^2, u / (1 + u) ~ Beta(D/2, q - D/2), so
    F(r) = I_{r^2/(h^2 + r^2)}(D/2, q - D/2); in 2-D F(r) = 1 - (1 + r^2/h^2)^(1 - q), inverted in
    closed form (r = h sqrt((1 - U)^(-1/(q-1)) - 1), in logs), in 1-D and 3-D through
    ``scipy.special.betaincinv`` (B and 1 - B each from its own inverse, so u = B / (1 - B) stays
    accurate in the far tail). The one displacement sampler of :func:`simulate` and the posterior
    predictive simulations."""
    if q == 0.0:
        return h * rng.standard_normal((size, dim))
    U = rng.random(size)
    if dim == 2:
        u = np.expm1(-np.log1p(-U) / (q - 1.0))
    else:
        from scipy.special import betaincinv

        a, b = 0.5 * dim, q - 0.5 * dim
        u = betaincinv(a, b, U) / betaincinv(b, a, 1.0 - U)
    z = rng.standard_normal((size, dim))
    norm = np.sqrt(np.sum(z * z, axis=1))
    norm[norm == 0.0] = 1.0  # probability 0; keeps the division finite
    return (h * np.sqrt(u) / norm)[:, None] * z


def _region(region: Any, dim: int) -> np.ndarray:
    if np.isscalar(region):
        side = check_positive(region, "region")
        return np.array([[0.0, side]] * dim)
    try:
        r = np.asarray(region, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"region must be a side length or a ({dim}, 2) array of (low, high) bounds, got {region!r}") from exc
    if r.shape == (2,) and dim == 1:
        r = r[None, :]
    if r.shape != (dim, 2) or not np.all(np.isfinite(r)) or not np.all(r[:, 1] > r[:, 0]):
        raise ValueError(
            f"region must be a side length or a ({dim}, 2) array of finite (low, high) bounds with low < high "
            f"for dim={dim}, got {region!r}"
        )
    return r


def _ndim(v: Any) -> int:
    """Dimensions of an array-like parameter (-1 when NumPy cannot read it as an array)."""
    try:
        return np.ndim(v)
    except ValueError:
        return -1


def _submodel_simulation(*, mu, theta, omega, h, region, duration, dim, seed, return_parents, max_events, kernel,
                         omega2, w, spatial_kernel, etas):
    """The multitype (a K x K ``theta``) or ETAS (``etas=``) simulation a call of :func:`simulate` asks for,
    as a function of no arguments, or None for the paper's model; every argument that model does not have
    is refused first."""
    typed = _ndim(theta) == 2 or _ndim(mu) == 1
    if etas is None and not typed:
        return None
    given = {"kernel": (kernel, "exponential"), "omega2": (omega2, None), "w": (w, None)}
    if etas is not None:
        if typed:
            raise ValueError("etas= (space-time ETAS, with magnitudes) and types (a vector mu, a K x K theta) together "
                             "are not implemented; give one")
        given.update(mu=(mu, None), theta=(theta, None), omega=(omega, None), h=(h, None))
        label = "space-time ETAS (etas=, hp.hawkes.etas)"
    else:
        label = "multitype model (a K x K theta, hp.hawkes.multitype)"
        if _ndim(theta) != 2 or _ndim(mu) != 1:
            raise ValueError(f"types need mu as a K-vector and theta as a K x K matrix together; got mu={mu!r}, "
                             f"theta={theta!r}")
        given["spatial_kernel"] = (spatial_kernel, "gaussian")
    for name, (value, default) in given.items():
        if not (value is default or (isinstance(value, str) and value == default)):
            why = " (ETAS's mu goes into etas=, per unit time over the region)" if name == "mu" else ""
            raise ValueError(f"{name}={value!r} is not implemented for the {label}{why}; leave {name} at its "
                             f"default {default!r}")
    shared = dict(region=region, duration=duration, seed=seed, return_parents=return_parents, max_events=max_events)
    if etas is None:
        return lambda: SUBMODELS["multitype"].simulate(mu=mu, theta=theta, omega=omega, h=h, dim=dim, **shared)
    if not isinstance(etas, Mapping):
        raise TypeError(f"etas must be a dict of ETAS parameters (mu, A, alpha, c, p, d, gamma, b, m0 and q for the "
                        f"power law), got {describe(etas)}")
    dim = check_int(dim, "dim", minimum=1, maximum=3)
    if dim != 2:
        raise ValueError(f"space-time ETAS (etas=) is 2-D; got dim={dim}")
    names = ("mu", "A", "alpha", "c", "p", "d", "gamma", "b", "m0", "q")
    unknown = sorted(set(etas) - set(names), key=str)
    missing = [n for n in names[:9] if n not in etas]
    if unknown or missing:
        raise ValueError(f"etas must give the ETAS parameters {names[:9]} (and q with spatial_kernel='power-law'); "
                         f"missing {missing}, unknown {unknown}")
    if not (isinstance(spatial_kernel, str) and spatial_kernel in ("gaussian", "power-law")):
        raise ValueError(f"with etas= spatial_kernel must be 'gaussian' or 'power-law' (its exponent q goes into "
                         f"etas=), got {spatial_kernel!r}")
    return lambda: SUBMODELS["etas"].simulate(**etas, spatial_kernel=spatial_kernel, **shared)


def simulate(*, mu: Any = None, theta: Any = None, omega: float | None = None, h: float | None = None,
             region: Any, duration: float, dim: int = 2, seed: Any = None, return_parents: bool = False,
             max_events: int = 10_000_000, kernel: Any = "exponential", omega2: float | None = None,
             w: float | None = None, spatial_kernel: Any = "gaussian", etas: Mapping | None = None):
    """Simulate a spatiotemporal Hawkes process by the branching construction; with types (``mu`` a
    K-vector, ``theta`` a K x K matrix) or with magnitudes (``etas=``, space-time ETAS).

    Parameters
    ----------
    mu : float or array_like, shape (K,)
        Background rate per unit area (volume for ``dim=3``, length for
        ``dim=1``) per unit time. Not the ``mu0`` of the fitting model (see
        the module notes). A K-vector, with ``theta`` K x K: the rate of every type, simulated by
        :func:`.multitype.simulate`.
    theta : float or array_like, shape (K, K)
        Expected number of children per event, ``0 < theta < 1`` (a
        subcritical process; the expected number of events is
        ``mu * |region| * duration / (1 - theta)`` up to the children lost
        after ``duration``). A K x K matrix: ``theta[k, l]`` type-l children per type-k event
        (spectral radius < 1); the events then come with their types.
    omega : float
        Rate of the exponential delay of a child after its parent (mean delay
        ``1/omega``).
    h : float
        Standard deviation of the Gaussian displacement of a child, per coordinate (units of the
        region); with the spatial power law its scale.
    region : float or array_like, shape (dim, 2)
        Background region: a side length ``L`` for ``[0, L]^dim``, or the
        ``(low, high)`` bounds per coordinate.
    duration : float
        Events are simulated on ``[0, duration]``.
    dim : int
        Spatial dimension D = 1, 2 or 3.
    seed : None, int or Generator
        Random seed or generator (None: fresh entropy).
    return_parents : bool
        Also return ``parent`` (index of the parent in the returned order,
        ``-1`` for background events).
    max_events : int
        Refuse to go on past this many events (guards against runaway settings).
    kernel : "exponential", "power-law", ("power-law", p) or "exp2"
        Delay distribution of a child: Exp(omega) (default), or the power law with density
        (p - 1) omega (1 + omega dt)^(-p) (Lomax; Omori-Utsu with c = 1/omega), drawn by inversion,
        or (``"exp2"``) the mixture Exp(omega) with probability ``w``, Exp(omega2) otherwise.
    omega2 : float, optional
        ``kernel="exp2"`` only (and then required): the second rate (per unit of time, > 0).
    w : float, optional
        ``kernel="exp2"`` only (and then required): probability of the ``omega`` component, in [0, 1].
    spatial_kernel : "gaussian", "power-law" or ("power-law", q)
        Displacement distribution of a child: N(0, h^2 I) (default), or the isotropic power law
        ``Gamma(q) / (Gamma(q - dim/2) pi^(dim/2) h^dim) (1 + r^2/h^2)^(-q)``, q > dim/2 (``"power-law"``
        alone: q = 2), drawn exactly (radius by inversion of its CDF, :func:`draw_displacements`).
    etas : dict, optional
        Space-time ETAS (:func:`.etas.simulate`, 2-D): the ETAS parameters ``mu`` (background events
        per unit time over the whole ``region``, not per unit area), ``A``, ``alpha``, ``c``, ``p``,
        ``d``, ``gamma``, ``b``, the magnitude of completeness ``m0`` (and ``q`` with
        ``spatial_kernel="power-law"``): the dict of ETAS parameters of :func:`log_likelihood` plus
        ``m0``. ``mu``, ``theta``, ``omega``, ``h``, ``kernel``, ``omega2``, ``w`` are then not given and
        ``dim`` is 2; the events come with their magnitudes.

    Returns
    -------
    x : ndarray, shape (N, dim)
    t : ndarray, shape (N,)
        Sorted by time.
    types : ndarray of int, shape (N,)
        Only with a K x K ``theta``: every event's type.
    m : ndarray, shape (N,)
        Only with ``etas``: every event's magnitude.
    parent : ndarray of int, shape (N,)
        Only with ``return_parents=True``.

    Examples
    --------
    About ``0.5 * 2^2 * 50 = 100`` background events on a 2 km square over 50 hours, and as many
    again as offspring (``theta = 0.5``):

    >>> x, t, parent = hp.hawkes.simulate(mu=0.5, theta=0.5, omega=2.0, h=0.1, region=2.0, duration=50.0,
    ...                                   seed=1, return_parents=True)
    >>> x.shape, bool(np.all(np.diff(t) >= 0))
    ((187, 2), True)
    >>> int((parent == -1).sum())  # background events
    100

    Two types, type 0 triggering type 1 but not the reverse, and an ETAS catalogue with magnitudes:

    >>> x, t, k = hp.hawkes.simulate(mu=[0.5, 0.3], theta=[[0.3, 0.2], [0.0, 0.4]], omega=2.0, h=0.1,
    ...                              region=2.0, duration=30.0, seed=1)
    >>> sorted(set(k.tolist()))
    [0, 1]
    >>> x, t, m = hp.hawkes.simulate(etas=dict(mu=0.5, A=0.3, alpha=1.0, c=0.01, p=1.2, d=0.02, gamma=0.5,
    ...                                        b=1.0, m0=3.0), region=10.0, duration=100.0, seed=1)
    >>> bool(m.min() >= 3.0), x.shape == (t.size, 2)
    (True, True)
    """
    sub = _submodel_simulation(mu=mu, theta=theta, omega=omega, h=h, region=region, duration=duration, dim=dim,
                               seed=seed, return_parents=return_parents, max_events=max_events, kernel=kernel,
                               omega2=omega2, w=w, spatial_kernel=spatial_kernel, etas=etas)
    if sub is not None:
        return sub()
    for name, value in (("mu", mu), ("theta", theta), ("omega", omega), ("h", h)):
        if value is None:
            raise ValueError(f"simulate needs {name} (or etas= for space-time ETAS)")
    kern = check_kernel(kernel)
    kp = kern.p
    if kern.name == "exp2":
        if omega2 is None or w is None:
            raise ValueError("kernel='exp2' needs omega2 (the second rate, > 0) and w (the weight of omega, in [0, 1])")
        omega2 = check_positive(omega2, "omega2")
        w = check_probability(w, "w", low_open=False)
    elif omega2 is not None or w is not None:
        raise ValueError(f"omega2 and w are parameters of kernel='exp2' only, got kernel={kernel!r}")
    dim = check_int(dim, "dim", minimum=1, maximum=3)
    sq = check_spatial_kernel(spatial_kernel, dim).q
    mu = check_positive(mu, "mu")
    theta = check_positive(theta, "theta")
    if theta >= 1:
        raise ValueError(f"theta must be < 1 (a subcritical process with finitely many offspring), got {theta}")
    omega = check_positive(omega, "omega")
    h = check_positive(h, "h")
    duration = check_positive(duration, "duration")
    bounds = _region(region, dim)
    rng = check_random_state(seed)
    return_parents = check_bool(return_parents, "return_parents")
    max_events = check_int(max_events, "max_events", minimum=1)
    volume = float(np.prod(bounds[:, 1] - bounds[:, 0]))
    expected = mu * volume * duration  # background events; checked before drawing (no overflow, no huge draw)
    if not expected <= max_events:
        raise ValueError(f"mu * |region| * duration = {expected:.3g} expected background events exceeds "
                         f"max_events={max_events}; lower mu, the region or the duration")

    n0 = rng.poisson(expected)
    if n0 > max_events:
        raise ValueError(f"the background alone has {n0} events > max_events={max_events}; lower mu or the region")
    xs = [bounds[:, 0] + rng.random((n0, dim)) * (bounds[:, 1] - bounds[:, 0])]
    ts = [rng.random(n0) * duration]
    parents = [np.full(n0, -1, dtype=np.int64)]
    gen_x, gen_t = xs[0], ts[0]
    gen_index = np.arange(n0)
    total = n0
    while gen_t.size:
        k = rng.poisson(theta, size=gen_t.size)
        par = np.repeat(gen_index, k)
        if par.size == 0:
            break
        local = np.repeat(np.arange(gen_t.size), k)
        child_t = gen_t[local] + draw_delays(rng, par.size, omega, kp, omega2, w)
        child_x = gen_x[local] + draw_displacements(rng, par.size, dim, h, sq)
        keep = child_t <= duration
        child_t, child_x, par = child_t[keep], child_x[keep], par[keep]
        gen_index = np.arange(total, total + child_t.size)
        total += child_t.size
        if total > max_events:
            raise ValueError(f"the simulation exceeded max_events={max_events}; lower mu or theta")
        xs.append(child_x)
        ts.append(child_t)
        parents.append(par)
        gen_x, gen_t = child_x, child_t
    x = np.concatenate(xs) if xs else np.empty((0, dim))
    t = np.concatenate(ts)
    parent = np.concatenate(parents)
    order = np.argsort(t, kind="stable")
    x, t, parent = x[order], t[order], parent[order]
    if return_parents:
        new_index = np.empty_like(order)
        new_index[order] = np.arange(order.size)
        parent = np.where(parent >= 0, new_index[np.maximum(parent, 0)], -1)
        return x, t, parent
    return x, t
