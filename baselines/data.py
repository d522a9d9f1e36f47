"""Data for the baselines: bAbI dialog tasks and DSTC6 training splits as :class:`DialogItem` lists, plus the
score → rank helpers every scoring baseline shares.

bAbI (FB text) is turned into the DSTC6 item shape so a baseline never special-cases a format: one item per bot
turn, ``utterances`` = everything said (and every KB fact line) before that bot turn, ``candidates`` = the whole
candidate file as ``Candidate(str(line_index), text)``, ``answer`` = the candidate whose text equals the gold bot
utterance, ``conversation_id`` / ``turn`` set for per-dialog accuracy. All items of a file share ONE candidate
list object, which lets scoring baselines vectorise the candidate side once (see :func:`candidate_groups`).

Ranking convention used everywhere (:func:`order_from_scores`, :func:`gold_ranks_from_scores`): candidates are
sorted by score descending, ties broken by candidate position (earlier first). This is deterministic and makes
``rank()`` and the vectorised gold-rank computation agree exactly.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from dialeval.core.errors import UsageError
from dialeval.formats.convert import (  # noqa: F401  (the bAbI layout is re-exported for baselines)
    BABI_CANDIDATES,
    BABI_SPLITS,
    BABI_TASK_FILES,
    babi_candidates_path,
    babi_path,
    babi_splits,
    babi_test_splits,
)
from dialeval.formats.dstc6 import Candidate, DialogItem, parse_dataset_name, read_dataset
from dialeval.formats.fbdialog import read_candidates, read_conversations


@lru_cache(maxsize=8)
def _candidates_cached(path: str, mtime: float) -> tuple[Candidate, ...]:
    return tuple(Candidate(str(i), text) for i, text in enumerate(read_candidates(path)))


def load_babi_candidates(data_dir: str | Path, task: int) -> list[Candidate]:
    """The task's full candidate file as ``Candidate(str(line_index), text)`` (line index from 0)."""
    path = babi_candidates_path(data_dir, task)
    return list(_candidates_cached(str(path), path.stat().st_mtime))


def conversations_to_items(
    conversations,
    candidates: list[Candidate],
    prefix: str,
    max_conversations: int | None = None,
    source: str = "",
) -> list[DialogItem]:
    """One DialogItem per bot turn of each conversation; ``answer`` is the candidate with the gold's text.

    ``dialog_id`` = ``{prefix}-{conversation:05d}-{turn:03d}``, ``conversation_id`` = ``{prefix}-{conversation:05d}``
    (conversations numbered from 1 in file order). Every item shares the ``candidates`` list object.
    """
    by_text: dict[str, Candidate] = {}
    for c in candidates:
        by_text.setdefault(c.utterance, c)
    items: list[DialogItem] = []
    for ci, conv in enumerate(conversations, 1):
        if max_conversations is not None and ci > max_conversations:
            break
        conv_id = f"{prefix}-{ci:05d}"
        for context, gold, turn in conv.turns():
            ans = by_text.get(gold)
            if ans is None:
                raise UsageError(
                    f"{source or prefix}: conversation {ci} turn {turn}: gold {gold[:60]!r} is not a candidate"
                )
            items.append(DialogItem(f"{conv_id}-{turn:03d}", context, candidates, ans, conv_id, turn))
    return items


def load_babi_items(
    data_dir: str | Path,
    task: int,
    split: str,
    max_conversations: int | None = None,
    candidates: list[Candidate] | None = None,
) -> list[DialogItem]:
    """bAbI task ``task`` split ``split`` as DialogItems (one per bot turn), candidates = the full file.

    Pass ``candidates`` to share one list object across splits (the default loads the task's file once per call).
    """
    path = babi_path(data_dir, task, split)
    if candidates is None:
        candidates = load_babi_candidates(data_dir, task)
    convs = read_conversations(path)
    if not convs:
        raise UsageError(f"{path}: no conversations (not a bAbI dialog file?)")
    return conversations_to_items(convs, candidates, f"t{task}-{split}", max_conversations, source=str(path))


def load_challenge_split_items(
    challenge: str | Path, split: str, require_answers: bool = True
) -> dict[int, list[DialogItem]]:
    """Items per task of ``<challenge>/<split>/dialog-task*.json`` (e.g. the DSTC6 training split ``trn``).

    With ``require_answers`` every item must carry ``answer`` (a training split); otherwise a UsageError.
    Returns ``{}`` when the split folder does not exist.
    """
    d = Path(challenge) / split
    if not d.is_dir():
        return {}
    out: dict[int, list[DialogItem]] = {}
    for f in sorted(d.iterdir()):
        task = parse_dataset_name(f.name)
        if task is None or not f.is_file():
            continue
        items = read_dataset(f)
        if require_answers:
            missing = sum(1 for it in items if it.answer is None)
            if missing:
                raise UsageError(f"{f}: {missing} of {len(items)} training items have no 'answer'")
        out.setdefault(task, []).extend(items)
    return out


# ---------------------------------------------------------------------------------------------------------------
# Text and score helpers shared by the scoring baselines

_TOKEN_RE = re.compile(r"\S+")
_PUNCT_RE = re.compile(r"[^\w<>]+")


def tokenize(text: str, mode: str = "lower") -> list[str]:
    """Tokens of an utterance.

    ``lower``: lower-case, split on whitespace (bAbI/DSTC6 text is already space-tokenised, punctuation included
    as its own token in task 6). ``words``: also drop punctuation-only tokens and split on punctuation (keeps
    ``<silence>``-style markers and ``resto_x_phone`` words whole). ``raw``: whitespace split, case kept.
    """
    if mode == "raw":
        return _TOKEN_RE.findall(text)
    if mode == "lower":
        return _TOKEN_RE.findall(text.lower())
    if mode == "words":
        return [t for t in _PUNCT_RE.split(text.lower()) if t]
    raise ValueError(f"unknown tokenisation {mode!r}")


def candidate_groups(items: Sequence[DialogItem]) -> list[tuple[list[Candidate], list[int]]]:
    """Group item positions by candidate-list identity (bAbI: one group per file; DSTC6: one per item).

    Returns ``[(candidates, [item positions])]`` in first-seen order; a baseline vectorises each group once.
    """
    groups: dict[int, tuple[list[Candidate], list[int]]] = {}
    for i, it in enumerate(items):
        key = id(it.candidates)
        if key not in groups:
            groups[key] = (it.candidates, [])
        groups[key][1].append(i)
    return list(groups.values())


def order_from_scores(scores: np.ndarray) -> np.ndarray:
    """Candidate positions best first: score descending, ties by position (a stable sort of ``-scores``)."""
    return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")


def gold_ranks_from_scores(scores: np.ndarray, gold_pos: np.ndarray) -> np.ndarray:
    """1-based rank of the gold per row of ``scores`` (rows = items, columns = candidates), same tie rule.

    rank_i = 1 + |{j : s_ij > s_ig}| + |{j < g : s_ij = s_ig}|, with g = gold_pos[i]; rows with ``gold_pos < 0``
    (no gold) get 0 (= not ranked).
    """
    scores = np.asarray(scores)
    if np.issubdtype(scores.dtype, np.floating) and np.isnan(scores).any():
        # NaN compares false with everything: a diverged model would rank its gold first. NaN ranks last.
        scores = np.where(np.isnan(scores), -np.inf, scores)
    gold_pos = np.asarray(gold_pos)
    ok = gold_pos >= 0
    g = np.where(ok, gold_pos, 0)
    gs = scores[np.arange(scores.shape[0]), g][:, None]
    before = np.arange(scores.shape[1])[None, :] < g[:, None]
    ranks = 1 + (scores > gs).sum(axis=1) + ((scores == gs) & before).sum(axis=1)
    return np.where(ok, ranks, 0).astype(np.int64)


def gold_positions(items: Sequence[DialogItem], candidates: list[Candidate], positions: Sequence[int]) -> np.ndarray:
    """Position of each item's gold (``answer.candidate_id``) in ``candidates``; -1 when absent or no answer."""
    index = {c.candidate_id: j for j, c in enumerate(candidates)}
    return np.array(
        [index.get(items[i].answer.candidate_id, -1) if items[i].answer is not None else -1 for i in positions],
        dtype=np.int64,
    )


def last_user_utterance(item: DialogItem) -> str:
    """The utterance the next bot turn answers: the item's last utterance ('' for an empty context)."""
    return item.utterances[-1] if item.utterances else ""


# ---------------------------------------------------------------------------------------------------------------
# Vectorised evaluation for baselines that score candidates

BATCH_ROWS = 1024
"""Items scored per block: 1024 items × 4,212 bAbI candidates is a 34 MB float64 block."""


class ScoringMixin:
    """For baselines that score candidates: ``score_group(candidates, items) -> (len(items), len(candidates))``.

    ``rank`` / ``rank_all`` / :func:`gold_ranks` / :func:`top_k_ids` all derive from the scores with the
    convention of :func:`order_from_scores`, so full rankings, top-k files and gold ranks agree.
    """

    def score_group(self, candidates: list[Candidate], items: Sequence[DialogItem]) -> np.ndarray:
        raise NotImplementedError

    def rank(self, item: DialogItem) -> list[str]:
        order = order_from_scores(self.score_group(item.candidates, [item])[0])
        return [item.candidates[j].candidate_id for j in order]

    def rank_all(self, items: Sequence[DialogItem]) -> list[list[str]]:
        return top_k_ids(self, items, None)


def _blocks(positions: list[int]):
    for s in range(0, len(positions), BATCH_ROWS):
        yield positions[s : s + BATCH_ROWS]


def gold_ranks(model, items: Sequence[DialogItem]) -> np.ndarray:
    """Rank of each item's gold under ``model`` (0 where an item has no answer), in item order.

    Scoring baselines are evaluated block-wise from their score matrices (never materialising 4,212-id lists);
    other baselines through ``rank_all``.
    """
    out = np.zeros(len(items), dtype=np.int64)
    if hasattr(model, "score_group"):
        for cands, positions in candidate_groups(items):
            for block in _blocks(positions):
                scores = model.score_group(cands, [items[i] for i in block])
                out[block] = gold_ranks_from_scores(scores, gold_positions(items, cands, block))
        return out
    for start in range(0, len(items), BATCH_ROWS):  # blocks keep 4,212-id lists from piling up
        block = items[start : start + BATCH_ROWS]
        for i, (it, ranked) in enumerate(zip(block, model.rank_all(block)), start):
            if it.answer is None:
                continue
            try:
                out[i] = ranked.index(it.answer.candidate_id) + 1
            except ValueError:
                out[i] = 0
    return out


def top_k_ids(model, items: Sequence[DialogItem], k: int | None) -> list[list[str]]:
    """The first ``k`` candidate ids per item, best first (all of them when ``k`` is None)."""
    if not hasattr(model, "score_group"):
        out_: list[list[str]] = []
        for start in range(0, len(items), BATCH_ROWS):
            out_.extend(r if k is None else r[:k] for r in model.rank_all(items[start : start + BATCH_ROWS]))
        return out_
    out: list[list[str] | None] = [None] * len(items)
    for cands, positions in candidate_groups(items):
        ids = [c.candidate_id for c in cands]
        for block in _blocks(positions):
            scores = model.score_group(cands, [items[i] for i in block])
            kk = scores.shape[1] if k is None else min(k, scores.shape[1])
            for row, i in enumerate(block):
                s = scores[row]
                if kk < s.shape[0]:
                    # Partial selection, then the exact tie rule (score desc, position asc) among the kept ones.
                    # Take everything scoring >= the k-th best score so position ties are resolved correctly.
                    kth = np.partition(-s, kk - 1)[kk - 1]
                    keep = np.flatnonzero(-s <= kth)
                    sub = keep[order_from_scores(s[keep])][:kk]
                else:
                    sub = order_from_scores(s)
                out[i] = [ids[j] for j in sub]
    return out  # type: ignore[return-value]
