"""Terminal safety: make text from submitted files harmless to print.

Ids and file names come from files the organizer did not write. Printed raw, an ESC starts a terminal
control sequence (colours, cursor moves, a window-title change, on some terminals even a clipboard
write), a CR overwrites the start of the line so a message can hide its own warning, and bidirectional
overrides reorder what the reader sees. :func:`safe` replaces every such character with a visible
escape (``\\x1b``, ``\\r``, ``\\u202e``), so every human-readable message stays one honest line. JSON
output does not need it: the JSON encoder already writes control characters as escapes.
"""

from __future__ import annotations

import re

# C0 controls (newline and tab too: a message is one line), DEL, C1 controls, the bidi embeddings,
# overrides and isolates, the line/paragraph separators, and lone surrogates (unprintable; they come from
# file names that are not valid UTF-8).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(m: re.Match) -> str:
    ch = m.group()
    named = _NAMED.get(ch)
    if named:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: object) -> str:
    """``text`` (anything, via ``str``) with control, bidi-override and unpaired-surrogate characters escaped."""
    s = text if isinstance(text, str) else str(text)
    return _UNSAFE.sub(_escape, s)


class _Quiet:
    """The progress handle when stderr is not a terminal: every call does nothing."""

    def advance(self, n: int = 1) -> None:
        pass

    def describe(self, text: str) -> None:
        pass


class _Bar:
    def __init__(self, progress, task):
        self._p, self._t = progress, task

    def advance(self, n: int = 1) -> None:
        self._p.advance(self._t, n)

    def describe(self, text: str) -> None:
        self._p.update(self._t, description=safe(text))


def progress(description: str, total: int | None = None):
    """A context manager showing a rich progress bar (a spinner when ``total`` is None) on stderr.

    Only when stderr is a terminal: in pipes, logs and CI the run stays quiet (no bar, no control
    sequences), so automation sees the same output as before. Yields a handle with ``advance()`` and
    ``describe(text)``. ``DIALEVAL_NO_PROGRESS=1`` turns the bar off on a terminal too.
    """
    import contextlib
    import os
    import sys

    stream = sys.stderr
    interactive = stream is not None and hasattr(stream, "isatty") and stream.isatty()
    if not interactive or os.environ.get("DIALEVAL_NO_PROGRESS") or os.environ.get("TERM") == "dumb":
        return contextlib.nullcontext(_Quiet())

    @contextlib.contextmanager
    def bar():
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        columns = [SpinnerColumn(), TextColumn("{task.description}")]
        if total is not None:
            columns += [BarColumn(), TextColumn("{task.completed}/{task.total}")]
        columns.append(TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True), transient=True) as p:
            yield _Bar(p, p.add_task(safe(description), total=total))

    return bar()


PIPE_WIDTH = 1000
"""Console width when output is not a terminal: wide enough that a table is drawn at its natural width."""


def table_console(stderr: bool = False, **kwargs):
    """A rich Console for tables. On a terminal its width is the terminal's; piped or logged (rich would assume 80
    columns) it is :data:`PIPE_WIDTH` unless ``COLUMNS`` says otherwise, so a table never wraps inside a word."""
    import os

    from rich.console import Console

    console = Console(stderr=stderr, highlight=False, **kwargs)
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console = Console(stderr=stderr, highlight=False, width=PIPE_WIDTH, **kwargs)
    return console


def print_table(console, table) -> None:
    """Print a rich ``Table`` on ``console`` without ever breaking a cell inside a word, at any width.

    Rich narrows a table that is wider than the console by shrinking its widest columns, down into their
    words ("organiz" / "ers"). Here each column keeps at least its longest word (a ``no_wrap`` column its
    whole text); the widest columns give up their room first, so cells wrap between words only. When even
    that is wider than the console, the table is drawn wider than it (uncropped) rather than cut.
    """
    from rich.measure import Measurement

    unbounded = console.options.update_width(10**6)
    ranges = []  # per column (narrowest without breaking a word, natural width), both without padding
    for column in table.columns:
        sizes = [Measurement.get(console, unbounded, cell) for cell in (column.header, *column.cells)]
        widest = max(m.maximum for m in sizes)
        ranges.append((widest if column.no_wrap else max(m.minimum for m in sizes), widest))
    padding_and_rules = Measurement.get(console, unbounded, table).maximum - sum(hi for _, hi in ranges)
    room = console.width - padding_and_rules
    if not ranges or sum(hi for _, hi in ranges) <= room:  # its natural width fits: nothing to narrow
        console.print(table)
        return
    cap = max(hi for _, hi in ranges)
    widths = [hi for _, hi in ranges]
    while cap > 1 and sum(widths) > room:  # lower the widest columns first, never below a column's longest word
        cap -= 1
        widths = [max(lo, min(hi, cap)) for lo, hi in ranges]
    for column, width in zip(table.columns, widths, strict=True):
        column.width = width
    if sum(widths) > room:
        table.width = sum(widths) + padding_and_rules
    console.print(table, crop=False)
