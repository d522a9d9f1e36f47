"""bAbI dialog / Movie Dialog "FB" text format.

Lines are ``ID text``; IDs restart at 1 for each conversation and a blank line also separates
conversations. A line with a TAB is a turn ``user<TAB>bot``; a line without one is a KB / API-result
fact (``resto_x R_attr value``). Candidate files hold one ``1 <utterance>`` per line.
The data's own spelling is kept verbatim (typos included): never "fix" data.

:func:`iter_lines` is the one parser: it yields every non-blank line with its position (file line number,
1-based conversation number in file order, the line's own ID), which is what scorers key items by;
:func:`read_conversations` groups its output.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.formats.jsonio import atomic_write_text


@dataclass
class Line:
    """One line of a conversation: a turn (``bot`` set) or a KB fact (``bot`` None, text in ``user``)."""

    user: str
    bot: str | None = None

    @property
    def is_fact(self) -> bool:
        return self.bot is None


@dataclass
class Conversation:
    lines: list[Line] = field(default_factory=list)

    def turns(self) -> Iterator[tuple[list[str], str, int]]:
        """Yield ``(context, gold_bot_utterance, turn_number)`` for every bot turn.

        ``context`` is the flat utterance list before the bot speaks (facts, user and bot turns in order,
        ending with the user's utterance), which is the shape of a DSTC6 item's ``utterances``.
        """
        context: list[str] = []
        turn = 0
        for line in self.lines:
            if line.is_fact:
                context.append(line.user)
                continue
            context.append(line.user)
            turn += 1
            yield list(context), line.bot, turn
            context.append(line.bot)


def _split_id(raw: str, path: Path, lineno: int) -> tuple[int, str]:
    head, sep, rest = raw.partition(" ")
    if not sep or not head.isdigit():
        raise UsageError(f"{path}:{lineno}: expected 'ID text', got {raw[:60]!r}")
    return int(head), rest


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a directory, not an FB dialog file") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    except OSError as e:
        raise UsageError(f"{path}: cannot read ({e.strerror or type(e).__name__})") from None


@dataclass(frozen=True)
class FBLine:
    """One non-blank line with where it is: ``lineno`` in the file, ``conversation`` (1-based, file order),
    ``lid`` (the line's own ID), and the text: a turn (``bot`` set) or a fact (``bot`` None)."""

    lineno: int
    conversation: int
    lid: int
    user: str
    bot: str | None


def iter_lines(path: str | Path) -> Iterator[FBLine]:
    """Every non-blank line of an FB dialog file; a reset of the ID or a blank line starts a new conversation."""
    path = Path(path)
    text = _read_text(path)
    conv = 0
    new = True
    last_id = 0
    for lineno, raw in enumerate(text.split("\n"), 1):
        raw = raw.rstrip("\r")
        if not raw.strip():
            new = True
            continue
        num, rest = _split_id(raw, path, lineno)
        if new or num <= last_id:
            conv += 1
            new = False
        last_id = num
        if "\t" in rest:
            user, bot = rest.split("\t", 1)
            yield FBLine(lineno, conv, num, user, bot)
        else:
            yield FBLine(lineno, conv, num, rest, None)


def read_conversations(path: str | Path) -> list[Conversation]:
    """Read an FB dialog file into conversations (a reset of the ID or a blank line starts a new one)."""
    convs: list[Conversation] = []
    for ln in iter_lines(path):
        if ln.conversation > len(convs):
            convs.append(Conversation())
        convs[-1].lines.append(Line(ln.user, ln.bot))
    return convs


def write_conversations(path: str | Path, conversations: Iterable[Conversation]) -> None:
    """Write conversations in FB format (IDs from 1 per conversation, a blank line between them)."""
    out: list[str] = []
    for conv in conversations:
        for i, line in enumerate(conv.lines, 1):
            out.append(f"{i} {line.user}" if line.is_fact else f"{i} {line.user}\t{line.bot}")
        out.append("")
    atomic_write_text(path, "\n".join(out) + ("\n" if out else ""))


def read_candidates(path: str | Path) -> list[str]:
    """Read a candidates file (``1 <utterance>`` per line; blank lines ignored), in file order."""
    path = Path(path)
    lines = _read_text(path).split("\n")
    out = []
    for lineno, raw in enumerate(lines, 1):
        raw = raw.rstrip("\r")
        if raw.strip():
            out.append(_split_id(raw, path, lineno)[1])
    return out


def read_candidate_lines(path: str | Path) -> list[tuple[int, str]]:
    """``(file line number, utterance)`` per non-blank line of a candidates file, in file order."""
    path = Path(path)
    out = []
    for lineno, raw in enumerate(_read_text(path).split("\n"), 1):
        raw = raw.rstrip("\r")
        if raw.strip():
            out.append((lineno, _split_id(raw, path, lineno)[1]))
    return out


def write_candidates(path: str | Path, candidates: Iterable[str]) -> None:
    atomic_write_text(path, "".join(f"1 {c}\n" for c in candidates))
