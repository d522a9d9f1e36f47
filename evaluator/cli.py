"""The ``dialeval`` command line: a thin shell over the library.

Each sub-command lives in its own module and is imported only when it runs, so ``dialeval --help``
stays fast. To add a command, add one line to ``COMMANDS``: ``name: ("module", "attribute", "help")``.
"""

from __future__ import annotations

import sys

import click

from dialeval import __version__

COMMANDS: dict[str, tuple[str, str, str]] = {
    "validate": ("dialeval.commands.score", "validate_cmd", "Check a submission against a split; exit 1 if invalid."),
    "score": ("dialeval.commands.score", "score_cmd", "Validate and score a submission on a benchmark (dstc6 by default)."),
    "benchmarks": ("dialeval.commands.score", "benchmarks_cmd", "List the benchmarks with their splits and metrics."),
    "schema": ("dialeval.commands.schema", "schema_cmd", "List or print the published JSON Schemas."),
    "simulate": ("dialeval.simulator.cli", "simulate_cmd", "Generate a DSTC6-style challenge with the dialog simulator."),
    "stats": ("dialeval.simulator.cli", "stats_cmd", "Describe a challenge directory (items, candidates, vocabulary)."),
    "convert": ("dialeval.commands.convert", "convert_group", "Convert between bAbI (FB text) and DSTC6 JSON."),
    "demo": ("dialeval.commands.demo", "demo_cmd", "Run the whole chain on the embedded default challenge."),
    "baseline": ("dialeval.baselines.cli", "baseline_group", "List and run the reference baselines."),
    "reproduce": ("dialeval.baselines.cli", "reproduce_group", "Reproduce published baseline tables."),
}


class LazyGroup(click.Group):
    """A click group whose sub-commands are imported on first use."""

    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        spec = COMMANDS.get(name)
        if spec is None:
            return None
        import importlib

        module = importlib.import_module(spec[0])
        return getattr(module, spec[1])

    def format_commands(self, ctx, formatter):
        # List commands from the table without importing them (keeps --help fast).
        rows = [(name, COMMANDS[name][2]) for name in sorted(COMMANDS)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dialeval")
def main():
    """Validate and score submissions for end-to-end dialog benchmarks (DSTC6, bAbI, Movie Dialog, Ubuntu v2, AirDialogue)."""


def run() -> None:
    """Console-script entry point: turn library errors into one-line messages and exit codes."""
    from dialeval.errors import DialevalError

    try:
        rv = main.main(standalone_mode=False)
    except DialevalError as e:
        click.echo(f"dialeval: error: {e}", err=True)
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        click.echo("dialeval: aborted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(2 if e.exit_code == 1 else e.exit_code)
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        click.echo("dialeval: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except MemoryError:
        click.echo("dialeval: error: out of memory", err=True)
        sys.exit(2)
    except OSError as e:  # unwritable cache or output folder, full disk, ...: the OS's own words, one line
        where = f": {e.filename}" if getattr(e, "filename", None) else ""
        click.echo(f"dialeval: error: {e.strerror or e}{where}", err=True)
        sys.exit(2)
    except Exception as e:  # a bug: still one line; DIALEVAL_DEBUG=1 shows the traceback
        import os

        if os.environ.get("DIALEVAL_DEBUG"):
            raise
        click.echo(f"dialeval: internal error: {type(e).__name__}: {str(e)[:300]} "
                   "(set DIALEVAL_DEBUG=1 for the traceback, and please report it)", err=True)
        sys.exit(3)
    # Commands return their exit status (0 valid, 1 invalid); None means success.
    sys.exit(rv if isinstance(rv, int) else 0)
