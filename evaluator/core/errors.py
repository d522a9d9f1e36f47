"""Exceptions that the CLI turns into one-line messages and exit codes (never a traceback)."""

from __future__ import annotations


class DialevalError(Exception):
    """Base class: ``exit_code`` is what the CLI exits with; ``details``: lines said before the error's own line
    (each problem of a file, one line each, when the error stands for several)."""

    exit_code = 2
    details: tuple[str, ...] = ()


class UsageError(DialevalError):
    """Bad arguments, missing or unreadable files, malformed JSON: exit 2."""

    exit_code = 2


class SubmissionFault(DialevalError):
    """The submission's fault: exit 1. A run that is not valid (a submitted file, a registry run that was rejected, a
    platform's upload), or submitted texts of which nothing can be scored. Never a :class:`UsageError`: the command
    was right, what it was given to judge was not (README, *Exit codes*)."""

    exit_code = 1


class UnreadableInput(UsageError):
    """A file whose content is not what its format needs (not JSON, empty, wrong encoding, compressed, binary).

    For an organizer's file (test file, answer key, data) it is a usage error (exit 2); for a submitted file
    the reader turns it into a :class:`dialeval.core.problems.Problem` (exit 1) with ``code``, and ``line``/``column``
    (1-based, ``None`` when the problem is the whole file). ``reason`` is the message without the file name.
    """

    def __init__(self, name: str, code: str, reason: str, line: int | None = None, column: int | None = None):
        super().__init__(f"{name}: {reason}" if name else reason)
        self.name = name
        self.code = code
        self.reason = reason
        self.line = line
        self.column = column


UnreadableJSON = UnreadableInput
"""A file that cannot be read as one JSON document: the JSON readers' name for :class:`UnreadableInput`."""


def did_you_mean(name: str, choices) -> str:
    """`` (did you mean 'x'?)`` when one of ``choices`` is close to ``name`` (a typo), else ``""``."""
    import difflib

    choices = [str(c) for c in choices]
    same_but_case = [c for c in choices if c.lower() == str(name).lower()]  # DSTC6 for dstc6, TST4 for tst4
    close = same_but_case or difflib.get_close_matches(str(name)[:100], choices, n=1, cutoff=0.8)
    return f" (did you mean {close[0]!r}?)" if close else ""
