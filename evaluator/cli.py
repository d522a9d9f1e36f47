"""The ``dialeval`` command line: a thin shell over the library.

Each sub-command lives in its own module and is imported only when it runs, so ``dialeval --help``
stays fast. To add a command, add one line to ``COMMANDS``: ``name: ("module", "attribute", "help")``.
"""

from __future__ import annotations

import os
import sys

import click

from dialeval import __version__
from dialeval.commands.wording import Group, reword

COMMANDS: dict[str, tuple[str, str, str]] = {
    "validate": ("dialeval.commands.score", "validate_cmd", "Check a submission against a split; exit 1 if invalid."),
    "score": ("dialeval.commands.score", "score_cmd", "Validate and score a submission on a benchmark (dstc6 by default)."),
    "benchmarks": ("dialeval.commands.score", "benchmarks_cmd", "List the benchmarks with their splits and metrics."),
    "data": ("dialeval.commands.data", "data_group", "List, verify and fetch the published data releases."),
    "schema": ("dialeval.commands.schema", "schema_cmd", "List or print the published JSON Schemas."),
    "simulate": ("dialeval.simulator.cli", "simulate_cmd", "Generate a DSTC6-style challenge with the dialog simulator."),
    "stats": ("dialeval.simulator.cli", "stats_cmd", "Describe a challenge directory (items, candidates, vocabulary)."),
    "convert": ("dialeval.commands.convert", "convert_group", "Convert between bAbI (FB text) and DSTC6 JSON."),
    "embed": ("dialeval.commands.embed", "embed_cmd", "Embedding average, greedy matching, vector extrema of hypotheses vs references."),
    "demo": ("dialeval.commands.demo", "demo_cmd", "Run the whole chain on the embedded default challenge."),
    "baseline": ("dialeval.commands.baselines", "baseline_group", "List and run the reference baselines."),
    "reproduce": ("dialeval.commands.baselines", "reproduce_group", "Reproduce published baseline tables."),
    "airdialogue": ("dialeval.commands.airdialogue", "airdialogue_group", "AirDialogue: simulate a split, baseline submissions, response-generation BLEU."),
    "grade": ("dialeval.commands.organizer", "grade_cmd", "Grade a folder of team runs into the registry (organizers)."),
    "compare": ("dialeval.commands.organizer", "compare_cmd", "Paired significance tests between two runs."),
    "rank": ("dialeval.commands.organizer", "rank_cmd", "Rank a board's runs with significance bands."),
    "registry": ("dialeval.commands.organizer", "registry_group", "Check, export or import into the registry database."),
    "leaderboard": ("dialeval.commands.organizer", "leaderboard_group", "Build the static leaderboard site."),
    "bundle": ("dialeval.commands.bundle", "bundle_group", "Write a Codabench or EvalAI bundle that scores with dialeval."),
}


class Interrupted(Exception):
    """Ctrl-C (SIGINT) while a command ran: said as one line, exit 130."""


class LazyGroup(Group):
    """A click group whose sub-commands are imported on first use (and given dialeval's wording for bad values)."""

    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        spec = COMMANDS.get(name)
        if spec is None:
            return None
        import importlib

        module = importlib.import_module(spec[0])
        command = getattr(module, spec[1])
        reword(command)
        return command

    def invoke(self, ctx):
        # Notices the command queued (which default data it used) are said once it ends, unless it ends in a usage
        # error: that one line is then all the user needs.
        from dialeval.commands import flush_notices

        try:
            rv = super().invoke(ctx)
        except KeyboardInterrupt:
            flush_notices(usage_error=False)
            # past click, which would print an empty line and call it "aborted"
            raise Interrupted() from None
        except BaseException as e:
            code = getattr(e, "exit_code", None)
            flush_notices(usage_error=code == 2 or isinstance(e, click.UsageError))
            raise
        flush_notices(usage_error=rv == 2)
        return rv

    def format_commands(self, ctx, formatter):
        # List commands from the table without importing them (keeps --help fast).
        rows = [(name, COMMANDS[name][2]) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dialeval")
def main():
    """Validate and score submissions for dialog benchmarks (`dialeval benchmarks` lists every one with its splits,
    metrics and options)."""


class _StandardOutput:
    """``sys.stdout`` whose write errors name it: ``> /dev/full`` then reads "standard output: no space left on
    device", not an error of no file (binary writes to ``-`` are named in ``files.write``)."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except OSError as e:
            e.filename = e.filename or "standard output"
            raise

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as e:
            e.filename = e.filename or "standard output"
            raise

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _discard_standard_output() -> None:
    """Point file descriptor 1 at the null device, so that output still buffered goes nowhere at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def run() -> None:
    """Console-script entry point: turn library errors into one-line messages and exit codes.

    Every message is one line with control characters escaped (:func:`dialeval.core.termsafe.safe`): ids and
    file names come from files the organizer did not write. ``DIALEVAL_DEBUG=1`` adds the traceback and
    keeps the exit code the run would have had.
    """

    from dialeval.core.errors import DialevalError
    from dialeval.core.termsafe import safe

    debug = bool(os.environ.get("DIALEVAL_DEBUG"))

    def fail(message: str, code: int) -> None:
        if debug:
            import traceback

            traceback.print_exc()
        try:
            click.echo(safe(message), err=True)
        except OSError:  # stderr closed: the exit code still tells
            pass
        sys.exit(code)

    if sys.stdout is not None:  # None: started with standard output closed (`>&-`)
        sys.stdout = _StandardOutput(sys.stdout)
    try:
        rv = main.main(standalone_mode=False)
        if sys.stdout is not None:  # None: started with standard output closed (`>&-`); nothing to flush
            sys.stdout.flush()  # a closed pipe surfaces here, inside the handlers
    except DialevalError as e:
        for line in e.details:
            click.echo(safe(line), err=True)
        fail(f"dialeval: error: {e}", e.exit_code)
    except Interrupted:
        fail("dialeval: interrupted", 130)
    except click.exceptions.Abort:
        fail("dialeval: aborted", 130)
    except click.ClickException as e:  # bad options: one line, and where to look
        if type(e).__name__ == "NoArgsIsHelpError":  # `dialeval` or `dialeval data` alone: its help, as click shows
            click.echo(e.format_message(), err=True)  # it (our own text, many lines; click >= 8.2 raises this)
            sys.exit(2)
        ctx = getattr(e, "ctx", None)
        hint = ""
        if ctx is not None and isinstance(e, click.UsageError):
            sub = ctx.command_path.split(" ", 1)[1:]  # the program name differs under `python -m`
            hint = f" (see 'dialeval {sub[0] + ' ' if sub else ''}--help')"
        from dialeval.commands.wording import message

        fail(f"dialeval: error: {message(e)}{hint}", 2 if e.exit_code == 1 else e.exit_code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        fail("dialeval: interrupted", 130)
    except BrokenPipeError:
        # the reader went away (| head): nothing more to say; keep Python from complaining at exit
        _discard_standard_output()
        sys.exit(0)
    except MemoryError:
        fail("dialeval: error: out of memory", 2)
    except RecursionError:
        fail("dialeval: internal error: nested too deeply (set DIALEVAL_DEBUG=1 for the traceback, and please "
             "report it)", 3)
    except OSError as e:  # unwritable cache or output folder, full disk, ...: the file, then what the OS says
        if getattr(e, "filename", None) == "standard output":
            # what is still buffered would fail again in Python's flush at exit (a traceback and exit 120)
            _discard_standard_output()
        where = f"{e.filename}: " if getattr(e, "filename", None) else ""
        fail(f"dialeval: error: {where}{(e.strerror or 'I/O error').lower()}", 2)
    except Exception as e:  # a bug: still one line; DIALEVAL_DEBUG=1 shows the traceback
        text = " ".join(str(e).split())
        if len(text) > 300:
            text = text[:300].rsplit(" ", 1)[0] + " ..."
        fail(f"dialeval: internal error: {type(e).__name__}: {text} "
             "(set DIALEVAL_DEBUG=1 for the traceback, and please report it)", 3)
    # Commands return their exit status (0 valid, 1 invalid); None means success.
    sys.exit(rv if isinstance(rv, int) else 0)
