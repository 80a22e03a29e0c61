"""Numbers as SaTScan's reports print them, the category lines of its ordinal/multinomial clusters and the
normal models' cluster attributes.

A leaf module (it imports nothing of the package), so that the result objects, the report writer and
the geometry writers can all format the same way.
"""
from __future__ import annotations

import math

import numpy as np

#: the normal models: means and variances per cluster, no expected count
NORMAL_MODELS = ("normal", "weighted_normal", "space_time_normal", "space_time_weighted_normal", "temporal_normal",
                 "temporal_weighted_normal")
#: their cluster attributes as SaTScan writes them: (.col column, report label, cluster table column), in
#: SaTScan's order; the weighted ones only where the cluster table has them
NORMAL_COLUMNS = (("WEIGHT_IN", "Total weights", "weight_inside"), ("MEAN_IN", "Mean inside", "mean_inside"),
                  ("MEAN_OUT", "Mean outside", "mean_outside"), ("VARIANCE", "Variance", "variance"),
                  ("STD", "Standard deviation", "std"),
                  ("W_MEAN_IN", "Weighted mean inside", "weighted_mean_inside"),
                  ("W_MEAN_OUT", "Weighted mean outside", "weighted_mean_outside"),
                  ("W_VARIANCE", "Weighted variance", "weighted_variance"),
                  ("W_STD", "Weighted std deviation", "weighted_std"))

__all__ = ["_significant", "_population_text", "category_report_lines"]


def _significant(value: float, digits: int = 2) -> str:
    """SaTScan's ``getValueAsString``: ``digits`` decimals, more below 1 so that ``digits``
    significant digits show (0 as "0")."""
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return "infinity" if value > 0 else "-infinity"
    prec = digits
    if abs(value) < 1:
        prec += math.ceil(abs(math.log10(abs(value)))) - 1
    return f"{value:.{prec}f}"


def _population_text(p: float) -> str:
    """SaTScan's ``CCluster::GetPopulationAsString``."""
    if p < 0.5:
        return f"{p:g}"
    return f"{p:.1f}" if p < 1 else f"{p:.0f}"


def _label_text(label) -> str:
    """A category's label as SaTScan prints it: text as given, whole numbers without a decimal point."""
    if isinstance(label, (float, np.floating)):
        return str(int(label)) if float(label).is_integer() else format(float(label), ".15g")
    return str(label)


def category_report_lines(cl) -> list:
    """The ``(label, value)`` lines of SaTScan's report for the category table of cluster ``cl`` (a
    row of an ordinal or multinomial result's ``clusters``), as ``DisplayClusterDataOrdinal`` prints
    them: ``Total cases``, ``Category`` (pooled categories in one bracket), then per group of categories
    ``Number of cases``, ``Expected cases``, ``Observed / expected``, ``Relative risk`` ("infinity"
    where every case of the group is inside) and ``Percent cases in area``, joined by ", "."""
    def join(values, digits=2):
        return ", ".join(_significant(float(v), digits) for v in values)

    return [("Total cases", _population_text(float(cl.cases))),
            ("Category", ", ".join("[" + ", ".join(_label_text(v) for v in g) + "]" for g in cl.categories)),
            ("Number of cases", ", ".join(str(int(v)) for v in cl.observed_by_category)),
            ("Expected cases", join(cl.expected_by_category)),
            ("Observed / expected", join(cl.ode_by_category)),
            ("Relative risk", join(cl.relative_risk_by_category)),
            ("Percent cases in area", join(cl.percent_by_category, 1))]


# SaTScan's AsciiPrintFormat (the main report's cluster blocks)
_LABEL = 22        # SaTScan's AsciiPrintFormat: cluster labels, one data set
_SUMMARY_LABEL = 35
_RIGHT = 95


def _block_line(label: str, value: str, number: int | None, rank: int, label_width: int = _LABEL) -> str:
    """One ``label....: value`` line of a cluster block (labels padded to ``label_width``), wrapped at SaTScan's
    right margin."""
    left = 2 + len(str(rank)) - 1
    data_left = label_width + left + 2
    head = f"{rank}." + label.ljust(label_width, ".") + ": " if number is not None else \
        " " * left + label.ljust(label_width, ".") + ": "
    width = _RIGHT - data_left
    out, rest = [], value
    while len(rest) > width:
        cut = rest.rfind(" ", 0, width + 1)
        cut = width if cut <= 0 else cut
        out.append(rest[:cut])
        rest = rest[cut + 1:] if rest[cut:cut + 1] == " " else rest[cut:]
    out.append(rest)
    return head + ("\n" + " " * data_left).join(out)
