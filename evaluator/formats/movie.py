"""Movie Dialog dataset (Dodge et al. 2016): file layout, entity list, answer splitting, text normalisation.

Layout of a data directory (the release's own names, flat)::

    entities.txt                         one entity per line (75,542): the candidates of tasks 1-3
    task1_qa_{train,dev,test}.txt        FB format, ``1 question<TAB>answer``, one exchange per conversation
    task2_recs_{train,dev,test}.txt      FB format, one exchange per conversation
    task3_qarecs_{train,dev,test}.txt    FB format, three exchanges (IDs 1-3) per conversation
    task4_reddit_{train,dev,test}.txt    FB format, Reddit threads (may be longer)
    task4_reddit_cand-{valid,test}.txt   Reddit candidates, ``1 <text>`` lines separated by blank lines
                                         (``valid`` serves the ``dev`` split; ``cand-<x>.txt`` is accepted too)

Answers of tasks 1-3 are entity lists joined with ``", "``, but 244 entities contain a comma themselves
(``Girl, Interrupted``): :func:`split_answer` segments an answer against the entity list, never on the comma.

Candidate ids (stable, documented in the benchmark):

- tasks 1-3: ``e<N>`` with N the 1-based line number of the entity in ``entities.txt``;
- task 4: ``c<N>`` with N the 1-based position of the candidate among the candidate file's non-blank lines,
  and ``reply`` for the item's own true reply (the 10,001st candidate).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from dialeval.core.errors import UsageError

TASK_NAMES = {1: "task1_qa", 2: "task2_recs", 3: "task3_qarecs", 4: "task4_reddit"}
"""File-name stem prefix per task; the split is appended as ``_{split}.txt``."""

SPLITS = ("train", "dev", "test")
ENTITIES = "entities.txt"
REPLY_ID = "reply"
"""Candidate id of a Reddit item's own true reply."""

_FILE_RE = re.compile(r"^(task[1-4]_(?:qa|recs|qarecs|reddit))_(train|dev|test)\.txt$")


def _locate(data: Path, name: str, task: int | None = None) -> Path:
    """``data/name``, or ``data/<task folder>/name`` as in the release's tarball (``task1_qa/task1_qa_test.txt``)."""
    flat = Path(data) / name
    if flat.exists() or task is None:
        return flat
    nested = Path(data) / TASK_NAMES[task] / name
    return nested if nested.exists() else flat


def task_path(data: Path, task: int, split: str) -> Path:
    return _locate(data, f"{TASK_NAMES[task]}_{split}.txt", task)


def present(data: Path) -> dict[str, list[int]]:
    """``{split: [tasks]}`` for the task files present under ``data`` (split order: train, dev, test)."""
    by_split: dict[str, set[int]] = {}
    stems = {v: k for k, v in TASK_NAMES.items()}
    try:
        names = [p.name for p in Path(data).iterdir()]
    except FileNotFoundError:
        raise UsageError(f"Movie Dialog data directory {data} does not exist") from None
    except NotADirectoryError:
        raise UsageError(f"Movie Dialog data directory {data} is not a directory") from None
    for sub in TASK_NAMES.values():  # the release's layout: one folder per task
        if (Path(data) / sub).is_dir():
            names += [p.name for p in (Path(data) / sub).iterdir()]
    for name in names:
        m = _FILE_RE.match(name)
        if m and m.group(1) in stems:
            by_split.setdefault(m.group(2), set()).add(stems[m.group(1)])
    return {s: sorted(by_split[s]) for s in SPLITS if s in by_split}


def reddit_candidates_path(data: Path, split: str) -> Path:
    """The Reddit candidate file serving ``split`` (``dev`` uses ``cand-valid``); UsageError when absent."""
    keys = ("valid", "dev") if split == "dev" else (split,)
    tried = []
    for k in keys:
        for name in (f"task4_reddit_cand-{k}.txt", f"cand-{k}.txt"):
            p = _locate(data, name, 4)
            tried.append(name)
            if p.is_file():
                return p
    raise UsageError(f"{data}: no Reddit candidate file for split {split} (expected {' or '.join(tried[:2])})")


@dataclass
class Entities:
    """The entity list: ``ids[i]``/``texts[i]`` in file order, and lookups by exact and lower-cased text."""

    path: Path
    ids: list[str]
    texts: list[str]
    by_text: dict[str, str]  # exact text -> id
    by_lower: dict[str, str]  # lower-cased text -> id of the first entity with it (file order)


def read_entities(path: str | Path) -> Entities:
    """``entities.txt``: id ``e<N>`` for the entity on line N (empty lines are skipped, numbering kept)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{path}: no such file (the Movie Dialog entity list)") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path}: not UTF-8 text") from None
    except OSError as e:
        raise UsageError(f"{path}: cannot read ({e.strerror or type(e).__name__})") from None
    ids: list[str] = []
    texts: list[str] = []
    by_text: dict[str, str] = {}
    by_lower: dict[str, str] = {}
    for n, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line:
            continue
        eid = f"e{n}"
        ids.append(eid)
        texts.append(line)
        by_text.setdefault(line, eid)
        by_lower.setdefault(line.lower(), eid)
    if not ids:
        raise UsageError(f"{path}: no entities")
    return Entities(path, ids, texts, by_text, by_lower)


SEPARATOR = ", "


def split_answer(answer: str, entities: Entities) -> tuple[list[str], int]:
    """Segment an answer into entity ids against the entity list: ``(ids, unmatched parts)``.

    The answer is cut at every ``", "`` into parts; a segmentation groups consecutive parts into pieces,
    each of which must be an entity (exact text, else the same text ignoring case). Among all
    segmentations the one with the fewest unmatched parts wins, then the one with the fewest pieces
    (the longest matches), then the one whose first piece is longest — so ``Girl, Interrupted`` stays one
    entity while ``Alien, Aliens`` is two. Parts that no segmentation can cover are counted, not guessed.
    Ids keep the answer's order, without repeats.
    """
    parts = answer.split(SEPARATOR)
    n = len(parts)
    # best[i] = (unmatched, pieces, ids) for parts[i:]; filled from the end
    best: list[tuple[int, int, list[str]] | None] = [None] * (n + 1)
    best[n] = (0, 0, [])
    for i in range(n - 1, -1, -1):
        choice = None
        for j in range(n, i, -1):  # longest piece first: on equal cost the longer one is kept
            tail = best[j]
            assert tail is not None
            piece = SEPARATOR.join(parts[i:j])
            eid = entities.by_text.get(piece) or entities.by_lower.get(piece.lower())
            if eid is None:
                continue
            cand = (tail[0], tail[1] + 1, [eid, *tail[2]])
            if choice is None or cand[:2] < choice[:2]:
                choice = cand
        tail = best[i + 1]
        assert tail is not None
        skip = (tail[0] + 1, tail[1], tail[2])  # parts[i] matches nothing
        if choice is None or skip[:2] < choice[:2]:
            choice = skip
        best[i] = choice
    unmatched, _, ids = best[0]  # type: ignore[misc]
    return list(dict.fromkeys(ids)), unmatched


_PUNCT = re.compile(r"[^\w\s]|_")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def normalize_text(text: str) -> str:
    """ParlAI-style answer normalisation: lower-case, punctuation -> space, drop a/an/the, collapse spaces."""
    s = _PUNCT.sub(" ", text.lower())
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())
