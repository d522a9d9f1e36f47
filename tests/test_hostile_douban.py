"""Hostile inputs for the SMN/DAM TSV benchmarks (douban; ecommerce and ubuntu-v1 share the reader).

Each case is one CLI run judged by :class:`hostile.Hostile`: the documented exit code (1 the submission's fault,
2 the data's or the environment's), one-line messages without Python's wording, no positive response text in
any output, peak memory <= 3x the input + 200 MB and bounded time. Score files: ragged or one line short, NaN and
inf, labels other than 0/1, misaligned DAM labels, a 100 MB line, not UTF-8; data: a context of eleven lines,
a label other than 0/1, not UTF-8, a 100 MB line; FIFOs and devices on either side.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hostile import MB, Hostile, fifo  # noqa: E402

CONTEXTS = 30
AT_ONCE = 2.0  # seconds for a FIFO or a device to be refused, start-up included (see test_hostile_scores.py)


def data_lines(n: int = CONTEXTS) -> list[str]:
    """Douban-like lines: every third context has two positives, every fifth none (each response unique)."""
    out = []
    for c in range(n):
        labels = [0] * 10 if c % 5 == 4 else [1, 0, 1] + [0] * 7 if c % 3 == 0 else [0, 1] + [0] * 8
        for j, lab in enumerate(labels):
            out.append(f"{lab}\t第 {c} 段 上文\t还有 一句\t{'正确答案' if lab else '干扰回复'} 编号{c}x{j}\n")
    return out


def build(tmp: Path, dry: bool = False) -> tuple[list[Hostile], dict]:
    good = data_lines()
    secrets = [ln.rsplit("\t", 1)[1].strip() for ln in good if ln.startswith("1")][:5]
    labels = [ln[0] for ln in good]
    if not dry:
        (tmp / "test.txt").write_text("".join(good), encoding="utf-8")
        (tmp / "subs").mkdir()
        (tmp / "data").mkdir()
    cases: list[Hostile] = []
    scores = [f"{(i * 37 % 101) / 101!r}" for i in range(len(good))]

    def sub(name, content, exit, message=None, data="test.txt", extra=(), **kw):
        p = tmp / "subs" / name
        if not dry and content is not None:
            p.write_bytes(content() if callable(content) else content)
        args = ["score", f"subs/{name}", "--benchmark", "douban", "--data", data, *extra]
        cases.append(Hostile(name, args, exit, inputs=[p, tmp / data], secrets=secrets, message=message, **kw))

    def lines(rows) -> bytes:
        return "".join(r + "\n" for r in rows).encode()

    # ---- score files (exit 1: the submission's fault) -------------------------------------------------------------
    sub("good.txt", lines(scores), 0)
    sub("good-dam.txt", lines(f"{s}\t{lab}" for s, lab in zip(scores, labels)), 0,
        extra=["--ties", "input-order", "--protocols"])
    sub("good.json", json.dumps({"format": "scores", "items": {f"test:{c + 1}": {str(j + 1): float(scores[c * 10 + j])
        for j in range(10)} for c in range(CONTEXTS)}}).encode(), 0, extra=["--json"])
    sub("one-line-short.txt", lines(scores[:-1]), 1, r"299 score lines, but the data has 300")
    sub("one-line-long.txt", lines([*scores, "0.5"]), 1, r"301 score lines, but the data has 300")
    sub("ragged.txt", lines(scores[:5] + [scores[5] + "\t1"] + scores[6:]), 1, r"line 6: 2 fields")
    sub("three-fields.txt", lines(f"{s}\t0\t0" for s in scores), 1, r"\[wrong-shape\]")
    sub("nan-inf.txt", lines(["nan", "inf", "-inf", *scores[3:]]), 1, r"line 1: score nan is not a finite")
    sub("not-a-number.txt", lines(["0,5", *scores[1:]]), 1, r"\[score-not-number\] .*\n.*line 1: \"0,5\"")
    sub("label-2.txt", lines(f"{s}\t2" for s in scores), 1, r"\[bad-label\]")
    sub("label-word.txt", lines(f"{s}\tyes" for s in scores), 1, r"label \"yes\" is not 0 or 1")
    sub("labels-misaligned.txt", lines(f"{s}\t{lab}" for s, lab in zip(scores, labels[1:] + labels[:1])), 1,
        r"\[labels-differ\]")
    sub("empty.txt", b"", 1, r"\[empty-file\]")
    sub("blank-inside.txt", lines(scores[:3] + [""] + scores[3:]), 1, r"line 4: empty line")
    sub("latin1.txt", "0.5\xa0\n".encode("latin-1") * 300, 1, r"\[score-not-number\]")
    sub("utf16.txt", "\n".join(scores).encode("utf-16"), 1, r"\[bad-encoding\]")
    sub("gzip.txt", b"\x1f\x8b\x08\x00" + b"\x00" * 64, 1, r"\[wrong-file-type\]")
    sub("line-100mb.txt", lambda: b"0." + b"1" * (100 * MB) + b"\n" + lines(scores[1:]), 1,
        r"line 1: 104,857,602 bytes; a score line is at most 1024", rss=200 * MB)
    sub("json-1m-items.json", lambda: json.dumps({"format": "scores", "items": {f"x:{i}": {"1": 0.5}
        for i in range(1_000_000)}}).encode(), 1, r"\[unknown-dialog\]", max_lines=None)
    sub("json-nan.json", b'{"format": "scores", "items": {"test:1": {"1": NaN}}}', 1, r"\[not-json\]|score-not",
        max_lines=None)
    sub("fifo.txt", None, 2, r"FIFO", seconds=AT_ONCE, rss=100 * MB)
    if not dry:
        fifo(tmp / "subs" / "fifo.txt")
    cases.append(Hostile("dev-zero-submission", ["score", "/dev/zero", "--benchmark", "douban", "--data", "test.txt"],
                         2, message=r"not a regular file", seconds=AT_ONCE, rss=100 * MB))

    # ---- data (exit 2: the organizer's files) ---------------------------------------------------------------------
    def data(name, content, message, **kw):
        if not dry and content is not None:
            (tmp / "data" / name).write_bytes(content() if callable(content) else content)
        sub("good.txt", None, 2, message, data=f"data/{name}", **kw)
        cases[-1].name = f"data-{name}"

    eleven = good[:10] + good[9:10] + good[10:]
    data("eleven-lines.txt", "".join(eleven[:300]).encode(), r"data/eleven-lines.txt:12: its context differs from line 11's")
    data("label-2.txt", "".join(good).replace("1\t", "2\t", 1).encode(), r"label \"2\" is not 0 or 1")
    data("not-multiple.txt", "".join(good[:295]).encode(), r"not a multiple of 10")
    data("two-fields.txt", "".join(ln.split("\t", 1)[0] + "\t" + ln.rsplit("\t", 1)[1] for ln in good).encode(),
         r":1: 2 field\(s\)")
    data("utf16.txt", "".join(good).encode("utf-16"), r"UTF-16")
    data("line-100mb.txt", lambda: b"1\t" + b"x" * (100 * MB) + b"\tr\n" + "".join(good[1:]).encode(),
         r"its context differs")
    data("fifo.txt", None, r"FIFO", seconds=AT_ONCE, rss=100 * MB)
    if not dry:
        fifo(tmp / "data" / "fifo.txt")
    cases.append(Hostile("data-dev-zero", ["score", "subs/good.txt", "--benchmark", "douban", "--data", "/dev/zero"],
                         2, message=r"not a regular file", seconds=AT_ONCE, rss=100 * MB))
    # data not UTF-8 (GBK): scoring reads labels and compares contexts as bytes, so it scores
    if not dry:
        (tmp / "data" / "gbk.txt").write_bytes("".join(good).encode("gbk"))
    cases.append(Hostile("data-gbk", ["score", "subs/good.txt", "--benchmark", "douban", "--data", "data/gbk.txt"], 0,
                         inputs=[tmp / "data" / "gbk.txt", tmp / "subs" / "good.txt"], secrets=secrets))
    return cases, {"cwd": tmp}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build(tmp_path_factory.mktemp("hostile-douban"))


NAMES = [c.name for c in build(Path("."), dry=True)[0]]


@pytest.mark.parametrize("name", NAMES)
def test_hostile_douban(built, name):
    cases, extra = built
    c = next(c for c in cases if c.name == name)
    out = c.check(cwd=extra["cwd"])
    if name == "labels-misaligned.txt":  # which line differs would tell that line's gold label
        assert "line" not in out.stderr.split("[labels-differ]")[1]


if __name__ == "__main__":  # measure every case: name | exit | seconds | peak RSS MB | last line
    import tempfile

    from hostile import run_isolated

    with tempfile.TemporaryDirectory() as d:
        cs, _ = build(Path(d))
        for c in cs:
            o = run_isolated(c.args, cwd=Path(d), env=c.env, timeout=max(c.seconds * 4, 20))
            last = (o.stderr.strip().splitlines() or [""])[-1][:120]
            print(f"{c.name} | {o.code} | {o.seconds:.2f} | {o.peak_rss / MB:.0f} | {last}", flush=True)
