"""Flow cytometry data from FCS files: events, compensation and the standard transforms.

An FCS file (Flow Cytometry Standard 2.0, 3.0 or 3.1) holds one table of events x channels and a
TEXT segment of keywords: ``$PnN`` (the channel's short name, e.g. ``"FL1-A"``), ``$PnS`` (its
marker, e.g. ``"CD4 FITC"``), ``$PnR`` (its range) and, from the cytometer's software, a
*spillover* matrix.  :func:`read_fcs` returns the events as a :class:`pandas.DataFrame` in the
order they were recorded, compensated and transformed as asked, with the keywords in
``DataFrame.attrs``; :func:`read_fcs_folder` reads every FCS file of a folder (one sample each,
the input of a mixture fitted across samples).

The files are parsed by FlowIO (``pip install flowio``; the ``fcs`` extra of this package),
chosen among the maintained pure-Python readers because it reads FCS 2.0, 3.0 and 3.1 (integer,
float and ASCII data, log-amplified ``$PnE`` channels and gains ``$PnG`` decoded to linear
values), depends on NumPy alone and is kept up by the FlowKit team; fcsparser pins NumPy below 2
and readfcs brings anndata and zarr for the same parse (it reads through FlowIO).  The logicle
transform is FlowUtils' implementation of Moore & Parks (2012) (``pip install flowutils``, the
same team), needed only for ``transform="logicle"``.

Compensation (Roederer 2001): a fluorochrome's light reaches other detectors too, in fixed
proportions.  Row i of the spillover matrix S is the signal of fluorochrome i seen in each
detector (1 in its own), so the observed fluorescence of an event is ``x_obs = x_true @ S`` and
the compensated values are ``x_obs @ inv(S)`` on the channels the matrix names.  The matrix is
read from ``$SPILLOVER`` (FCS 3.1), else ``SPILL`` / ``$SPILL`` (written by BD FACSDiva and
FlowJo into 3.0 files); FCS 3.0's ``$COMP`` keyword names no channels and its specification does
not say whether it holds S or its inverse, so a file with only ``$COMP`` is refused unless
``compensate=False`` or a spillover matrix is given.
"""
from __future__ import annotations

import numbers
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from .._validate import check_bool, check_positive, describe

__all__ = ["read_fcs", "read_fcs_folder", "parse_spillover", "compensate", "arcsinh_transform",
           "logicle_transform"]

#: FCS versions whose layout FlowIO reads (FCS 3.2 adds per-channel data types it does not)
FCS_VERSIONS = ("2.0", "3.0", "3.1")
#: keywords that hold a spillover matrix, in the order they are looked up (FlowIO's lower-case keys)
SPILLOVER_KEYWORDS = ("spillover", "spill")
TRANSFORMS = (None, "arcsinh", "logicle")
_HEADER = re.compile(rb"^FCS(\d\.\d)")


def _flowio():
    try:
        import flowio
    except ImportError as exc:
        raise ImportError("reading FCS files needs the optional package flowio: "
                          "pip install flowio (or pip install 'hphawkes_py[fcs]')") from exc
    return flowio


def _fcs_path(path) -> Path:
    if not isinstance(path, (str, Path)):
        raise TypeError(f"path must be a str or pathlib.Path naming an FCS file, got {describe(path)}")
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"path: no such FCS file: '{p}'")
    if not p.is_file():
        raise ValueError(f"path must name a file, got the folder '{p}' (read_fcs_folder reads folders)")
    with open(p, "rb") as fh:
        head = fh.read(58)
    m = _HEADER.match(head)
    if m is None:
        raise ValueError(f"'{p}' is not an FCS file: its header starts with {head[:10]!r}, expected "
                         f"'FCS' and the version ({', '.join(FCS_VERSIONS)})")
    version = m.group(1).decode()
    if version not in FCS_VERSIONS:
        raise ValueError(f"'{p}' is an FCS {version} file; the reader handles FCS {', '.join(FCS_VERSIONS)}")
    if len(head) < 58:
        raise ValueError(f"'{p}' is not a complete FCS file: its header has {len(head)} bytes, expected 58")
    return p


def _read_flowdata(p: Path):
    flowio = _flowio()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fd = flowio.FlowData(str(p))
    except flowio.exceptions.MultipleDataSetsError as exc:
        raise ValueError(f"'{p}' holds several data sets ($NEXTDATA); split it into one file per data set "
                         f"(flowio.read_multiple_data_sets reads them)") from exc
    except NotImplementedError as exc:
        raise ValueError(f"'{p}': {exc} (only list-mode data, $MODE = L, holds events)") from exc
    except (flowio.exceptions.FlowIOException, KeyError, ValueError, IndexError, OSError, EOFError) as exc:
        raise ValueError(f"'{p}' could not be parsed as an FCS file: {type(exc).__name__}: {exc}") from exc
    for w in caught:
        # FlowIO reads an unknown byte order as the machine's own and skips odd bit widths, with
        # a warning only: values that would be silently wrong
        msg = str(w.message)
        if "byte order" in msg or "bit width" in msg:
            raise ValueError(f"'{p}' cannot be read correctly: {msg.strip()} ($BYTEORD = "
                             f"{fd.text.get('byteord')!r}, $DATATYPE = {fd.text.get('datatype')!r})")
        warnings.warn(w.message, w.category, stacklevel=3)
    if fd.events is None:
        raise ValueError(f"'{p}' has no readable DATA segment")
    return fd


def parse_spillover(text: str, names=None) -> pd.DataFrame:
    """Parse the value of an FCS ``$SPILLOVER`` / ``SPILL`` keyword into a labelled matrix.

    Parameters
    ----------
    text : str
        ``"n,name_1,...,name_n,s_11,s_12,...,s_nn"``: the number of channels, their ``$PnN``
        names, then the n x n spillover fractions row by row (unitless; row i is fluorochrome
        i's signal in each detector, 1 on the diagonal).
    names : sequence of str, optional
        The file's ``$PnN`` names: when given, every channel the matrix names must be one of them.

    Returns
    -------
    pandas.DataFrame (n, n)
        The spillover matrix S, index and columns the channel names.

    Examples
    --------
    >>> from hphawkes_py.mixture import parse_spillover
    >>> parse_spillover("2,FL1-A,FL2-A,1,0.2,0.05,1")
           FL1-A  FL2-A
    FL1-A   1.00    0.2
    FL2-A   0.05    1.0
    """
    if not isinstance(text, str):
        raise TypeError(f"the spillover keyword must be a str, got {describe(text)}")
    parts = [t.strip() for t in text.strip().split(",")]
    try:
        n = int(parts[0])
    except ValueError:
        raise ValueError(f"spillover keyword must start with the number of channels, got {parts[0]!r} "
                         f"(value {text[:60]!r})") from None
    if n < 1 or len(parts) != 1 + n + n * n:
        raise ValueError(f"spillover keyword for n = {n} channels must hold 1 + n + n^2 = {1 + n + n * n} "
                         f"comma-separated fields, got {len(parts)}")
    chans = parts[1:1 + n]
    if len(set(chans)) != n:
        raise ValueError(f"spillover keyword names a channel twice: {chans}")
    try:
        values = np.array([float(v) for v in parts[1 + n:]]).reshape(n, n)
    except ValueError as exc:
        raise ValueError(f"spillover keyword has a value that is not a number ({exc})") from None
    if not np.isfinite(values).all():
        raise ValueError("spillover matrix must be finite, got NaN/inf")
    if names is not None:
        missing = [c for c in chans if c not in list(names)]
        if missing:
            raise ValueError(f"spillover matrix names channels {missing} that are not in the file; "
                             f"its channels ($PnN) are {list(names)}")
    return pd.DataFrame(values, index=chans, columns=chans)


def compensate(events: pd.DataFrame, spillover: pd.DataFrame) -> pd.DataFrame:
    """Compensate fluorescence: ``x_obs @ inv(S)`` on the channels the spillover matrix names.

    Parameters
    ----------
    events : pandas.DataFrame (n, p)
        Events in linear units (the cytometer's scale), columns named as in ``spillover``.
    spillover : pandas.DataFrame (q, q)
        Spillover matrix S (unitless), index and columns the same q channel names, all columns
        of ``events``; row i is fluorochrome i's signal in each detector.

    Returns
    -------
    pandas.DataFrame (n, p)
        A copy of ``events`` whose q named columns are ``events[names] @ inv(S)``; the other
        columns (scatter, time) unchanged, the row and column order kept.

    Examples
    --------
    Two fluorochromes; 20% of the first one's light reaches the second detector:

    >>> import pandas as pd
    >>> from hphawkes_py.mixture import compensate
    >>> S = pd.DataFrame([[1.0, 0.2], [0.0, 1.0]], index=["FL1", "FL2"], columns=["FL1", "FL2"])
    >>> observed = pd.DataFrame({"FSC": [5.0], "FL1": [100.0], "FL2": [20.0]})
    >>> compensate(observed, S).round(9) + 0.0  # the inverse's last bits depend on the CPU's BLAS kernels
       FSC    FL1  FL2
    0  5.0  100.0  0.0
    """
    if not isinstance(events, pd.DataFrame):
        raise TypeError(f"events must be a pandas DataFrame, got {describe(events)}")
    if not isinstance(spillover, pd.DataFrame):
        raise TypeError(f"spillover must be a pandas DataFrame with channel names as index and columns, "
                        f"got {describe(spillover)}")
    names = list(spillover.columns)
    if list(spillover.index) != names:
        raise ValueError(f"spillover must have the same channel names, in the same order, as index and "
                         f"columns; got index {list(spillover.index)} and columns {names}")
    missing = [c for c in names if c not in events.columns]
    if missing:
        raise ValueError(f"spillover names channels {missing} that are not columns of events; "
                         f"the columns are {list(events.columns)}")
    S = spillover.to_numpy(dtype=np.float64)
    if not np.isfinite(S).all():
        raise ValueError("spillover must be finite, got NaN/inf")
    cond = np.linalg.cond(S)
    if not np.isfinite(cond) or cond > 1e12:
        raise ValueError(f"spillover matrix is singular or nearly so (condition number {cond:.3g}); "
                         f"it cannot be inverted to compensate")
    out = events.copy()
    X = events[names].to_numpy(dtype=np.float64)
    # x_obs = x_true @ S, so x_true = x_obs @ inv(S): solve S^T x_true^T = x_obs^T
    out[names] = np.linalg.solve(S.T, X.T).T
    return out


# read_fcs's argument of the same name shadows the function there
_compensate_events = compensate


def arcsinh_transform(x, cofactor: float = 5.0) -> np.ndarray:
    """``arcsinh(x / cofactor)``: linear near 0, logarithmic for ``|x| >> cofactor``.

    Parameters
    ----------
    x : array_like
        Fluorescence values (linear units of the cytometer).
    cofactor : float, default 5.0
        Width of the linear region, same units as ``x`` (5 is usual for mass cytometry, about
        150 for fluorescence).

    Returns
    -------
    ndarray
        Transformed values (unitless), same shape as ``x``.

    Examples
    --------
    >>> from hphawkes_py.mixture import arcsinh_transform
    >>> print(np.round(arcsinh_transform([0.0, 5.0, 500.0], cofactor=5.0), 4))
    [0.     0.8814 5.2983]
    """
    c = check_positive(cofactor, "cofactor")
    return np.arcsinh(np.asarray(x, dtype=np.float64) / c)


def logicle_transform(x, T: float = 262144.0, W: float = 0.5, M: float = 4.5, A: float = 0.0) -> np.ndarray:
    """Logicle transform (Parks, Roederer & Moore 2006; Moore & Parks 2012), through FlowUtils.

    ``logicle(x)`` is the root y of ``B(y) = x``, the biexponential ``B(y) = a e^{b y} - c e^{-d y} - f``
    (reflected about its zero for y below it) whose constants make it linear over about W
    decades around 0 and logarithmic over M decades up to T, which maps to 1.

    Parameters
    ----------
    x : array_like
        Values in linear units (any sign).
    T : float, default 262144
        Top of the scale (linear units, > 0): ``logicle(T) = 1``.
    W : float, default 0.5
        Width of the linear region in decades (>= 0, and ``2 W <= M``).
    M : float, default 4.5
        Decades of the logarithmic region (> 0).
    A : float, default 0
        Extra negative decades (>= 0, ``-W <= A <= M - 2 W``).

    Returns
    -------
    ndarray
        Transformed values on the display scale (0 ... 1 between ``-T 10^-(M+A)``-ish and T).

    Examples
    --------
    ``logicle(0) = (W + A) / (M + A)``:

    >>> from hphawkes_py.mixture import logicle_transform
    >>> print(np.round(logicle_transform([0.0, 262144.0]), 6))
    [0.111111 1.      ]
    """
    T = check_positive(T, "T")
    M = check_positive(M, "M")
    W = check_positive(W, "W", strict=False)
    if isinstance(A, bool) or not isinstance(A, numbers.Real) or not np.isfinite(A):
        raise TypeError(f"A must be a finite real number, got {describe(A)}")
    if 2 * W > M:
        raise ValueError(f"logicle needs 2 W <= M, got W = {W} and M = {M}")
    if not -W <= A <= M - 2 * W:
        raise ValueError(f"logicle needs -W <= A <= M - 2 W = {M - 2 * W}, got A = {A}")
    try:
        from flowutils.transforms import logicle
    except ImportError as exc:
        raise ImportError("transform='logicle' needs the optional package flowutils: pip install flowutils "
                          "(or pip install 'hphawkes_py[fcs]')") from exc
    arr = np.asarray(x, dtype=np.float64)
    out = logicle(arr.reshape(-1, 1).copy(), [0], t=T, m=M, w=W, a=float(A))
    return np.asarray(out, dtype=np.float64).reshape(arr.shape)


def _scale_top(channel: dict) -> float:
    """Largest value a channel can hold in the decoded units FlowIO returns (its $PnR range,
    divided by the gain $PnG; a log-amplified channel tops at f2 10^f1)."""
    decades, log0 = channel["pne"]
    if decades > 0:
        return float(log0 * 10.0 ** decades)
    gain = channel["png"]
    return float(channel["pnr"] / gain) if gain not in (0.0, 1.0) else float(channel["pnr"])


def _is_scatter_or_time(name: str) -> bool:
    u = name.upper()
    return u.startswith(("FSC", "SSC")) or u == "TIME"


def _select(requested, pnn, pns, arg="channels", among="of the file"):
    """Column indices of the requested channels, each matched by $PnN or $PnS (marker)."""
    if isinstance(requested, str):
        raise TypeError(f"{arg} must be a list of channel names or markers, got the str {requested!r} "
                        f"(write [{requested!r}] for one channel)")
    if not isinstance(requested, (list, tuple, np.ndarray, pd.Index)):
        raise TypeError(f"{arg} must be a list of channel names or markers, got {describe(requested)}")
    requested = list(requested)
    if not requested:
        raise ValueError(f"{arg} must name at least one channel, got an empty list")
    out = []
    for c in requested:
        if not isinstance(c, str):
            raise TypeError(f"{arg} must hold str names or markers, got {describe(c)}")
        by_name = [i for i, n in enumerate(pnn) if n == c]
        by_marker = [i for i, s in enumerate(pns) if s == c]
        hits = sorted(set(by_name) | set(by_marker))
        if not hits:
            avail = ", ".join(f"{n} ({s})" if s else n for n, s in zip(pnn, pns))
            raise ValueError(f"{arg}: {c!r} is neither a channel name ($PnN) nor a marker ($PnS) {among}; "
                             f"available: {avail}")
        if len(hits) > 1:
            raise ValueError(f"{arg}: {c!r} names several channels ({[pnn[i] for i in hits]}); "
                             f"select by the channel name ($PnN) instead")
        out.append(hits[0])
    dup = {pnn[i] for i in out if out.count(i) > 1}
    if dup:
        raise ValueError(f"{arg}: each channel may be asked for once, got {sorted(dup)} more than once")
    return out


def _spillover_of(text: dict, pnn, p: Path):
    for key in SPILLOVER_KEYWORDS:
        if key in text and text[key].strip():
            value = text[key]
            first = value.strip().split(",")[0].strip()
            if first in ("0", ""):
                continue
            try:
                return parse_spillover(value, names=pnn), ("$SPILLOVER" if key == "spillover" else "SPILL")
            except ValueError as exc:
                raise ValueError(f"'{p}': keyword {key.upper()}: {exc}") from None
    return None, None


def _in_file(p: Path, exc: Exception, where: str = "") -> Exception:
    """The refusal ``exc`` with the file (and ``where`` in it, e.g. a channel) named first, so that a
    failure among the files of a folder says which file and what in it."""
    msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
    if str(p) in str(msg):
        return exc
    return (ValueError if isinstance(exc, KeyError) else type(exc))(f"'{p}'{where}: {msg}")


def read_fcs(path, channels=None, transform=None, cofactor: float = 5.0, compensate: bool = True, *,
             logicle=None, transform_channels=None, column_names: str = "pnn") -> pd.DataFrame:
    """Read the events of an FCS 2.0/3.0/3.1 file into a DataFrame: compensated and transformed as asked.

    Parameters
    ----------
    path : str or pathlib.Path
        The FCS file.
    channels : list of str, optional
        Channels to keep, in this order, each named by its ``$PnN`` name (e.g. ``"FL1-A"``) or
        its ``$PnS`` marker (e.g. ``"CD4"``).  Default: all channels, in the file's order.
    transform : {None, "arcsinh", "logicle"}, default None
        Applied after compensation to ``transform_channels``: ``"arcsinh"`` is
        ``arcsinh(x / cofactor)``; ``"logicle"`` is :func:`logicle_transform` with ``T`` the
        channel's top of scale unless ``logicle`` says otherwise.
    cofactor : float, default 5.0
        Arcsinh cofactor, linear units (5 for mass cytometry; about 150 for fluorescence).
    compensate : bool or pandas.DataFrame, default True
        True: apply the file's spillover matrix (``$SPILLOVER``, else ``SPILL``) when it has one
        (``attrs["compensated"]`` says whether it did); a file with only FCS 3.0's ``$COMP`` is
        refused (see the module notes).  A DataFrame: this spillover matrix (index and columns
        ``$PnN`` names) instead.  False: raw values.
    logicle : dict, optional
        Logicle parameters ``T``, ``W``, ``M``, ``A`` (see :func:`logicle_transform`); ``T``
        defaults to each channel's top of scale in the values returned (``$PnR / $PnG``, or
        ``f2 10^f1`` for a log-amplified channel, ``$PnE = f1,f2``), the others to 0.5, 4.5 and 0.
    transform_channels : list of str, optional
        Channels (``$PnN`` or ``$PnS``, among those kept) to transform.  Default: the kept
        channels except scatter (names starting with ``FSC``/``SSC``) and ``Time``.
    column_names : {"pnn", "pns"}, default "pnn"
        Name the columns by ``$PnN``, or by the ``$PnS`` marker (the ``$PnN`` name where a
        channel has no marker).

    Returns
    -------
    pandas.DataFrame (events, channels)
        Float64 values, one row per event in the file's order (none dropped).  ``attrs`` holds
        ``path``, ``version``, ``keywords`` (the TEXT segment, lower-case keys without ``$`` as
        FlowIO gives them), ``channels`` (``$PnN`` of each column), ``markers`` (``$PnS``),
        ``spillover`` (the matrix used as a dict of rows, or None), ``spillover_keyword``,
        ``compensated``, ``transform``, ``transformed_channels``.

    Raises
    ------
    FileNotFoundError
        No file at ``path``.
    ValueError
        Not an FCS file (or an FCS version other than 2.0/3.0/3.1), a corrupt file, a channel
        that is not in the file (the message lists those that are), a malformed or singular
        spillover matrix, a file with only ``$COMP`` and ``compensate=True``.
    ImportError
        flowio (or, for ``transform="logicle"``, flowutils) is not installed.

    Examples
    --------
    Write a small FCS 3.1 file with FlowIO, a spillover matrix in its TEXT segment, and read it
    back compensated, two channels selected by marker and name:

    >>> import flowio, tempfile, os
    >>> from hphawkes_py.mixture import read_fcs
    >>> events = np.array([[50.0, 100.0, 20.0], [60.0, 0.0, 30.0]])
    >>> path = os.path.join(tempfile.mkdtemp(), "tiny.fcs")
    >>> with open(path, "wb") as fh:
    ...     _ = flowio.create_fcs(fh, events.ravel().tolist(), ["FSC-A", "FL1-A", "FL2-A"],
    ...                       opt_channel_names=["", "CD4", "CD8"],
    ...                       metadata_dict={"spillover": "2,FL1-A,FL2-A,1,0.2,0,1"})
    >>> df = read_fcs(path, channels=["CD4", "FL2-A"])
    >>> df.round(9) + 0.0  # compensated: the inverse's last bits depend on the CPU's BLAS kernels
       FL1-A  FL2-A
    0  100.0    0.0
    1    0.0   30.0
    >>> df.attrs["compensated"], df.attrs["markers"]
    (True, ['CD4', 'CD8'])
    """
    p = _fcs_path(path)
    if transform not in TRANSFORMS:
        raise ValueError(f"transform must be one of {TRANSFORMS}, got {transform!r}")
    cofactor = check_positive(cofactor, "cofactor")
    if column_names not in ("pnn", "pns"):
        raise ValueError(f"column_names must be 'pnn' or 'pns', got {column_names!r}")
    if not isinstance(compensate, pd.DataFrame):
        compensate = check_bool(compensate, "compensate")
    lp = {"W": 0.5, "M": 4.5, "A": 0.0}
    if logicle is not None:
        if not isinstance(logicle, dict):
            raise TypeError(f"logicle must be a dict of T, W, M, A, got {describe(logicle)}")
        extra = set(logicle) - {"T", "W", "M", "A"}
        if extra:
            raise ValueError(f"logicle takes the keys T, W, M, A; got {sorted(extra)}")
        lp.update(logicle)
    if transform != "logicle" and logicle is not None:
        raise ValueError(f"logicle parameters were given but transform is {transform!r}, not 'logicle'")
    if transform is None and transform_channels is not None:
        raise ValueError("transform_channels was given but transform is None")

    fd = _read_flowdata(p)
    pnn, pns = list(fd.pnn_labels), [s or "" for s in fd.pns_labels]
    if len(set(pnn)) != len(pnn):
        dup = sorted({n for n in pnn if pnn.count(n) > 1})
        raise ValueError(f"'{p}' names channels twice ($PnN {dup}); columns would be ambiguous")
    try:
        X = fd.as_array(preprocess=True)
    except (ValueError, KeyError, IndexError, ZeroDivisionError, TypeError) as exc:
        raise ValueError(f"'{p}': the events could not be scaled to channel values ($PnE, $PnG): "
                         f"{type(exc).__name__}: {exc}") from exc
    if X.shape != (fd.event_count, fd.channel_count):
        raise ValueError(f"'{p}': $TOT = {fd.event_count} events x $PAR = {fd.channel_count} channels, "
                         f"but the DATA segment holds {np.asarray(fd.events).size} values")
    df = pd.DataFrame(X, columns=pnn)
    text = dict(fd.text)

    spill, spill_key = None, None
    if isinstance(compensate, pd.DataFrame):
        spill, spill_key = compensate, "argument"
    elif compensate:
        spill, spill_key = _spillover_of(text, pnn, p)
        if spill is None and "comp" in text:
            raise ValueError(f"'{p}' has only FCS 3.0's $COMP keyword, which names no channels and may hold "
                             f"the spillover matrix or its inverse: pass compensate=False for the raw values, "
                             f"or compensate=<spillover DataFrame, index and columns $PnN names>")
    if spill is not None:
        try:
            df = _compensate_events(df, spill)
        except ValueError as exc:
            src = "the compensate argument" if spill_key == "argument" else f"keyword {spill_key}"
            raise _in_file(p, exc, f" (spillover matrix from {src})") from exc

    try:
        keep = list(range(len(pnn))) if channels is None else _select(channels, pnn, pns)
    except ValueError as exc:
        raise _in_file(p, exc) from exc
    df = df.iloc[:, keep].copy()
    kept_pnn, kept_pns = [pnn[i] for i in keep], [pns[i] for i in keep]

    if transform is None:
        tcols = []
    elif transform_channels is None:
        tcols = [i for i, n in enumerate(kept_pnn) if not _is_scatter_or_time(n)]
    else:
        try:
            chosen = _select(transform_channels, kept_pnn, kept_pns, "transform_channels", "among the channels kept")
        except ValueError as exc:
            raise _in_file(p, exc) from exc
        tcols = sorted(chosen)
    for i in tcols:
        x = df.iloc[:, i].to_numpy()
        try:
            if transform == "arcsinh":
                y = arcsinh_transform(x, cofactor)
            else:
                T = lp.get("T", _scale_top(fd.channels[keep[i] + 1]))
                y = logicle_transform(x, T=T, W=lp["W"], M=lp["M"], A=lp["A"])
        except (ValueError, TypeError, KeyError) as exc:
            raise _in_file(p, exc, f", channel {kept_pnn[i]!r} ({transform} transform)") from exc
        df.iloc[:, i] = y

    if column_names == "pns":
        cols = [s if s else n for n, s in zip(kept_pnn, kept_pns)]
        if len(set(cols)) != len(cols):
            raise ValueError(f"column_names='pns': markers repeat among the kept channels ({cols}); "
                             f"use column_names='pnn'")
        df.columns = cols
    df.attrs = {
        "path": str(p),
        "version": fd.version,
        "keywords": text,
        "channels": kept_pnn,
        "markers": kept_pns,
        "spillover": None if spill is None else {"channels": list(spill.columns),
                                                 "matrix": spill.to_numpy().tolist()},
        "spillover_keyword": spill_key,
        "compensated": spill is not None,
        "transform": transform,
        "transformed_channels": [kept_pnn[i] for i in tcols],
    }
    return df


def read_fcs_folder(folder, pattern: str = "*.fcs", **kwargs):
    """Read every FCS file of a folder: one DataFrame per sample, all with the same columns.

    Parameters
    ----------
    folder : str or pathlib.Path
        The folder (not searched recursively).
    pattern : str, default ``"*.fcs"``
        Glob pattern of the file names, matched case-insensitively (``*.fcs`` finds ``A.FCS``).
    **kwargs
        Passed to :func:`read_fcs` for every file (``channels``, ``transform``, ...).

    Returns
    -------
    frames : list of pandas.DataFrame
        One per file, in the order of ``names``.
    names : list of str
        The sample names: file names without their extension, sorted.

    Examples
    --------
    >>> import flowio, tempfile, os
    >>> from hphawkes_py.mixture import read_fcs_folder
    >>> folder = tempfile.mkdtemp()
    >>> for name, value in [("donor_b", 2.0), ("donor_a", 1.0)]:
    ...     with open(os.path.join(folder, name + ".fcs"), "wb") as fh:
    ...         _ = flowio.create_fcs(fh, [value, 10 * value], ["FL1-A", "FL2-A"])
    >>> frames, names = read_fcs_folder(folder)
    >>> names, [f["FL1-A"].tolist() for f in frames]
    (['donor_a', 'donor_b'], [[1.0], [2.0]])
    """
    if not isinstance(folder, (str, Path)):
        raise TypeError(f"folder must be a str or pathlib.Path, got {describe(folder)}")
    d = Path(folder)
    if not d.is_dir():
        raise (FileNotFoundError if not d.exists() else ValueError)(f"folder: '{d}' is not a folder")
    if not isinstance(pattern, str):
        raise TypeError(f"pattern must be a str glob pattern, got {describe(pattern)}")
    rx = re.compile(_glob_to_regex(pattern), re.IGNORECASE)
    files = sorted(f for f in d.iterdir() if f.is_file() and rx.fullmatch(f.name))
    if not files:
        raise ValueError(f"folder '{d}' has no file matching {pattern!r}")
    names = [f.stem for f in files]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ValueError(f"folder '{d}': several files share the sample names {dup}")
    frames = [read_fcs(f, **kwargs) for f in files]
    cols = list(frames[0].columns)
    for f, df in zip(files[1:], frames[1:]):
        if list(df.columns) != cols:
            raise ValueError(f"'{f.name}' has the channels {list(df.columns)}, but '{files[0].name}' has {cols}; "
                             f"pass channels=[...] to read the same channels from every file")
    return frames, names


def _glob_to_regex(pattern: str) -> str:
    import fnmatch

    return fnmatch.translate(pattern)
