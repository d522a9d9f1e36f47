"""Exceptions that the CLI turns into one-line messages and exit codes (never a traceback)."""

from __future__ import annotations


class DialevalError(Exception):
    """Base class: ``exit_code`` is what the CLI exits with."""

    exit_code = 2


class UsageError(DialevalError):
    """Bad arguments, missing or unreadable files, malformed JSON: exit 2."""

    exit_code = 2


class InvalidSubmission(DialevalError):
    """The submission was read but is invalid: exit 1. ``problems`` lists every problem found."""

    exit_code = 1

    def __init__(self, message: str, problems: list | None = None):
        super().__init__(message)
        self.problems = problems or []
