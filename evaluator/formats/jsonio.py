"""JSON reading shared by every format, and JSON writing through the safe output layer.

Reading uses msgspec (faster than the standard library, and parsing dominates scoring time). A file that
does not parse is diagnosed from its bytes, without building its objects (so a huge broken file costs no
more memory than its text): what it is (empty, compressed, a ZIP, UTF-16, JSON Lines, truncated) and where
the syntax error is (line and column), in this project's own words. The scorer's hot paths go further and
decode straight into typed structs (:mod:`dialeval.benchmarks.dstc6.fastpath`).

Writing is :mod:`dialeval.files.write` (atomic, never onto an input of the run); :func:`dump_json_file` uses
it, with the standard library's default separators, the layout of the official DSTC6 files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

from dialeval.core.errors import UnreadableJSON
from dialeval.files.read import first_bad_utf8 as _first_bad_utf8
from dialeval.files.read import line_col as _line_col
from dialeval.files.read import read_bytes
from dialeval.files.write import atomic_write_text

try:  # accelerator (a core dependency; the standard library still works without it)
    import msgspec as _msgspec
except ImportError:  # pragma: no cover - exercised when msgspec is absent
    _msgspec = None

STDLIB_FALLBACK_BYTES = 16 * 1024**2
"""Only files up to this size are re-parsed by the standard library (for NaN/Infinity and integers past 64
bits, which msgspec refuses): its objects take about ten times the text, so a large file is diagnosed from
its bytes instead."""

# ---- reading ------------------------------------------------------------------------------------------
SYNTAX_FIRST_BYTES = 1 << 20
"""Above this size a document's syntax is checked before any object is built: a truncated or broken
500 MB file is then refused at the cost of one scan, not after building gigabytes of objects."""


def check_syntax(raw: bytes, name: str) -> None:
    """Raise :class:`UnreadableJSON` if ``raw`` is not one JSON document; builds no objects."""
    if _msgspec is None:  # pragma: no cover
        return
    try:
        _msgspec.json.decode(raw, type=_msgspec.Raw)
    except (_msgspec.DecodeError, UnicodeDecodeError, ValueError) as e:
        at = _malformed_at(e)
        if at is not None and (_nan_at(raw, at) or "surrogate" in str(e)) and len(raw) <= STDLIB_FALLBACK_BYTES:
            return  # Python reads these (see parse_json_bytes)
        raise _diagnose(raw, name, e) from None
    except RecursionError:
        raise UnreadableJSON(name, "json-too-deep", "not a readable JSON document: nested too deeply") from None


def parse_json_bytes(raw: bytes, name: str):
    """Parse one JSON document; raise :class:`UnreadableJSON` (a UsageError) saying what is wrong and where."""
    if _msgspec is None:  # pragma: no cover
        return _stdlib_parse(raw, name)
    if len(raw) > SYNTAX_FIRST_BYTES:
        check_syntax(raw, name)
    try:
        return _msgspec.json.decode(raw)
    except RecursionError:
        raise UnreadableJSON(name, "json-too-deep", "not a readable JSON document: nested too deeply") from None
    except _msgspec.ValidationError as e:  # a number msgspec cannot hold (integer past 64 bits, 1e999)
        if len(raw) <= STDLIB_FALLBACK_BYTES:
            return _stdlib_parse(raw, name)
        raise UnreadableJSON(name, "not-json", f"not a readable JSON document: a number out of range "
                             f"at {_msgspec_path(str(e))}") from None
    except (_msgspec.DecodeError, UnicodeDecodeError, ValueError) as e:
        failure = e
    at = _malformed_at(failure)
    python_reads_it = at is not None and (_nan_at(raw, at) or "surrogate" in str(failure))
    if python_reads_it and len(raw) <= STDLIB_FALLBACK_BYTES:
        # NaN/Infinity and lone surrogate escapes: Python's reading of them is the documented one (the
        # checker then reports a rank that is not an integer, or an id that matches nothing)
        return _stdlib_parse(raw, name)
    raise _diagnose(raw, name, failure)


def _malformed_at(failure: BaseException) -> int | None:
    m = re.search(r"\(byte (\d+)\)", str(failure))
    return int(m.group(1)) if m else None


def _nan_at(raw: bytes, pos: int) -> bool:
    return raw[pos:pos + 3] == b"NaN" or raw[pos:pos + 8] == b"Infinity" or raw[pos:pos + 9] == b"-Infinity"


def _stdlib_parse(raw: bytes, name: str):
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line, col = _line_col(raw, e.start)
        raise UnreadableJSON(name, "bad-encoding", f"not UTF-8 text (byte {e.start}, line {line} column {col})",
                             line, col) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise _diagnose(raw, name, e) from None
    except ValueError:  # an integer literal past Python's digit limit
        raise UnreadableJSON(name, "not-json", "not a readable JSON document (an integer with too many digits)") \
            from None
    except RecursionError:
        raise UnreadableJSON(name, "json-too-deep", "not a readable JSON document: nested too deeply") from None


_MAGIC = (
    (b"\x1f\x8b", "looks gzip-compressed: decompress it (a directory or a .tgz of the official layout is "
                  "accepted as it is)"),
    (b"PK\x03\x04", "looks like a ZIP archive: submit one result JSON, a directory, or a .tgz"),
    (b"PK\x05\x06", "looks like an empty ZIP archive: submit one result JSON, a directory, or a .tgz"),
    (b"BZh", "looks bzip2-compressed: decompress it first"),
    (b"\xfd7zXZ\x00", "looks xz-compressed: decompress it first"),
    (b"\x28\xb5\x2f\xfd", "looks zstd-compressed: decompress it first"),
    (b"\x93NUMPY", "looks like a NumPy .npy file, not JSON"),
)

_MSGSPEC_WORDS = {
    "invalid character": "unexpected character",
    "trailing characters": "extra text after the JSON value",
    "trailing comma in array": "a comma before ']'",
    "trailing comma in object": "a comma before '}'",
    "invalid escape character in string": "an invalid backslash escape in a string",
    "invalid utf-16 surrogate pair": "an invalid \\u escape (unpaired surrogate) in a string",
    "expected ':'": "expected ':' after a key",
    "expected ',' or ']'": "expected ',' or ']'",
    "expected ',' or '}'": "expected ',' or '}'",
    "object keys must be strings": "expected a key in double quotes",
}

_STDLIB_WORDS = {
    "Expecting value": "expected a value",
    "Expecting ',' delimiter": "expected ',' or a closing bracket",
    "Expecting ':' delimiter": "expected ':' after a key",
    "Expecting property name enclosed in double quotes": "expected a key in double quotes",
    "Unterminated string starting at": "a string that is never closed starts here",
    "Invalid control character at": "a raw control character inside a string (write it as an escape)",
    "Invalid \\escape": "an invalid backslash escape in a string",
    "Invalid \\uXXXX escape": "an invalid \\u escape in a string",
    "Extra data": "extra text after the JSON value",
}


def _diagnose(raw: bytes, name: str, failure: BaseException | None) -> UnreadableJSON:
    """What is wrong with bytes that did not parse, in our words, with a line and column where one exists."""
    head = raw[:8]
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return UnreadableJSON(name, "wrong-file-type", what)
    if len(raw) > 262 and raw[257:262] == b"ustar":
        return UnreadableJSON(name, "wrong-file-type", "looks like a tar archive: name it .tar or .tgz")
    if head.startswith(b"\xef\xbb\xbf"):
        return UnreadableJSON(name, "bad-encoding", "starts with a UTF-8 BOM (byte-order mark): save it as UTF-8 "
                              "without a BOM", 1, 1)
    if head.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(head) >= 2 and (head[0] == 0) != (head[1] == 0)):
        return UnreadableJSON(name, "bad-encoding", "looks UTF-16 encoded: the format is UTF-8 JSON", 1, 1)
    if _first_content(raw) == len(raw):
        return UnreadableJSON(name, "empty-file", "not valid JSON: the file is empty" if not raw else
                              "not valid JSON: the file holds only whitespace")
    if isinstance(failure, UnicodeDecodeError):
        start = _first_bad_utf8(raw)
        line, col = _line_col(raw, start)
        return UnreadableJSON(name, "bad-encoding", f"not UTF-8 text (byte {start}, line {line} column {col})",
                              line, col)
    pos, words = None, None
    if isinstance(failure, json.JSONDecodeError):
        pos = len(failure.doc[: failure.pos].encode("utf-8", "surrogatepass"))
        words = next((w for k, w in _STDLIB_WORDS.items() if failure.msg.startswith(k)), "not valid JSON")
    elif failure is not None:
        msg = str(failure)
        if "truncated" in msg:
            end = _last_content(raw)
            line, col = _line_col(raw, end)
            return UnreadableJSON(name, "truncated-json", f"not valid JSON: the file ends before the JSON value "
                                  f"does (truncated?) at line {line} column {col}", line, col)
        m = re.search(r"malformed: (.*) \(byte (\d+)\)", msg)
        if m:
            pos = int(m.group(2))
            if m.group(1) == "trailing characters":
                pos -= 1  # msgspec counts the first trailing character as read
            elif m.group(1) == "invalid character":
                pos = _misspelt_literal_start(raw, pos)
            if _nan_at(raw, pos):  # only past STDLIB_FALLBACK_BYTES (smaller files were parsed by Python)
                words = "NaN and Infinity are not JSON numbers"
            elif m.group(1) == "trailing characters" and _looks_like_json_lines(raw, pos):
                line, col = _line_col(raw, pos)
                return UnreadableJSON(name, "json-lines", f"looks like JSON Lines (one object per line, line "
                                      f"{line} starts the second): the format is one JSON list", line, col)
            else:
                words = _MSGSPEC_WORDS.get(m.group(1), "not valid JSON")
    if pos is None:
        return UnreadableJSON(name, "not-json", "not valid JSON")
    line, col = _line_col(raw, pos)
    if words.startswith("not valid JSON"):
        return UnreadableJSON(name, "not-json", f"not valid JSON at line {line} column {col}", line, col)
    return UnreadableJSON(name, "not-json", f"not valid JSON at line {line} column {col}: {words}", line, col)


_WS = b" \t\r\n"


def _misspelt_literal_start(raw: bytes, pos: int) -> int:
    """Where a misspelt ``true``/``null``/``false`` starts, when msgspec reports it at ``pos``: it reads the
    literal's whole length before judging it (``trux`` is reported past its ``x``); else ``pos``."""
    for word in (b"true", b"null", b"false"):
        start = pos - len(word)
        if start >= 0 and raw[start:start + 1] == word[:1] and raw[start:pos] != word and \
                (start == 0 or raw[start - 1:start] in b" \t\r\n,:["):
            return start
    return pos


def _first_content(raw: bytes) -> int:
    """Index of the first non-whitespace byte (len(raw) if none); no copy of a large input."""
    i = 0
    while i < len(raw) and raw[i] in _WS:
        i += 1
    return i


def _last_content(raw: bytes, end: int | None = None) -> int:
    """One past the last non-whitespace byte before ``end``."""
    i = len(raw) if end is None else end
    while i > 0 and raw[i - 1] in _WS:
        i -= 1
    return i


def _looks_like_json_lines(raw: bytes, pos: int) -> bool:
    first = _first_content(raw)
    gap = raw[_last_content(raw, pos):pos]
    return raw[first:first + 1] == b"{" and raw[pos:pos + 1] in (b"{", b"[") and b"\n" in gap


def _msgspec_path(text: str) -> str:
    """msgspec's ``$[0].rank`` as a JSON pointer (``/0/rank``)."""
    m = re.search(r"`\$([^`]*)`", text)
    if not m:
        return "/"
    parts = re.findall(r"\[(\d+)\]|\.([^.\[]+)", m.group(1))
    return "".join("/" + (a or b) for a, b in parts) or "/"


# ---- a large array, element by element ------------------------------------------------------------------
class NotStreamable(Exception):
    """Raised while a :class:`JSONArray` is iterated, when it meets what it might not build exactly as
    :func:`parse_json_bytes` does (a number msgspec refuses, nesting near the recursion limit, text the
    standard library reads otherwise): :func:`read_json_document` then starts over with the whole document."""


_LEADING_WS = re.compile(rb"[ \t\r\n]*")
_WS_TEXT = re.compile(r"[ \t\r\n]*")
_WS_CHARS = (" ", "\t", "\r", "\n")
_NEXT = re.compile(r"[ \t\r\n]*(?:(,)[ \t\r\n]*|\])")  # after an element: a comma (then more), or the end


def _finite_float(literal: str) -> float:
    """A float as the standard library reads it; one past float's range (``1e999``), which msgspec refuses
    (a file past :data:`STDLIB_FALLBACK_BYTES` is then an error), is not read here."""
    value = float(literal)
    if value in (float("inf"), float("-inf")):
        raise NotStreamable
    return value


class JSONArray:
    """The elements of a document's top-level array, built one at a time while it is iterated (once), equal
    to the elements :func:`parse_json_bytes` would build (the standard library's scanner, which reads every
    value as msgspec does on a document :func:`check_syntax` accepts; what it might read otherwise raises
    :class:`NotStreamable`). Memory is the text and the element in hand, not the whole tree: a 20 MB array of
    seven million ``{}`` is 550 MB of dicts at once, but one dict at a time."""

    __slots__ = ("_elements",)

    def __init__(self, text: str, start: int, finite_floats: bool):
        decoder = json.JSONDecoder(parse_float=_finite_float) if finite_floats else json.JSONDecoder()
        self._elements = self._scan(text, start, decoder.scan_once)

    def __iter__(self) -> Iterator:
        return self._elements

    @staticmethod
    def _scan(text: str, i: int, scan) -> Iterator:
        i = _WS_TEXT.match(text, i).end()
        if text.startswith("]", i):
            return
        while True:
            try:
                value, i = scan(text, i)
            except (StopIteration, ValueError, RecursionError):  # ValueError: an integer past Python's digit limit
                raise NotStreamable from None
            yield value
            if text.startswith(",", i) and not text.startswith(_WS_CHARS, i + 1):  # compact JSON: no regex
                i += 1
                continue
            m = _NEXT.match(text, i)
            if m is None:
                raise NotStreamable
            if not m.group(1):
                return
            i = m.end()


def read_json_document(raw: bytes, name: str, use, undo=None):
    """``use(document)``'s result, where a document larger than :data:`SYNTAX_FIRST_BYTES` whose top level is an
    array comes as a :class:`JSONArray`, and any other as :func:`parse_json_bytes` builds it.

    A checker that walks the array once then holds one element at a time, whatever the file holds (millions of
    tiny items of a hostile file). Should the array meet something it might not build as the whole-document
    reading does (:class:`NotStreamable`), ``undo()`` is called, then ``use`` again with the whole document:
    ``use`` must leave no trace ``undo`` cannot remove. Raises :class:`UnreadableJSON` as
    :func:`parse_json_bytes` does.
    """
    if _msgspec is not None and len(raw) > SYNTAX_FIRST_BYTES:
        check_syntax(raw, name)  # what it refuses, parse_json_bytes refuses in the same words
        start = _LEADING_WS.match(raw).end()
        if raw[start:start + 1] == b"[":
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = None  # only in a file Python reads whole (see check_syntax): that reading says where
            if text is not None:
                array = JSONArray(text, start + 1, finite_floats=len(raw) > STDLIB_FALLBACK_BYTES)
                try:
                    result = use(array)
                    for _ in array:  # elements ``use`` left unread must still be readable, as in a whole reading
                        pass
                    return result
                except NotStreamable:
                    if undo is not None:
                        undo()
    return use(parse_json_bytes(raw, name))


def load_json_file(path: str | Path, max_bytes: int | None = None, shown: str | None = None):
    """Read (through the input layer) and parse one JSON file with one-line errors for every failure."""
    return parse_json_bytes(read_bytes(path, what="a JSON file", limit=max_bytes, shown=shown),
                            shown or str(Path(path)))


def decode_organiser_json(path: Path, decoder, what: str, raw: bytes | None = None):
    """An organiser's JSON file (``raw``: its bytes, when already read) decoded by a typed msgspec ``decoder``;
    anything wrong with it is one usage error (exit 2) naming the file and where."""
    from dialeval.core.errors import UsageError
    from dialeval.files.read import SNIFF_BYTES, sniff

    raw = read_bytes(path, what=what) if raw is None else raw
    bad = sniff(raw[:SNIFF_BYTES], expect="a JSON data file")
    if bad is not None:
        raise UsageError(f"{path}: {bad.reason}")
    try:
        return decoder.decode(raw)
    except _msgspec.ValidationError as e:
        m = re.search(r"`\$([^`]*)`", str(e))
        wrong = "a required field is missing" if "missing required field" in str(e) else "a value has the wrong type"
        raise UsageError(f"{path}: not {what} ({wrong} at {m.group(1) if m else 'the top level'})") from None
    except (_msgspec.DecodeError, ValueError, RecursionError):
        parse_json_bytes(raw, str(path))  # says what and where
        raise UsageError(f"{path}: not a readable JSON document") from None


# ---- writing: the output layer is dialeval.files.write ------------------------------------------------------
def dump_json_file(path: str | Path, obj) -> None:
    """Write ``obj`` like ``json.dump(obj, f)``: one line, default separators, no trailing newline."""
    atomic_write_text(path, json.dumps(obj, ensure_ascii=True))
