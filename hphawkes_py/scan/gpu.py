"""GPU engine of the Bernoulli scan (PyCUDA on a real device, or the CPU emulator).

The windows (CSR neighbour lists) and the k log k table are copied to the device once;
per Monte Carlo batch only the (locations x replicates) int32 case matrix goes in and the
(replicates,) maxima come back. Kernels: ``hphawkes_py/gpu/kernels/scan.cu``.
"""
from __future__ import annotations

import numpy as np

from ..gpu.device import KERNELS_DIR
from .cpu_space_time import _check_expected, strata_prefix_sums
from .engine import Engine, null_loglik, poisson_logs
from .isotonic import IsotonicEngine

__all__ = ["GpuEngine", "GpuPermutationEngine", "GpuNormalCylinderEngine", "GpuCategoricalCylinderEngine"]

#: preferred threads per block (replicates of one centre), lowered per compiled kernel by
#: Device.block_size (registers); a multiple of the warp size
BLOCK = 128


def _refuse_pickling(engine):
    """A GPU engine holds device buffers: it cannot travel to a process pool."""
    raise TypeError("the GPU scan engine holds device buffers and cannot be pickled: "
                    "use executor=None or a thread pool with backend='gpu'/'emulator'")


class GpuEngine(Engine):
    """The interface of :class:`~.engine.Engine` on a :class:`~hphawkes_py.gpu.device.Device`."""

    def __init__(self, windows, klogk, n_cases, n_total, direction, *, device, backend="gpu",
                 model="bernoulli", min_cases=0, location_size=None):
        super().__init__(windows, klogk, n_cases, n_total, direction, model=model, min_cases=min_cases)
        offsets, neighbors, size, boundary = windows
        self.backend = backend
        self.dev = dev = device
        # the arrays of the other model are one-element placeholders (never read)
        poisson = model == "poisson"
        npop = np.zeros(1, dtype=np.int64) if poisson else _location_persons(windows, location_size)
        mexp, loge, logce = poisson_logs(size, n_cases) if poisson else (np.zeros(1),) * 3
        self._fn = dev.module(KERNELS_DIR / "scan.cu", defines={"REAL": "double"}).function("scan_windows")
        self._block = dev.block_size(self._fn, BLOCK)
        self.d_offsets = dev.to_device(np.ascontiguousarray(offsets, dtype=np.int64))
        # empty CSR arrays are padded to one element (zero-size device buffers are refused)
        self.d_neighbors = dev.to_device(np.ascontiguousarray(neighbors if len(neighbors) else np.zeros(1), dtype=np.int32))
        self.d_npop = dev.to_device(np.ascontiguousarray(npop if len(npop) else np.zeros(1), dtype=np.int64))
        self.d_mexp, self.d_loge, self.d_logce = (
            dev.to_device(np.ascontiguousarray(a if len(a) else np.zeros(1), dtype=np.float64)) for a in (mexp, loge, logce))
        self.d_boundary = dev.to_device(np.ascontiguousarray(boundary if len(boundary) else np.zeros(1), dtype=np.uint8))
        self.d_klogk = dev.to_device(np.ascontiguousarray(klogk, dtype=np.float64))

    __getstate__ = _refuse_pickling

    def _run(self, cases: np.ndarray, want_arg: bool):
        dev = self.dev
        cases = np.ascontiguousarray(cases, dtype=np.int32)
        R = cases.shape[1]
        m = self.n_centres
        d_cases = dev.to_device(cases)
        d_max = dev.zeros((R,), np.float64)
        if want_arg:
            d_best = dev.empty((m, R), np.float64)
            d_entry = dev.empty((m, R), np.int64)
        else:
            d_best = dev.empty((1,), np.float64)
            d_entry = dev.empty((1,), np.int64)
        block = min(self._block, 32 * ((R + 31) // 32))
        grid = (m, (R + block - 1) // block)
        if m > 0:
            dev.launch(self._fn, grid, (block, 1, 1), [
                self.d_offsets, self.d_neighbors, self.d_npop, self.d_mexp, self.d_loge, self.d_logce, self.d_boundary, d_cases, self.d_klogk,
                np.int64(self.n_cases), np.int64(self.n_total), np.float64(self.l0),
                np.int32(self.want_high), np.int32(self.want_low), np.int64(self.min_cases),
                np.int32(self.model == "poisson"), np.int32(R), np.int32(bool(want_arg)), d_best, d_entry, d_max,
            ])
        rep_max = dev.to_host(d_max)
        if want_arg:
            return rep_max, dev.to_host(d_best), dev.to_host(d_entry)
        return rep_max, None, None

    def best_per_centre(self, cases: np.ndarray, want_arg: bool = False):
        """(m, R) best LLR per centre [and best window end entry] for cases (L, R) int32."""
        _, best, entry = self._run(cases, True)  # one kernel: the argmax costs nothing extra here
        return (best, entry) if want_arg else (best, None)

    def max_llr(self, cases: np.ndarray) -> np.ndarray:
        """(R,) maximum LLR over all windows for each column of ``cases``."""
        return self._run(cases, False)[0]


def _location_persons(windows, location_size=None) -> np.ndarray:
    """Persons per location (int64) for the Bernoulli kernel, which sums them along each
    neighbour list: ``location_size`` when the caller has it, else recovered exactly from the
    windows' cumulative sizes (each entry's increase is its location's persons)."""
    offsets, neighbors, size, _ = windows
    if location_size is not None:
        out = np.ascontiguousarray(location_size, dtype=np.int64)
        return out if len(out) else np.zeros(1, np.int64)
    size = np.asarray(size, dtype=np.int64)
    if len(neighbors) == 0:
        return np.zeros(1, np.int64)
    step = np.diff(size, prepend=np.int64(0))
    first = np.asarray(offsets[:-1])[np.diff(offsets) > 0]
    step[first] = size[first]
    out = np.zeros(int(np.max(neighbors)) + 1, np.int64)
    out[np.asarray(neighbors)] = step
    return out


#: bytes of running-count scratch (centres x days x replicates int32) per launch
SCRATCH_BYTES = 1 << 28


class GpuSpaceTimeEngine:
    """The space-time cylinders (``scan_space_time``, ``scan_space_time_bernoulli`` with ``persons``, or
    ``scan_space_time_dated`` with ``expected`` per location and day, in ``scan.cu``) on a device:
    :meth:`batch` means what :class:`~.cpu_space_time.CpuSpaceTimeEngine`'s means."""

    def __init__(self, windows, dcum, klogk, n_cases, max_t, t_end_min, min_cases, direction, *, device,
                 backend="gpu", persons=None, strata=None, expected=None):
        offsets, neighbors, wsize, boundary = windows
        self.backend = backend
        self.dev = dev = device
        self.n_cases = int(n_cases)
        self.n_centres = len(offsets) - 1
        self.T = len(dcum) - 1
        pad = (lambda a, dt: dev.to_device(np.ascontiguousarray(a if len(a) else np.zeros(1), dtype=dt)))
        # space-time Bernoulli (persons per location and day): scan_space_time_bernoulli
        self.bernoulli = persons is not None
        # expectations per location and day (see cpu_space_time.cylinder_batch): scan_space_time_dated
        self.dated = expected is not None
        hl = (np.int32(direction in ("high", "both")), np.int32(direction in ("low", "both")))
        if self.dated:
            emu = _check_expected(expected, (np.shape(expected)[0], self.T), persons, strata)
            self.d_emu = pad(emu.ravel(), np.float64)
            self.args = (np.int64(n_cases), np.int32(self.T), np.int32(max_t), np.int32(t_end_min),
                         np.int64(min_cases), *hl)
        elif self.bernoulli:
            persons = np.asarray(persons, dtype=np.int64)
            N = int(persons.sum())
            if N >= 2**31 - 1:
                raise ValueError(f"{N} persons are too many for the space-time Bernoulli GPU engine (< 2**31 - 1)")
            self.d_persons = pad(persons.ravel(), np.int32)
            self.args = (np.int64(n_cases), np.int64(N), np.float64(null_loglik(klogk, n_cases, N)), np.int32(self.T),
                         np.int32(max_t), np.int32(t_end_min), np.int64(min_cases), *hl)
        else:
            self.args = (np.int64(n_cases), np.int32(self.T), np.int32(max_t), np.int32(t_end_min),
                         np.int64(min_cases), *hl)
        name = ("scan_space_time_dated" if self.dated else
                "scan_space_time_bernoulli" if self.bernoulli else "scan_space_time")
        self._fn = dev.module(KERNELS_DIR / "scan.cu", defines={"REAL": "double"}).function(name)
        self._block = dev.block_size(self._fn, BLOCK)
        self.d_offsets = pad(offsets, np.int64)
        self.d_neighbors = pad(neighbors, np.int32)
        self.d_wsize = pad(wsize, np.float64)
        self.d_boundary = pad(boundary, np.uint8)
        self.d_dcum = pad(dcum, np.float64)
        self.d_klogk = pad(klogk, np.float64)
        # time-stratified (see cpu_space_time.cylinder_batch): the prefix sums of the cases and persons per day
        dc, dp = strata_prefix_sums(strata) or (np.zeros(1, np.int64),) * 2
        self.strata = (pad(dc, np.int64), pad(dp, np.int64), np.int32(strata is not None))

    __getstate__ = _refuse_pickling

    def with_expected(self, expected):
        """The same engine with other expectations per location and day (``expected`` (L, T), of an engine
        built with ``expected``): :meth:`~.cpu_space_time.CpuSpaceTimeEngine.with_expected`."""
        if not self.dated:
            raise ValueError("with_expected is for an engine built with expectations per location and day")
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        emu = _check_expected(expected, (np.shape(expected)[0], self.T), None, None)
        other.d_emu = self.dev.to_device(np.ascontiguousarray(emu.ravel(), dtype=np.float64))
        return other

    def batch(self, cases, want_arg=False):
        """(m, R) best cylinder LLR per centre [and its code] for ``cases`` (L, T, R)."""
        dev = self.dev
        cases = np.ascontiguousarray(cases, dtype=np.int32)
        R = cases.shape[2]
        m = self.n_centres
        d_cases = dev.to_device(cases)
        d_max = dev.zeros((R,), np.float64)
        d_best = dev.empty((m, R) if want_arg else (1,), np.float64)
        d_arg = dev.empty((m, R) if want_arg else (1,), np.int64)
        block = min(self._block, 32 * ((R + 31) // 32))
        blocks_y = (R + block - 1) // block
        # cases per (centre, day, replicate); Bernoulli: persons per (centre, block, day), shared by
        # the replicates of a block
        shared = self.bernoulli or self.dated  # per-day sums shared by a block: int persons or double expectations
        per_centre = max(1, self.T * R * 4 + (self.T * blocks_y * (8 if self.dated else 4) if shared else 0))
        chunk = max(1, min(m, SCRATCH_BYTES // per_centre))
        d_scratch = dev.empty((chunk * self.T * R,), np.int32)
        if shared:
            d_pscratch = dev.empty((chunk * blocks_y * self.T,), np.float64 if self.dated else np.int32)
        for c0 in range(0, m, chunk):
            n = min(chunk, m - c0)
            if self.dated:
                args = [self.d_offsets, self.d_neighbors, self.d_boundary, d_cases, self.d_emu, self.d_klogk,
                        *self.args, np.int32(R), np.int64(c0), d_scratch, d_pscratch]
            elif self.bernoulli:
                args = [self.d_offsets, self.d_neighbors, self.d_boundary, d_cases, self.d_persons, self.d_klogk,
                        *self.strata, *self.args, np.int32(R), np.int64(c0), d_scratch, d_pscratch]
            else:
                args = [self.d_offsets, self.d_neighbors, self.d_wsize, self.d_boundary, d_cases, self.d_dcum,
                        self.d_klogk, self.strata[0], self.strata[2], *self.args, np.int32(R), np.int64(c0),
                        d_scratch]
            dev.launch(self._fn, (n, blocks_y), (block, 1, 1),
                       args + [np.int32(bool(want_arg)), d_best, d_arg, d_max])
        if want_arg:
            return dev.to_host(d_best), dev.to_host(d_arg)
        best_max = dev.to_host(d_max)
        return best_max[None, :], None


class _GpuBesideCpu:
    """A device engine beside a CPU engine ``cpu``, whose constants it uses: the kernel ``_KERNEL`` of ``_FILE``
    (compiled with :meth:`_defines`) and the CPU engine's arrays ``_ARRAYS`` (name -> dtype) copied to the device
    once, as ``d_<name>`` (empty ones padded to one element: zero-size device buffers are refused)."""

    _KERNEL = ""
    _FILE = "scan_permutation.cu"
    _ARRAYS: dict = {}

    def _defines(self) -> dict:
        return {"REAL": "double"}

    def __init__(self, cpu, *, device, backend="gpu"):
        self.cpu = cpu
        self.backend = backend
        self.dev = dev = device
        self._fn = dev.module(KERNELS_DIR / self._FILE, defines=self._defines()).function(self._KERNEL)
        self._block = dev.block_size(self._fn, BLOCK)
        for name, dt in self._ARRAYS.items():
            a = getattr(cpu, name)
            setattr(self, "d_" + name, dev.to_device(np.ascontiguousarray(a if len(a) else np.zeros(1), dtype=dt)))

    __getstate__ = _refuse_pickling

    @property
    def n_centres(self) -> int:
        return self.cpu.n_centres


class GpuPermutationEngine(_GpuBesideCpu):
    """The permutation models' windows (``scan_permutation`` in ``scan_permutation.cu``) on a device:
    the methods of :class:`~.normal.PermutationEngine` (``cpu``, whose constants it uses and whose
    host function turns maximizing values into LLRs)."""

    _KERNEL = "scan_permutation"
    _ARRAYS = {"offsets": np.int64, "neighbors": np.int32, "boundary": np.uint8, "n_loc": np.int64}

    def best_mv(self, s1: np.ndarray, s2: np.ndarray):
        """(m, R) maximizing value of each centre's best window and (m, R) entry where it ends."""
        dev = self.dev
        c = self.cpu
        s1 = np.ascontiguousarray(s1, dtype=np.float64)
        s2 = np.ascontiguousarray(s2, dtype=np.float64)
        R = s1.shape[1]
        m = self.n_centres
        if m == 0:
            return np.empty((0, R)), np.empty((0, R), np.int64)
        d_mv = dev.empty((m, R), np.float64)
        d_arg = dev.empty((m, R), np.int64)
        block = min(self._block, 32 * ((R + 31) // 32))
        dev.launch(self._fn, (m, (R + block - 1) // block), (block, 1, 1), [
            np.int32(c.model), self.d_offsets, self.d_neighbors, self.d_boundary, self.d_n_loc, dev.to_device(s1),
            dev.to_device(s2), np.int64(c.N), np.float64(c.U), np.float64(c.U2), np.int64(c.min_high),
            np.int64(c.min_low), np.int32(c.want_high), np.int32(c.want_low), np.int32(R), d_mv, d_arg])
        return dev.to_host(d_mv), dev.to_host(d_arg)

    def best_per_centre(self, s1: np.ndarray, s2: np.ndarray):
        """(m, R) best LLR per centre and (m, R) entry where that window ends."""
        mv, arg = self.best_mv(s1, s2)
        return self.cpu.llr(mv), arg

    def max_llr(self, s1: np.ndarray, s2: np.ndarray) -> np.ndarray:
        """(R,) maximum LLR over all windows of each column."""
        best, _ = self.best_per_centre(s1, s2)
        return best.max(axis=0) if best.shape[0] else np.zeros(np.shape(s1)[1])


class GpuNormalCylinderEngine(_GpuBesideCpu):
    """The space-time normal scan's replicates (``scan_normal_cylinders`` in ``scan_permutation.cu``) on a device:
    :meth:`max_llr` of :class:`~.cpu_normal_space_time.NormalCylinderEngine` (``cpu``, whose constants it uses and
    whose host function turns the between-group sums of squares into LLRs)."""

    _KERNEL = "scan_normal_cylinders"
    _ARRAYS = {"offsets": np.int64, "neighbors": np.int32, "boundary": np.uint8, "n_cum": np.int64, "t1s": np.int64,
               "t2s": np.int64}

    @property
    def weighted(self) -> bool:
        return self.cpu.weighted

    def max_q(self, c1: np.ndarray, c2: np.ndarray) -> np.ndarray:
        """As :meth:`~.cpu_normal_space_time.NormalCylinderEngine.max_q`."""
        dev = self.dev
        c = self.cpu
        L, T1, R = np.shape(c1)
        m = self.n_centres
        if m == 0:
            return np.zeros((0, R))
        weighted = c.weighted
        d_best = dev.empty((m, R), np.float64)
        block = min(self._block, 32 * ((R + 31) // 32))
        dev.launch(self._fn, (m, (R + block - 1) // block), (block, 1, 1), [
            np.int32(weighted), self.d_offsets, self.d_neighbors, self.d_boundary, self.d_n_cum,
            dev.to_device(np.ascontiguousarray(c1, dtype=np.float64)),
            dev.to_device(np.ascontiguousarray(c2, dtype=np.float64)), self.d_t1s, self.d_t2s, np.int32(len(c.t1s)),
            np.int32(T1), *(np.int64(d) for d in c.days_read), np.int64(c.N),
            np.float64(c.U / (c.U2 if weighted else c.N)), np.float64(c.U2), np.float64(c.S0), np.int64(c.min_high),
            np.int64(c.min_low), np.int32(c.want_high), np.int32(c.want_low), np.int32(R), d_best])
        return dev.to_host(d_best)

    def max_llr(self, c1: np.ndarray, c2: np.ndarray) -> np.ndarray:
        """(R,) the largest cylinder LLR of each replicate of the cumulative sums (as :meth:`max_q` takes them)."""
        q = self.max_q(c1, c2)
        return self.cpu.llr_of_q(q.max(axis=0) if q.shape[0] else np.zeros(np.shape(c1)[2]))


class GpuCategoricalCylinderEngine(_GpuBesideCpu):
    """The space-time ordinal and multinomial scans' replicates (``scan_categorical_cylinders`` in
    ``scan_categorical.cu``) on a device: :meth:`max_llr` of
    :class:`~.cpu_categorical_space_time.CategoricalCylinderEngine` (``cpu``, whose constants it uses and whose host
    function turns the largest window values into LLRs)."""

    _KERNEL = "scan_categorical_cylinders"
    _FILE = "scan_categorical.cu"
    _ARRAYS = {"offsets": np.int64, "neighbors": np.int32, "boundary": np.uint8, "n_cum": np.int64, "t1s": np.int64,
               "t2s": np.int64, "tot": np.int64, "logs": np.float64, "bounds": np.float64}

    def _defines(self) -> dict:
        return {"KMAX": len(self.cpu.tot)}

    def best_mv(self, cum: np.ndarray, centres: np.ndarray | None = None, floor: np.ndarray | None = None) -> np.ndarray:
        """As :meth:`~.cpu_categorical_space_time.CategoricalCylinderEngine.best_mv`."""
        R = np.shape(cum)[3]
        centres = np.arange(self.n_centres, dtype=np.int64) if centres is None else centres
        return self._launch(self._on_device(cum), np.shape(cum), centres, self.cpu.no_floor(R) if floor is None else floor)

    def _on_device(self, cum: np.ndarray):
        return self.dev.to_device(np.ascontiguousarray(cum, dtype=np.int32))

    def _launch(self, d_cum, shape: tuple, centres: np.ndarray, floor: np.ndarray) -> np.ndarray:
        """(len(centres), R) the kernel's values for the centres ``centres`` over the replicates' counts ``d_cum``
        (on the device, of the host shape ``shape``) with the floor ``floor`` (R,)."""
        dev = self.dev
        c = self.cpu
        L, T1, K, R = shape
        m = len(centres)
        if m == 0:
            return np.zeros((0, R))
        d_best = dev.empty((m, R), np.float64)
        block = min(self._block, 32 * ((R + 31) // 32))
        dev.launch(self._fn, (m, (R + block - 1) // block), (block, 1, 1), [
            self.d_offsets, self.d_neighbors, self.d_boundary, self.d_n_cum, d_cum, self.d_t1s, self.d_t2s,
            np.int32(len(c.t1s)), np.int32(T1), np.int64(c.t_end_min), self.d_tot, self.d_logs, np.float64(c.ll0),
            np.int32(K), np.int32(c.ordinal), np.int32(c.want_high), np.int32(c.want_low), self.d_bounds,
            np.int32(len(c.bounds)), np.float64(c.margin), dev.to_device(np.asarray(centres, dtype=np.int64)),
            dev.to_device(np.ascontiguousarray(floor, dtype=np.float64)), np.int32(R), d_best])
        return dev.to_host(d_best)

    def max_llr(self, cum: np.ndarray) -> np.ndarray:
        """(R,) the largest cylinder LLR of each replicate of the cumulative counts (as :meth:`best_mv` takes them;
        :meth:`~.cpu_categorical_space_time.CategoricalCylinderEngine.pilot_then_rest`, the counts copied to the device once)."""
        R = np.shape(cum)[3]
        d_cum = self._on_device(cum)
        return self.cpu.llr_of_maxima(
            self.cpu.pilot_then_rest(lambda c, f: self._launch(d_cum, np.shape(cum), c, f), R), R)


class GpuIsotonicEngine(_GpuBesideCpu):
    """The isotonic spatial scan (``scan_isotonic`` in ``scan_isotonic.cu``) on a device: the methods of
    :class:`~.isotonic.IsotonicEngine` (``cpu``, whose constants it uses); each thread's steps in local arrays of
    the longest neighbour list plus one."""

    _KERNEL = "scan_isotonic"
    _FILE = "scan_isotonic.cu"
    _ARRAYS = {"offsets": np.int64, "neighbors": np.int32, "measure": np.float64}

    def _defines(self) -> dict:
        lengths = np.diff(self.cpu.offsets)
        return {"KMAX": int(lengths.max(initial=0)) + 1}

    @property
    def model(self) -> str:
        return self.cpu.model

    @property
    def n_cases(self) -> int:
        return self.cpu.n_cases

    def best_per_centre(self, cases: np.ndarray, want_arg: bool = False):
        """As :meth:`~.isotonic.IsotonicEngine.best_per_centre`."""
        dev = self.dev
        c = self.cpu
        cases = np.ascontiguousarray(cases, dtype=np.int32)
        R = cases.shape[1]
        m = self.n_centres
        if m == 0:
            return np.zeros((0, R)), (np.zeros((0, R), np.int64) if want_arg else None)
        d_best = dev.empty((m, R), np.float64)
        d_entry = dev.empty((m, R), np.int64)
        block = min(self._block, 32 * ((R + 31) // 32))
        dev.launch(self._fn, (m, (R + block - 1) // block), (block, 1, 1), [
            self.d_offsets, self.d_neighbors, dev.to_device(cases), self.d_measure, np.int32(R), np.float64(c.C),
            np.float64(c.M), np.float64(c.ll0), np.int32(c.model == "bernoulli"), np.int32(c.want_high),
            np.int32(c.want_low), d_best, d_entry])
        best = dev.to_host(d_best)
        return (best, dev.to_host(d_entry)) if want_arg else (best, None)

    #: every replicate's largest isotonic LLR over the centres, from this engine's best_per_centre
    max_llr = IsotonicEngine.max_llr
