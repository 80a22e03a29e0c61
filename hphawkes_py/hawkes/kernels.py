"""The Hawkes model's triggering kernels: their types, the parsing of ``kernel=`` and
``spatial_kernel=``, and the constants the pair loops need.

Temporal kernels (:class:`TriggerKernel`), densities of the delay dt > 0 of an offspring:

* ``"exponential"``: omega exp(-omega dt), the paper's.
* ``"power-law"`` (Omori-Utsu, the modified Omori law with c = 1/omega): (p - 1) omega (1 + omega dt)^(-p),
  exponent p > 1 given as ``("power-law", p)`` (``"power-law"`` alone: p = :data:`DEFAULT_POWER_LAW_P`).
  Its pair term is exp(-(r^2/(2h^2) + p log(1 + omega dt))).
* ``"exp2"``, the sum of two exponentials w omega exp(-omega dt) + (1 - w) omega2 exp(-omega2 dt), with two
  more parameters ``omega2`` (per unit of t) and ``w`` (in [0, 1]) that every trigger method takes as
  keywords (:data:`KERNEL_PARAMS`). Its pair term is c1 exp(-(r^2/(2h^2) + omega dt))
  + c2 exp(-(r^2/(2h^2) + omega2 dt)) with the weights of :func:`exp2_weights`.

Spatial kernels (:class:`SpatialKernel`), densities of the displacement z in R^D of an offspring, both
with the scale ``h`` (units of x):

* ``"gaussian"``: phi_D(z; h) = (2 pi h^2)^(-D/2) exp(-|z|^2 / (2 h^2)), the paper's.
* ``("power-law", q)``: the isotropic Student-t-like density
  f_q(z; h) = c_{D,q} h^(-D) (1 + |z|^2/h^2)^(-q), c_{D,q} = Gamma(q) / (Gamma(q - D/2) pi^(D/2)), with
  q > D/2 (in 2-D (q - 1) / (pi h^2) (1 + r^2/h^2)^(-q), the ETAS / crime-Hawkes law; ``"power-law"``
  alone: q = :data:`DEFAULT_SPATIAL_POWER_LAW_Q`). It integrates to 1 over R^D, so the compensator is
  that of the Gaussian; the pair term is exp(-(q log(1 + r^2/h^2) + time term)) times
  :func:`trigger_scale`, whose spatial factor is the kernel's peak f(0) (:func:`spatial_peak`).

The derivations (window bounds for every kernel) are in the documentation's method page
``docs/methods/hawkes_likelihood.rst``.
"""
from __future__ import annotations

import math
import numbers
from typing import Any

from .._validate import describe

__all__ = ["KERNELS", "KERNEL_PARAMS", "DEFAULT_POWER_LAW_P", "TriggerKernel", "check_kernel", "as_trigger_kernel",
           "kernel_label", "SPATIAL_KERNELS", "DEFAULT_SPATIAL_POWER_LAW_Q", "SpatialKernel", "check_spatial_kernel",
           "spatial_kernel_label", "phi0", "spatial_log_peak", "spatial_peak", "trigger_scale", "exp2_weights"]

#: Temporal triggering kernels (``kernel=``), as densities of the delay dt > 0 of an offspring:
#: ``"exponential"``: omega exp(-omega dt) (the paper's); ``"power-law"`` (Omori-Utsu, modified Omori
#: law with c = 1/omega): (p - 1) omega (1 + omega dt)^(-p), exponent p > 1 given as
#: ``("power-law", p)`` (``"power-law"`` alone: p = 1.5). Heavier tails than the exponential:
#: the windowed likelihood's cut-off grows as a power of the bound and may be the whole data
#: (then the evaluation is exact), see :func:`~.windows.trigger_delta`. ``"exp2"``: the sum of two
#: exponentials w omega exp(-omega dt) + (1 - w) omega2 exp(-omega2 dt), two more parameters
#: ``omega2`` (second rate, per unit of t, e.g. 1/hour) and ``w`` (weight of the ``omega`` component,
#: in [0, 1]) given with the others (``params``, ``fixed``, ``sample``, ``init``); mean delay
#: w / omega + (1 - w) / omega2. Its windowed cut-off is set by the slower component that carries
#: weight (bound (3') of :mod:`~.windows`), so the likelihood stays exact to 1e-13.
KERNELS = ("exponential", "power-law", "exp2")
#: Trigger parameters a temporal kernel takes besides ``omega`` (keywords of the trigger methods), in the
#: order they follow :data:`~.model.PARAM_NAMES`.
KERNEL_PARAMS = {"exponential": (), "power-law": (), "exp2": ("omega2", "w")}
#: Exponent p of ``kernel="power-law"`` given without one.
DEFAULT_POWER_LAW_P = 1.5
#: Spatial triggering kernels (``spatial_kernel=``), as densities of the displacement z in R^D of an
#: offspring from its parent, both with the scale ``h`` (units of x): ``"gaussian"``: phi_D(z; h) =
#: (2 pi h^2)^(-D/2) exp(-|z|^2 / (2 h^2)) (the paper's, the default); ``("power-law", q)``: the isotropic
#: power law (Student-t-like) c_{D,q} h^(-D) (1 + |z|^2/h^2)^(-q) with c_{D,q} = Gamma(q) / (Gamma(q - D/2)
#: pi^(D/2)), exponent q > D/2 (dimensionless; in 2-D (q - 1)/(pi h^2) (1 + r^2/h^2)^(-q), the ETAS /
#: crime-Hawkes law; ``"power-law"`` alone: q = 2). It integrates to 1 over R^D, so the compensator is
#: that of the Gaussian; its tail decays like r^(-2q), so large-distance offspring are far likelier than
#: under the Gaussian. The windowed likelihood stays exact to 1e-13 (the cut-off bound uses the kernel's
#: peak, :func:`~.windows.trigger_delta`). Not supported with ``spatial_window=`` (ValueError).
SPATIAL_KERNELS = ("gaussian", "power-law")
#: Exponent q of ``spatial_kernel="power-law"`` given without one.
DEFAULT_SPATIAL_POWER_LAW_Q = 2.0
#: Largest exponent of either power law: beyond it the kernels are Gaussian in all but name and the
#: constants lose accuracy.
MAX_EXPONENT = 1e6

def _check_exponent(value: Any, name: str, low: float, low_text: str) -> float:
    """A power law's exponent: a finite real number in (low, MAX_EXPONENT]; errors name ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {describe(value)}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name} must be finite, got {v}")
    if not v > low:
        raise ValueError(f"{name} must be > {low_text}, got {v}")
    if v > MAX_EXPONENT:
        raise ValueError(f"{name} must be <= 1e6, got {v}")
    return v


class _KernelChoice(tuple):
    """A kernel name and its power-law exponent (0 for the kernels without one): a plain pair, so it
    compares, hashes and pickles as ``(name, exponent)``. The one rule, shared by the temporal and the
    spatial kernels, for what the user may write (:meth:`parse`) and which exponents are valid."""

    __slots__ = ()
    _ARG = ""          # the argument users give it as, named in errors
    _NAMES = ()        # the kernels; the first is the default
    _EXPONENT = ""     # the exponent's letter
    _DEFAULT = 0.0     # exponent of "power-law" given without one
    _LOW, _LOW_TEXT = 0.0, ""  # the exponent must exceed _LOW (described by _LOW_TEXT)
    _FORMS = ""        # the accepted forms, for errors

    def __new__(cls, name: str | None = None, exponent: float = 0.0):
        name = cls._NAMES[0] if name is None else name
        if name not in cls._NAMES:
            raise ValueError(f"{cls._ARG} must be {cls._FORMS}, got {name!r}")
        if name == "power-law":
            exponent = _check_exponent(exponent, f"{cls._ARG} exponent {cls._EXPONENT}", cls._LOW, cls._LOW_TEXT)
        elif exponent != 0.0:
            raise ValueError(f"{cls._ARG}: only 'power-law' takes an exponent, as ('power-law', {cls._EXPONENT}); "
                             f"got ({name!r}, {exponent!r})")
        return super().__new__(cls, (name, float(exponent)))

    @classmethod
    def parse(cls, value: Any):
        """The kernel a user's value (a name, ``("power-law", exponent)`` or an instance) denotes."""
        if isinstance(value, cls):
            return value
        if isinstance(value, str):
            if value not in cls._NAMES:
                raise ValueError(f"{cls._ARG} must be {cls._FORMS}, got {value!r}")
            return cls(value, cls._DEFAULT if value == "power-law" else 0.0)
        if isinstance(value, (tuple, list)) and len(value) == 2 and isinstance(value[0], str):
            if value[0] != "power-law":
                raise ValueError(f"{cls._ARG}: only 'power-law' takes an exponent, as ('power-law', "
                                 f"{cls._EXPONENT}); got {value!r}")
            return cls("power-law", value[1])
        raise TypeError(f"{cls._ARG} must be {cls._FORMS}, got {describe(value)}")

    name = property(lambda self: self[0])

    @property
    def label(self):
        """The user-facing value: the name, or ``("power-law", exponent)``."""
        return ("power-law", self[1]) if self.name == "power-law" else self.name

    def __getnewargs__(self):
        return (self[0], self[1])

    def __repr__(self):
        return f"{type(self).__name__}({self[0]!r}, {self[1]!r})"


class TriggerKernel(_KernelChoice):
    """A validated temporal trigger kernel: its name and the power-law exponent.

    A plain pair, so it compares, hashes and pickles as ``(name, p)``.

    Parameters
    ----------
    name : {"exponential", "power-law", "exp2"}
        The kernel (see the module notes); default ``"exponential"``.
    exponent : float
        The power law's exponent p, in (1, 1e6] (dimensionless); 0 for the other kernels.

    Examples
    --------
    >>> from hphawkes_py.hawkes.kernels import TriggerKernel
    >>> TriggerKernel("power-law", 2.5).label
    ('power-law', 2.5)
    """

    __slots__ = ()
    _ARG, _NAMES, _EXPONENT, _DEFAULT = "kernel", KERNELS, "p", DEFAULT_POWER_LAW_P
    _LOW, _LOW_TEXT = 1.0, "1 (an integrable power law)"
    _FORMS = f"one of {KERNELS} or ('power-law', p)"

    p = property(lambda self: self[1])

    @property
    def extra_params(self) -> tuple:
        """Trigger parameters besides ``omega`` (``("omega2", "w")`` for ``"exp2"``)."""
        return KERNEL_PARAMS[self.name]


def check_kernel(kernel: Any) -> TriggerKernel:
    """``kernel=`` (a name, ``("power-law", p)`` or a :class:`TriggerKernel`) as a :class:`TriggerKernel`;
    errors name ``kernel``. ``float(...)`` of the result is not defined: use ``.p`` (0 except for the
    power law)."""
    return TriggerKernel.parse(kernel)


def as_trigger_kernel(kernel: Any = None, kernel_p: float = 0.0) -> TriggerKernel:
    """The engines' kernel: ``kernel`` through :func:`check_kernel` or, when ``kernel`` is None, from the
    power-law exponent ``kernel_p`` (0: exponential, p > 1: the power law)."""
    if kernel is not None:
        return check_kernel(kernel)
    kp = float(kernel_p)
    if not (kp == 0.0 or kp > 1.0):
        raise ValueError(f"kernel_p must be 0 (exponential) or > 1 (power-law exponent), got {kernel_p!r}")
    return TriggerKernel("exponential") if kp == 0.0 else TriggerKernel("power-law", kp)


def kernel_label(kernel: Any):
    """The ``kernel=`` value for an engine kernel (a :class:`TriggerKernel`, a ``kernel=`` value or a
    power-law exponent, 0 for exponential): the inverse of :func:`check_kernel`."""
    if isinstance(kernel, (int, float)) and not isinstance(kernel, bool):
        return as_trigger_kernel(None, kernel).label
    return check_kernel(kernel).label


class SpatialKernel(_KernelChoice):
    """A validated spatial trigger kernel: its name and the power-law exponent.

    A plain pair, so it compares, hashes and pickles as ``(name, q)``. ``q > D/2`` (integrability
    in D dimensions) is checked where D is known (:meth:`check_dim`).

    Parameters
    ----------
    name : {"gaussian", "power-law"}
        The kernel (see the module notes); default ``"gaussian"``.
    exponent : float
        The power law's exponent q, in (1/2, 1e6] (dimensionless; > D/2 in D dimensions); 0 for the
        Gaussian.

    Examples
    --------
    >>> from hphawkes_py.hawkes.kernels import SpatialKernel
    >>> SpatialKernel("power-law", 2.0).check_dim(2).label
    ('power-law', 2.0)
    """

    __slots__ = ()
    _ARG, _NAMES, _EXPONENT, _DEFAULT = "spatial_kernel", SPATIAL_KERNELS, "q", DEFAULT_SPATIAL_POWER_LAW_Q
    _LOW, _LOW_TEXT = 0.5, "D/2 (> 0.5 in 1-D, > 1 in 2-D, > 1.5 in 3-D; an integrable power law)"
    _FORMS = "'gaussian', 'power-law' or ('power-law', q)"

    q = property(lambda self: self[1])

    def check_dim(self, D: int) -> "SpatialKernel":
        """Self, after checking q > D/2 (the power law integrates over R^D); ValueError naming
        ``spatial_kernel`` otherwise."""
        if self.name == "power-law" and not self.q > 0.5 * D:
            raise ValueError(f"spatial_kernel exponent q must be > D/2 = {0.5 * D:g} for D = {D} coordinates "
                             f"(an integrable power law), got q = {self.q!r}")
        return self


def check_spatial_kernel(spatial_kernel: Any, dim: int | None = None) -> SpatialKernel:
    """``spatial_kernel=`` (None or ``"gaussian"``, ``"power-law"``, ``("power-law", q)`` or a
    :class:`SpatialKernel`) as a :class:`SpatialKernel`; q must be finite, > D/2 (``dim`` given) and
    <= 1e6. Errors name ``spatial_kernel``."""
    kern = SpatialKernel() if spatial_kernel is None else SpatialKernel.parse(spatial_kernel)
    if dim is not None:
        kern.check_dim(int(dim))
    return kern


def spatial_kernel_label(spatial_kernel: Any):
    """The ``spatial_kernel=`` value (``"gaussian"`` or ``("power-law", q)``) of an engine kernel."""
    return check_spatial_kernel(spatial_kernel).label


def phi0(D: int, s: float) -> float:
    """phi_D(0; s) = (2 pi s^2)^(-D/2) (finite for s in the model's PARAM_RANGE)."""
    return (2.0 * math.pi * s * s) ** (-0.5 * D)


def spatial_log_peak(D: int, h: float, q: float = 0.0) -> float:
    """log f(0) of the spatial trigger density with scale ``h``: log phi_D(0; h) = -(D/2) log(2 pi h^2)
    (Gaussian, ``q = 0``) or log(c_{D,q} h^(-D)), c_{D,q} = Gamma(q) / (Gamma(q - D/2) pi^(D/2)), for the
    power law c_{D,q} h^(-D) (1 + r^2/h^2)^(-q) (``q > D/2``); through lgamma, so finite for q up to 1e6."""
    if q == 0.0:
        return -0.5 * D * math.log(2.0 * math.pi * h * h)
    return math.lgamma(q) - math.lgamma(q - 0.5 * D) - 0.5 * D * math.log(math.pi) - D * math.log(h)


def spatial_peak(D: int, h: float, q: float = 0.0) -> float:
    """f(0) of the spatial trigger density (units 1/x^D): :func:`phi0` for the Gaussian (``q = 0``),
    c_{D,q} h^(-D) for the power law (see :func:`spatial_log_peak`)."""
    if q == 0.0:
        return phi0(D, h)
    return math.exp(spatial_log_peak(D, h, q))


def trigger_scale(D: int, h: float, omega: float, p: float = 0.0, omega2: float | None = None,
                  w: float | None = None, q: float = 0.0) -> float:
    """Constant factor of the trigger kernel: omega phi_D(0; h) (exponential, ``p = 0``) or
    (p - 1) omega phi_D(0; h) (power-law, the density (p - 1) omega (1 + omega dt)^(-p) of
    Omori-Utsu form with c = 1/omega); the pair term is exp(-(r^2/(2h^2) + time term)).
    With ``omega2``, ``w`` (sum of two exponentials): (w omega + (1 - w) omega2) phi_D(0; h), the
    pair term being weighted by :func:`exp2_weights`. ``q > 0`` (spatial power law): phi_D(0; h) is
    replaced by the spatial kernel's peak c_{D,q} h^(-D) (:func:`spatial_peak`) and the pair term's
    spatial part is exp(-q log(1 + r^2/h^2))."""
    f0 = spatial_peak(D, h, q)
    if omega2 is not None:
        return (w * omega + (1.0 - w) * omega2) * f0
    return (omega if p == 0.0 else (p - 1.0) * omega) * f0


def exp2_weights(omega: float, omega2: float, w: float) -> tuple[float, float]:
    """(c1, c2): the sum-of-exponentials pair term is c1 exp(-(q + omega dt)) + c2 exp(-(q + omega2 dt))
    times :func:`trigger_scale`; c1 + c2 = 1, c1 = w omega / (w omega + (1 - w) omega2)."""
    a1, a2 = w * omega, (1.0 - w) * omega2
    return a1 / (a1 + a2), a2 / (a1 + a2)
