"""bAbI dialog / Movie Dialog "FB" text format.

Lines are ``ID text``; IDs restart at 1 for each conversation and a blank line also separates
conversations. A line with a TAB is a turn ``user<TAB>bot``; a line without one is a KB / API-result
fact (``resto_x R_attr value``). Candidate files hold one ``1 <utterance>`` per line.
The data's own spelling is kept verbatim (typos, control characters included): never "fix" data.

Every file is read through :mod:`dialeval.files.read`, as a stream of lines: a FIFO, a device or a socket
is refused before a byte is read, memory follows the longest line, UTF-16, compressed or binary files are
refused with the layer's problem codes (a data file's fault: exit 2), and a leading UTF-8 byte-order mark
is dropped. Lines end at ``\\n`` only (trailing ``\\r`` removed), as the release's files do.

:func:`iter_lines` is the one parser: it yields every non-blank line with its position (file line number,
1-based conversation number in file order, the line's own ID), which is what scorers key items by;
:func:`read_conversations` groups its output. :class:`CandidateFile` holds a candidates file compactly, and
:class:`IdsByText` and :class:`TextByLineNumber` look its candidates up by text and by line without copying it.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.files.read import iter_text_lines
from dialeval.files.write import atomic_write_text

FB_FILE = "an FB dialog text file"
CANDIDATE_FILE = "a candidates text file"

_FACT_SHAPE = re.compile(r"^\S+ [rR]_\w+ \S+$")


def is_fact_text(text: str) -> bool:
    """Whether ``text`` has the shape of a KB / API-result fact: ``<name> r_<attr> <value>`` (``R_`` in bAbI).

    In an FB file the TAB decides (:attr:`Line.is_fact`: a line without a bot utterance is a fact). This is
    the same notion for text that has lost its TAB (a DSTC6 item's flat ``utterances``): on the release it
    agrees with the TAB on every line of tasks 1-5; task 6's ``api_call no result`` lines are facts by the
    TAB but not by shape.
    """
    return bool(_FACT_SHAPE.match(text))


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


def _split_id(raw: str, name: str, lineno: int) -> tuple[int, str]:
    """``(ID, text)`` of an ``ID text`` line. A bad line is named, never shown: data lines hold gold answers."""
    head, sep, rest = raw.partition(" ")
    # isdecimal, not isdigit: int() refuses superscripts such as "²", which isdigit accepts
    if sep and head.isdecimal():
        try:
            return int(head), rest
        except ValueError:  # more digits than int() converts
            raise UsageError(f"{name}:{lineno}: the line ID has {len(head)} digits; expected a line number") from None
    raise UsageError(f"{name}:{lineno}: expected 'ID text': the line does not start with a line number and a space")


def _text_lines(path: str | Path, what: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of every non-blank line, streamed through the input layer."""
    for lineno, raw in iter_text_lines(path, what=what):
        # iter_text_lines removes one "\r" before "\n"; the format has always dropped them all
        raw = raw.rstrip("\r")
        if raw and not raw.isspace():  # what `raw.strip()` tells, without the copy
            yield lineno, raw


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
    name = str(path)
    conv = 0
    new = True
    last_id = 0
    last_lineno = 0
    for lineno, raw in _text_lines(path, FB_FILE):
        if lineno != last_lineno + 1:  # a blank line between
            new = True
        last_lineno = lineno
        num, rest = _split_id(raw, name, lineno)
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


def iter_candidate_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """``(file line number, utterance)`` per non-blank line of a candidates file, in file order (streamed)."""
    name = str(path)
    for lineno, raw in _text_lines(path, CANDIDATE_FILE):
        head, sep, rest = raw.partition(" ")
        if not (sep and head.isdecimal()):  # the ID itself is not used: only its shape is checked
            _split_id(raw, name, lineno)  # raises, naming the line
        yield lineno, rest


def read_candidates(path: str | Path) -> list[str]:
    """Read a candidates file (``1 <utterance>`` per line; blank lines ignored), in file order."""
    return [text for _, text in iter_candidate_lines(path)]


class CandidateFile(Sequence):
    """The utterances of a candidates file in file order, stored compactly, with lookup by exact text.

    A candidate file can be large (a hostile one: a million lines), and a Python string, its line number and
    a dict entry per line cost some 200 bytes beyond the text. Here the texts sit in one UTF-8 buffer with
    their offsets, and lookup by text goes through a sorted array of their hashes, each hit confirmed by
    comparing the bytes: about 30 bytes per candidate beyond the text. ``self[i]`` is the i-th utterance,
    :attr:`linenos` its line number in the file.
    """

    def __init__(self, path: str | Path):
        blob = bytearray()
        ends = array("q")
        linenos = array("q")
        hashes = array("q")
        for lineno, text in iter_candidate_lines(path):
            blob += text.encode("utf-8")
            ends.append(len(blob))
            linenos.append(lineno)
            hashes.append(hash(text))
        import numpy as np  # after the read: a FIFO or a device is refused before this import

        self.path = Path(path)
        self._blob = blob
        self._ends = ends
        self.linenos = linenos
        order = np.argsort(np.frombuffer(hashes, np.int64), kind="stable")  # equal hashes stay in file order
        self._order = order
        self._sorted = np.frombuffer(hashes, np.int64)[order]

    def __len__(self) -> int:
        return len(self._ends)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("candidate index out of range")
        start = self._ends[i - 1] if i else 0
        return self._blob[start:self._ends[i]].decode("utf-8")

    def positions(self, text: str) -> list[int]:
        """0-based positions (file order) of the candidates whose utterance is exactly ``text``."""
        h = hash(text)
        lo = int(self._sorted.searchsorted(h, "left"))
        hi = int(self._sorted.searchsorted(h, "right"))
        if lo == hi:
            return []
        raw = text.encode("utf-8")
        out = []
        for i in self._order[lo:hi].tolist():
            start = self._ends[i - 1] if i else 0
            if self._ends[i] - start == len(raw) and self._blob[start:self._ends[i]] == raw:
                out.append(i)
        return out


class IdsByText:
    """Text -> the ids of a :class:`CandidateFile`'s candidates with exactly that text (``ids[i]`` names the i-th),
    gathered by ``collect`` (a frozenset, a list); ``default`` when none. The gold lookup of a reader whose answers
    are candidate texts (bAbI's bot turns, Movie Dialog's Reddit replies): no dict of every text is built."""

    def __init__(self, cands: CandidateFile, ids: tuple[str, ...], collect=frozenset):
        self._cands, self._ids, self._collect = cands, ids, collect

    def get(self, text: str, default=None):
        found = self._cands.positions(text)
        return self._collect(self._ids[i] for i in found) if found else default


class TextByLineNumber(Mapping):
    """A :class:`CandidateFile`'s texts keyed by their line numbers in the file, as strings (``"1"``, ``"2"``, ...:
    the candidate ids of a reader that names candidates by line, as bAbI's does); read-only, built on first use."""

    def __init__(self, cands: CandidateFile):
        self._cands = cands
        self._pos: dict[str, int] | None = None

    def _positions(self) -> dict[str, int]:
        if self._pos is None:
            self._pos = {str(n): i for i, n in enumerate(self._cands.linenos)}
        return self._pos

    def __getitem__(self, cid: str) -> str:
        return self._cands[self._positions()[cid]]

    def __iter__(self):
        return (str(n) for n in self._cands.linenos)

    def __len__(self) -> int:
        return len(self._cands)


def write_candidates(path: str | Path, candidates: Iterable[str]) -> None:
    atomic_write_text(path, "".join(f"1 {c}\n" for c in candidates))
