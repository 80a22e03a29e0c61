"""Command lines shown in the README and the documentation, checked by the real parser.

Shared by tests/test_readme.py and tests/test_docs_code.py: both collect the ``hphawkes ...`` lines a
page shows and ask the command-line parser whether each one names real commands and options.
"""
from __future__ import annotations

import re
import shlex


def shell_commands(code: str) -> list[str]:
    """The lines of a shell block that start with ``hphawkes`` (a ``$`` prompt and ``#`` comments dropped)."""
    found = []
    for line in code.splitlines():
        line = line.strip().removeprefix("$ ").split(" #")[0].strip()
        if line.startswith("hphawkes "):
            found.append(line)
    return found


def expand(found: list[str]) -> list[list[str]]:
    """Command lines as argument lists without ``hphawkes``: ``a | b`` alternatives replace the last
    word (one command each), optional ``[...]`` parts are kept, and lines with placeholders such as
    ``ANALYSIS`` or ``DIR`` are skipped (left to the tests that name them)."""
    commands = []
    for line in found:
        line = line.replace("[", "").replace("]", "")  # an optional part is checked too
        if re.search(r"\b[A-Z]{2,}\b", line):
            continue
        first, *alternatives = [part.strip() for part in line.split(" | ")]
        words = shlex.split(first)[1:]
        commands.append(words)
        commands += [words[:-1] + shlex.split(alt) for alt in alternatives]
    return commands


def parse_error(argv: list[str]) -> str | None:
    """None if ``hphawkes argv`` parses into a runnable command (``--help`` counts), else argparse's complaint."""
    import contextlib
    import io

    from hphawkes_py.cli import build_parser

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return None if exc.code == 0 else err.getvalue().strip().splitlines()[-1]
    return None if getattr(args, "func", None) else "no command selected"
