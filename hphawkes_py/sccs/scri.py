"""Self-controlled risk interval (SCRI) design: risk and control intervals only.

In the SCCS design every unexposed day of the observation period is reference time. The
self-controlled risk interval design (Greene et al. 2010; SelfControlledCaseSeries'
``createScriIntervalData``) keeps only the risk windows and, per exposure era, a *control
interval* placed relative to the era (e.g. days 29-56 after a vaccination when the risk
window is days 1-28, or a pre-exposure interval). Days in neither are not observation: their
person-time and outcomes leave the design. The control interval is the reference: it has no
covariate of its own, and a day in both a risk window and a control interval counts as risk
time (SelfControlledCaseSeries removes the control covariate from every interval that has
it, after removing the intervals that have no covariate at all).

With risk time ``r`` and control time ``c`` for a person with ``n`` outcomes in them, the
conditional likelihood is binomial, ``P(outcome in risk) = r e^b / (r e^b + c)``, so the
estimate compares the outcome rates of the two intervals within persons.

:meth:`~.data.SCCSData.from_eras` builds the design with ``control_window=``; this module
holds its two steps: the control intervals as pseudo-eras (:func:`control_eras`) and the
restriction of the intervals to risk and control time (:func:`risk_or_control`).
"""
from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from .._validate import check_int, describe

__all__ = ["control_eras", "risk_or_control"]


def _one_window(w, name):
    """(start offset, end offset, start anchor, end anchor) of one control window: a pair, or a
    :class:`~.design.RiskWindow` (recognised by its anchors; it checked its own fields)."""
    if isinstance(w, (tuple, list)) and len(w) == 2:
        a = check_int(w[0], f"{name}[0]")
        b = check_int(w[1], f"{name}[1]")
        return a, b, "start", "end"
    if all(hasattr(w, k) for k in ("start", "end", "start_anchor", "end_anchor")) and not isinstance(w, Mapping):
        return w.start, w.end, w.start_anchor, w.end_anchor
    raise TypeError(f"{name} must be a pair (start_offset, end_offset) or a RiskWindow, got {describe(w)}")


def control_eras(control_window, cov_ids, cov_codes, era_person, era_start, era_end, control_code):
    """The control interval of every era of the exposures given a control window, as
    pseudo-eras of covariate code ``control_code``.

    Parameters
    ----------
    control_window : pair, RiskWindow or dict
        ``(start_offset, end_offset)``: days ``era start + start_offset .. era end +
        end_offset`` (inclusive; anchored like ``risk_start``/``risk_end``), or a
        :class:`~.design.RiskWindow` for other anchors (its label is not used), for the eras of
        every covariate; or ``{covariate_id: pair or RiskWindow}`` for the eras of the listed
        covariates only.
    cov_ids : ndarray
        The covariate ids of the eras (sorted).
    cov_codes, era_person, era_start, era_end : ndarray (n_eras,)
        Covariate code, person index and first and last day (inclusive) of every era.
    control_code : int
        The code of the control pseudo-covariate (one past the exposures').

    Returns
    -------
    person, start, end, code : ndarray
        One pseudo-era per control interval (days inclusive; ``end < start`` where the offsets
        make an empty interval, which the interval builder leaves out).

    Raises
    ------
    TypeError, ValueError
        A control window that is not a pair of integers or a RiskWindow; a dict naming a
        covariate id not in eras, or empty.
    """
    if isinstance(control_window, Mapping):
        if not control_window:
            raise ValueError("control_window is an empty dict; give {covariate_id: (start_offset, end_offset)}")
        pos = pd.Index(cov_ids).get_indexer(list(control_window))
        if np.any(pos < 0):
            unknown = [k for k, i in zip(control_window, pos) if i < 0]
            raise ValueError(f"control_window has covariate id(s) not in eras: {unknown[:10]}; "
                             f"eras has {list(cov_ids[:10])}")
        per_code = {int(i): _one_window(w, f"control_window[{k!r}]") for i, (k, w) in zip(pos, control_window.items())}
    else:
        one = _one_window(control_window, "control_window")
        per_code = {i: one for i in range(len(cov_ids))}
    parts_p, parts_s, parts_e = [], [], []
    for code, (a, b, sa, ea) in per_code.items():
        m = cov_codes == code
        parts_p.append(era_person[m])
        parts_s.append((era_start if sa == "start" else era_end)[m] + a)
        parts_e.append((era_start if ea == "start" else era_end)[m] + b)
    person = np.concatenate(parts_p).astype(np.int64)
    return (person, np.concatenate(parts_s), np.concatenate(parts_e),
            np.full(person.shape[0], control_code, dtype=np.int64))


def risk_or_control(design, control_code: int):
    """Which intervals of an unmerged :class:`~.design.IntervalDesign` lie in a risk window or a
    control interval (those with any covariate), and which stored non-zeros are not the control
    covariate (the reference): ``(keep_interval, keep_nnz)``.

    Raises
    ------
    ValueError
        No control interval reaches any observation period.
    """
    is_control = design.nnz_col == control_code
    if not is_control.any():
        raise ValueError("control_window: no control interval overlaps any observation period")
    keep = np.zeros(design.n_rows, dtype=bool)
    keep[design.nnz_row] = True
    return keep, ~is_control
