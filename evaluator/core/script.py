"""The command line of the ``python -m dialeval.baselines.*`` tools, in dialeval's wording.

argparse says a usage error its own way: a usage block, then ``prog: error: the following arguments are
required: ...``. :class:`ArgumentParser` says it as every dialeval command does, one line ``dialeval: error:
...`` (exit 2), and :func:`run_script` turns dialeval's own errors into that line and their exit code, never a
traceback.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable

from dialeval.core.errors import DialevalError
from dialeval.core.termsafe import safe

_REWORDED: list[tuple[re.Pattern, Callable[[re.Match], str]]] = [
    (re.compile(r"the following arguments are required: (.*)"), lambda m: f"missing {m[1]}"),
    (re.compile(r"unrecognized arguments: (.*)"), lambda m: f"unexpected argument(s): {m[1]}"),
    (re.compile(r"argument (\S+?)(?:/\S+)?: invalid choice: (.*?) \(choose from (.*)\)"),
     lambda m: f"{m[1]}: unknown value {m[2]} (one of: {m[3].replace(chr(39), '')})"),
    (re.compile(r"argument (\S+?)(?:/\S+)?: invalid int value: (.*)"), lambda m: f"{m[1]}: must be a whole number, got {m[2]}"),
    (re.compile(r"argument (\S+?)(?:/\S+)?: invalid float value: (.*)"), lambda m: f"{m[1]}: must be a number, got {m[2]}"),
    (re.compile(r"argument (\S+?)(?:/\S+)?: expected one argument"), lambda m: f"{m[1]} needs a value"),
]


def reworded(message: str) -> str:
    """argparse's message for a usage error in dialeval's words (unchanged when it is none of the usual ones)."""
    for pattern, say in _REWORDED:
        m = pattern.fullmatch(message)
        if m:
            return say(m)
    return message


class ArgumentParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line ``dialeval: error: ... (see 'PROG --help')``, exit 2."""

    def error(self, message: str):
        sys.stderr.write(f"dialeval: error: {safe(reworded(message))} (see '{self.prog} --help')\n")
        sys.exit(2)


def run_script(body: Callable[[], int | None]) -> int:
    """``body()``'s exit status; a dialeval error raised in it is one line on stderr and its exit code."""
    try:
        return body() or 0
    except DialevalError as e:
        for line in e.details:
            print(safe(line), file=sys.stderr)
        print(f"dialeval: error: {safe(e)}", file=sys.stderr)
        return e.exit_code
