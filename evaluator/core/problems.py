"""Problems found in a file: a stable code, a JSON pointer and a plain message.

Codes are stable identifiers that tools may match on. :data:`CODES` documents the codes every benchmark
shares; a benchmark's own codes are declared by the benchmark (``Benchmark.problem_codes``), and
:func:`describe` looks in both. A problem with the empty code is a note (e.g. "N more problems not listed"),
never counted. Messages never contain an answer-key (gold) candidate id.
"""

from __future__ import annotations

from dataclasses import dataclass

CODES: dict[str, str] = {
    # structure (what the JSON Schema also rejects)
    "not-a-list": "the top level of a result file must be a JSON array",
    "item-not-object": "each item must be a JSON object",
    "missing-key": "a required key is missing",
    "unknown-key": "a key that the format does not define",
    "wrong-type": "a value has the wrong JSON type (ids are strings, rankings are arrays)",
    "empty-ranking": "lst_candidate_id must list at least one candidate",
    "rank-not-integer": "ranks are JSON integers (not booleans, floats or strings)",
    # cross-file (needs the test file)
    "unknown-dialog": "dialog_id is not an item of the split (or of the file it was submitted in)",
    "duplicate-dialog": "the same dialog_id is ranked twice",
    "unknown-candidate": "candidate_id is not one of that item's candidates",
    "duplicate-candidate": "the same candidate_id is ranked twice in one item",
    "rank-out-of-range": "rank must be between 1 and the item's number of candidates",
    "duplicate-rank": "two candidates share a rank",
    "rank-gap": "ranks must be 1..m without gaps (a partial top-m ranking is fine)",
    "missing-dialog": "(warning) an answer-key item the submission does not rank: scored as a miss at every k",
    "short-ranking": "(warning) a ranking lists fewer ids than the item has candidates: a correct id left out is not found",
    "long-ranking": "a ranking lists more ids than the format allows (DSTC7 subtask 2: its top 100 of the pool)",
    "confidence-order": "(warning) confidences that disagree with the listed order (the listed order is the ranking)",
    # lenient (official-compatible) mode
    "official-quirk": "(warning) the official scorer's behaviour that --lenient reproduced",
    "official-crash": "input on which the official scorer crashes or exits",
    # score-based submissions (JSON scores, .npy / .csv matrices)
    "score-not-number": "a score is not a number (JSON string/boolean/null, or a CSV cell that does not parse)",
    "score-not-finite": "a score is NaN or infinite",
    "wrong-shape": "a score matrix (or a CSV row) has the wrong number of rows or columns",
    "wrong-dtype": "a .npy matrix whose dtype is not float or integer",
    "unreadable-matrix": "a .npy file that cannot be read (bad header, truncated, an .npz archive)",
    "unknown-format": "a JSON submission that is neither a DSTC6 result array nor a {\"format\": \"scores\"} document",
    "unscored-candidate": "(warning) candidates without a score rank below every scored one, tied among themselves",
    "bad-label": "a label in a score<TAB>label line file that is not 0 or 1",
    "labels-differ": "the labels of a score<TAB>label file are not the data's: the files are misaligned",
    "score-out-of-range": "a JSON integer score that does not fit in 64 bits (what a .npy matrix can hold)",
    "not-json": "a submitted file (or a JSON-lines line) that is not valid JSON; the message gives line and column",
    # submitted files that are not one JSON document (the message says what the file looks like)
    "empty-file": "a submitted file that is empty or holds only whitespace",
    "bad-encoding": "a submitted file that is not UTF-8 without a BOM (UTF-16, a byte-order mark, invalid bytes)",
    "wrong-file-type": "a submitted file of another type where text or JSON is expected (compressed, an archive, a "
                       "NumPy .npy matrix, a pickle, binary data)",
    "json-lines": "a JSON Lines file (one object per line) where the format is one JSON array",
    "json-too-deep": "a submitted JSON document nested deeper than a parser can follow (no format needs it)",
    "truncated-json": "a submitted file that ends before its JSON value does (cut short)",
    # organizer grading
    "unreadable-submission": "a team's submission that cannot be opened at all (a refused or corrupt archive)",
    "over-quota": "a team's run past its challenge's quota (per UTC day or in all): recorded, never scored",
    "outside-phases": "a team's run first seen by the grader outside every phase of its challenge: recorded, never scored",
    # ids of another split (issue 18, area "gaps": DSTC6, bAbI and Movie Dialog share the hint, benchmarks.items)
    "wrong-split": "the submitted ids belong to another split of the data (the message names it)",
    # --task scopes validation as well as scoring
    "other-task": "(warning) items (or files) of tasks outside --task, left out: neither checked nor scored",
    "task-hint": "(warning) only some tasks are ranked: --task restricts the score to them",
    "other-split": "(warning) items of splits of the data other than the one scored, left out: neither checked nor scored",
}


def describe(code: str, own: dict[str, str] | None = None) -> str:
    """What ``code`` means: a benchmark's own codes (``own``) first, then the shared :data:`CODES`."""
    return (own or {}).get(code) or CODES.get(code, "")


def counted(n: int, noun: str) -> str:
    """``1 line``, ``2 lines``: a count with its noun in the right number (nouns here take a plain -s)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem: ``code`` (see :data:`CODES`), ``pointer`` (RFC 6901, '' = whole file), ``message``."""

    code: str
    pointer: str
    message: str
    severity: str = "error"  # "error" makes a submission invalid; "warning" does not
    file: str | None = None  # the submitted file it is in, relative to the submission
    count: int = 1  # how many problems this line stands for (a summary line: the ones it does not list one by one)

    def where(self) -> str:
        """``file#pointer``; a problem about a whole file (or about an absence) shows no pointer."""
        if not self.pointer:
            return self.file or "submission"
        return f"{self.file}#{self.pointer}" if self.file else self.pointer

    def format(self) -> str:
        return f"{self.where()}: {self.severity} [{self.code}] {self.message}"

    def to_json(self) -> dict:
        return {
            "severity": self.severity,
            "code": self.code,
            "file": self.file,
            "pointer": self.pointer,
            "message": self.message,
        }


POINTER_PART = 200
"""Characters of one key a pointer spells out; a longer key (a hostile 100 MB id) is cut to them and its length."""


def pointer(*parts: object) -> str:
    """JSON pointer from path parts, escaping ``~`` and ``/`` (RFC 6901). A part longer than
    :data:`POINTER_PART` characters is written as its first ones then ``...(N characters)``: a problem's line
    stays readable, and the key is never copied whole (a 100 MB id would cost 100 MB per copy of its pointer)."""
    out = []
    for p in parts:
        text = str(p)
        if len(text) > POINTER_PART:
            text = f"{text[:POINTER_PART]}...({len(text):,} characters)"
        out.append("/" + text.replace("~", "~0").replace("/", "~1"))
    return "".join(out)


def short(value: object, limit: int = 60) -> str:
    """A value for a message: JSON-ish repr, shortened (attacker-sized strings stay one line)."""
    if isinstance(value, str) and len(value) > limit:
        value = value[:limit]  # the same message, without copying a 100 MB id (twice) to show 57 characters of it
    text = repr(value) if not isinstance(value, str) else '"' + value + '"'
    text = text.replace("\n", "\\n")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def json_type(value: object) -> str:
    """The JSON type name of a parsed value, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


MAX_LISTED = 20
"""At most this many problems of one code per file (per split for DSTC6) are listed, then one closing line
counts the rest: a broken file stays readable, and a million bad cells cost no more memory than twenty."""


class Capped(list):
    """A list of problems (or score-file faults: anything with ``code`` and ``severity``) that keeps at most
    ``cap`` of each code and counts the rest; :meth:`close` appends the one code-less line that says how many
    (``make(message, severity)`` builds it: by default a :class:`Problem` without a code, naming ``file``)."""

    def __init__(self, cap: int = MAX_LISTED, make=None, file: str | None = None):
        super().__init__()
        self.cap = cap
        self.make = make or (lambda message, severity: Problem("", "", message, severity, file))
        self.kept: dict[str, int] = {}
        self.dropped: dict[str, int] = {}
        self.dropped_error = False

    def append(self, item) -> None:
        n = self.kept.get(item.code, 0)
        if n < self.cap or not item.code:
            self.kept[item.code] = n + 1
            super().append(item)
        else:
            self.dropped[item.code] = self.dropped.get(item.code, 0) + 1
            self.dropped_error = self.dropped_error or item.severity == "error"

    def extend(self, items) -> None:
        for item in items:
            self.append(item)

    def full(self, code: str, severity: str = "error") -> bool:
        """True (and the problem counted as dropped) when ``code`` already has its ``cap``: a hot loop then
        skips building a message that would be dropped."""
        if self.kept.get(code, 0) < self.cap:
            return False
        dropped = self.dropped
        dropped[code] = dropped.get(code, 0) + 1
        if severity == "error":
            self.dropped_error = True
        return True

    def mark(self) -> tuple:
        """The state to :meth:`rewind` to (a reading that starts over must not count its problems twice)."""
        return len(self), dict(self.kept), dict(self.dropped), self.dropped_error

    def rewind(self, mark: tuple) -> None:
        n, kept, dropped, self.dropped_error = mark
        del self[n:]
        self.kept, self.dropped = dict(kept), dict(dropped)

    def always(self, item) -> None:
        """Append a line that is itself a summary (it is never dropped)."""
        super().append(item)

    def close(self) -> list:
        """The kept items, then (when some were dropped) one line without a code counting them by code."""
        out = list(self)
        if self.dropped:
            total = sum(self.dropped.values())
            by_code = ", ".join(f"{c} {n:,}" for c, n in sorted(self.dropped.items()))
            out.append(self.make(f"... {total:,} more problems not listed ({by_code})",
                                 "error" if self.dropped_error else "warning"))
        return out
