"""Loaders for the data sets bundled in ``hphawkes_py/data/`` (also ``data/`` at the repository root).

Every loader reads the package's own copy (large files are gzipped), so it
works from a wheel, an editable install or a source checkout alike. Each
docstring gives provenance, units and the number of rows; the README.md next
to each data folder has the full provenance and licences.
"""
from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

__all__ = [
    "path",
    "list_files",
    "load_dc_gunshots",
    "load_redwood",
    "load_point_pattern",
    "load_zhang2017_points",
    "zhang2017_mask_path",
    "load_grave",
    "load_nhumberside",
    "load_ny_leukemia",
    "satscan_sample_path",
    "load_oxford",
    "load_infert",
    "load_cpr_test",
    "load_faithful",
    "load_mixture_table",
    "load_flow_cytometry",
]


def _root() -> Path:
    return Path(str(resources.files("hphawkes_py") / "data"))


def path(relative: str) -> Path:
    """Absolute path of a bundled data file (or of a folder of them).

    Parameters
    ----------
    relative : str
        The file's path relative to the data folder, e.g. ``"kde/zhang2017/redwood.asc.gz"``
        (:func:`list_files` lists them all), or a folder's, e.g. ``"scan/satscan_sample_data"``.

    Returns
    -------
    pathlib.Path
        The absolute path of the package's own copy of the file or folder.

    Raises
    ------
    TypeError
        ``relative`` is not a string or path.
    ValueError
        ``relative`` is absolute, empty, or leads outside the data folder (``..``, links).
    FileNotFoundError
        The file is not bundled; the message lists what is in that folder.

    Examples
    --------
    >>> hp.datasets.path("kde/zhang2017/redwood.asc.gz").name
    'redwood.asc.gz'
    """
    import os

    if not isinstance(relative, (str, os.PathLike)):
        raise TypeError(f"relative must be a path (str) inside the data folder, got {type(relative).__name__}")
    rel = Path(relative)
    if rel.is_absolute() or rel.anchor or str(relative).strip() in ("", "."):
        raise ValueError(f"relative must be a path inside the data folder such as 'kde/zhang2017/redwood.asc.gz' "
                         f"(see hp.datasets.list_files()), got {str(relative)!r}")
    root = _root().resolve()
    p = (root / rel).resolve()
    if not p.is_relative_to(root) or p == root:
        raise ValueError(f"relative must stay inside the data folder (see hp.datasets.list_files()), got "
                         f"{str(relative)!r}, which leads to {str(p)!r}")
    if not p.exists():
        folder = p.parent if p.parent.is_dir() else root
        have = sorted(q.name for q in folder.iterdir())
        where = f"{folder.relative_to(root).as_posix()}/" if folder != root else "the data folder"
        raise FileNotFoundError(f"no bundled data file {str(relative)!r}; {where} holds: {', '.join(have)}")
    return p


def list_files() -> list[str]:
    """All bundled data files, relative to the data folder.

    Returns
    -------
    list of str
        Sorted paths relative to the data folder (each can be passed to :func:`path`), the
        README files with each folder's provenance and licences included.

    Examples
    --------
    >>> files = hp.datasets.list_files()
    >>> "dc_gunshots/no_holidays.csv.gz" in files
    True
    """
    root = _root()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


# ----------------------------------------------------------------------------- Hawkes
_DC_VARIANTS = {
    "no_holidays": ("no_holidays.csv.gz", 54_582),
    "yes_holidays": ("yes_holidays.csv.gz", 84_296),
    "thinned": ("no_holidays_thinned.csv.gz", 50_114),
    "2010": ("dcData_2010.csv.gz", 5_022),
}


def load_dc_gunshots(variant: str = "no_holidays") -> pd.DataFrame:
    """Washington DC ShotSpotter gunshot events, 2006-2019 (Holbrook et al. 2021).

    Parameters
    ----------
    variant : {"no_holidays", "yes_holidays", "thinned", "2010"}
        ``"no_holidays"`` (54,582 events; Jul 1-6 and Dec 29-Jan 2 removed) is
        the paper's main analysis; ``"yes_holidays"`` keeps them (84,296);
        ``"thinned"`` also drops later events within 0.016 h and 0.1 km of an
        earlier one (50,114); ``"2010"`` is the year 2010 from hpHawkes (5,022).

    Returns
    -------
    pandas.DataFrame
        Columns ``x_km``, ``y_km`` (EPSG:2804 metres shifted to a zero minimum,
        divided by 1000: kilometres) and ``t_hours`` (hours since the first
        event), sorted by time. Source: repository andrewjholbrook/shot_spotter
        and the R package hpHawkes (see data/dc_gunshots/README.md).

    Examples
    --------
    >>> dc = hp.datasets.load_dc_gunshots("2010")
    >>> dc.shape
    (5022, 3)
    >>> list(dc.columns)
    ['x_km', 'y_km', 't_hours']
    """
    if variant not in _DC_VARIANTS:
        raise ValueError(f"variant must be one of {tuple(_DC_VARIANTS)}, got {variant!r}")
    fname, n = _DC_VARIANTS[variant]
    df = pd.read_csv(path(f"dc_gunshots/{fname}"))
    if len(df) != n or list(df.columns) != ["x_km", "y_km", "t_hours"]:
        raise RuntimeError(f"bundled file {fname} is corrupt: {len(df)} rows, columns {list(df.columns)}")
    return df


# ----------------------------------------------------------------------------- KDE
_POINT_PATTERNS = {
    "redwood": 62, "redwoodfull": 195, "japanesepines": 65, "cells": 42, "bei": 3604, "chorley": 1036,
}


def load_redwood():
    """Strauss's redwood seedlings as used by Zhang, Zhu & Huang (2017): 62 points in the unit square.

    Returns
    -------
    points : ndarray of shape (62, 2)
        spatstat's ``redwood`` reflected to y >= 0 (the authors' ``pntsRedwood.csv``).
    mask_path : pathlib.Path
        The authors' 128 x 128 raster of the unit square (``redwood.asc``, cell 1/128); read it with
        ``hphawkes_py.kde.Window.from_asc(mask_path)`` (the data loaders return plain data and
        paths, never method objects).

    Examples
    --------
    >>> points, mask_path = hp.datasets.load_redwood()
    >>> points.shape, mask_path.name
    ((62, 2), 'redwood.asc.gz')
    """
    pts = pd.read_csv(path("kde/zhang2017/pntsRedwood.csv")).to_numpy(dtype=np.float64)
    return pts, zhang2017_mask_path("redwood")


def load_point_pattern(name: str) -> pd.DataFrame:
    """A classic spatstat point pattern (from spatstat.data 3.0-0).

    Parameters
    ----------
    name : {"redwood", "redwoodfull", "japanesepines", "cells", "bei", "chorley"}
        ``redwood`` (62 points; window [0, 1] x [-1, 0]), ``redwoodfull`` (195), ``japanesepines``
        (65), ``cells`` (42) (unit square), ``bei`` (3,604; [0, 1000] x [0, 500] m), ``chorley``
        (1,036, km; column ``mark`` is larynx or lung; polygon window
        ``kde/chorley_window_polygon.csv``, raster ``kde/chorley_mask_0.1km.asc.gz``).

    Returns
    -------
    pandas.DataFrame
        Columns ``x``, ``y`` (and ``mark`` for chorley), one row per point.

    Examples
    --------
    >>> chorley = hp.datasets.load_point_pattern("chorley")
    >>> chorley.shape
    (1036, 3)
    >>> sorted(chorley["mark"].unique())
    ['larynx', 'lung']
    """
    if name not in _POINT_PATTERNS:
        raise ValueError(f"name must be one of {tuple(_POINT_PATTERNS)}, got {name!r}")
    return pd.read_csv(path(f"kde/{name}.csv"))


_ZHANG_POINTS = {"redwood": "pntsRedwood.csv", "sim50000": "pntsSim50000.csv.gz",
                 "sim100000": "pntsSim100000.csv.gz", "ebird": "ebird_80k.csv.gz"}
_ZHANG_MASKS = {"redwood": "redwood.asc.gz", "sim160000": "maskSim160000.asc.gz",
                "sim640000": "maskSim640000.asc.gz", "us_1km": "us_1km.zip"}


def load_zhang2017_points(name: str) -> np.ndarray:
    """Point sets of Zhang, Zhu & Huang (2017) (repository Guiming/GPUParallelSpatialAdaptiveKDE).

    Parameters
    ----------
    name : {"redwood", "sim50000", "sim100000", "ebird"}
        ``redwood`` (62), ``sim50000`` (50,000 Matern-cluster points in the unit square, the
        paper's Tables 1-3), ``sim100000`` (100,000), ``ebird`` (78,977 eBird checklist
        locations, projected metres).

    Returns
    -------
    ndarray of shape (n, 2)
        The points' coordinates, float64 (unit-square units, or metres for ``ebird``).

    Examples
    --------
    >>> hp.datasets.load_zhang2017_points("sim50000").shape
    (50000, 2)
    """
    if name not in _ZHANG_POINTS:
        raise ValueError(f"name must be one of {tuple(_ZHANG_POINTS)}, got {name!r}")
    return pd.read_csv(path(f"kde/zhang2017/{_ZHANG_POINTS[name]}"), skipinitialspace=True).to_numpy(np.float64)


def zhang2017_mask_path(name: str) -> Path:
    """Path of a study-area raster of Zhang, Zhu & Huang (2017).

    Parameters
    ----------
    name : {"redwood", "sim160000", "sim640000", "us_1km"}
        ``redwood`` (128 x 128 cells), ``sim160000`` (400 x 400), ``sim640000`` (800 x 800) over
        the unit square, ``us_1km`` (4548 x 2847, 1 km cells, contiguous US; a zip holding
        ``us_1km.asc``).

    Returns
    -------
    pathlib.Path
        The ESRI ASCII raster (gzipped or zipped); read it with ``hphawkes_py.kde.Window.from_asc``.

    Examples
    --------
    >>> mask = hp.kde.Window.from_asc(hp.datasets.zhang2017_mask_path("sim160000"))
    >>> mask.shape
    (400, 400)
    """
    if name not in _ZHANG_MASKS:
        raise ValueError(f"name must be one of {tuple(_ZHANG_MASKS)}, got {name!r}")
    return path(f"kde/zhang2017/{_ZHANG_MASKS[name]}")


# ----------------------------------------------------------------------------- scan
def load_grave() -> pd.DataFrame:
    """Medieval grave sites (Waller & Gotway 2005; R package smacpod).

    Returns
    -------
    pandas.DataFrame
        143 rows: 30 cases with a tooth deformity (``case`` = 1) and 113 controls. Columns
        ``id, x, y, mark, case`` (planar coordinates, units unknown).

    Examples
    --------
    >>> g = hp.datasets.load_grave()
    >>> len(g), int(g["case"].sum())
    (143, 30)
    """
    return pd.read_csv(path("scan/grave_points.csv"))


def load_nhumberside() -> pd.DataFrame:
    """SaTScan's North Humberside sample data (Cuzick & Edwards 1990): childhood leukaemia and lymphoma.

    Returns
    -------
    pandas.DataFrame
        191 postcode locations with 62 cases and 141 controls in all. Columns
        ``location_id, x, y, cases, controls``.

    Examples
    --------
    >>> nh = hp.datasets.load_nhumberside()
    >>> len(nh), int(nh["cases"].sum()), int(nh["controls"].sum())
    (191, 62, 141)
    """
    return pd.read_csv(path("scan/nhumberside_satscan_locations.csv"))


def load_ny_leukemia() -> pd.DataFrame:
    """Upstate New York leukaemia, 281 census tracts (Waller et al. 1994; R package smerc ``nydf``).

    Returns
    -------
    pandas.DataFrame
        Columns ``id, longitude, latitude, population, cases, x, y`` plus ``cases_floor`` =
        floor(cases) (integer; sum 552) and ``controls`` = population - cases_floor, as in the
        smerc/SaTScan comparisons. ``cases`` are non-integer (apportioned; sum 592); ``x``, ``y``
        are planar km.

    Examples
    --------
    >>> ny = hp.datasets.load_ny_leukemia()
    >>> len(ny), int(ny["cases_floor"].sum())
    (281, 552)
    """
    df = pd.read_csv(path("scan/ny_leukemia_smerc_nydf.csv"))
    df["cases_floor"] = np.floor(df["cases"]).astype(np.int64)
    df["controls"] = df["population"].astype(np.int64) - df["cases_floor"]
    return df


def satscan_sample_path(name: str) -> Path:
    """Path of a file from SaTScan's sample data.

    Parameters
    ----------
    name : str
        The file name, e.g. ``"grave.cas"``, ``"NHumberside.geo"``, ``"NHumbersideSpatialBernoulli.prm"``.

    Returns
    -------
    pathlib.Path
        The bundled copy; a parameter file (``.prm``) can be rerun with ``hp.scan.run_prm``.

    Examples
    --------
    >>> hp.datasets.satscan_sample_path("NHumberside.cas").name
    'NHumberside.cas'
    """
    return path(f"scan/satscan_sample_data/{name}")


# ----------------------------------------------------------------------------- SCCS
def load_oxford() -> pd.DataFrame:
    """MMR vaccination and meningitis, Oxford (Farrington & Whitaker; OHDSI Cyclops ``oxford``).

    Returns
    -------
    pandas.DataFrame
        38 intervals of 10 patients (one event each). Columns ``indiv`` (stratum), ``event``
        (0/1), ``interval`` (days), ``agegr`` (1/2), ``exgr`` (1 = in the risk window),
        ``loginterval``.

    Examples
    --------
    >>> ox = hp.datasets.load_oxford()
    >>> len(ox), ox["indiv"].nunique(), int(ox["event"].sum())
    (38, 10, 10)
    """
    return pd.read_csv(path("sccs/oxford.csv"))


def load_infert() -> pd.DataFrame:
    """R's ``datasets::infert``, for conditional logistic regression checks.

    Returns
    -------
    pandas.DataFrame
        248 rows in 83 strata: ``education, age, parity, induced, case, spontaneous, stratum,
        pooled.stratum``.

    Examples
    --------
    >>> inf = hp.datasets.load_infert()
    >>> len(inf), inf["stratum"].nunique()
    (248, 83)
    """
    return pd.read_csv(path("sccs/infert.csv"))


def load_cpr_test() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cyclops' sparse conditional-Poisson test data.

    Returns
    -------
    outcomes : DataFrame, 209 rows in 101 strata
        ``ROW_ID, STRATUM_ID, Y, TIME, ...`` (one row has TIME = 0; Cyclops' test sets it to 1).
    covariates : DataFrame, 33,760 rows, 2,634 covariate ids
        ``ROW_ID, STRATUM_ID, COVARIATE_ID, COVARIATE_VALUE``.

    Examples
    --------
    >>> outcomes, covariates = hp.datasets.load_cpr_test()
    >>> outcomes.shape, covariates.shape
    ((209, 8), (33760, 4))
    """
    return (pd.read_csv(path("sccs/cpr_test_outcomes.csv")), pd.read_csv(path("sccs/cpr_test_covariates.csv.gz")))


# ----------------------------------------------------------------------------- mixture
def load_faithful() -> pd.DataFrame:
    """Old Faithful geyser eruptions (R's ``datasets::faithful``).

    Returns
    -------
    pandas.DataFrame
        272 rows: ``eruptions`` (eruption length) and ``waiting`` (time to the next eruption),
        both in minutes.

    Examples
    --------
    >>> hp.datasets.load_faithful().shape
    (272, 2)
    """
    return pd.read_csv(path("mixture/faithful.csv"))


_MIXTURE_TABLES = ("banknote_mclust", "diabetes_mclust", "geyser_MASS", "iris", "thyroid_mclust", "wreath_mclust")


def load_mixture_table(name: str) -> pd.DataFrame:
    """A small classic multivariate data set, for mixture-model checks.

    Parameters
    ----------
    name : {"banknote_mclust", "diabetes_mclust", "geyser_MASS", "iris", "thyroid_mclust", "wreath_mclust"}
        ``banknote_mclust`` (200 x 7), ``diabetes_mclust`` (145 x 4), ``geyser_MASS`` (299 x 2),
        ``iris`` (150 x 5), ``thyroid_mclust`` (215 x 6), ``wreath_mclust`` (1000 x 2); from the R
        packages mclust and MASS and R's datasets.

    Returns
    -------
    pandas.DataFrame
        The columns as published, the known class where there is one included (``Species``,
        ``Status``, ``class``, ``Diagnosis``).

    Examples
    --------
    >>> hp.datasets.load_mixture_table("iris").shape
    (150, 5)
    """
    if name not in _MIXTURE_TABLES:
        raise ValueError(f"name must be one of {_MIXTURE_TABLES}, got {name!r}")
    return pd.read_csv(path(f"mixture/{name}.csv"))


def load_flow_cytometry(which: str = "facsdiva") -> pd.DataFrame:
    """Raw flow-cytometry events from FCS files shipped in the fcsparser wheel (MIT).

    ``"facsdiva"``: 83,411 events x 12 channels (BD FACSDiva, B-cell precursor panel; columns Time, FSC-A,
    FSC-W, SSC-A, FITC-A, PE-A, PerCP-A, PE-Cy7-A, PacificBlue-A, APC-A, Alexa700-A, APC-Cy7-A; linear
    0-262143). ``"facscalibur"``: 37,395 x 8 (FSC-H ... Time; channels 0-1023, log-amplified).
    Values are raw (no compensation or transform); the usual preprocessing is to drop Time and take
    ``arcsinh(x / 150)`` of the fluorescence channels.

    Parameters
    ----------
    which : {"facsdiva", "facscalibur"}
        Which of the two FCS files.

    Returns
    -------
    pandas.DataFrame
        One row per event, one column per channel.

    Examples
    --------
    >>> hp.datasets.load_flow_cytometry("facscalibur").shape
    (37395, 8)
    """
    files = {"facsdiva": "fcs_facsdiva_83411x12.csv.gz", "facscalibur": "fcs_facscalibur_hts_37395x8.csv.gz"}
    if which not in files:
        raise ValueError(f"which must be one of {tuple(files)}, got {which!r}")
    return pd.read_csv(path(f"mixture/{files[which]}"))
