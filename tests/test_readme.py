"""The README as a test (issue 27): every command of its ```sh blocks runs, in order, in one fresh folder.

Each command is run by bash in a temporary folder (one for the whole README, so later commands use what earlier
ones wrote, as a reader following it would), with the user cache isolated (``DIALEVAL_CACHE_DIR``) and this
environment's ``dialeval`` console script first on PATH. The README's conventions, all visible in it:

- a comment ``# needs: REASON`` marks a command that needs what cannot ship (real data, the network, a new
  shell): it is skipped with that reason;
- ``→ exit N`` in the comment is the exit code the command must end with (otherwise 0);
- a ```text block right after a ```sh block is the output of that block's last command: each of its lines must
  match an output line (stdout and stderr as a terminal shows them), in order; ``…`` stands for any text, a line
  of only ``…`` for any lines;
- ``python3 -m pip install …`` parts of a ``&&`` chain are not run (installing into the test's environment is
  what tox itself does; a fresh install is checked by hand); the rest of the chain is.

The README's commands run from a checkout's root; the checkout files they read (``submissions/reported``,
``submissions/samples``) are copied into the folder. A command that fails fails the test, so
tox fails when the README and the behaviour drift apart.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO, cli_env

README = REPO / "README.md"
CHECKOUT_FILES = ("submissions/reported", "submissions/samples")
"""What the README's commands read from the checkout, copied into the test's folder."""

SLOW: dict[str, str] = {
    "dialeval baseline reference --out reference": "rebuilds four baselines' runs on all four default splits and "
                                                   "rescores them (about 20 s of CPU); tests/test_reference.py checks "
                                                   "the same code",
}
"""A command (its text) -> why it runs only with ``-m slow`` (tox -e slow)."""

NOT_RUN_PARTS = ("python3 -m pip install",)
TIMEOUT = 600


@dataclass
class Command:
    line: int  # 1-based line in README.md
    text: str  # the command as bash runs it (comment removed)
    comment: str
    section: str
    output: list[str] | None = None  # the ```text block that follows, for the block's last command

    @property
    def needs(self) -> str | None:
        m = re.search(r"needs:\s*(.+)", self.comment)
        return m.group(1).strip() if m else None

    @property
    def exit_code(self) -> int:
        m = re.search(r"→ exit (\d+)", self.comment)
        return int(m.group(1)) if m else 0

    @property
    def runnable(self) -> str:
        """The command without the parts that are not run (``pip install``)."""
        parts = [p for p in self.text.split(" && ") if not p.strip().startswith(NOT_RUN_PARTS)]
        return " && ".join(parts)


def split_comment(line: str) -> tuple[str, str]:
    """``command  # comment`` -> (command, comment): the first ``#`` after a space, outside quotes."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def readme_commands(text: str) -> list[Command]:
    commands: list[Command] = []
    section = ""
    fence: str | None = None
    block: list[Command] = []
    last_sh_block: list[Command] = []  # the ```sh block a ```text block may follow (only blank lines between)
    shown: Command | None = None  # the command whose output the open ```text block shows
    for n, line in enumerate(text.splitlines(), 1):
        if fence is None:
            if line.startswith("#"):
                section = line.lstrip("#").strip()
            if line.startswith("```"):
                fence = line[3:].strip()
                block = []
                if fence == "text" and last_sh_block:
                    shown = last_sh_block[-1]
                    shown.output = []
                last_sh_block = []
                continue
            if line.strip():
                last_sh_block = []
            continue
        if line.startswith("```"):
            if fence == "sh":
                commands += block
                last_sh_block = block
            fence, shown = None, None
            continue
        if fence == "sh" and line.strip() and not line.lstrip().startswith("#"):
            cmd, comment = split_comment(line)
            block.append(Command(n, cmd, comment, section))
        elif shown is not None:
            shown.output.append(line)
    return commands


COMMANDS = readme_commands(README.read_text(encoding="utf-8"))


def output_matches(expected: list[str], output: str) -> str | None:
    """None when every expected line matches an output line, in order; else the first line that does not."""
    lines = [line.rstrip() for line in output.splitlines()]
    i = 0
    for want in expected:
        if not want.strip() or want.strip() == "…":
            continue
        pattern = re.compile(".*".join(re.escape(part.strip()) for part in want.split("…")).join(("\\s*", "\\s*")))
        while i < len(lines) and not pattern.fullmatch(lines[i]):
            i += 1
        if i == len(lines):
            return want
        i += 1
    return None


class Workspace:
    """One folder for the whole README; commands run in order, each at most once."""

    def __init__(self, root: Path):
        self.cwd = root / "work"
        self.cwd.mkdir()
        for rel in CHECKOUT_FILES:
            shutil.copytree(REPO / rel, self.cwd / rel)
        self.env = cli_env()
        self.env.update(DIALEVAL_CACHE_DIR=str(root / "cache"), DIALEVAL_NO_PROGRESS="1", PYTHONUNBUFFERED="1",
                        PATH=os.pathsep.join([str(Path(sys.executable).parent), self.env.get("PATH", "")]))
        self.results: dict[int, subprocess.CompletedProcess] = {}

    def run(self, cmd: Command) -> subprocess.CompletedProcess:
        if cmd.line not in self.results:
            # one stream, unbuffered: the output in the order a terminal shows it
            self.results[cmd.line] = subprocess.run(
                ["bash", "-c", "set -o pipefail\n" + cmd.runnable], cwd=self.cwd, env=self.env, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
        return self.results[cmd.line]

    def run_through(self, index: int) -> subprocess.CompletedProcess:
        """Run every earlier runnable command first (what this one may read), then this one."""
        for before in COMMANDS[:index]:
            if before.needs is None and before.runnable and before.line not in self.results:
                res = self.run(before)
                if res.returncode != before.exit_code:
                    pytest.fail(f"README.md:{before.line} (run before line {COMMANDS[index].line}) exited "
                                f"{res.returncode}, not {before.exit_code}: {before.text}\n{res.stdout[-2000:]}")
        return self.run(COMMANDS[index])


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Workspace:
    if shutil.which("dialeval", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("the dialeval console script is not installed in this environment (pip install -e .)")
    return Workspace(tmp_path_factory.mktemp("readme"))


def params():
    out = []
    for i, cmd in enumerate(COMMANDS):
        marks = []
        if cmd.needs is not None:
            marks.append(pytest.mark.skip(reason=f"README.md:{cmd.line} needs {cmd.needs}"))
        elif not cmd.runnable:
            marks.append(pytest.mark.skip(reason=f"README.md:{cmd.line}: installing is checked by hand"))
        if cmd.text in SLOW:
            marks.append(pytest.mark.slow(reason=SLOW[cmd.text]))
        out.append(pytest.param(i, marks=marks, id=f"L{cmd.line}:{cmd.text[:60]}"))
    return out


@pytest.mark.parametrize("index", params())
def test_readme_command(index, workspace):
    cmd = COMMANDS[index]
    res = workspace.run_through(index)
    said = f"README.md:{cmd.line} ({cmd.section}): {cmd.text}\n--- output\n{res.stdout[-4000:]}"
    assert res.returncode == cmd.exit_code, said
    assert "Traceback" not in res.stdout, said
    if cmd.output is not None:
        missing = output_matches(cmd.output, res.stdout)
        assert missing is None, f"output line not found: {missing!r}\n{said}"


# ---- the parser and the matcher themselves ----------------------------------------------------------------
def test_readme_has_the_usage_commands():
    texts = [c.text for c in COMMANDS]
    assert "python3 -m pip install . && dialeval demo" in texts
    assert any(t.startswith("dialeval score") for t in texts) and len(texts) > 40
    # every command is concrete: no placeholders or optional [brackets] left for the reader to fill in
    for c in COMMANDS:
        if c.needs is None:
            assert not re.search(r"\[--|[A-Z]{3,}_DIR|\bDIR\b|\bFILE\b", c.text), f"README.md:{c.line}: {c.text}"


def test_readme_parsing_rules():
    text = "\n".join([
        "## Usage", "```sh", "dialeval a   # one → exit 1", "# a comment line", "x 'not # a comment' && y",
        "dialeval b  # needs: real data", "```", "", "```text", "line …", "…", "```",
        "prose", "```text", "not an output", "```",
    ])
    a, x, b = readme_commands(text)
    assert (a.text, a.exit_code, a.needs, a.line) == ("dialeval a", 1, None, 3)
    assert x.text == "x 'not # a comment' && y" and x.comment == ""
    assert b.needs == "real data" and b.output == ["line …", "…"] and a.output is None
    assert Command(1, "python3 -m pip install . && dialeval demo", "", "").runnable == "dialeval demo"
    assert output_matches(["line …", "…", "end"], "noise\nline 42\nmore\nend\n") is None
    assert output_matches(["end", "line …"], "line 42\nend\n") == "line …"
