"""CSV files with a fixed header, streamed through the input layer (Ubuntu v2's ``valid.csv``, ``test.csv`` and
``train.csv``): one record at a time, each with the line it starts on.

These are organizer files, so a malformed one is a usage error (exit 2) naming ``file:line``: an empty file, a header
other than the expected one, a row with another number of columns, a row the csv module cannot read (default dialect:
comma-separated, minimal quoting), text that is not UTF-8.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.files.read import SNIFF_BYTES, named, open_input, os_error, sniff

csv.field_size_limit(1 << 28)  # some real contexts are long; the default 128 KiB limit would refuse them


def header_rows(path: Path, header: tuple[str, ...]):
    """Yield (first line of the record, fields) of every data row after checking the header.

    Opened through the input layer (a FIFO or a device is refused before it is read; a compressed, UTF-16
    or binary file is named as such) and streamed: memory follows the longest record, not the file.

    A line that is one well-formed record (:func:`_split_line`) is split here, because the csv module builds
    each field in a buffer of 4 bytes per character (a 50 MB context cost 250 MB more than its text); any
    other line starts a record the csv module reads (a quoted field may span lines, a stray quote has its own
    rules), so the fields and line numbers are the csv module's either way.
    """
    with open_input(path, what="a CSV file") as f:
        try:
            bad = sniff(f.file.peek(SNIFF_BYTES)[:SNIFF_BYTES], expect="a UTF-8 CSV file", bom_ok=True)
        except OSError as e:
            raise os_error(f.name, e) from None
        if bad is not None:
            raise named(bad, f.name)  # organizer data: a usage error (exit 2) that says what the file is
        fh = io.TextIOWrapper(f.file, encoding="utf-8", newline="")  # csv needs the line ends inside quotes
        feed = _Feed(fh)
        reader = csv.reader(feed)
        limit = csv.field_size_limit()

        def records():
            """(lines read before the record, fields) per record; a line the csv module needs goes to it."""
            for text in fh:
                before = feed.plain + reader.line_num
                fields = None if len(text) > limit or "\0" in text else _split_line(text)
                if fields is None:
                    feed.first = text
                    fields = next(reader, None)
                    if fields is None:
                        return
                else:
                    feed.plain += 1
                yield before, fields

        rows = records()
        try:
            _, first = next(rows, (0, None))
            if first is None:
                raise UsageError(f"{path}:1: empty file, expected the header {','.join(header)}")
            if first and first[0].startswith("\ufeff"):
                first[0] = first[0][1:]
            if tuple(first) != header:
                raise UsageError(f"{path}:1: header is {shorten(','.join(first))}, expected {','.join(header)}")
            for before, fields in rows:
                line = before + 1
                if len(fields) != len(header):
                    raise UsageError(f"{path}:{line}: {len(fields)} columns, expected {len(header)} ({','.join(header[:3])},...)")
                yield line, fields
        except csv.Error as e:
            raise UsageError(f"{path}:{feed.plain + reader.line_num}: not a readable CSV row ({e})") from None
        except UnicodeDecodeError as e:
            raise UsageError(f"{path}: not UTF-8 text (byte {e.start})") from None
        except OSError as e:
            raise os_error(f.name, e) from None
        finally:
            fh.detach()  # the input layer closes the file


_FIELD = re.compile(r'"([^"\0]*(?:""[^"\0]*)*)"|[^",\0]*')
"""One field of a record: quoted (a doubled quote inside stands for one), or plain (no quote, comma or NUL)."""


def _split_line(text: str) -> list[str] | None:
    """The fields of a line holding one whole, well-formed record, as the csv module reads them (default
    dialect); None for anything else: a quote inside a plain field, text after a closing quote, a quoted
    field going on past the line, a NUL."""
    body = text.rstrip("\r\n")  # newline="": a line holds no \r or \n but its one line end
    if not body:
        return []
    if '"' not in body and "\0" not in body:
        return body.split(",")
    fields = []
    pos, end = 0, len(body)
    while True:
        m = _FIELD.match(body, pos)
        quoted = m.group(1)
        fields.append(m.group() if quoted is None else quoted.replace('""', '"'))
        pos = m.end()
        if pos == end:
            return fields
        if body[pos] != ",":
            return None
        pos += 1


class _Feed:
    """The lines the csv module reads: the one a record starts on (``first``), then as many more as it asks for."""

    def __init__(self, lines):
        self.lines = lines
        self.first: str | None = None
        self.plain = 0  # lines split without the csv module (reader.line_num counts the others)

    def __iter__(self):
        return self

    def __next__(self) -> str:
        if self.first is not None:
            text, self.first = self.first, None
            return text
        return next(self.lines)


def shorten(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
