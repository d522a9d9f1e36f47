"""Generated replies: a UTF-8 text file of one reply per item, a line each, in the data's item order (ConvAI2's
generated-text submissions, scored with token F1). Problems come back without a file, as the score readers'."""

from __future__ import annotations

from pathlib import Path

from dialeval.core.errors import UnreadableInput
from dialeval.core.problems import Problem
from dialeval.files.read import iter_text_lines


def read_replies(path: str | Path, n: int, max_chars: int, too_long: str, *, shown: str | None = None, noun: str = "items"
                 ) -> tuple[list[str], list[Problem]]:
    """``(replies, problems)`` of a file that answers ``n`` items; a line over ``max_chars`` characters is no
    reply (it is never tokenised: the problem's code is ``too_long``), and reading stops at the first problem."""
    replies: list[str] = []
    problems: list[Problem] = []
    shape = f"the file has {n} {noun} (one reply per line, in file order)"
    try:
        for lineno, line in iter_text_lines(path, shown=shown):
            if lineno > n:
                problems.append(Problem("wrong-shape", "", f"more than {n} lines, but {shape}"))
                break
            if len(line) > max_chars:
                problems.append(Problem(too_long, "", f"line {lineno}: over {max_chars} characters"))
                break
            replies.append(line.rstrip("\r"))
    except UnreadableInput as e:
        problems.append(Problem(e.code, "", e.reason))
    if not problems and len(replies) < n:
        problems.append(Problem("wrong-shape", "", f"{len(replies)} line{'s' if len(replies) != 1 else ''}, but {shape}"))
    return replies, problems
