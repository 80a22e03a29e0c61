"""A long-lived ``Rscript`` process that answers one command line at a time (the peer benchmarks
time R's functions from Python in the same run, without paying R's start-up per call).

The R side reads commands from stdin and answers each with one line ``@@ field field ...``; any other
output goes to a log file, shown if the process ends early.
"""
from __future__ import annotations

import subprocess
from pathlib import Path


class RServer:
    """``Rscript workdir/server.R ARGS...`` with the R source ``script``; :meth:`ask` sends a command
    and returns the fields of its ``@@`` reply."""

    def __init__(self, script: str, workdir, args=(), log_name: str = "r.log"):
        self.dir = Path(workdir)
        server = self.dir / "server.R"
        server.write_text(script)
        self.log = open(self.dir / log_name, "w+")
        self.proc = subprocess.Popen(["Rscript", str(server), *map(str, args)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True, bufsize=1)
        self.ready = self._read()

    def _read(self):
        for line in self.proc.stdout:
            if line.startswith("@@"):
                return line.split()[1:]
            self.log.write(line)
        self.log.flush()
        self.log.seek(0)
        raise RuntimeError("the R process ended early:\n" + self.log.read()[-3000:])

    def ask(self, cmd):
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        return self._read()

    def close(self):
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
        except OSError:
            pass
        self.proc.wait(timeout=60)
        self.log.close()
