"""Describe a challenge directory: the numbers used to check the simulator's realism against the real files.

Works on any directory in the DSTC6 layout (ours or the real ``../shared/data/dstc6``). Per split and task:
items, candidates per item (mean, min, max, mode, distribution), utterances per item, vocabulary size
(distinct whitespace tokens in utterances and candidates), and the share of distractors whose text occurs in the
item's own context ("copied from the context"; needs the gold: the answer key beside the file or the training
``answer``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.formats.dstc6 import ANSWERS_SUFFIX, answers_file_name, gold_from_answer_key_json, parse_dataset_name
from dialeval.formats.jsonio import load_json_file


@dataclass
class TaskStats:
    split: str
    task: int
    file: str
    items: int
    candidates_mean: float
    candidates_min: int
    candidates_max: int
    candidates_mode: int
    candidates_distribution: dict[int, int]
    utterances_mean: float
    vocabulary: int
    context_distractor_share: float | None
    conversations: int | None

    def to_json(self) -> dict:
        d = asdict(self)
        d["candidates_distribution"] = {str(k): v for k, v in sorted(self.candidates_distribution.items())}
        return d


def file_stats(path: Path, split: str, task: int) -> TaskStats:
    data = load_json_file(path)
    if not isinstance(data, list) or not data:
        raise UsageError(f"{path}: expected a non-empty JSON array of items")
    key_path = path.with_name(answers_file_name(path.name))
    gold: dict[str, str] = {}
    if key_path.is_file():
        gold = gold_from_answer_key_json(load_json_file(key_path))
    ncands: Counter[int] = Counter()
    n_utts = 0
    vocab: set[str] = set()
    ctx = tot = 0
    have_gold = True
    convs: set[str] = set()
    try:
        for it in data:
            cands = it["candidates"]
            utts = it["utterances"]
            ncands[len(cands)] += 1
            n_utts += len(utts)
            for u in utts:
                vocab.update(u.split())
            for c in cands:
                vocab.update(c["utterance"].split())
            if "conversation_id" in it:
                convs.add(it["conversation_id"])
            g = gold.get(it["dialog_id"]) or (it.get("answer") or {}).get("candidate_id")
            if g is None:
                have_gold = False
                continue
            seen = set(utts)
            for c in cands:
                if c["candidate_id"] != g:
                    tot += 1
                    ctx += c["utterance"] in seen
    except (KeyError, TypeError, AttributeError):
        raise UsageError(f"{path}: not a DSTC6 dataset file (items need dialog_id, utterances, candidates)") from None
    n = len(data)
    mode = max(sorted(ncands), key=lambda k: ncands[k])
    return TaskStats(
        split=split,
        task=task,
        file=path.name,
        items=n,
        candidates_mean=round(sum(k * v for k, v in ncands.items()) / n, 4),
        candidates_min=min(ncands),
        candidates_max=max(ncands),
        candidates_mode=mode,
        candidates_distribution=dict(sorted(ncands.items())),
        utterances_mean=round(n_utts / n, 4),
        vocabulary=len(vocab),
        context_distractor_share=round(ctx / tot, 4) if have_gold and tot else None,
        conversations=len(convs) or None,
    )


def challenge_stats(root: str | Path, splits: list[str] | None = None) -> list[TaskStats]:
    """Stats for every dataset file under ``root``'s split folders (sorted by split, then task)."""
    root = Path(root)
    if not root.is_dir():
        raise UsageError(f"{root}: not a directory")
    out: list[TaskStats] = []
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        if splits is not None and d.name not in splits:
            continue
        for f in sorted(d.iterdir()):
            task = parse_dataset_name(f.name)
            if task is None or f.name.endswith(ANSWERS_SUFFIX) or not f.is_file():
                continue
            out.append(file_stats(f, d.name, task))
    if not out:
        if any(parse_dataset_name(f.name) is not None for f in root.iterdir() if f.is_file()):  # sim/tst1 for sim
            raise UsageError(f"{root}: a split folder (it holds the dataset files); give the challenge folder above "
                             f"it ({root.resolve().parent.name}), whose split folders hold them")
        if any(root.glob("dialog-babi-task*-*.txt")):  # the bAbI release: FB text, no DSTC6 split folders
            raise UsageError(f"{root}: holds bAbI dialog text files, not DSTC6 split folders: stats describes the "
                             f"DSTC6 layout (convert a task first: `dialeval convert babi-to-dstc6 --data {root} --task "
                             "N --split tst --out DIR`)")
        raise UsageError(f"{root}: no dialog-task*.json dataset files in its split folders")
    return out
