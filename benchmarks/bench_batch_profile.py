"""Training throughput of the torch baselines at batch 32 (the CPU setting) against the device profile's batch,
measured on this machine's CPU in one run, and the host work per example that a GPU cannot take over.

    python3 benchmarks/bench_batch_profile.py [--data ../shared/data/babi-dialog] [--task 1] [--examples 3072]

For each model (supervised embeddings, MemN2N, MemN2N + match, the stored Table 2 settings of the task): the
trainer's own ``_train_epoch`` over the same ``--examples`` training items at batch 32 and at the profile's batch
(``training_profile(..., forced=True)``: batch and learning rate as a GPU run gets them), interleaved
``--repeat`` times (the machine may be shared: the best run counts), examples/s and the ratio profile / 32.

Then the host side of each step alone, over the same items: ``DeviceSplit.batch`` for the meta device (the
distinct utterance rows, the match-pair offsets, the one-buffer copy: what the host does for a GPU, the device's
share costing nothing) and, for supervised embeddings, ``sample_negatives`` (100 draws per example from the seeded
CPU generator and their distinct set). On a GPU these run on the host while the device works, so
µs per example × examples/s is the share of one host core they take; at the profile's batch it must stay well
below the device's rate. Prints one table; run with ``DIALEVAL_TORCH_THREADS=1`` for one-thread numbers.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("supervised-embeddings", "memn2n", "memn2n-match")


def prepare(name: str, task: int, data_dir: Path, trn):
    """What ``TorchRanker.fit`` builds before its first epoch: (model, torch, the split on the CPU, the same split
    on the meta device, candidates)."""
    from dialeval.baselines._torchutil import (
        CandidateSet,
        DeviceSplit,
        DeviceTable,
        EncodedItems,
        UtteranceTable,
        build_vocab,
        setup_torch,
        training_candidates,
    )
    from dialeval.baselines.registry import create
    from dialeval.baselines.reproduce import model_params

    params = {k: v for k, v in model_params(name, task, data_dir).items() if k != "grid"}
    model = create(name, seed=0, progress=False, grid=None, **params)
    torch, device = setup_torch(0)
    device = torch.device("cpu")
    cands = training_candidates(trn)
    model.vocab = build_vocab(trn, cands)
    if model.match:
        model.lexicon = model._lexicon_for(trn, cands)
    cset = CandidateSet(cands, model.vocab, model.max_tokens)
    table = UtteranceTable(model.vocab, model.max_tokens)
    enc = EncodedItems(trn, table, model.memory_size, {c.utterance: i for i, c in enumerate(cands)})
    pairs = [cset.match_pairs(it, model.lexicon) for it in trn] if model.match else None
    split = DeviceSplit(torch, enc, DeviceTable(torch, table.array(), device), pairs)
    meta = DeviceSplit(torch, enc, DeviceTable(torch, table.array(), torch.device("meta")), pairs)
    return model, torch, split, meta, torch.from_numpy(cset.tokens)


def train_rate(model, torch, split, cand_t, order, forced: bool) -> tuple[float, dict]:
    """Examples/s of one ``_train_epoch`` over ``order`` with the profile on (``forced``) or off (batch 32)."""
    from dialeval.baselines._torchutil import training_profile

    config, profile = training_profile(model.current_config(), torch.device("cpu"), forced)
    torch.manual_seed(0)
    module = model.make_module(config, len(model.vocab))
    opt = model.make_optimizer(torch, module, config)
    gen = torch.Generator().manual_seed(0)
    t = time.perf_counter()
    total, finite, seen = model._train_epoch(torch, module, opt, config, split, order, cand_t, gen)
    float(total)
    return seen / (time.perf_counter() - t), profile


def host_us(model, torch, meta_split, cand_t, order, batch: int) -> tuple[float, float]:
    """µs per example of the host-side batch preparation and (supervised embeddings) negative sampling.

    The batches are made for the meta device: the host computes what it computes for a GPU (the numpy work, the
    one-buffer copy), while the device's part (the row gather, the match-feature memset and scatter), which on
    the CPU would be counted here, costs nothing."""
    from dialeval.baselines.embeddings import sample_negatives

    gen = torch.Generator().manual_seed(0)
    prep = neg = 0.0
    for s in range(0, len(order), batch):
        idx = np.sort(order[s : s + batch])
        t = time.perf_counter()
        b, _, _ = meta_split.batch(torch, idx, cand_t.shape[0])
        prep += time.perf_counter() - t
        if model.name == "supervised-embeddings":
            t = time.perf_counter()
            sample_negatives(torch, b["answer_cpu"], cand_t.shape[0], model.negatives, gen)
            neg += time.perf_counter() - t
    return 1e6 * prep / len(order), 1e6 * neg / len(order)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "babi-dialog")
    ap.add_argument("--task", type=int, default=1)
    ap.add_argument("--examples", type=int, default=3072, help="training items per timed run (a multiple of 512)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args()
    if not args.data.is_dir():
        print(f"bAbI data not found at {args.data} (--data)", file=sys.stderr)
        return 2
    from dialeval.baselines._torchutil import BASE_BATCH, PROFILE_BATCH, torch_threads
    from dialeval.baselines.data import load_babi_candidates, load_babi_items

    cands = load_babi_candidates(args.data, args.task)
    trn = [it for it in load_babi_items(args.data, args.task, "trn", None, cands) if it.answer is not None]
    print(f"bAbI T{args.task}: {len(trn)} training items, {args.examples} timed per run, best of {args.repeat}; "
          f"torch threads {torch_threads()}; batch {BASE_BATCH} vs the profile's {PROFILE_BATCH}")
    print("| model | ex/s batch 32 | ex/s profile | ratio | profile lr | host µs/ex 32 (prep + negatives) | "
          "host µs/ex profile (prep + negatives) |")
    print("|---|---|---|---|---|---|---|")
    for name in args.models.split(","):
        model, torch, split, meta_split, cand_t = prepare(name, args.task, args.data, trn)
        order = np.random.default_rng(0).permutation(split.n)[: args.examples]
        best = {False: 0.0, True: 0.0}
        profile = {}
        for _ in range(args.repeat):
            for forced in (False, True):
                rate, p = train_rate(model, torch, split, cand_t, order, forced)
                best[forced] = max(best[forced], rate)
                profile[forced] = p
        h32 = host_us(model, torch, meta_split, cand_t, order, BASE_BATCH)
        hp = host_us(model, torch, meta_split, cand_t, order, PROFILE_BATCH)
        print(f"| {name} | {best[False]:.0f} | {best[True]:.0f} | {best[True] / best[False]:.2f}× | "
              f"{profile[True]['lr']:g} ({profile[True]['lr_rule']} × {profile[True]['lr_scale']:g}) | "
              f"{h32[0]:.1f} + {h32[1]:.1f} | {hp[0]:.1f} + {hp[1]:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
