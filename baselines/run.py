"""Run a registered baseline on a DSTC6-layout challenge split and write standard result files."""

from __future__ import annotations

import time
from pathlib import Path

from dialeval.core.errors import UsageError


def run_baseline(
    name: str,
    challenge: str | Path,
    split: str,
    out: str | Path,
    seed: int = 0,
    top_k: int | None = 10,
    echo=None,
) -> list[Path]:
    """Rank every dataset file of ``<challenge>/<split>`` with baseline ``name`` and write result files.

    Training: per task, on ``<challenge>/trn`` (items with ``answer``) with ``<challenge>/dev`` for selection when
    present. ``out`` ending in ``.json`` = one result file for all tasks (dialog ids must be unique across files);
    otherwise a directory in the official layout ``<out>/<split>/<stem>.answers.json``. Returns the written paths.
    """
    from dialeval.baselines.data import load_challenge_split_items, top_k_ids
    from dialeval.baselines.registry import create, needs_training
    from dialeval.files.write import check_output
    from dialeval.formats.dstc6 import Challenge, read_dataset, write_results

    echo = echo or (lambda s: None)
    root = Path(challenge)
    if not root.is_dir():
        raise UsageError(f"challenge directory {root} does not exist")
    sp = Challenge(root).split(split)
    single = str(out).endswith(".json")
    targets = [Path(out)] if single else [Path(out) / split / tf.answers_name for _, tf in sorted(sp.files.items())]
    for target in targets:  # before any training: a refused output costs no work
        check_output(target, parents=True)
    model0 = create(name, seed=seed)
    train = load_challenge_split_items(root, "trn", require_answers=True) if split != "trn" else {}
    dev_all = load_challenge_split_items(root, "dev", require_answers=False) if split != "dev" else {}
    all_rankings: list[tuple[str, list[str]]] = []
    seen: dict[str, str] = {}
    written: list[Path] = []
    pending: list[tuple[Path, list]] = []
    for task, tf in sorted(sp.files.items()):
        model = model0 if task == min(sp.files) else create(name, seed=seed)
        tr = train.get(task, [])
        dev = [it for it in dev_all.get(task, []) if it.answer is not None] or None
        if needs_training(name, model) and not tr:
            raise UsageError(
                f"baseline {name!r} needs training data: {root / 'trn'} has no dialog-task{task}*.json file with "
                "'answer' fields (random and rule-based need none)"
            )
        t0 = time.perf_counter()
        model.fit(tr, dev)
        t1 = time.perf_counter()
        items = read_dataset(tf.path)
        model.prepare_file(tf.path.name)
        ranked = top_k_ids(model, items, top_k)
        t2 = time.perf_counter()
        rankings = [(it.dialog_id, r) for it, r in zip(items, ranked)]
        echo(f"task {task}: {len(items)} items ranked (fit {t1 - t0:.1f}s, rank {t2 - t1:.1f}s) from {tf.path.name}")
        if single:
            for d, _ in rankings:
                if d in seen:
                    raise UsageError(
                        f"dialog id {d!r} occurs in both {seen[d]} and {tf.path.name}: use a directory --out"
                    )
                seen[d] = tf.path.name
            all_rankings.extend(rankings)
        else:  # written once every task is ranked: an interrupted run leaves no folder of some tasks' files
            pending.append((Path(out) / split / tf.answers_name, rankings))
    for path, rankings in pending:
        write_results(path, rankings)
        written.append(path)
    if single:
        write_results(out, all_rankings)
        written.append(Path(out))
    return written
