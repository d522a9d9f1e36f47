"""Writing ConvAI2 files in ParlAI's FB dialog format, for the tests (the benchmark only reads them)."""

from __future__ import annotations

from pathlib import Path


def write_turns(path: Path, dialogs: list[tuple[list[str], list[tuple[str, str, list[str]]]]]) -> Path:
    """Dialogs ``(persona lines, [(text, label, candidates), ...])``: persona lines first, then the turns, the IDs
    running on from the persona's; the reward field empty, as in the release."""
    lines = []
    for persona, turns in dialogs:
        lines += [f"{i} your persona: {p}" for i, p in enumerate(persona, 1)]
        lines += [f"{i} {t}\t{lab}\t\t{'|'.join(c)}" for i, (t, lab, c) in enumerate(turns, len(persona) + 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
