"""Write a whole challenge in the DSTC6 layout (the Python API behind ``dialeval simulate``).

Layout of ``out_dir``::

    extendedkb1.txt, extendedkb2.txt      the KBs used, in the real KB file format
    simulator.json                         the generator parameters (to regenerate or describe the data)
    trn/dialog-task{N}...-trn{n}.json      training items (kb1, base slots), with "answer"
    tst1..tst4/dialog-task{N}...-tst{n}.json and <stem>.answers.json beside them
    fb/<split>/<stem>.txt, <stem>-candidates.txt   bAbI FB text (full-conversation mode only)
    babi/dialog-babi-task{N}-…-{trn,tst,tst-OOV}.txt, dialog-babi-candidates.txt
                                                   the same conversations in the bAbI release's layout, so that
                                                   ``dialeval score --benchmark babi --data <out>/babi`` reads them

Every (split, task) file has its own RNG seeded from ``(seed, split, task)``: generating a subset of the splits
gives byte-identical files to the full run, and files do not depend on generation order.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from dialeval.core.errors import UsageError
from dialeval.files import outdir
from dialeval.files.write import atomic_write_text
from dialeval.formats.convert import BABI_CANDIDATES, BABI_TASK_FILES
from dialeval.formats.dstc6 import DSTC6_SPLITS, answers_file_name, dataset_file_name, write_dataset, write_results
from dialeval.formats.fbdialog import Conversation as FbConversation
from dialeval.formats.fbdialog import Line, write_candidates, write_conversations
from dialeval.simulator.kb import DEFAULT_KB_SEED, build_kb, write_kb
from dialeval.simulator.tasks import Conversation, ItemOptions, TaskSimulator, simulate_items

GENERATOR_VERSION = "2"
"""Bumped whenever the same parameters would produce different files (it names the default-challenge cache)."""

TRAIN_SPLIT = "trn"
ALL_SPLITS = (TRAIN_SPLIT, *DSTC6_SPLITS)
TASKS = (1, 2, 3, 4, 5)

CHALLENGE_FOLDER = outdir.OutputFolder(
    marker=".dialeval-simulate",
    names=re.compile(r"^(\.dialeval-simulate|extendedkb[12]\.txt|simulator\.json|trn|tst[1-4]|fb|babi)$"),
    made_by="a challenge that simulate wrote",
    legacy=("simulator.json",),  # written before the marker existed
    note="a challenge simulated by dialeval: `simulate --force` replaces this folder\n",
)
"""The folder ``dialeval simulate --out`` writes: ``--force`` replaces a folder holding only what simulate writes
(its marker among it), never a folder holding anything else."""


def atomic_output_dir(out_dir: str | Path, force: bool = False) -> AbstractContextManager[Path]:
    """A new folder to generate into, swapped in for ``out_dir`` once complete (:data:`CHALLENGE_FOLDER`'s rule:
    an absent or empty ``out_dir``, or with ``force`` one that simulate wrote; anything else is refused)."""
    return outdir.atomic_output_dir(out_dir, CHALLENGE_FOLDER, force)


def parse_candidates(spec: str | int | tuple[int, int] | Sequence[int]) -> tuple[int, int]:
    """``"7-10"``, ``"7"``, ``7`` or ``(7, 10)`` -> (low, high); at least 2 candidates (gold + 1 distractor)."""
    try:
        if isinstance(spec, str):
            lo_s, sep, hi_s = spec.strip().partition("-")
            lo, hi = int(lo_s), int(hi_s) if sep else int(lo_s)
        elif isinstance(spec, int):
            lo = hi = spec
        else:
            lo, hi = (int(x) for x in spec)
    except (ValueError, TypeError):
        raise UsageError(f"--candidates: expected N or LOW-HIGH, got {spec!r}") from None
    if lo < 2 or hi < lo or hi > 1000:
        raise UsageError(f"--candidates: need 2 <= LOW <= HIGH <= 1000, got {lo}-{hi}")
    return lo, hi


def parse_splits(spec: str | Sequence[str] | None) -> list[str]:
    if spec is None:
        return list(ALL_SPLITS)
    names = [s.strip() for s in spec.split(",")] if isinstance(spec, str) else [str(s).strip() for s in spec]
    names = [s for s in names if s]
    bad = [s for s in names if s not in ALL_SPLITS]
    if bad or not names:
        raise UsageError(f"--splits: unknown split(s) {', '.join(bad) or '(none)'} (choose from {', '.join(ALL_SPLITS)})")
    return [s for s in ALL_SPLITS if s in names]


BABI_SPLIT_OF = {TRAIN_SPLIT: "trn", "tst1": "tst", "tst2": "tst-OOV"}
"""bAbI split of a simulated split: tst1 shares the training KB (bAbI's tst), tst2 is the other, out-of-vocabulary
KB (bAbI's tst-OOV); tst3/tst4 add dietary restrictions, which bAbI has no split for."""


def split_spec(split: str) -> tuple[str, bool, str | None]:
    """(kb, restrictions, request partition) of a split."""
    if split == TRAIN_SPLIT:
        return "kb1", False, "train"
    kb, restr = DSTC6_SPLITS[split]
    return kb, restr, ("test" if kb == "kb1" else None)


def split_rng(seed: int, split: str, task: int) -> random.Random:
    return random.Random(f"dialeval-sim:{seed}:{split}:{task}")


def fb_conversations(convs: list[Conversation]) -> list[FbConversation]:
    """Conversations as bAbI FB lines: facts alone, every user utterance paired with the bot's reply."""
    out = []
    for conv in convs:
        fact_pos = {i for a, b in conv.facts for i in range(a, b)}
        bots = set(conv.bots)
        lines: list[Line] = []
        utts = conv.utts
        i = 0
        while i < len(utts):
            if i in fact_pos:
                lines.append(Line(utts[i], None))
                i += 1
            else:  # a user utterance, always followed by the bot's reply
                assert i + 1 in bots
                lines.append(Line(utts[i], utts[i + 1]))
                i += 2
        out.append(FbConversation(lines))
    return out


def generate_challenge(
    out_dir: str | Path,
    seed: int = 0,
    n_train: int = 10000,
    n_test: int = 1000,
    candidates: str | int | tuple[int, int] = (7, 10),
    context_distractors: float = 0.5,
    full_conversations: bool = False,
    splits: str | Sequence[str] | None = None,
    tasks: Sequence[int] = TASKS,
    kb_seed: int = DEFAULT_KB_SEED,
    write_items: bool = True,
) -> Path:
    """Generate a DSTC6-style challenge into ``out_dir`` (created if needed; existing files are overwritten).

    ``n_train``/``n_test`` count items per task file (conversations in full-conversation mode, where every bot turn
    becomes an item). ``n_train=0`` skips the training split. Returns ``out_dir``. Use
    :func:`atomic_output_dir` (as the CLI does) to never leave a half-written directory behind.
    ``write_items=False`` writes only the KBs and ``simulator.json`` (the embedded default challenge adds its
    splits one at a time, as commands need them).
    """
    out = Path(out_dir)
    lohi = parse_candidates(candidates)
    if not 0.0 <= float(context_distractors) <= 1.0:
        raise UsageError(f"context_distractors must be within 0..1, got {context_distractors}")
    if n_train < 0 or n_test < 1:
        raise UsageError(f"need n_train >= 0 and n_test >= 1, got {n_train} and {n_test}")
    tasks = sorted(set(int(t) for t in tasks))
    if not tasks or any(t not in TASKS for t in tasks):
        raise UsageError(f"--tasks: must be among 1-5, got {','.join(map(str, tasks)) or 'none'}")
    names = parse_splits(splits)
    if n_train == 0:
        names = [s for s in names if s != TRAIN_SPLIT]
    opts = ItemOptions(lohi, float(context_distractors))
    out.mkdir(parents=True, exist_ok=True)
    used_kbs = sorted({split_spec(s)[0] for s in names})
    for kb in used_kbs:
        write_kb(out / f"extendedkb{kb[-1]}.txt", build_kb(kb, kb_seed))
    params = {
        "generator": "dialeval-simulator",
        "version": GENERATOR_VERSION,
        "seed": seed,
        "kb_seed": kb_seed,
        "n_train": n_train,
        "n_test": n_test,
        "candidates": list(lohi),
        "context_distractors": float(context_distractors),
        "full_conversations": bool(full_conversations),
        "splits": names,
        "tasks": tasks,
    }
    atomic_write_text(out / "simulator.json", json.dumps(params, indent=2, sort_keys=True) + "\n")
    babi_bots: set[str] = set()
    for split in names if write_items else ():
        kb_name, restr, partition = split_spec(split)
        kb = build_kb(kb_name, kb_seed)
        train = split == TRAIN_SPLIT
        n = n_train if train else n_test
        kind = f"trn{n}" if train else f"tst{n}"
        for task in tasks:
            sim = TaskSimulator(task, kb, restr, split_rng(seed, split, task), partition)
            items, golds, convs = simulate_items(sim, n, opts, train, full_conversations)
            name = dataset_file_name(task, kb_name, restr, kind)
            write_dataset(out / split / name, items)
            if not train:
                write_results(out / split / answers_file_name(name), [(it.dialog_id, [g]) for it, g in zip(items, golds)])
            if full_conversations:
                stem = name[: -len(".json")]
                write_conversations(out / "fb" / split / f"{stem}.txt", fb_conversations(convs))
                bot_texts = sorted({c.utts[p] for c in convs for p in c.bots})
                write_candidates(out / "fb" / split / f"{stem}-candidates.txt", bot_texts)
                if split in BABI_SPLIT_OF:
                    babi_bots.update(bot_texts)
                    babi_name = f"{BABI_TASK_FILES[task]}-{BABI_SPLIT_OF[split]}.txt"
                    write_conversations(out / "babi" / babi_name, fb_conversations(convs))
    if babi_bots:
        # bAbI ranks every bot turn against one candidate file shared by tasks 1-5: the union of the bot replies
        write_candidates(out / "babi" / BABI_CANDIDATES[1], sorted(babi_bots))
    return out


