"""The package's comments and docstrings say why, never history.

Timings, before/after figures, host descriptions and commit hashes belong in ``benchmarks/results/``,
the docs' performance page and git; a comment that carries one goes stale the day the code changes.
This test reads every comment and docstring under ``hphawkes_py/`` (Python, CUDA and C headers) and
refuses those patterns. It also checks the patterns catch what they should (a test that cannot fail
is no test).
"""
from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

import hphawkes_py

PKG = Path(hphawkes_py.__file__).resolve().parent

_UNIT = r"(?:ns|us|µs|ms|s|sec|secs|seconds?|minutes?|min|h|hours?)"
PATTERNS = {
    "timing": re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e-?\d+)?\s?" + r"(?:ns|us|µs|ms|s|sec|secs|seconds?|minutes?)\b"
                         r"(?!\s*(?:=|\)|,|per\b|a\b|each\b|apart|of\b|after|before|from|in|to\b|between))"),
    "before/after": re.compile(r"\d(?:[\d.e+-]*)\s*" + _UNIT + r"?\s*(?:->|→)\s*\d[\d.]*\s*" + _UNIT + r"?\b"),
    "speed-up": re.compile(r"\b\d+(?:\.\d+)?\s?[x×]\s+(?:faster|slower|quicker|speed-?up)\b|\bspeed-?up of \d", re.I),
    "host": re.compile(r"\b(?:(?:idle|busy|loaded|lent|benchmark) (?:host|machine|box)|H100|H200|Titan ?V|GTX ?\d+|EPYC|Xeon|Ryzen"
                       r"|\d+[- ]core (?:host|machine|box)|on (?:one|two|\d+) (?:core|thread)s? (?:took|ran|runs))\b", re.I),
    "commit hash": re.compile(r"(?<![\w/.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w/.-])"
                              r"|\b(?:commit|since|at|before|after) [0-9a-f]{7,40}\b"),
}


def _python_texts(path: Path):
    """(line, text) for every comment and docstring of a Python file."""
    src = path.read_text()
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                body0 = node.body[0]
                for i, line in enumerate(doc.splitlines()):
                    yield body0.lineno + i, line


_C_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _c_texts(path: Path):
    src = path.read_text()
    for m in _C_COMMENT.finditer(src):
        line0 = src.count("\n", 0, m.start()) + 1
        for i, line in enumerate(m.group(0).splitlines()):
            yield line0 + i, line


_CODE_SPAN = re.compile(r"``.*?``|`[^`]*`")


def findings(paths):
    out = []
    for path in paths:
        texts = _python_texts(path) if path.suffix == ".py" else _c_texts(path)
        for line, text in texts:
            text = _CODE_SPAN.sub("``", text)  # formulas in code spans (``4 s / (1 + s)^2``) are not timings
            for kind, pat in PATTERNS.items():
                m = pat.search(text)
                if m:
                    out.append(f"{_shown(path)}:{line}: {kind}: {m.group(0)!r} in {text.strip()[:100]!r}")
    return out


def _shown(path: Path) -> str:
    try:
        return str(path.relative_to(PKG.parent))
    except ValueError:
        return str(path)


def _package_files():
    return sorted(p for p in PKG.rglob("*") if p.suffix in (".py", ".cu", ".h") and "__pycache__" not in p.parts)


@pytest.mark.parametrize("text, kind", [
    ("# 3.66 -> 1.44 ms per call on one thread", "before/after"),
    ("# took 0.32-0.45 s on the lent machine", "timing"),
    ("# measured on the H200 host", "host"),
    ("# 4x faster than the per-row loop", "speed-up"),
    ("# since fdbfeac the chunks grow", "commit hash"),
    ("# the windows of 61bf74f", "commit hash"),
    ("# the idle 2-core machine", "host"),
])
def test_patterns_catch_history(text, kind, tmp_path):
    f = tmp_path / "x.py"
    f.write_text(f"x = 1  {text}\n")
    got = findings([f])
    assert any(f": {kind}: " in g for g in got), got


@pytest.mark.parametrize("text", [
    "# tau_t in hours, h in km",
    "# timeout (seconds) before the pool is abandoned",
    "# the float64 kernel: 2**(d^2 x -log2(e)/(2 b^2))",
    "# offsets 0x7ff0000000000000 select the exponent bits",
    "# sum over the 32 replicates of a group",
])
def test_patterns_leave_why_comments_alone(text, tmp_path):
    f = tmp_path / "x.py"
    f.write_text(f'def f(s):\n    """Scale ``(2 pi s^2)^(-1)`` and ``4 s / (1 + s)^2``."""\n    return 1  {text}\n')
    assert not findings([f])


def test_no_history_in_package_comments_or_docstrings():
    found = findings(_package_files())
    assert not found, ("comments and docstrings say why, never history (move figures to benchmarks/results/"
                       " and the docs' performance page):\n" + "\n".join(found))
