"""Hostile inputs to ``dialeval embed``: hypothesis/reference texts, word-vector files and output targets.

Each case is one CLI run judged by :class:`hostile.Hostile` (exit code, one-line messages, no Python wording or
private paths, peak memory and time bounded). FIFOs and devices are refused before a byte is read (< 1 s,
< 100 MB); a pickle is never loaded unless ``--vectors-format gensim`` asks for it; ``--per-pair`` never
writes over an input. The vectors are small files the cases write (glove-text, read without gensim, for the
runs that score), so no case needs the default vectors package.
"""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hostile import BASE_RSS, MB, Hostile, fifo, input_bytes  # noqa: E402

pytest.importorskip("numba", reason="embedding metrics need the embeddings extra (numba)")
pytest.importorskip("gensim", reason="embedding metrics need the embeddings extra (gensim)")

WORDS = ["the", "a", "cat", "dog", "house", "runs", "blue", "green", "tree", "sky"]
N = 20
REFUSED_AT_ONCE = dict(seconds=1.0, rss=100 * MB)
GENSIM_RSS = 320 * MB
"""Runs that read word2vec files import gensim (about 110 MB) on top of numba (about 95 MB): their bound."""


class _Boom:
    """Unpickling this creates a file: proof that auto-detection never unpickles."""

    def __init__(self, target: str):
        self.target = target

    def __reduce__(self):
        return (open, (self.target, "w"))


def _texts(seed: int, n: int = N) -> str:
    return "".join(" ".join(WORDS[(seed + i * 7 + k * 3) % len(WORDS)] for k in range(5)) + "\n" for i in range(n))


def _vec(i: int, dim: int) -> list[float]:
    return [((i * 31 + k * 17) % 13 - 6) / 6 for k in range(dim)]


def build(tmp: Path, dry: bool = False) -> tuple[list[Hostile], dict]:
    """Every case, its files written under ``tmp`` (``dry``: the cases alone)."""
    marker = tmp / "UNPICKLED"
    f = {n: tmp / n for n in (
        "hyp.txt", "ref.txt", "ref19.txt", "glove.txt", "w2v_short.txt", "w2v_trunc.txt", "w2v_trunc.bin",
        "w2v_baddim.txt", "w2v_liar.bin", "w2v_liar.txt", "nan.txt", "binary.txt", "utf16.txt", "empty.txt",
        "empty_vec.txt", "vectors.txt", "badutf8.txt", "bigpair.txt", "one.txt", "glove_bad.txt", "gz.txt",
        "crlf_bom.txt", "pp_out.jsonl", "many_h.txt", "many_r.txt", "wide_h.txt", "wide_r.txt")}
    f["fifo"] = tmp / "fifo"
    f["dir"] = tmp / "folder"
    if not dry:
        tmp.mkdir(parents=True, exist_ok=True)
        f["hyp.txt"].write_text(_texts(1))
        f["ref.txt"].write_text(_texts(4))
        f["ref19.txt"].write_text(_texts(4, N - 1))
        f["glove.txt"].write_text("".join(f"{w} " + " ".join(f"{x:.4f}" for x in _vec(i, 8)) + "\n"
                                          for i, w in enumerate(WORDS)))
        # word2vec text with short vectors: "5 3" then "a 1 0 0": the sniff must stop at the first vector line
        f["w2v_short.txt"].write_text("10 3\n" + "".join(f"{w} {i % 2} {(i + 1) % 2} 0\n" for i, w in enumerate(WORDS)))
        # long numbers: the size check lets it through, and gensim's reader meets the end of the file
        f["w2v_trunc.txt"].write_text("10 3\n" + "".join(f"{w} 1.000000 0.000000 0.000000\n" for w in WORDS[:7]))
        dim = 4
        binary = b"".join(w.encode() + b" " + struct.pack(f"<{dim}f", *_vec(i, dim)) + b"\n"
                          for i, w in enumerate(WORDS))
        f["w2v_trunc.bin"].write_bytes(f"{len(WORDS)} {dim}\n".encode() + binary[: len(binary) // 2])
        f["w2v_baddim.txt"].write_text("10 3\n" + "".join(
            f"{w} 1 0 0\n" if i != 2 else f"{w} 1 0\n" for i, w in enumerate(WORDS)))
        f["w2v_liar.bin"].write_bytes(b"1000000000000 300\n" + binary)
        f["w2v_liar.txt"].write_text("400000000 3\n" + "".join(f"{w} 1 0 0\n" for w in WORDS))
        f["nan.txt"].write_text("".join(f"{w} nan 1 0 0\n" if w == "cat" else f"{w} 0.5 1 0 0\n" for w in WORDS))
        f["binary.txt"].write_bytes(b"the cat\0\x01\x02 runs\n" * N)
        f["utf16.txt"].write_bytes(_texts(1).encode("utf-16"))
        f["empty.txt"].write_bytes(b"")
        f["empty_vec.txt"].write_bytes(b"")
        f["vectors.txt"].write_bytes(__import__("pickle").dumps(_Boom(str(marker)), protocol=2))
        f["badutf8.txt"].write_bytes(_texts(1).encode()[:40] + b"\xff\xfe" + _texts(1).encode()[40:])
        f["bigpair.txt"].write_text("the cat\n" + "sky " * (9 << 20) + "\n" + "a\n" * (N - 2))
        f["one.txt"].write_text("the cat\n" * N)
        f["glove_bad.txt"].write_text("the 1 0\ncat 0 1\ndog x 1\n")
        f["gz.txt"].write_bytes(b"\x1f\x8b\x08\x00" + bytes(60))
        f["crlf_bom.txt"].write_bytes(b"\xef\xbb\xbf" + _texts(1).replace("\n", "\r\n").encode())
        # 500,000 short lines: memory must follow a block, not the files (4 MB each here)
        f["many_h.txt"].write_text("".join(f"{WORDS[i % 10]} {WORDS[i % 7]}\n" for i in range(500_000)))
        f["many_r.txt"].write_text("".join(f"{WORDS[i % 9]} {WORDS[i % 4]}\n" for i in range(500_000)))
        # one line of 1,000,000 words (6 MB), 300,000 of them distinct
        f["wide_h.txt"].write_text(" ".join(f"w{(i * 7919) % 300_000:05d}" if i % 3 else WORDS[i % 10]
                                            for i in range(1_000_000)) + "\n")
        f["wide_r.txt"].write_text("the cat\n")
        f["dir"].mkdir(exist_ok=True)
        fifo(f["fifo"])
    H, R, G = "hyp.txt", "ref.txt", "glove.txt"  # runs start in ``tmp``: names, never private temp paths

    def rel(p) -> str:
        return p.name if isinstance(p, Path) and p.parent == tmp else str(p)

    def embed(hyp=H, ref=R, vec=G, *more):
        return ["embed", "--hyp", rel(hyp), "--ref", rel(ref), "--vectors", rel(vec), *more]

    texts = [f["hyp.txt"], f["ref.txt"], f["glove.txt"]]
    cases = [
        Hostile("ok-glove", embed(), 0, texts),
        Hostile("ok-crlf-bom-hypotheses", embed(f["crlf_bom.txt"]), 0, [f["crlf_bom.txt"], f["ref.txt"], f["glove.txt"]]),
        Hostile("line-count-mismatch", embed(H, f["ref19.txt"]), 2, texts,
                message=r"^dialeval: error: hyp\.txt has 20 lines but ref19\.txt has 19$"),
        Hostile("binary-hypotheses", embed(f["binary.txt"]), 2, [f["binary.txt"]], message=r"binary data"),
        Hostile("utf16-hypotheses", embed(f["utf16.txt"]), 2, [f["utf16.txt"]], message=r"UTF-16"),
        Hostile("utf16-references", embed(H, f["utf16.txt"]), 2, [f["utf16.txt"]], message=r"UTF-16"),
        Hostile("gzip-hypotheses", embed(f["gz.txt"]), 2, [f["gz.txt"]], message=r"gzip"),
        Hostile("invalid-utf8-line", embed(f["badutf8.txt"]), 2, texts, message=r"badutf8\.txt:\d+: not valid UTF-8"),
        Hostile("empty-texts", embed(f["empty.txt"], f["empty.txt"]), 2, [], message=r"no lines to score"),
        Hostile("empty-vectors", embed(H, R, f["empty_vec.txt"]), 2, texts, message=r"not a word-vectors file"),
        Hostile("devzero-hypotheses", embed("/dev/zero"), 2, message=r"character device", **REFUSED_AT_ONCE),
        Hostile("devzero-references", embed(H, "/dev/zero"), 2, message=r"character device", **REFUSED_AT_ONCE),
        Hostile("devzero-vectors", embed(H, R, "/dev/zero"), 2, message=r"character device", **REFUSED_AT_ONCE),
        Hostile("fifo-hypotheses", embed(f["fifo"]), 2, message=r"a FIFO", **REFUSED_AT_ONCE),
        Hostile("fifo-references", embed(H, f["fifo"]), 2, message=r"a FIFO", **REFUSED_AT_ONCE),
        Hostile("fifo-vectors", embed(H, R, f["fifo"]), 2, message=r"a FIFO", **REFUSED_AT_ONCE),
        Hostile("folder-hypotheses", embed(f["dir"]), 2, message=r"is a directory", **REFUSED_AT_ONCE),
        Hostile("missing-vectors", embed(H, R, "nope.bin"), 2, message=r"nope\.bin: no such file",
                **REFUSED_AT_ONCE),
        Hostile("w2v-text-short-vectors-auto", embed(H, R, f["w2v_short.txt"], "--json"), 0, texts, rss=GENSIM_RSS,
                message=r'"format": "word2vec-text"'),
        Hostile("w2v-text-short-vectors-explicit",
                embed(H, R, f["w2v_short.txt"], "--vectors-format", "word2vec-text"), 0, texts, rss=GENSIM_RSS),
        Hostile("explicit-format-wins-and-fails-cleanly", embed(H, R, G, "--vectors-format", "word2vec-bin"), 2,
                texts, message=r"expected a word2vec header .*\(it looks like glove-text\)"),
        Hostile("w2v-text-truncated", embed(H, R, f["w2v_trunc.txt"]), 2, texts, rss=GENSIM_RSS,
                message=r"w2v_trunc\.txt(:\d+)?: (the header announces 10 vectors but the file holds 7|expected a word)"),
        Hostile("w2v-bin-truncated", embed(H, R, f["w2v_trunc.bin"]), 2, texts, rss=GENSIM_RSS,
                message=r"truncated"),
        Hostile("w2v-text-wrong-dimension-line", embed(H, R, f["w2v_baddim.txt"]), 2, texts, rss=GENSIM_RSS,
                message=r"w2v_baddim\.txt:4: expected a word and 3 numbers"),
        Hostile("w2v-bin-header-lies-about-count", embed(H, R, f["w2v_liar.bin"]), 2, texts,
                message=r"header announces 1,000,000,000,000 vectors of dimension 300, more than the file"),
        Hostile("w2v-text-header-lies-about-count", embed(H, R, f["w2v_liar.txt"]), 2, texts,
                message=r"header announces 400,000,000 vectors"),
        Hostile("glove-value-not-a-number", embed(H, R, f["glove_bad.txt"]), 2, texts,
                message=r"glove_bad\.txt:3: a vector value is not a number"),
        Hostile("nan-vector", embed(H, R, f["nan.txt"]), 2, texts, message=r"'cat' holds NaN or infinity"),
        Hostile("pickle-named-vectors-txt", embed(H, R, f["vectors.txt"]), 2, texts,
                message=r"looks like a Python pickle.*--vectors-format gensim only for a file you trust"),
        Hostile("pair-over-the-byte-cap", embed(f["bigpair.txt"], f["one.txt"]), 2, [f["bigpair.txt"]],
                message=r"bigpair\.txt line 2 and .*one\.txt line 2 \(reference file 1\): over 33,554,432 characters"),
        Hostile("per-pair-onto-hypotheses", embed(H, R, G, "--per-pair", H), 2, unchanged=[f["hyp.txt"]],
                message=r"--per-pair .*hyp\.txt: is the input", **REFUSED_AT_ONCE),
        Hostile("per-pair-onto-references", embed(H, R, G, "--per-pair", R), 2, unchanged=[f["ref.txt"]],
                message=r"is the input", **REFUSED_AT_ONCE),
        Hostile("per-pair-onto-vectors", embed(H, R, G, "--per-pair", G), 2, unchanged=[f["glove.txt"]],
                message=r"is the input", **REFUSED_AT_ONCE),
        Hostile("many-short-lines", embed(f["many_h.txt"], f["many_r.txt"]), 0,
                [f["many_h.txt"], f["many_r.txt"], f["glove.txt"]]),
        Hostile("one-line-of-a-million-words", embed(f["wide_h.txt"], f["wide_r.txt"]), 0,
                [f["wide_h.txt"], f["wide_r.txt"], f["glove.txt"]]),
        Hostile("per-pair-ok", embed(H, R, G, "--per-pair", "pp_out.jsonl"), 0, texts, outputs=[f["pp_out.jsonl"]]),
    ]
    return cases, {"marker": marker, "cwd": tmp}


LOADED_KERNELS_RSS = 170 * MB
"""Peak RSS of a tiny scoring run with numba's kernels loaded from its cache, as measured where the bounds below
were set. An installed (not editable) package measured 43 MB more for the same run on the same numba, so each
case's bound moves by what this machine's own tiny run takes beyond it (never less): the bounds judge the
input's share of memory, not the runtime's."""


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from hostile import run_isolated

    tmp = tmp_path_factory.mktemp("hostile-embed")
    cases, extra = build(tmp)
    ok = next(c for c in cases if c.name == "ok-glove")
    run_isolated(ok.args, cwd=tmp, env={"DIALEVAL_CACHE_DIR": str(tmp / "warm")})  # loads (or compiles) kernels
    base = run_isolated(ok.args, cwd=tmp, env={"DIALEVAL_CACHE_DIR": str(tmp / "warm")})
    assert base.code == 0, base.stderr
    extra["rss_offset"] = max(0, base.peak_rss - LOADED_KERNELS_RSS)
    return cases, extra


NAMES = [c.name for c in build(Path("."), dry=True)[0]]


@pytest.mark.parametrize("name", NAMES)
def test_hostile_embed(built, name, tmp_path):
    cases, extra = built
    c = next(c for c in cases if c.name == name)
    c.env = {"DIALEVAL_CACHE_DIR": str(tmp_path / "cache")}
    if c.rss != REFUSED_AT_ONCE["rss"]:  # a refusal never loads the kernels: its 100 MB bound stays
        c.rss = (c.rss if c.rss is not None else 3 * input_bytes(c.inputs) + BASE_RSS) + extra["rss_offset"]
    c.check(cwd=extra["cwd"])
    assert not extra["marker"].exists(), "a pickle was unpickled on a guess"


if __name__ == "__main__":  # measure every case: name | exit | seconds | peak RSS MB
    import tempfile

    from hostile import run_isolated

    with tempfile.TemporaryDirectory() as d:
        cs, _ = build(Path(d))
        for c in cs:
            try:
                o = run_isolated(c.args, cwd=Path(d), env={"DIALEVAL_CACHE_DIR": str(Path(d) / "cache")},
                                 timeout=max(c.seconds * 4, 20))
                first = (o.stderr.strip().splitlines() or [""])[-1][:150]
                print(f"{c.name} | {o.code} | {o.seconds:.2f} | {o.peak_rss / MB:.0f} | {first}", flush=True)
            except AssertionError as e:
                print(f"{c.name} | timeout | - | - | {str(e)[:150]}", flush=True)
