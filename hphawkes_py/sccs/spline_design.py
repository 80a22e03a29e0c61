"""Age, season and calendar-time splines in an SCCS design: their bins as pseudo-eras.

The spline terms of :mod:`.splines` enter the conditional likelihood through covariates that
are constant within each row, so the observation time is cut at each month of age and each
calendar month. :class:`SplineRequest` checks the options of
:meth:`~.data.SCCSData.from_eras` (``age_knots``, ``season_knots``, ``calendar_knots``,
``day_origin``) and turns each person's months into pseudo-eras with codes after the
exposures; the interval construction of :mod:`.design` cuts at them like at any era, and
:class:`SplineBins` finally replaces each bin's indicator by the basis values of its bin.
"""
from __future__ import annotations

import numpy as np

from .._validate import check_int, describe
from ._tables import show
from .splines import SplineTerm, age_bin_of, age_bin_start

__all__ = ["SplineRequest", "SplineBins"]


def _check_knots(value, name, *, minimum):
    """None, a knot count (int >= minimum) or an increasing array of finite knots."""
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a number of knots or an array of knots, got {describe(value)}")
    if isinstance(value, (int, np.integer)):
        return check_int(value, name, minimum=minimum)
    try:
        k = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number of knots or an array of knots, got {describe(value)}") from None
    if k.ndim != 1 or k.shape[0] < minimum or not np.isfinite(k).all() or np.any(np.diff(k) <= 0):
        raise ValueError(f"{name} must be at least {minimum} finite, strictly increasing knots, got "
                         f"{k.tolist() if k.size < 20 else describe(value)}")
    return k


def _quantile_knots(values, n, lo, hi, name):
    """n knots at the 0..1 quantiles of ``values``, the ends moved out to ``lo``/``hi``."""
    if values.size == 0:
        raise ValueError(f"{name}: no outcome inside the observation periods to place the knots at")
    k = np.quantile(values.astype(np.float64), np.linspace(0.0, 1.0, n))
    k[0], k[-1] = min(k[0], lo), max(k[-1], hi)
    k = np.unique(k)
    if k.shape[0] < 2:
        raise ValueError(f"{name}: the person-time spans a single day ({lo}); give explicit knots")
    return k


def _refuse_outside_knots(lo, hi, knots, persons, what, unit, span):
    """Refuse persons whose observed range ``lo..hi`` leaves explicit knots (the spline is
    not defined there); ``what``, ``unit`` and ``span`` word the message."""
    bad = (lo < knots[0]) | (hi > knots[-1])
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"{what} must lie within the knots [{knots[0]:g}, {knots[-1]:g}]{unit}; {int(bad.sum())} person(s) "
            f"outside, first person_id={show(persons[i])} ({span.format(lo[i], hi[i])})")


def _each_bin(first, last):
    """Every (person, bin) pair for inclusive bin ranges ``first..last`` per person."""
    n = last - first + 1
    person = np.repeat(np.arange(first.shape[0], dtype=np.int64), n)
    k = np.repeat(first, n) + (np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n))
    return person, k


def _bin_widths(specs):
    """Number of bin codes per pseudo-era family: age bins, then (shared) month bins."""
    widths, seen = [], set()
    for term, offset, n_bins, _ in specs:
        if offset not in seen:
            seen.add(offset)
            widths.append(n_bins)
    return widths


class SplineBins:
    """Pseudo-eras of the month-of-age and calendar-month bins, and their basis values.

    ``specs`` lists ``(term, first code, number of bins, x of each bin)``; the pseudo-eras are
    ``era_person, era_start, era_end`` (inclusive days) with codes ``era_code`` after the
    ``n_exposure`` exposure codes.
    """

    def __init__(self, n_exposure, specs, eras):
        self.n_exposure = n_exposure
        self.specs = specs
        self.terms = tuple(term for term, _, _, _ in specs)
        self.spline_ids = [c for t in self.terms for c in t.covariate_ids]
        self.n_codes = sum(_bin_widths(specs))
        # local codes -> global codes after the exposures
        base = 0
        ps, ss, es_, cs = [], [], [], []
        for (person, s, e, local), width in zip(eras, _bin_widths(specs)):
            ps.append(person)
            ss.append(s)
            es_.append(e)
            cs.append(n_exposure + base + local)
            base += width
        self.era_person = np.concatenate(ps)
        self.era_start = np.concatenate(ss)
        self.era_end = np.concatenate(es_)
        self.era_code = np.concatenate(cs).astype(np.int64)

    def to_spline_columns(self, design, cov_ids):
        """Replace the bin indicators of the design's non-zeros by the spline basis values."""
        n_exp = self.n_exposure
        col = design.nnz_col
        is_bin = col >= n_exp
        rows, codes = design.nnz_row[is_bin], col[is_bin] - n_exp
        keep_row, keep_col = design.nnz_row[~is_bin], col[~is_bin]
        new_rows, new_cols, new_vals = [keep_row], [keep_col], [np.ones(keep_row.shape[0])]
        ids = list(np.asarray(cov_ids).tolist())
        next_col = n_exp
        for term, offset, n_bins, x in self.specs:
            sel = (codes >= offset) & (codes < offset + n_bins)
            r, b = rows[sel], codes[sel] - offset
            B = term.basis(x)  # (n_bins, n_coef)
            vals = B[b]  # (n_nnz_rows, n_coef)
            rr, cc = np.nonzero(vals)
            new_rows.append(r[rr])
            new_cols.append(next_col + cc)
            new_vals.append(vals[rr, cc])
            next_col += B.shape[1]
            ids.extend(term.covariate_ids)
        design.nnz_row = np.concatenate(new_rows)
        design.nnz_col = np.concatenate(new_cols).astype(np.int64)
        design.nnz_val = np.concatenate(new_vals)
        clash = set(np.asarray(cov_ids).tolist()) & set(self.spline_ids)
        if clash:
            raise ValueError(f"eras: covariate id(s) {sorted(map(str, clash))[:10]} clash with the spline covariate names; "
                             "rename them")
        if all(isinstance(v, str) for v in ids):
            return np.asarray(ids, dtype=str)
        return np.asarray(ids, dtype=object)


class SplineRequest:
    """The age/season/calendar spline options of :meth:`SCCSData.from_eras`, checked."""

    def __init__(self, age_knots, season_knots, calendar_knots, day_origin):
        self.age = _check_knots(age_knots, "age_knots", minimum=2)
        self.season = _check_knots(season_knots, "season_knots", minimum=3)
        self.calendar = _check_knots(calendar_knots, "calendar_knots", minimum=2)
        if isinstance(self.season, np.ndarray) and (self.season[0] < 0 or self.season[-1] >= 12):
            raise ValueError(f"season_knots must be months of the year in [0, 12), got {self.season.tolist()}")
        try:
            origin = np.datetime64(day_origin, "D")
        except (TypeError, ValueError):
            raise ValueError(f"day_origin must be a calendar date such as '1970-01-01', got {describe(day_origin)}") from None
        if np.isnat(origin):
            raise ValueError(f"day_origin must be a calendar date such as '1970-01-01', got {describe(day_origin)}")
        self.origin = int(origin.astype(np.int64))  # days since 1970-01-01

    @property
    def any(self):
        return self.age is not None or self.season is not None or self.calendar is not None

    def _month_of(self, day):
        return (day + self.origin).astype("datetime64[D]").astype("datetime64[M]").astype(np.int64)

    def _month_start(self, month):
        return month.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64) - self.origin

    def bins(self, persons, os_, oe_, birth, out_person, out_day, n_exposure) -> SplineBins:
        """The bins of every requested term for persons observed on days ``os_..oe_``
        (``out_person``/``out_day``: the outcomes inside observation, which place quantile knots)."""
        eras = []  # (person, start, end, local code)
        specs = []
        offset = 0
        if self.age is not None:
            era, spec = self._age_bins(persons, os_, oe_, birth, out_person, out_day)
            eras.append(era)
            specs.append((spec[0], offset, spec[1], spec[2]))
            offset += spec[1]
        if self.season is not None or self.calendar is not None:
            era, month_specs = self._month_bins(persons, os_, oe_, out_day)
            eras.append(era)
            specs.extend((term, offset, n_months, x) for term, n_months, x in month_specs)
        return SplineBins(n_exposure, specs, eras)

    def _age_bins(self, persons, os_, oe_, birth, out_person, out_day):
        """Month-of-age pseudo-eras and the age term: ((person, start, end, local code),
        (term, number of bins, midpoint age of each bin clipped to the knots))."""
        a0, a1 = os_ - birth, oe_ - birth
        if isinstance(self.age, np.ndarray):
            _refuse_outside_knots(a0, a1, self.age, persons, "age_knots: ages under observation", " days",
                                  "ages {}..{} days")
            knots = self.age
        else:
            knots = _quantile_knots(out_day - birth[out_person], self.age, int(a0.min()), int(a1.max()), "age_knots")
        k0, k1 = age_bin_of(a0), age_bin_of(a1)
        kmin = int(k0.min())
        person, k = _each_bin(k0, k1)
        era = (person, birth[person] + age_bin_start(k), birth[person] + age_bin_start(k + 1) - 1, k - kmin)
        kk = np.arange(kmin, int(k1.max()) + 1)
        x = np.clip((age_bin_start(kk) + age_bin_start(kk + 1) - 1) / 2.0, knots[0], knots[-1])
        term = SplineTerm("age", tuple(f"age_{i + 1}" for i in range(knots.shape[0] + 1)), "bspline", knots,
                          "days of age")
        return era, (term, kk.shape[0], x)

    def _month_bins(self, persons, os_, oe_, out_day):
        """Calendar-month pseudo-eras, shared by season and calendar time: ((person, start,
        end, local code), [(term, number of months, x of each month), ...])."""
        m0, m1 = self._month_of(os_), self._month_of(oe_)
        mmin = int(m0.min())
        person, m = _each_bin(m0, m1)
        era = (person, self._month_start(m), self._month_start(m + 1) - 1, m - mmin)
        mm = np.arange(mmin, int(m1.max()) + 1)
        n_months = mm.shape[0]
        specs = []
        if self.season is not None:
            if isinstance(self.season, np.ndarray):
                knots = np.concatenate([self.season, [self.season[0] + 12.0]])
            else:
                knots = np.linspace(0.0, 12.0, self.season + 1)
            term = SplineTerm("season", tuple(f"season_{i + 1}" for i in range(knots.shape[0] - 2)), "cyclic",
                              knots, "month of the year")
            specs.append((term, n_months, np.mod(mm, 12) + 0.5))
        if self.calendar is not None:
            d0, d1 = self._month_start(mm), self._month_start(mm + 1) - 1
            if isinstance(self.calendar, np.ndarray):
                _refuse_outside_knots(os_, oe_, self.calendar, persons, "calendar_knots: observation days", "",
                                      "days {}..{}")
                knots = self.calendar
            else:
                knots = _quantile_knots(out_day, self.calendar, int(os_.min()), int(oe_.max()), "calendar_knots")
            term = SplineTerm("calendar", tuple(f"calendar_{i + 1}" for i in range(knots.shape[0] + 1)), "bspline",
                              knots, "day")
            specs.append((term, n_months, np.clip((d0 + d1) / 2.0, knots[0], knots[-1])))
        return era, specs
