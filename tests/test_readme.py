"""Every Python code block in the README runs as shown (a user's first contact must not raise).

The README's examples are written with quick settings; each ```python block is executed in order
in one namespace, the way a reader pastes them into one session.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def python_blocks(text: str) -> list:
    return [m.group(1) for m in FENCE.finditer(text)]


def test_block_finder_finds_blocks():
    text = "x\n```python\na = 1\n```\n```bash\nls\n```\n```python\nb = a + 1\n```\n"
    assert python_blocks(text) == ["a = 1\n", "b = a + 1\n"]


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
