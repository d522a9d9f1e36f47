"""The README as a test (issue 27): every command of its ```sh blocks runs, in order, in one fresh folder.

Each command is run by bash in a temporary folder (one for the whole README, so later commands use what earlier
ones wrote, as a reader following it would), with the user cache isolated (``DIALEVAL_CACHE_DIR``) and this
environment's ``dialeval`` console script first on PATH. The README's ```python blocks run too, each as one
program in a fresh folder. The README's conventions, all visible in it:

- a comment ``# needs: WHAT[, WHAT…] (why)`` marks a command that needs what cannot ship. Each WHAT is one of
  the small vocabulary ``NEEDS`` below (a ``../shared/…`` path of the real data, the network, a GPU, torch, the
  venv module, tox); the command runs whenever everything it needs is here (the real data through the same
  ``../shared/…`` path the README writes: the folder's ``../shared`` links to the checkout's), and is skipped,
  with the reason, only when something is not;
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

import functools
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
SHARED = REPO.parent / "shared"
"""``../shared`` as the README writes it: the real data beside the checkout (absent where it cannot ship)."""
CHECKOUT_FILES = ("submissions/reported", "submissions/samples")
"""What the README's commands read from the checkout, copied into the test's folder."""

SLOW: dict[str, str] = {
    "dialeval baseline reference --out reference": "rebuilds four baselines' runs on all four default splits and "
                                                   "rescores them (about 20 s of CPU); tests/test_reference.py checks "
                                                   "the same code",
    "dialeval reproduce babi --data ../shared/data/babi-dialog --out table2 --merge --check":
        "trains and tests four baselines on the whole bAbI release (about 80 s on 2 cores)",
    "dialeval reproduce babi --data ../shared/data/babi-dialog --out neural --models "
    "supervised-embeddings,memn2n,memn2n-match --jobs 2":
        "trains the three neural baselines on all six bAbI tasks (66 min of job time on 2 cores; benchmarks/gpu_table2.py "
        "runs it on a GPU: 392 s on one H200)",
}
"""A command (its text) -> why it runs only with ``-m slow`` (tox -e slow). No later command may read what a slow
one writes: the commands run before a test skip the slow ones."""


def _shared_path(need: str) -> str | None:
    return None if (REPO / need).exists() else f"{need} is not here (the real data cannot ship)"


def _network(need: str) -> str | None:
    # a test run never downloads unless asked: CI is offline, and a release is tens of megabytes
    return None if os.environ.get("DIALEVAL_TEST_NETWORK") == "1" else "the network (DIALEVAL_TEST_NETWORK=1 runs it)"


def _torch(need: str) -> str | None:
    import importlib.util

    return None if importlib.util.find_spec("torch") else "torch is not installed (the neural extra)"


def _gpu(need: str) -> str | None:
    probe = "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"
    return None if _torch(need) is None and subprocess.run([sys.executable, "-c", probe]).returncode == 0 \
        else "no GPU that torch can use"


def _venv(need: str) -> str | None:
    import importlib.util

    return None if importlib.util.find_spec("ensurepip") else "python3's venv module lacks ensurepip (python3-venv)"


EXTRAS = {"embeddings": ("numba", "gensim", "pyarrow"), "bleu": ("sacrebleu",)}
"""An optional extra of the package (``pip install '.[embeddings]'``) -> the modules that say it is installed."""


def _extra(need: str) -> str | None:
    import importlib.util

    name = need.split()[1]
    lacking = [m for m in EXTRAS[name] if importlib.util.find_spec(m) is None]
    return f"the {name} extra is not installed ({', '.join(lacking)})" if lacking else None


def _tox(need: str) -> str | None:
    return "tox runs this test: running tox from it would run the suite inside itself"


NEEDS: list[tuple[str, object]] = [
    (r"\.\./shared/\S+", _shared_path),
    (r"the network", _network),
    (r"a GPU", _gpu),
    (r"torch", _torch),
    (r"the (embeddings|bleu) extra", _extra),
    (r"python3-venv", _venv),
    (r"tox", _tox),
]
"""The vocabulary of ``# needs:``: a pattern for WHAT -> its detection (None when here, else why not)."""


@functools.cache
def unavailable(need: str) -> str | None:
    """Why ``need`` (one WHAT of a ``# needs:`` comment) is not here, or None when it is."""
    for pattern, detect in NEEDS:
        if re.fullmatch(pattern, need):
            return detect(need)
    raise ValueError(f"unknown need {need!r}: add it to NEEDS in tests/test_readme.py with its detection")


NOT_RUN_PARTS = ("python3 -m pip install",)
TIMEOUT = 600


@dataclass
class Command:
    line: int  # 1-based line in README.md
    text: str  # the command as bash runs it (comment removed)
    comment: str
    section: str
    output: list[str] | None = None  # the ```text block that follows, for the block's last command
    language: str = "sh"  # or "python": a whole ```python block, run as one program

    @property
    def needs(self) -> list[str]:
        """The WHATs of ``# needs: WHAT, WHAT (why)``, up to an ``→ exit N``."""
        m = re.search(r"needs:\s*([^(→]+)", self.comment)
        return [w.strip() for w in m.group(1).split(",") if w.strip()] if m else []

    @property
    def missing(self) -> str | None:
        """Why this command cannot run here (the first need that is not here), or None."""
        return next((why for why in map(unavailable, self.needs) if why), None)

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
    code: list[str] = []  # the open ```python block
    start = 0
    last_sh_block: list[Command] = []  # the ```sh block a ```text block may follow (only blank lines between)
    shown: Command | None = None  # the command whose output the open ```text block shows
    for n, line in enumerate(text.splitlines(), 1):
        if fence is None:
            if line.startswith("#"):
                section = line.lstrip("#").strip()
            if line.startswith("```"):
                fence = line[3:].strip()
                block, code, start = [], [], n + 1
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
            elif fence == "python":
                last_sh_block = [Command(start, "\n".join(code), "", section, language="python")]
                commands += last_sh_block
            fence, shown = None, None
            continue
        if fence == "python":
            code.append(line)
        elif fence == "sh" and line.strip() and not line.lstrip().startswith("#"):
            cmd, comment = split_comment(line)
            block.append(Command(n, cmd, comment, section))
        elif shown is not None:
            shown.output.append(line)
    return commands


_ALL = readme_commands(README.read_text(encoding="utf-8"))
COMMANDS = [c for c in _ALL if c.language == "sh"]
PYTHON = [c for c in _ALL if c.language == "python"]


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
        if SHARED.exists():  # the README's ../shared/… paths reach the real data, as from a checkout
            (root / "shared").symlink_to(SHARED.resolve(), target_is_directory=True)
        self.env = cli_env()
        self.env.update(DIALEVAL_CACHE_DIR=str(root / "cache"), DIALEVAL_NO_PROGRESS="1", PYTHONUNBUFFERED="1",
                        PATH=os.pathsep.join([str(Path(sys.executable).parent), self.env.get("PATH", "")]))
        self.results: dict[int, subprocess.CompletedProcess] = {}

    def run(self, cmd: Command) -> subprocess.CompletedProcess:
        if cmd.line not in self.results:
            argv = ["bash", "-c", "set -o pipefail\n" + cmd.runnable]
            if cmd.language == "python":
                argv = [sys.executable, "-c", cmd.text]
            # one stream, unbuffered: the output in the order a terminal shows it
            self.results[cmd.line] = subprocess.run(
                argv, cwd=self.cwd, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                timeout=TIMEOUT)
        return self.results[cmd.line]

    def run_through(self, index: int) -> subprocess.CompletedProcess:
        """Run every earlier command that can run here first (what this one may read), then this one."""
        for before in COMMANDS[:index]:
            if (before.runnable and before.text not in SLOW and before.missing is None
                    and before.line not in self.results):
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


def marks_of(cmd: Command) -> list:
    marks = []
    if cmd.missing is not None:
        marks.append(pytest.mark.skip(reason=f"README.md:{cmd.line}: {cmd.missing}"))
    elif not cmd.runnable:
        marks.append(pytest.mark.skip(reason=f"README.md:{cmd.line}: installing is checked by hand"))
    if cmd.text in SLOW:
        marks.append(pytest.mark.slow(reason=SLOW[cmd.text]))
    return marks


def check(cmd: Command, res: subprocess.CompletedProcess) -> None:
    said = f"README.md:{cmd.line} ({cmd.section}): {cmd.text}\n--- output\n{res.stdout[-4000:]}"
    assert res.returncode == cmd.exit_code, said
    assert "Traceback" not in res.stdout, said
    if cmd.output is not None:
        missing = output_matches(cmd.output, res.stdout)
        assert missing is None, f"output line not found: {missing!r}\n{said}"


@pytest.mark.parametrize("index", [pytest.param(i, marks=marks_of(c), id=f"L{c.line}:{c.text[:60]}")
                                   for i, c in enumerate(COMMANDS)])
def test_readme_command(index, workspace):
    check(COMMANDS[index], workspace.run_through(index))


@pytest.mark.parametrize("block", [pytest.param(c, id=f"L{c.line}:python") for c in PYTHON])
def test_readme_python_block(block, tmp_path):
    """A ```python block runs as one program in a fresh folder holding the checkout's sample data."""
    check(block, Workspace(tmp_path).run(block))


# ---- the parser and the matcher themselves ----------------------------------------------------------------
def test_readme_has_the_usage_commands():
    texts = [c.text for c in COMMANDS]
    assert "python3 -m pip install . && dialeval demo" in texts
    assert any(t.startswith("dialeval score") for t in texts) and len(texts) > 40
    # every command is concrete: no placeholders or optional [brackets] left for the reader to fill in
    for c in COMMANDS:
        if c.missing is None:
            assert not re.search(r"\[--|[A-Z]{3,}_DIR|\bDIR\b|\bFILE\b", c.text), f"README.md:{c.line}: {c.text}"


def test_readme_parsing_rules():
    text = "\n".join([
        "## Usage", "```sh", "dialeval a   # one → exit 1", "# a comment line", "x 'not # a comment' && y",
        "dialeval b  # needs: ../shared/data/x, the network (why) → exit 1", "```", "", "```text", "line …", "…",
        "```", "prose", "```text", "not an output", "```", "```python", "print(1)", "", "print(2)", "```",
        "```text", "1", "```",
    ])
    a, x, b, py = readme_commands(text)
    assert (a.text, a.exit_code, a.needs, a.line) == ("dialeval a", 1, [], 3)
    assert x.text == "x 'not # a comment' && y" and x.comment == ""
    assert b.needs == ["../shared/data/x", "the network"] and b.exit_code == 1
    assert b.output == ["line …", "…"] and a.output is None
    assert (py.language, py.text, py.line, py.output) == ("python", "print(1)\n\nprint(2)", 18, ["1"])
    assert Command(1, "python3 -m pip install . && dialeval demo", "", "").runnable == "dialeval demo"
    assert output_matches(["line …", "…", "end"], "noise\nline 42\nmore\nend\n") is None
    assert output_matches(["end", "line …"], "line 42\nend\n") == "line …"


def test_commands_that_need_an_extra_say_so():
    """The set-up installs ``.`` alone: a command that needs an optional extra says which (before: the embedding
    and BLEU commands were unmarked and failed, exit 2, for a reader who followed the set-up)."""
    wants = {"the embeddings extra": r"embedding-average|greedy-matching|vector-extrema|dialeval embed",
             "the bleu extra": r"infer-bleu(?!.*--bleu-variant toolkit)"}  # the toolkit's BLEU needs no sacrebleu
    for c in COMMANDS:
        for need, pattern in wants.items():
            if re.search(pattern, c.text):
                assert need in c.needs, f"README.md:{c.line}: {c.text} needs {need}: add '# needs: {need}'"
    assert unavailable("the bleu extra") in (None, "the bleu extra is not installed (sacrebleu)")


def test_needs_vocabulary():
    """Every ``# needs:`` of the README is in the vocabulary; the real data is needed only where it is absent."""
    for c in COMMANDS:
        c.missing  # noqa: B018 -- raises on a WHAT the vocabulary lacks
    assert unavailable("../shared/data/no-such-release") is not None
    with pytest.raises(ValueError, match="unknown need"):
        unavailable("real data")
    real = [c for c in COMMANDS if any(w.startswith("../shared/") for w in c.needs)]
    assert len(real) >= 3, "the README runs commands on the real data when ../shared has it"
    if (SHARED / "data" / "dstc6" / "tst1").is_dir():
        # with the data here they run: no skip mark, so a wrong exit code fails the test
        assert all(not any(m.name == "skip" for m in marks_of(c)) for c in real if "../shared/data/dstc6" in c.needs)
