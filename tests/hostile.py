"""The harness of the hostile-input suites (``tests/test_hostile_*.py``): one case = one CLI run, fully judged.

Each :class:`Hostile` case runs ``dialeval ARGS`` in a subprocess and checks what a user must be able to rely
on, whatever the input:

* the exit code is the documented one (1 the submission's fault, 2 usage / data / environment);
* every line on stderr is one whole message (no traceback, no Python exception wording, no private temp path);
* no output (stdout, stderr, files written) holds any of the case's secrets (gold ids, gold texts);
* peak memory (the child's own ``ru_maxrss``, from ``wait4``) and wall time stay under the case's bounds,
  which default to 3x the input's bytes + 200 MB and 30 s (a FIFO or a device must be refused at once:
  those cases get 1 s).

FIFOs are made by the case itself (``fifo(path)``), and a writer is never attached: a reader that opens one
for reading blocks forever, and the time bound catches it (the child is killed at the limit).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from conftest import REPO, cli_env

MB = 1024 * 1024
BASE_RSS = 200 * MB
TIME_SLACK = 5.0
"""What a CLI run may take beyond 3x its input: the interpreter, numpy, the metric code and their caches."""

PYTHON_WORDING = re.compile(
    r"Traceback \(most recent call last\)|\b(?:[A-Z][a-zA-Z]+Error|Exception|KeyError|StopIteration)\b: |"
    r"File \"[^\"]+\", line \d+|\bErrno \d+\]|<built-in|object at 0x|/tmp/pytest-|dialeval-tmp-|/dialeval-\d+/"
)


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    seconds: float
    peak_rss: int  # bytes

    @property
    def lines(self) -> list[str]:
        return [ln for ln in self.stderr.splitlines() if ln.strip()]

    def describe(self) -> str:
        return (f"exit {self.code} in {self.seconds:.2f} s, peak RSS {self.peak_rss / MB:.0f} MB\n"
                f"stderr: {self.stderr[-2000:]!r}\nstdout: {self.stdout[-1000:]!r}")


def run_isolated(args, *, cwd: Path | None = None, env: dict | None = None, timeout: float = 60,
                 stdin: bytes | None = None) -> Outcome:
    """Run ``dialeval ARGS`` from a fresh intermediate process, whose ``RUSAGE_CHILDREN`` is then this run's
    peak RSS alone; returns the exit code, outputs, wall time and that peak."""
    helper = (
        "import json, os, resource, subprocess, sys, time\n"
        "spec = json.loads(sys.stdin.buffer.readline())\n"
        "data = sys.stdin.buffer.read() if spec['stdin'] else None\n"
        "t0 = time.monotonic()\n"
        "p = subprocess.Popen(spec['cmd'], cwd=spec['cwd'], env=spec['env'],\n"
        "    stdin=subprocess.PIPE if spec['stdin'] else subprocess.DEVNULL,\n"
        "    stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
        "try:\n"
        "    out, err = p.communicate(data, timeout=spec['timeout'])\n"
        "    code = p.returncode\n"
        "except subprocess.TimeoutExpired:\n"
        "    p.kill(); out, err = p.communicate(); code = None\n"
        "secs = time.monotonic() - t0\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024\n"
        "sys.stdout.write(json.dumps({'code': code, 'out': out.decode('utf-8', 'replace'),\n"
        "    'err': err.decode('utf-8', 'replace'), 'secs': secs, 'rss': rss}))\n"
    )
    cmd = [sys.executable, "-c", "from dialeval.cli import run; run()", *map(str, args)]
    e = cli_env()
    e["PYTHONPATH"] = str(REPO) + os.pathsep + e.get("PYTHONPATH", "")
    e["DIALEVAL_NO_PROGRESS"] = "1"
    if env:
        e.update(env)
    spec = {"cmd": cmd, "cwd": str(cwd or REPO), "env": e, "timeout": timeout, "stdin": stdin is not None}
    payload = json.dumps(spec).encode() + b"\n" + (stdin or b"")
    r = subprocess.run([sys.executable, "-c", helper], input=payload, capture_output=True, timeout=timeout + 30)
    if r.returncode != 0:
        raise AssertionError(f"measuring harness failed: {r.stderr.decode()[-1000:]}")
    res = json.loads(r.stdout)
    if res["code"] is None:
        raise AssertionError(f"dialeval {' '.join(map(str, args))[:300]} did not finish in {timeout} s "
                             f"(killed; stderr: {res['err'][-500:]!r})")
    return Outcome(res["code"], res["out"], res["err"], res["secs"], res["rss"])


def fifo(path: Path) -> Path:
    """A FIFO at ``path`` with no writer: opening it for reading would block forever."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def input_bytes(paths) -> int:
    """The real size of a case's inputs: regular files and the regular files under folders."""
    total = 0
    for p in paths:
        p = Path(p)
        try:
            if p.is_dir():
                total += sum(f.stat().st_size for f in p.rglob("*") if f.is_file() and not f.is_symlink())
            elif p.is_file():
                total += p.stat().st_size
        except OSError:
            pass
    return total


@dataclass
class Hostile:
    """One hostile input and what must happen to it."""

    name: str
    args: list  # CLI arguments after ``dialeval``
    exit: int  # the documented exit code
    inputs: list = field(default_factory=list)  # files/folders whose size bounds memory (3x + 200 MB)
    secrets: list = field(default_factory=list)  # strings no output may hold (gold ids, gold texts)
    message: str | None = None  # a regex the one-line message must match (stderr or stdout)
    seconds: float = 30.0
    rss: int | None = None  # bytes; None: 3x inputs + 200 MB
    outputs: list = field(default_factory=list)  # files the run may write: scanned for secrets too
    unchanged: list = field(default_factory=list)  # files that must be byte-identical after the run
    stdin: bytes | None = None
    env: dict | None = None
    max_lines: int | None = 1  # stderr lines allowed (None: any number, each still one whole message)

    def check(self, cwd: Path | None = None) -> Outcome:
        before = {Path(p): Path(p).read_bytes() for p in self.unchanged}
        out = run_isolated(self.args, cwd=cwd, env=self.env, timeout=max(self.seconds * 4, 20), stdin=self.stdin)
        where = f"[{self.name}] {out.describe()}"
        assert out.code == self.exit, f"expected exit {self.exit}: {where}"
        assert not PYTHON_WORDING.search(out.stderr), f"Python's wording or a private path on stderr: {where}"
        if self.exit != 0:
            assert out.lines, f"no message: {where}"
            if self.max_lines is not None:
                errors = [ln for ln in out.lines if ln.startswith(("dialeval: error", "error"))]
                assert len(errors) <= self.max_lines, f"more than {self.max_lines} error line(s): {where}"
        if self.message is not None:
            assert re.search(self.message, out.stderr + out.stdout), f"message !~ {self.message!r}: {where}"
        texts = [out.stdout, out.stderr]
        for p in self.outputs:
            p = Path(p)
            if p.is_file():
                texts.append(p.read_bytes().decode("utf-8", "replace"))
        for s in self.secrets:
            for t in texts:
                assert s not in t, f"a secret ({s[:12]}...) leaked: {where}"
        # The bound catches a hang or superlinear work, not a slow machine: a loaded 2-core CI box can take a
        # second just to start the interpreter, so the documented times (e.g. a FIFO refused in < 1 s) are
        # measured on a quiet machine and reported, and the test allows TIME_SLACK times as much.
        limit = self.seconds * TIME_SLACK
        assert out.seconds <= limit, f"took longer than {limit:g} s: {where}"
        bound = self.rss if self.rss is not None else 3 * input_bytes(self.inputs) + BASE_RSS
        assert out.peak_rss <= bound, f"peak RSS over {bound / MB:.0f} MB: {where}"
        for p, data in before.items():
            assert p.read_bytes() == data, f"{p} was changed: {where}"
        log = os.environ.get("DIALEVAL_HOSTILE_LOG")
        if log:  # the table of a closing report: one row per case that passed
            with open(log, "a", encoding="utf-8") as f:
                f.write(f"{self.name}\t{out.code}\t{out.seconds:.2f}\t{out.peak_rss / MB:.0f}\t{bound / MB:.0f}\n")
        return out
