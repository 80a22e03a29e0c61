"""Every code example in the README runs as shown (a user's first contact must not raise).

The README's examples are written with quick settings; each ```python block is executed in order
in one namespace, the way a reader pastes them into one session. Every ``hphawkes ...`` command it
shows (in a shell block or inline, alternatives ``a | b`` expanded) is parsed by the real parser,
and what it says every ``reproduce`` analysis takes is checked against each of them.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_lines import expand, parse_error, shell_commands

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
SHELL_FENCE = re.compile(r"^```(?:bash|sh|shell|console)\n(.*?)^```", re.S | re.M)
INLINE_COMMAND = re.compile(r"(?<!`)`(hphawkes [^`]+?)`(?!`)", re.S)


def python_blocks(text: str) -> list:
    return [m.group(1) for m in FENCE.finditer(text)]


def command_lines(text: str) -> list[list[str]]:
    """The README's ``hphawkes ...`` commands as argument lists (as tests/test_docs_code.py does for
    the documentation: ``$`` prompts and ``#`` comments dropped, ``a | b`` alternatives replacing the
    last word, ``[...]`` parts kept, lines with placeholders such as ``ANALYSIS`` skipped)."""
    found = [line for m in SHELL_FENCE.finditer(text) for line in shell_commands(m.group(1))]
    found += [" ".join(m.group(1).split()) for m in INLINE_COMMAND.finditer(text)]
    return expand(found)


def test_block_finder_finds_blocks():
    text = "x\n```python\na = 1\n```\n```bash\nls\n```\n```python\nb = a + 1\n```\n"
    assert python_blocks(text) == ["a = 1\n", "b = a + 1\n"]


def test_command_finder_finds_commands():
    text = ("Run `hphawkes reproduce kde-redwood |\nscan-ny` or ``hphawkes not-this`` or `hphawkes reproduce ANALYSIS`."
            "\n```bash\nbash scripts/x.sh\nhphawkes info   # versions\n```\n")
    assert command_lines(text) == [["info"], ["reproduce", "kde-redwood"], ["reproduce", "scan-ny"]]
    assert parse_error(["info"]) is None
    assert parse_error(["reproduce", "no-such-analysis"]) is not None


@pytest.mark.skipif(not README.is_file(), reason="no README.md beside the tests")
def test_readme_commands_parse():
    commands = command_lines(README.read_text())
    assert len(commands) >= 9, commands  # dc-gunshots and the eight other analyses at least
    bad = {" ".join(c): why for c in commands if (why := parse_error(c)) is not None}
    assert not bad, f"README commands that the hphawkes parser refuses: {bad}"


@pytest.mark.skipif(not README.is_file(), reason="no README.md beside the tests")
def test_readme_reproduce_claims_hold_for_every_analysis():
    """The README lists every ``reproduce`` analysis and says each takes ``--backend`` and ``--out DIR``."""
    from hphawkes_py.cli import build_parser

    text = " ".join(README.read_text().split())
    assert "Every analysis takes `--backend` and `--out DIR`" in text
    sub = next(a for a in build_parser()._subparsers._group_actions if a.dest == "command")
    analyses = set(next(a for a in sub.choices["reproduce"]._subparsers._group_actions).choices)
    shown = {c[1] for c in command_lines(README.read_text()) if c[:1] == ["reproduce"]}
    assert shown == analyses
    refused = {a: why for a in sorted(analyses)
               if (why := parse_error(["reproduce", a, "--backend", "cpu", "--out", "some-dir"])) is not None}
    assert not refused, f"reproduce analyses that refuse --backend/--out, which the README promises: {refused}"


@pytest.mark.skipif(not README.is_file(), reason="no README.md beside the tests")
def test_readme_python_blocks_run(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    blocks = python_blocks(README.read_text())
    assert blocks, "the README shows no ```python example"
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__readme__"}
    for i, code in enumerate(blocks):
        try:
            exec(compile(code, f"README.md python block {i + 1}", "exec"), ns)
        except Exception as exc:  # pragma: no cover - the message is the point
            pytest.fail(f"README python block {i + 1} raised {type(exc).__name__}: {exc}\n---\n{code}")


def test_readme_performance_table_is_the_generated_one():
    """The README's performance table is the one docs/_ext/perf_tables.py makes from the result files,
    so its numbers cannot drift from what benchmarks/results/ holds."""
    import importlib.util

    path = README.parent / "docs" / "_ext" / "perf_tables.py"
    spec = importlib.util.spec_from_file_location("perf_tables", path)
    perf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(perf)
    table = perf.summary_markdown().strip()
    assert table.count("\n") >= 3
    assert table in README.read_text(), (
        "README's performance table differs from `python docs/_ext/perf_tables.py --readme`; paste its output")
