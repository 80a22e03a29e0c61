"""Issue 34 (round 3): output folders under concurrent, terminated and killed runs; data paths that
leave the data folder; the shared output-file check naming its option.

Each test fails on the code before the fix: a second run into the same fresh ``--out`` replaced the
first run's results; SIGTERM and SIGKILL left ``.NAME.tmp-*`` folders behind forever;
``datasets.path`` returned ``../../etc/passwd`` and absolute paths as they were.
"""
from __future__ import annotations

import doctest
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import hphawkes_py as hp
from hphawkes_py.cli import _common, main
from hphawkes_py.cli._common import CliError, Terminated, atomic_output_dir, check_output_file

POSIX = pytest.mark.skipif(os.name != "posix", reason="signals and flock are POSIX")


def _leftovers(parent: Path, name: str) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


def test_common_doctests_run():
    assert doctest.testmod(_common).failed == 0


# ----------------------------------------------------------------------------- concurrent runs
@POSIX
def test_second_run_into_the_same_fresh_folder_is_refused_and_the_first_kept(tmp_path):
    out = tmp_path / "results"
    with atomic_output_dir(out) as tmp_a:
        (tmp_a / "who.txt").write_text("first")
        with pytest.raises(CliError, match=r"--out .*results: another run \(pid \d+\) is writing this folder"):
            with atomic_output_dir(out) as tmp_b:
                (tmp_b / "who.txt").write_text("second")
    assert (out / "who.txt").read_text() == "first"
    assert _leftovers(tmp_path, "results") == []


@POSIX
def test_check_before_work_refuses_a_folder_another_run_is_writing(tmp_path):
    out = tmp_path / "results"
    _common.check_output_dir(out)  # nobody writing
    with atomic_output_dir(out):
        with pytest.raises(CliError, match=r"--out .*results: another run \(pid \d+\) is writing"):
            _common.check_output_dir(out)
    _common.check_output_dir(out, overwrite=True)  # the lock went with the run


@POSIX
def test_second_reproduce_into_the_same_fresh_out_fails_clearly(tmp_path, capsys):
    out = tmp_path / "grave"
    with atomic_output_dir(out) as tmp_a:
        (tmp_a / "who.txt").write_text("first")
        rc = main(["reproduce", "scan-grave", "--replicates", "9", "--backend", "cpu", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert "another run" in err and "--out" in err and err.count("\n") == 1
    assert sorted(p.name for p in out.iterdir()) == ["who.txt"]


@POSIX
@pytest.mark.slow
def test_two_reproduce_processes_into_one_fresh_out_one_wins(tmp_path):
    """The issue's case as a user meets it: two ``hphawkes reproduce`` started together into the same
    new folder. Exactly one writes it; the other exits 2 with one line naming ``--out``."""
    out = tmp_path / "grave"
    argv = [sys.executable, "-m", "hphawkes_py", "reproduce", "scan-grave", "--backend", "cpu",
            "--out", str(out)]
    procs = [subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = sorted((p.wait(timeout=600), p.stderr.read()) for p in procs)
    assert [rc for rc, _ in results] == [0, 2], results
    lines = [line for line in results[1][1].splitlines() if line.startswith("hphawkes:")]
    assert len(lines) == 1 and "--out" in lines[0] and ("another run" in lines[0] or "not empty" in lines[0]), lines
    assert sorted(p.name for p in out.iterdir()) == ["clusters.csv", "clusters.png", "comparison.csv",
                                                     "locations.csv", "summary.txt"]
    assert _leftovers(tmp_path, "grave") == []


def test_folder_created_by_something_else_meanwhile_is_not_replaced(tmp_path):
    out = tmp_path / "results"
    with pytest.raises(CliError, match="was created by something else while this run was working"):
        with atomic_output_dir(out) as tmp:
            (tmp / "new.txt").write_text("ours")
            out.mkdir()
            (out / "theirs.txt").write_text("theirs")
    assert sorted(p.name for p in out.iterdir()) == ["theirs.txt"]
    assert _leftovers(tmp_path, "results") == []


def test_overwrite_still_replaces_a_folder_that_was_there(tmp_path):
    out = tmp_path / "results"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with atomic_output_dir(out, overwrite=True) as tmp:
        (tmp / "new.txt").write_text("new")
    assert sorted(p.name for p in out.iterdir()) == ["new.txt"]
    assert _leftovers(tmp_path, "results") == []


def test_a_failed_run_leaves_the_previous_folder_and_nothing_else(tmp_path):
    out = tmp_path / "results"
    out.mkdir()
    (out / "old.txt").write_text("old")
    with pytest.raises(ZeroDivisionError):
        with atomic_output_dir(out, overwrite=True) as tmp:
            (tmp / "new.txt").write_text("new")
            1 / 0
    assert sorted(p.name for p in out.iterdir()) == ["old.txt"]
    assert _leftovers(tmp_path, "results") == []


# ----------------------------------------------------------------------------- SIGTERM, SIGKILL
_CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from hphawkes_py.cli._common import atomic_output_dir
    with atomic_output_dir(Path(sys.argv[1])) as tmp:
        (tmp / "partial.csv").write_text("a\\n1\\n")
        print("ready", flush=True)
        time.sleep(60)
""")


def _start_child(out: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(out)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    return proc


@POSIX
def test_sigterm_removes_the_temporary_folder(tmp_path):
    out = tmp_path / "results"
    proc = _start_child(out)
    assert _leftovers(tmp_path, "results")  # the child is writing
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    assert not out.exists()
    assert _leftovers(tmp_path, "results") == []


@POSIX
def test_sigkill_leftovers_are_removed_by_the_next_run(tmp_path):
    out = tmp_path / "results"
    proc = _start_child(out)
    with pytest.raises(CliError, match=rf"another run \(pid {proc.pid}\) is writing"):  # across processes
        with atomic_output_dir(out):
            pass
    proc.kill()
    proc.wait(timeout=60)
    assert any(".tmp-" in n for n in _leftovers(tmp_path, "results"))  # SIGKILL cannot be handled
    with atomic_output_dir(out) as tmp:  # the dead run's lock is gone with it
        (tmp / "done.txt").write_text("ok")
    assert sorted(p.name for p in out.iterdir()) == ["done.txt"]
    assert _leftovers(tmp_path, "results") == []


def test_leftovers_of_killed_runs_are_removed_and_previous_results_restored(tmp_path):
    out = tmp_path / "results"
    stale = tmp_path / ".results.tmp-x1y2z3"  # the name the earlier code gave, no owner to ask
    stale.mkdir()
    (stale / "partial.csv").write_text("a\n")
    old = tmp_path / ".results.old-12345"  # killed between moving the old folder aside and the new in
    old.mkdir()
    (old / "previous.txt").write_text("previous")
    with pytest.raises(CliError, match="folder exists and is not empty"):
        with atomic_output_dir(out):
            pass
    assert (out / "previous.txt").read_text() == "previous"
    assert _leftovers(tmp_path, "results") == []


def test_main_reports_sigterm_in_one_line(monkeypatch, capsys):
    import hphawkes_py.cli as cli

    def terminated(args):
        raise Terminated()

    monkeypatch.setattr(cli, "_cmd_info", terminated)
    assert main(["info"]) == 128 + signal.SIGTERM
    err = capsys.readouterr().err
    assert err == "hphawkes: terminated (SIGTERM): info: the output folder was left as it was\n"


def test_sigterm_handler_is_restored(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    with atomic_output_dir(tmp_path / "r"):
        pass
    assert signal.getsignal(signal.SIGTERM) is before


# ----------------------------------------------------------------------------- output files
def test_output_file_check_names_its_option(tmp_path):
    with pytest.raises(CliError, match=r"^--png .*: folder .* does not exist"):
        check_output_file(tmp_path / "missing" / "map.png", option="--png")
    with pytest.raises(CliError, match=r"^--png .*: is a folder"):
        check_output_file(tmp_path, option="--png")
    assert check_output_file(tmp_path / "map.png", option="--png") == tmp_path / "map.png"


# ----------------------------------------------------------------------------- datasets.path
@pytest.mark.parametrize("bad", ["../../etc/passwd", "kde/../../datasets.py", "kde/../../../README.md"])
def test_datasets_path_refuses_escaping_the_data_folder(bad):
    with pytest.raises(ValueError, match=r"relative must stay inside the data folder.*" + bad.replace(".", r"\.")):
        hp.datasets.path(bad)


@pytest.mark.parametrize("bad", ["/etc/passwd", "", "."])
def test_datasets_path_refuses_absolute_and_empty_paths(bad):
    with pytest.raises(ValueError, match="relative must be a path inside the data folder"):
        hp.datasets.path(bad)


def test_datasets_path_refuses_non_paths_and_keeps_working():
    with pytest.raises(TypeError, match="relative must be a path .*got int"):
        hp.datasets.path(5)
    assert hp.datasets.path("kde/../kde/cells.csv") == hp.datasets.path("kde/cells.csv")
    assert hp.datasets.path("scan/satscan_sample_data").is_dir()
    with pytest.raises(ValueError, match="stay inside"):
        hp.datasets.satscan_sample_path("../../../../etc/passwd")


def test_datasets_path_refuses_a_link_out_of_the_data_folder(tmp_path, monkeypatch):
    root = tmp_path / "data"
    root.mkdir()
    (root / "ok.csv").write_text("a\n")
    (root / "escape.csv").symlink_to(tmp_path.parent)
    monkeypatch.setattr(hp.datasets, "_root", lambda: root)
    assert hp.datasets.path("ok.csv") == (root / "ok.csv").resolve()
    with pytest.raises(ValueError, match="stay inside"):
        hp.datasets.path("escape.csv")
