"""Every code example in the documentation runs (issue 34: documentation that does not run).

For each page under ``docs/`` (the hand-written ``.rst`` pages; the gallery is run by the
documentation build, the API pages are the docstrings that ``tests/test_docstrings.py`` runs):

* the ``.. code-block:: python`` blocks run in order in one namespace, the way a reader pastes
  them into one session, in an empty working folder;
* ``>>>`` examples run as doctests;
* every ``hphawkes ...`` command line, in a shell block or inline (````hphawkes kde points.csv````,
  alternatives written ``a | b | c``), is parsed by the real command-line parser, so each named
  command and option exists (parsing starts no work and reads no file).

Pages whose examples take more than a few seconds are marked ``slow``.
"""
from __future__ import annotations

import doctest
import re
import textwrap
from pathlib import Path

import pytest
from cli_lines import expand, parse_error, shell_commands

DOCS = Path(__file__).resolve().parents[1] / "docs"
GENERATED = ("_build", "auto_examples", "api/generated", "_templates", "sg_execution_times.rst")
SLOW_PAGES = {"install.rst", "user_guide/backends.rst", "user_guide/hawkes_marks_types.rst"}

DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\. (?:code-block|code|sourcecode)::[ \t]*(?P<lang>\S*)[ \t]*$", re.M)
INLINE_COMMAND = re.compile(r"``(hphawkes [^`]+?)``", re.S)


def pages() -> list[Path]:
    if not DOCS.is_dir():
        return []
    out = []
    for p in sorted(DOCS.rglob("*.rst")):
        rel = p.relative_to(DOCS).as_posix()
        if not any(rel == g or rel.startswith(g.rstrip("/") + "/") for g in GENERATED):
            out.append(p)
    return out


def code_blocks(text: str) -> list[tuple[str, str]]:
    """``(language, code)`` of every ``.. code-block::`` directive, dedented, options dropped."""
    lines = text.splitlines()
    blocks = []
    for m in DIRECTIVE.finditer(text):
        start = text.count("\n", 0, m.start()) + 1
        indent = len(m.group("indent").expandtabs())
        body = []
        for line in lines[start:]:
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            body.append(line)
        code = textwrap.dedent("\n".join(body))
        # directive options (":caption: ...") come first, before a blank line
        code_lines = code.splitlines()
        while code_lines and (not code_lines[0].strip() or re.match(r"^:[\w-]+:", code_lines[0])):
            code_lines.pop(0)
        blocks.append((m.group("lang") or "python", "\n".join(code_lines).rstrip() + "\n"))
    return blocks


def command_lines(text: str) -> list[list[str]]:
    """Every ``hphawkes ...`` command of a page, as argument lists (without ``hphawkes``).

    Shell blocks give their lines that start with ``hphawkes`` (a ``$`` prompt and ``#`` comments
    dropped); inline literals give theirs, ``a | b`` alternatives expanded into one command each,
    the alternative replacing the last word, optional ``[...]`` parts included; literals with
    placeholders (``ANALYSIS``, ``DIR``) are left to the tests that name them.
    """
    found = []
    for lang, code in code_blocks(text):
        if lang in ("bash", "sh", "shell", "console"):
            found += shell_commands(code)
    found += [" ".join(m.group(1).split()) for m in INLINE_COMMAND.finditer(text)]
    return expand(found)


def run_python_blocks(page: Path, blocks: list[str], tmp_path, monkeypatch) -> None:
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__main__"}  # run as a script: `if __name__ == "__main__":` parts included
    for i, code in enumerate(blocks):
        where = f"{page.relative_to(DOCS)} python block {i + 1}"
        try:
            exec(compile(code, where, "exec"), ns)
        except Exception as exc:  # pragma: no cover - the message is the point
            pytest.fail(f"{where} raised {type(exc).__name__}: {exc}\n---\n{code}")
    import matplotlib.pyplot as plt

    plt.close("all")


# ----------------------------------------------------------------------------- the extractors
def test_code_block_finder():
    text = textwrap.dedent("""\
        Intro.

        .. code-block:: python
           :caption: one

           a = 1
           if a:
               b = 2

        Text.

        * item

          .. code-block:: bash

             hphawkes info   # versions
             ls

        .. code-block:: python

           c = a + b
        """)
    assert code_blocks(text) == [("python", "a = 1\nif a:\n    b = 2\n"), ("bash", "hphawkes info   # versions\nls\n"),
                                 ("python", "c = a + b\n")]


def test_command_finder():
    text = ("Run ``hphawkes reproduce kde-redwood |\n   kde-sim50000`` or ``hphawkes kde points.csv --window a.tif``"
            " or ``hphawkes reproduce ANALYSIS [--out DIR]`` or ``hphawkes reproduce dc-gunshots [--full]``.\n\n"
            ".. code-block:: bash\n\n   $ hphawkes info  # x\n")
    assert command_lines(text) == [["info"], ["reproduce", "kde-redwood"], ["reproduce", "kde-sim50000"],
                                   ["kde", "points.csv", "--window", "a.tif"], ["reproduce", "dc-gunshots", "--full"]]
    assert parse_error(["info"]) is None
    assert parse_error(["reproduce", "no-such-analysis"]) is not None
    assert parse_error(["kde", "fit", "--no-such-option"]) is not None


def test_there_are_pages_with_examples():
    assert sum(bool(code_blocks(p.read_text())) for p in pages()) >= 4


# ----------------------------------------------------------------------------- the pages
def _page_params(kind):
    params = []
    for p in pages():
        rel = p.relative_to(DOCS).as_posix()
        text = p.read_text()
        if kind == "python":
            blocks = [code for lang, code in code_blocks(text) if lang in ("python", "python3", "py")]
            if not blocks:
                continue
            marks = [pytest.mark.slow] if rel in SLOW_PAGES else []
            params.append(pytest.param(p, blocks, id=rel, marks=marks))
        elif kind == "commands":
            commands = command_lines(text)
            if commands:
                params.append(pytest.param(p, commands, id=rel))
        elif kind == "doctest":
            if ">>>" in text:
                params.append(pytest.param(p, id=rel))
    return params


@pytest.mark.parametrize("page, blocks", _page_params("python"))
def test_python_blocks_run(page, blocks, tmp_path, monkeypatch):
    run_python_blocks(page, blocks, tmp_path, monkeypatch)


@pytest.mark.parametrize("page, commands", _page_params("commands"))
def test_command_lines_parse(page, commands):
    bad = {" ".join(c): why for c in commands if (why := parse_error(c)) is not None}
    assert not bad, f"{page.relative_to(DOCS)}: commands the hphawkes parser refuses: {bad}"


@pytest.mark.parametrize("page", _page_params("doctest"))
def test_doctest_examples_run(page, tmp_path, monkeypatch):
    import hphawkes_py as hp

    monkeypatch.chdir(tmp_path)
    failures, _ = doctest.testfile(str(page), module_relative=False, globs={"hp": hp},
                                   optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0


def test_every_reproduce_analysis_takes_out_and_backend():
    """docs/reproducing.rst: ``hphawkes reproduce ANALYSIS [--backend cpu|gpu] [--out DIR]``, and the
    list of analyses on the getting-started page is the parser's."""
    from hphawkes_py.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._subparsers._group_actions if a.dest == "command")
    analyses = sorted(next(a for a in sub.choices["reproduce"]._subparsers._group_actions).choices)
    assert "hphawkes reproduce ANALYSIS [--backend cpu|gpu] [--out DIR]" in " ".join(
        (DOCS / "reproducing.rst").read_text().split())
    listed = re.search(r"``hphawkes reproduce (dc-gunshots \|[^`]*)``", (DOCS / "install.rst").read_text())
    assert sorted(a.strip() for a in listed.group(1).split("|")) == analyses
    refused = {a: why for a in analyses
               for argv in (["reproduce", a, "--backend", "cpu", "--out", "some-dir"],)
               if (why := parse_error(argv)) is not None}
    assert not refused, f"reproduce analyses that refuse --backend/--out: {refused}"


def test_hawkes_residuals_command_of_the_user_guide_runs(tmp_path, monkeypatch, capsys):
    """The Hawkes page's ``hphawkes hawkes residuals events.csv ...`` line, run as shown on the
    first 300 DC events of 2010 (cheap: one pass over the events)."""
    import hphawkes_py as hp
    from hphawkes_py.cli import main

    text = " ".join((DOCS / "user_guide" / "hawkes.rst").read_text().split())
    argv = next(c for c in command_lines(text) if c[:2] == ["hawkes", "residuals"])
    monkeypatch.chdir(tmp_path)
    hp.datasets.load_dc_gunshots("2010").iloc[:300].to_csv(argv[2], index=False)
    assert main(argv + ["--out", "residuals.csv", "--backend", "cpu"]) == 0, capsys.readouterr().err
    import pandas as pd

    table = pd.read_csv("residuals.csv")
    assert len(table) == 300 and (tmp_path / "qq.png").stat().st_size > 0
