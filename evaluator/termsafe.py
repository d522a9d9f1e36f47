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
