"""Every CUDA source compiles with nvcc for the target architectures, in both precisions.

Runs whenever ``nvcc`` is found (PATH or /usr/local/cuda/bin), GPU or not.  The target range
is sm_70..sm_90; CUDA 13 dropped sm_70/sm_72, so the lowest architecture the installed nvcc
supports (``nvcc --list-gpu-arch``) is used in place of sm_70.  The architectures go into
one fatbin per (file, precision) with -gencode, and the compiles run in parallel.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
KERNELS_DIR = ROOT / "hphawkes_py" / "gpu" / "kernels"
TEST_KERNELS_DIR = ROOT / "tests" / "gpu_kernels"
WANTED_ARCHS = (70, 80, 90)
PRECISIONS = ("float", "double")


def _find_nvcc():
    nvcc = shutil.which("nvcc")
    if nvcc is None and Path("/usr/local/cuda/bin/nvcc").exists():
        nvcc = "/usr/local/cuda/bin/nvcc"
    return nvcc


NVCC = _find_nvcc()


def _archs():
    """The wanted architectures, sm_70 replaced by the lowest supported one if needed."""
    out = subprocess.run([NVCC, "--list-gpu-arch"], capture_output=True, text=True, timeout=120)
    supported = sorted({int(m) for m in re.findall(r"compute_(\d+)", out.stdout)})
    if not supported:  # very old nvcc without --list-gpu-arch
        return list(WANTED_ARCHS)
    archs = []
    for a in WANTED_ARCHS:
        if a in supported:
            archs.append(a)
        else:
            higher = [s for s in supported if s >= a]
            if higher and higher[0] not in archs:
                archs.append(higher[0])
    return archs


SOURCES = sorted(KERNELS_DIR.glob("*.cu")) + sorted(TEST_KERNELS_DIR.glob("*.cu"))

pytestmark = pytest.mark.skipif(NVCC is None, reason="nvcc not found (PATH or /usr/local/cuda/bin)")


@pytest.fixture(scope="module")
def compile_jobs():
    """Start all compilations at once (in parallel); each test waits for its own."""
    archs = _archs()
    tmp = Path(tempfile.mkdtemp(prefix="hphawkes-nvcc-"))
    workers = max(2, min(8, os.cpu_count() or 2))
    pool = ThreadPoolExecutor(max_workers=workers)
    jobs = {}

    def run(src: Path, real: str):
        out = tmp / f"{src.parent.name}-{src.stem}-{real}.fatbin"
        cmd = [NVCC, "-fatbin", "-std=c++17", f"-DREAL={real}", "-I", str(KERNELS_DIR)]
        for a in archs:
            cmd += ["-gencode", f"arch=compute_{a},code=sm_{a}"]
        cmd += [str(src), "-o", str(out)]
        for attempt in range(3):
            try:
                res = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp, timeout=600)
                break
            except OSError:
                # the launch itself failed (seen once: EFAULT from exec while eight threads forked at
                # once); nvcc never ran, so launching it again hides no compile error
                if attempt == 2:
                    raise
        return cmd, res, out

    for src in SOURCES:
        for real in PRECISIONS:
            jobs[(src.name, src.parent.name, real)] = pool.submit(run, src, real)
    yield archs, jobs
    pool.shutdown(wait=True)
    shutil.rmtree(tmp, ignore_errors=True)


def test_nvcc_supports_target_architectures():
    archs = _archs()
    assert archs, "nvcc supports none of sm_70..sm_90"
    assert max(archs) == 90
    assert min(archs) <= 75, f"lowest architecture {min(archs)} is above sm_75"


@pytest.mark.parametrize("real", PRECISIONS)
@pytest.mark.parametrize("src", SOURCES, ids=[f"{p.parent.name}/{p.name}" for p in SOURCES])
def test_kernel_compiles_with_nvcc(compile_jobs, src, real):
    archs, jobs = compile_jobs
    cmd, res, out = jobs[(src.name, src.parent.name, real)].result()
    assert res.returncode == 0, (
        f"nvcc failed for {src} with -DREAL={real} (sm_{', sm_'.join(map(str, archs))}):\n"
        f"{' '.join(cmd)}\n{res.stderr}"
    )
    assert out.stat().st_size > 0
