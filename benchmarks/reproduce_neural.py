"""Reproduce the neural rows of Bordes & Weston Table 2 on the real bAbI dialog data (slow; run by hand).

    DIALEVAL_TORCH_THREADS=1 python3 benchmarks/reproduce_neural.py run --models memn2n-match --tasks 1-6 \\
        --data ../shared/data/babi-dialog --records /tmp/neural.jsonl [--save-models DIR]
    python3 benchmarks/reproduce_neural.py render --records /tmp/neural.jsonl --out submissions/baselines

``run`` trains each model per task on trn with the settings that produced the stored rows
(``dialeval.baselines.reproduce.TABLE2_SETTINGS``: grid, epoch cap, patience, KB file; the epoch is chosen on dev),
``--full-grid`` / ``--epochs`` / ``--patience`` / ``--param`` override them; it scores tst and
tst-OOV and appends one record per (model, task, split) to the JSONL file as soon as it is known, so several
``run`` processes (e.g. one per model) can fill one file and partial results survive an interruption.
``render`` writes ``babi-neural.md`` / ``babi-neural.json``. ``sign`` adds each row's signature (as ``dialeval
reproduce babi`` signs a row: the data identity and score options, model, settings digest, seed) to stored tables
made before rows were signed, from the rows' own fields and the data they were made on (no retraining; every
other byte of a row stays):

    python3 benchmarks/reproduce_neural.py sign --data ../shared/data/babi-dialog submissions/baselines/babi-table2.json

Records use the fields of
``submissions/baselines/babi-table2.json`` plus ``examples_per_second`` / ``wall_seconds``.
The same rows come from ``dialeval reproduce babi --models supervised-embeddings,memn2n,memn2n-match``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

COLUMNS = {"supervised-embeddings": "supervised embeddings", "memn2n": "MemNN", "memn2n-match": "MemNN + match"}


def _tasks(spec: str) -> list[int]:
    out: set[int] = set()
    for part in spec.split(","):
        a, _, b = part.partition("-")
        out.update(range(int(a), int(b or a) + 1))
    return sorted(out)


def _commit() -> str:
    root = Path(__file__).resolve().parents[1]
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def run(args) -> None:
    from dialeval.baselines.data import babi_test_splits, load_babi_candidates, load_babi_items
    from dialeval.baselines.registry import create
    from dialeval.baselines.reproduce import evaluate_on_benchmark, model_params, record_signature, split_record

    for task in _tasks(args.tasks):
        cands = load_babi_candidates(args.data, task)
        trn = load_babi_items(args.data, task, "trn", None, cands)
        dev = load_babi_items(args.data, task, "dev", None, cands)
        for name in args.models.split(","):
            params = model_params(name, task, args.data)
            if args.full_grid:
                params.pop("grid", None)
            if args.epochs:
                params["epochs"] = args.epochs
            if args.patience:
                params["patience"] = args.patience
            for kv in args.param or []:
                k, _, v = kv.partition("=")
                params[k] = json.loads(v)
            model = create(name, seed=args.seed, **params)
            t0 = time.perf_counter()
            model.fit(trn, dev)
            fit_s = time.perf_counter() - t0
            if args.save_models:
                model.save(Path(args.save_models) / name / f"task{task}")
            desc = model.describe()
            for split in babi_test_splits(task):
                items = load_babi_items(args.data, task, split, None, cands)
                # scored by the babi benchmark, recorded as `dialeval reproduce babi` records it, plus this
                # script's fields (the dev selection top-level, not inside config)
                resp, dial, infer_s = evaluate_on_benchmark(model, items, args.data, task, split)
                rec = split_record(name, task, split, items, resp, dial, fit_s, infer_s,
                                   {k: v for k, v in desc.items() if k != "dev_selection"})
                rec.update({"examples_per_second": desc.get("examples_per_second"),
                            "dev_selection": desc.get("dev_selection"), "seed": args.seed,
                            "torch_threads": desc.get("torch_threads")})
                rec["signature"] = record_signature(args.data, rec)
                with open(args.records, "a", encoding="utf-8") as f:
                    f.write(json.dumps(rec, sort_keys=True) + "\n")
                print(f"T{task} {split:<7} {name:<22} {resp:6.2f} ({dial:5.1f})  paper {rec['paper_per_response']}  "
                      f"fit {fit_s:.0f}s {desc.get('examples_per_second')} ex/s", flush=True)


def render(args) -> None:
    recs = [json.loads(line) for line in open(args.records, encoding="utf-8") if line.strip()]
    latest = {(r["model"], r["task"], r["split"]): r for r in recs}  # a re-run replaces older rows
    order = {m: i for i, m in enumerate(COLUMNS)}
    rows = sorted(latest.values(), key=lambda r: (order.get(r["model"], 9), r["task"], r["split"] != "tst"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "babi-neural.json").write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    lines = [
        "# bAbI dialog: neural baselines vs Bordes & Weston Table 2",
        "",
        f"- command: `{args.command}`",
        f"- commit: `{args.commit or _commit()}`; seed 0 (torch.manual_seed + numpy); "
        f"torch threads per process: {sorted({r.get('torch_threads') for r in rows} - {None})}",
        "- metric: test per-response accuracy % (per-dialog % in parentheses) over the full candidate file "
        "(4,212 candidates T1-T5, 2,407 T6); target: within ±5 points of the paper (✓ hit, ✗ miss).",
        "- examples/s = training examples per second of training time (every grid configuration and epoch, the "
        "per-epoch dev evaluation included); wall = fit (encoding, grid, dev evaluation) + scoring of the test "
        "split, seconds, one torch thread per process, two processes at a time on a shared 2-core CPU.",
        "",
        "| model | task | ours | paper | Δ | target | dev % | chosen (grid / epoch) | examples/s | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        p = r["paper_per_response"]
        cfg = r["config"].get("config", {})
        chosen = ", ".join(f"{k}={cfg[k]}" for k in ("hops", "embedding_size", "lr", "epoch") if k in cfg)
        lab = f"T{r['task']}" + (" OOV" if r["split"] == "tst-OOV" else "")
        paper = "—" if p is None else f"{p:.1f} ({r['paper_per_dialog']:.1f})"
        delta = "" if p is None else f"{r['per_response'] - p:+.1f}"
        mark = {True: "✓", False: "✗", None: ""}[r["meets_target"]]
        lines.append(
            f"| {r['model']} | {lab} | {r['per_response']:.1f} ({r['per_dialog']:.1f}) | {paper} | {delta} | "
            f"{mark} | {r['config'].get('dev_per_response')} | {chosen} | {r.get('examples_per_second')} | "
            f"{r.get('wall_seconds', 0):.0f} |"
        )
    misses = [r for r in rows if r["meets_target"] is False]
    lines += ["", f"Targets missed: {len(misses)} of {sum(r['meets_target'] is not None for r in rows)}.", ""]
    if args.notes and os.path.exists(args.notes):
        lines += [Path(args.notes).read_text(encoding="utf-8").rstrip(), ""]
    (out / "babi-neural.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out / 'babi-neural.md'} and .json ({len(rows)} rows)")


TABLE2_KEYS = ("model", "task", "split", "per_response", "per_dialog", "paper_per_response", "paper_per_dialog",
               "train_seconds", "infer_seconds", "n_items", "n_conversations", "config", "meets_target", "signature")


def table2(args) -> None:
    """Append the neural rows to babi-table2.json in its record format (rows of these models are replaced)."""
    from dialeval.baselines.reproduce import meets_target
    from dialeval.formats.jsonio import dump_json_file

    recs = [json.loads(line) for line in open(args.records, encoding="utf-8") if line.strip()]
    latest = {(r["model"], r["task"], r["split"]): r for r in recs}
    order = {m: i for i, m in enumerate(COLUMNS)}
    mine = []
    for r in sorted(latest.values(), key=lambda r: (order.get(r["model"], 9), r["task"], r["split"] != "tst")):
        row = {k: r[k] for k in TABLE2_KEYS}
        row["meets_target"] = meets_target(row)
        mine.append(row)
    path = Path(args.table)
    old = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
    if not isinstance(old, list) or any(set(r) != set(TABLE2_KEYS) for r in old if isinstance(r, dict)):
        raise SystemExit(f"{path}: not the expected record list; not touched")
    kept = [r for r in old if r["model"] not in COLUMNS]
    dump_json_file(path, kept + mine)
    print(f"{path}: {len(kept)} rows kept, {len(mine)} neural rows appended")


JSON_LAYOUTS = ({"ensure_ascii": True}, {"indent": 1, "sort_keys": True}, {"indent": 1}, {"indent": 1, "ensure_ascii": False})
"""How the stored tables are written: ``dump_json_file``'s one line, and the indented forms of ``render``."""


def sign(args) -> None:
    """Add each row's signature to stored tables, in each file's own layout (no number changes: each is re-written
    as it was read)."""
    from dialeval.baselines.reproduce import sign_records

    for path in map(Path, args.tables):
        raw = path.read_text(encoding="utf-8")
        rows = json.loads(raw)
        layout = next((kw for kw in JSON_LAYOUTS for end in ("", "\n") if json.dumps(rows, **kw) + end == raw), None)
        if layout is None:
            raise SystemExit(f"{path}: not in a layout this script writes; not touched")
        end = "\n" if raw.endswith("\n") else ""
        path.write_text(json.dumps(sign_records(args.data, rows), **layout) + end, encoding="utf-8")
        print(f"{path}: {len(rows)} rows signed")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--data", default="../shared/data/babi-dialog")
    r.add_argument("--models", default="supervised-embeddings,memn2n,memn2n-match")
    r.add_argument("--tasks", default="1-6")
    r.add_argument("--records", required=True)
    r.add_argument("--seed", type=int, default=0)
    r.add_argument("--save-models", default=None)
    r.add_argument("--full-grid", action="store_true", help="Use each model's current GRID on every task.")
    r.add_argument("--epochs", type=int, default=None, help="Epoch cap (default: TABLE2_SETTINGS, else the model's).")
    r.add_argument("--patience", type=int, default=None, help="Early-stopping patience (default: as --epochs).")
    r.add_argument("--param", action="append", help="Model parameter override KEY=JSON, e.g. lr=0.001 or grid=null.")
    g = sub.add_parser("render")
    g.add_argument("--records", required=True)
    g.add_argument("--out", default="submissions/baselines")
    g.add_argument("--command", default="DIALEVAL_TORCH_THREADS=1 python3 benchmarks/reproduce_neural.py run ...")
    g.add_argument("--commit", default=None)
    g.add_argument("--notes", default=None, help="Markdown file appended as the closing note.")
    t = sub.add_parser("table2")
    t.add_argument("--records", required=True)
    t.add_argument("--table", default="submissions/baselines/babi-table2.json")
    s = sub.add_parser("sign")
    s.add_argument("--data", default="../shared/data/babi-dialog", help="The data the rows were made on.")
    s.add_argument("tables", nargs="+")
    args = ap.parse_args(argv)
    {"run": run, "render": render, "table2": table2, "sign": sign}[args.cmd](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
