"""ConvAI2 (PersonaChat) in ParlAI's FB dialog format: a turn ``N text<TAB>label<TAB>reward<TAB>cand1|...|cand20``
(labels ``|``-separated, the reward empty in the release) is an item; a line without a TAB is context (``your persona:
...``); IDs restart at 1 for each dialog (:func:`dialeval.formats.fbdialog.iter_lines`, through the input layer).
Files: ``<split>_<persona>_<original|revised>.txt``. A bad line is a usage error naming file:line, never its text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dialeval.core.errors import UsageError

N_CANDIDATES = 20
MAX_TURN = 1 << 20  # characters of a turn's label and candidates: far more than any real turn
SPLITS = ("train", "valid")
DEFAULT_FILE = "{split}_self_original.txt"  # a split's file in a data folder: ParlAI's default task


@dataclass
class Turns:
    """The turns of one file, in file order: ids, labels, and each turn's candidate field as written."""

    stem: str
    item_ids: list[str] = field(default_factory=list)
    conversation_ids: list[str] = field(default_factory=list)
    turns: list[int] = field(default_factory=list)
    labels: list[list[str]] = field(default_factory=list)
    fields: list[str] = field(default_factory=list)  # one str per turn ('|'-separated): 20 str each costs more

    def candidates(self, i: int) -> list[str]:
        return self.fields[i].split("|")


def split_of(path: str | Path) -> str | None:
    """The split a file's name says (its first ``_``-separated word), or None."""
    return next((s for s in SPLITS if Path(path).name.startswith(s + "_")), None)


def read_turns(path: str | Path) -> Turns:
    """Every turn of a ConvAI2 file; a turn without exactly 20 candidates or without a label is refused."""
    from dialeval.formats.fbdialog import iter_lines

    out = Turns(Path(path).stem)
    conv = turn = 0
    for ln in iter_lines(path):
        if ln.bot is None:
            continue  # persona or other context
        where = f"{path}:{ln.lineno}"
        if len(ln.bot) > MAX_TURN:  # normalising replies costs many times their size: a data error, not a bomb
            raise UsageError(f"{where}: the turn's label and candidates exceed {MAX_TURN} characters")
        parts = ln.bot.split("\t", 3)
        if len(parts) != 3:
            raise UsageError(f"{where}: expected 'N text<TAB>label<TAB>reward<TAB>candidates' (a ConvAI2 turn with "
                             "its 20 candidates; _no_cands files cannot be ranked)")
        label, _reward, cands = parts
        if not label:
            raise UsageError(f"{where}: the turn has no label")
        if (n := cands.count("|") + 1) != N_CANDIDATES:
            raise UsageError(f"{where}: {n} candidates; a ConvAI2 turn has {N_CANDIDATES}, separated by '|'")
        turn, conv = (turn + 1 if ln.conversation == conv else 1), ln.conversation
        out.item_ids.append(f"{out.stem}:{conv}:{ln.lid}")
        out.conversation_ids.append(f"{out.stem}:{conv}")
        out.turns.append(turn)
        out.labels.append(label.split("|"))
        out.fields.append(cands)
    if not out.item_ids:
        raise UsageError(f"{path}: no turns (not a ConvAI2 file in ParlAI's FB dialog format?)")
    return out
