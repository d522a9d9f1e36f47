"""Click's and argparse's own error wording never reaches the user: every usage error is one line
``dialeval: error: ...`` in dialeval's words (``x: no such file``, did-you-mean), exit 2."""

from __future__ import annotations

import subprocess
import sys

import click
import pytest
from conftest import REPO, cli_env, run_cli

RUN = REPO / "submissions" / "samples" / "dstc6" / "example-run.json"


@pytest.mark.parametrize("args, said", [
    # before: "Invalid value for 'FILE': File '{tmp}/nope.csv' does not exist."
    (["registry", "import", "{tmp}/nope.csv", "--board", "b"], "{tmp}/nope.csv: no such file"),
    (["registry", "import", "{tmp}", "--board", "b"], "{tmp}: is a directory, not a file"),
    # before: "Invalid value for 'FOLDER': Directory '...example-run.json' is a file."
    (["data", "verify", str(RUN)], f"{RUN}: is a file, not a folder"),
    (["demo", "--out", str(RUN)], f"--out {RUN}: is a file, not a folder"),
    # before: "Invalid value for '--ties': 'pesimistic' is not one of 'pessimistic', 'optimistic', ..."
    (["score", str(RUN), "--ties", "pesimistic"], "--ties: unknown value 'pesimistic' (did you mean 'pessimistic'?)"),
    (["score", str(RUN), "--ties", "random"], "--ties: unknown value 'random' (one of: pessimistic, optimistic, "
                                               "expected, input-order)"),
    # before: "Invalid value for '--jobs': 'x' is not a valid integer range." / "0 is not in the range 1<=x<=256."
    (["grade", "--jobs", "x"], "--jobs: must be a whole number, got 'x'"),
    (["grade", "--jobs", "0"], "--jobs: must be from 1 to 256, got 0"),
    (["demo", "--seed", "1.5"], "--seed: must be a whole number, got '1.5'"),
    # before: "No such option '--metrcs'. (Possible options: ...)"; "No such command 'scor'."
    (["score", str(RUN), "--metrcs", "p@1"], "unknown option --metrcs (did you mean '--metrics'?) (see 'dialeval score "
                                             "--help')"),
    (["scor"], "unknown command 'scor' (did you mean 'score'?) (commands: airdialogue, baseline, benchmarks, bundle, "
               "compare, convert, data, demo, embed, grade, leaderboard, rank, registry, reproduce, schema, score, "
               "simulate, stats, validate) (see 'dialeval --help')"),
    (["registry", "imprt"], "unknown command 'imprt' (did you mean 'import'?) (commands: check, export, import) "
                            "(see 'dialeval registry --help')"),
    # before: "Missing argument 'SUBMISSION'.", "Option '--out' requires an argument.", "Got unexpected extra
    # arguments (b c)", "Option '--lenient' does not take a value."
    (["score"], "missing argument SUBMISSION (see 'dialeval score --help')"),
    (["registry", "import", str(RUN)], "missing option --board (see 'dialeval registry import --help')"),
    (["score", str(RUN), "--out"], "--out needs a value"),
    (["score", str(RUN), "b", "c"], "unexpected arguments: b c (see 'dialeval score --help')"),
    (["validate", str(RUN), "--lenient=yes"], "--lenient takes no value"),
])
def test_click_errors_are_said_in_dialevals_words(tmp_path, args, said):
    r = run_cli(*(a.replace("{tmp}", str(tmp_path)) for a in args), cwd=tmp_path)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.splitlines() == [f"dialeval: error: {said.replace('{tmp}', str(tmp_path))}"]


def test_a_benchmarks_own_flag_is_worded_as_every_other():
    # a benchmark's flags are made when the command line is parsed, after the command was loaded
    r = run_cli("score", RUN, "--benchmark", "airdialogue", "--flight-distance", "legcy")
    assert r.returncode == 2
    assert r.stderr.splitlines() == ["dialeval: error: --flight-distance: unknown value 'legcy' (did you mean "
                                     "'legacy'?)"]


def test_every_command_parameter_has_dialevals_wording():
    """Every path, choice and number parameter of every command (a command added later included) is given a type
    that words its errors as dialeval does: Click's own types never convert a user's value."""
    from dialeval.cli import main
    from dialeval.commands import wording

    ours = (wording._Path, wording._Choice, wording._Int, wording._IntRange, wording._Float, wording._FloatRange)
    clicks = (click.Path, click.Choice, click.types.IntParamType, click.types.FloatParamType)
    ctx = click.Context(main)
    seen = []

    def walk(command, path):
        for p in command.params:
            if isinstance(p.type, clicks):
                seen.append((path, p.name, type(p.type).__name__))
                assert isinstance(p.type, ours), (path, p.name)
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                walk(command.get_command(ctx, name), f"{path} {name}")

    walk(main, "dialeval")
    assert len(seen) > 80  # every command was walked
    assert click.INT.__class__ is click.types.IntParamType  # Click's shared instances are left as they are


@pytest.mark.parametrize("args, said", [
    # before: argparse's usage block, then "python -m dialeval.baselines.selection: error: the following arguments
    # are required: baseline, data, --out"
    (["selection"], "missing baseline, data, --out"),
    (["selection", "bm25", "d.txt", "--out", "o.txt"], "baseline: unknown value 'bm25' (one of: random, tfidf)"),
    (["selection", "tfidf", "d.txt", "--out", "o.txt", "--seed", "x"], "--seed: must be a whole number, got 'x'"),
    (["convai2", "d.txt", "--out"], "--out needs a value"),
    (["dstc7", "extra"], "unexpected argument(s): extra"),
])
def test_the_baseline_modules_say_usage_errors_in_one_line(tmp_path, args, said):
    module = f"dialeval.baselines.{args[0]}"
    r = subprocess.run([sys.executable, "-m", module, *args[1:]], cwd=tmp_path, capture_output=True, text=True,
                       env={**cli_env(), "PYTHONPATH": str(REPO)}, timeout=120)
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr.splitlines() == [f"dialeval: error: {said} (see 'python -m {module} --help')"]
