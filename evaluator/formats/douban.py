"""Response-selection TSV files (Douban, E-commerce, Ubuntu v1 as SMN/DAM/MSN release them).

Data: one line per (context, candidate), ``label<TAB>utterance 1<TAB>...<TAB>utterance n<TAB>response``,
label ``1`` (a positive) or ``0``, ten consecutive lines per context, each repeating the context. The
items are the contexts: ``<split>:<n>`` (1-based), candidates ``1`` ... ``10`` in file order. These are
organizer files, so a malformed one is a usage error (exit 2) naming ``file:line``. The score files answering
them (one score per data line) are read by :func:`dialeval.formats.scores.read_line_scores`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dialeval.core.errors import UsageError
from dialeval.core.problems import short
from dialeval.files.read import SNIFF_BYTES, iter_byte_lines, read_bytes, sniff, text_limit

PER_CONTEXT = 10
CANDIDATE_IDS = tuple(str(i) for i in range(1, PER_CONTEXT + 1))
_LABELS = {b"0": 0, b"1": 1}


def item_id(split: str, context: int) -> str:
    """``test:17``: the 17th context (lines 161-170) of ``test.txt``."""
    return f"{split}:{context}"


def _data_lines(path: Path, shown: str | None):
    """``(line number, label, context bytes, response bytes)`` of every data line (trailing blank lines dropped)."""
    name = shown or str(path)
    blank = 0
    for lineno, line in iter_byte_lines(path, what="a response-selection TSV file", shown=shown,
                                        expect="a UTF-8 TSV file", bom_ok=True):
        if not line.strip():
            blank = blank or lineno
            continue
        if blank:
            raise UsageError(f"{name}:{blank}: empty line inside the data (expected label<TAB>utterances<TAB>response)")
        head, _, rest = line.partition(b"\t")
        context, tab, response = rest.rpartition(b"\t")
        if not tab:
            fields = line.count(b"\t") + 1
            raise UsageError(f"{name}:{lineno}: {fields} field(s); expected label<TAB>utterances<TAB>response")
        label = _LABELS.get(head.strip())
        if label is None:
            raise UsageError(f"{name}:{lineno}: label {short(head.decode('utf-8', 'replace'), 20)} is not 0 or 1")
        yield lineno, label, context, response


def read_labels(path: str | Path, *, shown: str | None = None) -> np.ndarray:
    """The labels of a data file as a (contexts, 10) int8 matrix, after checking that every context is ten
    consecutive lines repeating one context (an eleventh line shifts every later block, which is caught).

    Read whole and checked with list operations (10,000 lines in a few ms); any anomaly is found again line by
    line, which names it with file:line."""
    labels = _labels_at_once(Path(path), shown)
    return labels if labels is not None else _read_labels_line_by_line(Path(path), shown)


def _labels_at_once(path: Path, shown: str | None) -> np.ndarray | None:
    """The labels when the file has no anomaly, else None (its own frame: nothing it read outlives it)."""
    raw = read_bytes(path, what="a response-selection TSV file", shown=shown, limit=text_limit())
    if sniff(raw[:SNIFF_BYTES], bom_ok=True) is not None or raw.startswith(b"\xef\xbb\xbf"):
        return None
    lines = raw.split(b"\n")
    del raw
    while lines and not lines[-1].strip():
        lines.pop()
    ends = [ln.rfind(b"\t") for ln in lines]
    if not lines or not {ln[:2] for ln in lines} <= {b"0\t", b"1\t"} or min(ends) < 2 or len(lines) % PER_CONTEXT:
        return None
    context = [memoryview(ln)[2:e] for ln, e in zip(lines, ends, strict=True)]  # views: no second copy
    if not all(context[k::PER_CONTEXT] == context[::PER_CONTEXT] for k in range(1, PER_CONTEXT)):
        return None
    labels = np.frombuffer(b"".join(ln[:1] for ln in lines), np.uint8) - ord("0")
    return labels.astype(np.int8).reshape(-1, PER_CONTEXT)


def _read_labels_line_by_line(path: Path, shown: str | None) -> np.ndarray:
    name = shown or str(path)
    labels = bytearray()
    first = b""
    for lineno, label, context, _ in _data_lines(path, shown):
        if (lineno - 1) % PER_CONTEXT == 0:
            first = context
        elif context != first:
            start = lineno - (lineno - 1) % PER_CONTEXT
            raise UsageError(f"{name}:{lineno}: its context differs from line {start}'s: every context must be "
                             f"{PER_CONTEXT} consecutive lines (a context of another length shifts the blocks)")
        labels.append(label)
    if not labels:
        raise UsageError(f"{name}: no data lines (expected label<TAB>utterances<TAB>response, {PER_CONTEXT} per context)")
    if len(labels) % PER_CONTEXT:
        raise UsageError(f"{name}: {len(labels):,} lines, not a multiple of {PER_CONTEXT} (the last context is "
                         f"{len(labels) % PER_CONTEXT} lines long)")
    return np.frombuffer(bytes(labels), np.int8).reshape(-1, PER_CONTEXT)


def iter_contexts(path: str | Path, *, shown: str | None = None):
    """``(utterances, responses, labels)`` per context, texts decoded (for baselines; scoring reads labels only)."""
    block: list = []
    for _, label, context, response in _data_lines(Path(path), shown):
        block.append((label, context, response))
        if len(block) == PER_CONTEXT:
            utts = block[0][1].decode("utf-8", "replace").split("\t")
            yield utts, [r.decode("utf-8", "replace") for _, _, r in block], [lab for lab, _, _ in block]
            block = []
