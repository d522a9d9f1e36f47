"""Conversion between bAbI dialog (FB text) and DSTC6 JSON, and the bAbI data-directory layout.

bAbI → DSTC6 (:func:`babi_to_dstc6`): one item per bot turn (``utterances`` = everything before the bot turn,
facts included, text verbatim: ``<SILENCE>`` and ``R_`` stay upper case), with ``conversation_id`` and ``turn``
so per-dialog accuracy survives the conversion. Candidates are either

- ``full``: the whole candidate file (4,212 lines for tasks 1-5), ids = line index ``"0"``, ``"1"``, ... (compact:
  a full-candidate file is still ~250 KB per item, ~1.5 GB for task 1 ``tst``); or
- ``sampled``: like DSTC6 — the gold plus ``n - 1`` distractors, ``(n - 1) // 2`` drawn from the item's context
  (user turns, earlier bot turns, KB fact lines; the adversarial half) and the rest from the candidate file,
  never a distractor with the gold's text and no text twice; order shuffled; ids = UUID4 from the seeded RNG.

Dialog ids are UUID4 strings from ``random.Random(seed)`` (``uuid.UUID(int=rng.getrandbits(128), version=4)``),
so the same inputs and seed give byte-identical files. The answer key (``<stem>.answers.json``) ranks the gold at 1.

DSTC6 → bAbI (:func:`dstc6_to_babi`): items with ``conversation_id`` are regrouped (ordered by ``turn``, else file
order); a turn's new context lines are the earlier turn's context + its gold + (fact lines) + the user's utterance,
which restores the FB lines exactly. Items without it become one conversation each: fact lines are recognised by
their shape ``<name> r_<attr> <value>`` and the other lines are read as alternating user/bot turns ending with the
user (a ``<SILENCE>``/``<silence>`` user line is inserted where a bot line has no user line before it).
"""

from __future__ import annotations

import json
import random
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.files.read import check_regular, not_a_folder
from dialeval.files.write import atomic_writer
from dialeval.formats.dstc6 import (
    TASK_NAMES,
    Candidate,
    DialogItem,
    answers_file_name,
    gold_from_answer_key_json,
    read_dataset,
    write_results,
)
from dialeval.formats.fbdialog import (
    Conversation,
    Line,
    is_fact_text,
    read_candidates,
    read_conversations,
    write_candidates,
)
from dialeval.formats.fbdialog import write_conversations as write_fb_conversations
from dialeval.formats.jsonio import dump_json_file, load_json_file

# --- bAbI data-directory layout ---------------------------------------------------------------------------------

BABI_TASK_FILES = {
    1: "dialog-babi-task1-API-calls",
    2: "dialog-babi-task2-API-refine",
    3: "dialog-babi-task3-options",
    4: "dialog-babi-task4-phone-address",
    5: "dialog-babi-task5-full-dialogs",
    6: "dialog-babi-task6-dstc2",
}
"""File-name prefix per bAbI task; the split is appended as ``-{split}.txt``."""

BABI_SPLITS = ("trn", "dev", "tst", "tst-OOV")
BABI_CANDIDATES = {t: "dialog-babi-candidates.txt" for t in range(1, 6)} | {6: "dialog-babi-task6-dstc2-candidates.txt"}


def babi_splits(task: int) -> tuple[str, ...]:
    """Splits of a task: task 6 has no ``tst-OOV``."""
    return tuple(s for s in BABI_SPLITS if not (task == 6 and s == "tst-OOV"))


def babi_test_splits(task: int) -> tuple[str, ...]:
    """Test splits: ``tst`` and ``tst-OOV`` for tasks 1-5; task 6 only ``tst``."""
    return tuple(s for s in babi_splits(task) if s.startswith("tst"))


def _check_task(task: int) -> None:
    if task not in BABI_TASK_FILES:
        raise UsageError(f"bAbI task must be 1-6, got {task}")


def babi_path(data_dir: str | Path, task: int, split: str) -> Path:
    """Path of a bAbI split file; a one-line UsageError when the directory, the split or the file is missing."""
    _check_task(task)
    data_dir = Path(data_dir)
    if split not in babi_splits(task):
        raise UsageError(f"bAbI task {task} has no split {split!r} (valid: {', '.join(babi_splits(task))})")
    if not data_dir.is_dir():
        raise not_a_folder(data_dir, "bAbI data directory")
    path = data_dir / f"{BABI_TASK_FILES[task]}-{split}.txt"
    if not path.exists():
        raise UsageError(f"{path}: no such file (is {data_dir} the bAbI dialog data directory?)")
    check_regular(path, what="a bAbI dialog file")  # a FIFO or a device is named as what it is, at once
    return path


def babi_candidates_path(data_dir: str | Path, task: int) -> Path:
    _check_task(task)
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise not_a_folder(data_dir, "bAbI data directory")
    path = data_dir / BABI_CANDIDATES[task]
    if not path.exists():
        raise UsageError(f"{path}: no such file (is {data_dir} the bAbI dialog data directory?)")
    check_regular(path, what="a bAbI dialog file")  # a FIFO or a device is named as what it is, at once
    return path


def babi_dataset_name(task: int, split: str) -> str:
    """DSTC6-style name for a converted bAbI file, e.g. ``dialog-task1API-babi-tst-OOV.json``."""
    return f"dialog-task{task}{TASK_NAMES[task]}-babi-{split}.json"


# --- bAbI → DSTC6 -----------------------------------------------------------------------------------------------


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


@dataclass
class ConvertResult:
    dataset: Path
    answers: Path
    items: int
    conversations: int


def sample_candidates(
    rng: random.Random, gold: str, context: Sequence[str], pool: Sequence[str], n: int
) -> list[Candidate]:
    """Gold + ``n - 1`` distinct-text distractors (half from the context, the rest from ``pool``), shuffled.

    Context distractors: ``(n - 1) // 2`` sampled from the distinct context lines; a shortfall is filled from the
    pool. No distractor has the gold's text. Ids are UUID4 from ``rng``.
    """
    if n < 1:
        raise UsageError(f"--n-candidates must be at least 1, got {n}")
    chosen: list[str] = []
    taken = {gold}
    ctx = [u for u in dict.fromkeys(context) if u not in taken]
    for u in rng.sample(ctx, min((n - 1) // 2, len(ctx))):
        chosen.append(u)
        taken.add(u)
    available = len(set(pool) - taken)
    need = min(n - 1 - len(chosen), available)
    while need > 0:
        u = pool[rng.randrange(len(pool))]
        if u not in taken:
            chosen.append(u)
            taken.add(u)
            need -= 1
    texts = [gold, *chosen]
    rng.shuffle(texts)
    return [Candidate(_uuid(rng), t) for t in texts]


def _stream_dataset(path: Path, items: Sequence[DialogItem]) -> None:
    """Write items like ``json.dumps(list)`` (same bytes as :func:`dstc6.write_dataset`) without building one
    giant string; atomic (temp file + rename). Used for full-candidate files of hundreds of MB."""
    with atomic_writer(path, "w") as f:
        f.write("[")
        for i, it in enumerate(items):
            if i:
                f.write(", ")
            f.write(json.dumps(it.to_json(), ensure_ascii=True))
        f.write("]")


def babi_to_dstc6(
    data_dir: str | Path,
    task: int,
    split: str,
    out_dir: str | Path,
    candidates: str = "sampled",
    n_candidates: int = 10,
    seed: int = 0,
    embed_answers: bool | None = None,
    max_conversations: int | None = None,
) -> ConvertResult:
    """Convert bAbI task ``task`` split ``split`` to ``<out_dir>/<split>/dialog-task{N}{NAME}-babi-{split}.json``
    plus its answer key. ``embed_answers`` (default: not for test splits) adds each item's ``answer`` so the
    file can serve as a training split."""
    if candidates not in ("full", "sampled"):
        raise UsageError(f"--candidates must be 'full' or 'sampled', got {candidates!r}")
    path = babi_path(data_dir, task, split)
    cand_texts = read_candidates(babi_candidates_path(data_dir, task))
    if not cand_texts:
        raise UsageError(f"{babi_candidates_path(data_dir, task)}: no candidates")
    convs = read_conversations(path)
    if not convs:
        raise UsageError(f"{path}: no conversations (not a bAbI dialog file?)")
    if max_conversations is not None:
        convs = convs[:max_conversations]
    if embed_answers is None:
        embed_answers = not split.startswith("tst")
    rng = random.Random(seed)
    full = [Candidate(str(i), t) for i, t in enumerate(cand_texts)]
    full_by_text: dict[str, Candidate] = {}
    for c in full:
        full_by_text.setdefault(c.utterance, c)
    items: list[DialogItem] = []
    keys: list[tuple[str, list[str]]] = []
    for ci, conv in enumerate(convs, 1):
        conv_id = f"t{task}-{split}-{ci:05d}"
        for context, gold, turn in conv.turns():
            if gold not in full_by_text:
                raise UsageError(
                    f"{path}: conversation {ci} turn {turn}: gold {gold[:60]!r} is not in the candidate file"
                )
            if candidates == "full":
                cands, answer = full, full_by_text[gold]
            else:
                cands = sample_candidates(rng, gold, context, cand_texts, n_candidates)
                answer = next(c for c in cands if c.utterance == gold)
            dialog_id = _uuid(rng)
            items.append(
                DialogItem(
                    dialog_id, context, cands, answer if embed_answers else None, conversation_id=conv_id, turn=turn
                )
            )
            keys.append((dialog_id, [answer.candidate_id]))
    out_split = Path(out_dir) / split
    dataset = out_split / babi_dataset_name(task, split)
    answers = out_split / answers_file_name(dataset.name)
    _stream_dataset(dataset, items)
    write_results(answers, keys)
    return ConvertResult(dataset, answers, len(items), len(convs))


# --- DSTC6 → bAbI -----------------------------------------------------------------------------------------------

def _check_fb_text(text: str, where: str) -> None:
    if "\t" in text or "\n" in text or "\r" in text:
        raise UsageError(f"{where}: text contains a TAB or line break, which the FB format cannot hold")


def _conversation_from_turns(items: list[DialogItem], golds: list[str], where: str) -> Conversation:
    """Rebuild FB lines: turn k's new lines = context_k minus (context_{k-1} + gold_{k-1}); all but the last are
    facts, the last is the user's utterance, answered by gold_k."""
    conv = Conversation()
    prev: list[str] | None = None
    for it, gold in zip(items, golds):
        ctx = it.utterances
        if prev is None:
            new = ctx
        else:
            n = len(prev)
            if ctx[:n] != prev:
                raise UsageError(
                    f"{where}: item {it.dialog_id} (turn {it.turn}) does not continue the previous turn of "
                    f"conversation {it.conversation_id} (its context is not the previous context + gold)"
                )
            new = ctx[n:]
        if not new:
            raise UsageError(f"{where}: item {it.dialog_id} adds no user utterance to its conversation")
        for f in new[:-1]:
            _check_fb_text(f, where)
            conv.lines.append(Line(f, None))
        _check_fb_text(new[-1], where)
        _check_fb_text(gold, where)
        conv.lines.append(Line(new[-1], gold))
        prev = [*ctx, gold]
    return conv


def _conversation_from_item(item: DialogItem, gold: str, where: str) -> Conversation:
    """One conversation from a flat DSTC6 item: facts by shape, other lines alternate user/bot, ending with user."""
    speakers: list[str] = []  # per utterance: "fact", "user" or "bot"
    expect = "user"
    for u in reversed(item.utterances):
        if is_fact_text(u):
            speakers.append("fact")
        else:
            speakers.append(expect)
            expect = "bot" if expect == "user" else "user"
    speakers.reverse()
    silence = "<SILENCE>" if any("<SILENCE>" in u for u in item.utterances) else "<silence>"
    conv = Conversation()
    pending_user: str | None = None
    for u, who in zip(item.utterances, speakers):
        _check_fb_text(u, where)
        if who == "fact":
            conv.lines.append(Line(u, None))
        elif who == "user":
            pending_user = u
        else:
            conv.lines.append(Line(pending_user if pending_user is not None else silence, u))
            pending_user = None
    _check_fb_text(gold, where)
    conv.lines.append(Line(pending_user if pending_user is not None else silence, gold))
    return conv


@dataclass
class BabiExport:
    dialogs: Path
    candidates: Path
    conversations: int
    items: int


def dstc6_to_babi(
    dataset_path: str | Path,
    answers_path: str | Path | None,
    out_path: str | Path,
    candidates_out: str | Path | None = None,
) -> BabiExport:
    """Write a DSTC6 dataset (+ answer key, or embedded ``answer`` fields) as an FB dialog file and a candidates file.

    The candidates file lists every distinct candidate text in first-seen order (``1 <text>`` lines); default path
    ``<out stem>-candidates.txt`` beside ``out_path``.
    """
    dataset_path = Path(dataset_path)
    items = read_dataset(dataset_path)
    if not items:
        raise UsageError(f"{dataset_path}: the dataset holds no items")
    if answers_path is not None:
        data = load_json_file(answers_path)
        if not isinstance(data, list) or not all(
            isinstance(e, dict) and isinstance(e.get("lst_candidate_id"), list) and "dialog_id" in e for e in data
        ):
            raise UsageError(f"{answers_path}: not an answer-key file (expected [{{dialog_id, lst_candidate_id}}])")
        try:
            gold_ids = gold_from_answer_key_json(data)
        except (KeyError, TypeError):
            raise UsageError(f"{answers_path}: malformed answer-key entry (needs candidate_id and rank)") from None
    else:
        gold_ids = {it.dialog_id: it.answer.candidate_id for it in items if it.answer is not None}
    golds: dict[str, str] = {}
    for it in items:
        gid = gold_ids.get(it.dialog_id)
        if gid is None:
            raise UsageError(
                f"{answers_path or dataset_path}: no gold for dialog {it.dialog_id} "
                "(pass --answers with the answer key, or use a dataset with 'answer' fields)"
            )
        text = next((c.utterance for c in it.candidates if c.candidate_id == gid), None)
        if text is None:
            raise UsageError(f"{answers_path}: the gold of dialog {it.dialog_id} is not among its candidates")
        golds[it.dialog_id] = text

    where = str(dataset_path)
    groups: dict[str, list[DialogItem]] = {}
    order: list[tuple[str, object]] = []
    for i, it in enumerate(items):
        if it.conversation_id is None:
            order.append(("item", i))
        else:
            if it.conversation_id not in groups:
                order.append(("conv", it.conversation_id))
            groups.setdefault(it.conversation_id, []).append(it)
    conversations: list[Conversation] = []
    for kind, key in order:
        if kind == "item":
            it = items[key]  # type: ignore[index]
            conversations.append(_conversation_from_item(it, golds[it.dialog_id], where))
        else:
            group = groups[key]  # type: ignore[index]
            if all(g.turn is not None for g in group):
                group = sorted(group, key=lambda g: g.turn)
            conversations.append(_conversation_from_turns(group, [golds[g.dialog_id] for g in group], where))

    texts: dict[str, None] = {}
    for it in items:
        for c in it.candidates:
            if c.utterance not in texts:
                _check_fb_text(c.utterance, where)
                texts[c.utterance] = None
    out_path = Path(out_path)
    cand_path = Path(candidates_out) if candidates_out else out_path.with_name(out_path.stem + "-candidates.txt")
    write_fb_conversations(out_path, conversations)
    write_candidates(cand_path, texts)
    return BabiExport(out_path, cand_path, len(conversations), len(items))


__all__ = [
    "BABI_CANDIDATES",
    "BABI_SPLITS",
    "BABI_TASK_FILES",
    "BabiExport",
    "ConvertResult",
    "babi_candidates_path",
    "babi_dataset_name",
    "babi_path",
    "babi_splits",
    "babi_test_splits",
    "babi_to_dstc6",
    "dstc6_to_babi",
    "dump_json_file",
    "sample_candidates",
]
