"""Hostile inputs for the FB-text benchmarks, bAbI dialog and Movie Dialog (issue 18, items 2 and 4).

Each case is one CLI run judged by :class:`hostile.Hostile`: the exit code, one-line messages, no Python wording
or private path, no secret in any output, memory within 3x the inputs + 200 MB (a FIFO or a device: refused in
under 1 s and 100 MB), time. Data-file faults are the organizer's (exit 2); submission faults are exit 1.

The data are small hand-made folders. Their gold answers are the secrets: distinctive bot utterances (bAbI; its
candidate ids are line numbers, too short to look for), and entity ids/texts placed deep in a 5,000-line entity
list (Movie Dialog: ``e4711`` cannot appear by accident). Runs start in the case's folder and name every path
relative to it, so that pytest's temp folder never shows in a message.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from hostile import MB, Hostile, fifo

# ---------------------------------------------------------------------------------------------------- bAbI data
GOLD = [
    "api_call zq-italian zq-paris zq-six zq-cheap",  # gold of tst:1:1 (also of :2:1)
    "here it is zq_resto_7_phone with \x1b[31m colour \x07 and \x0b\x0c\x1c\x85\u2028 breaks",  # gold of tst:1:3
]
FILLER = [f"filler utterance number {i}" for i in range(1, 301)]
BABI_CANDS = FILLER[:150] + [GOLD[0]] + FILLER[150:] + [GOLD[1]]  # golds on lines 151 and 302
BABI_TST = (
    "1 hi\x1b[2J there\tapi_call zq-italian zq-paris zq-six zq-cheap\n"
    "2 zq_resto_7 R_phone zq_resto_7_phone\n"
    f"3 phone please\t{GOLD[1]}\n"
    "\n"
    "1 again\tapi_call zq-italian zq-paris zq-six zq-cheap\n"
)
STEM = "dialog-babi-task1-API-calls"
TST_IDS = [f"{STEM}-tst:1:1", f"{STEM}-tst:1:3", f"{STEM}-tst:2:1"]
GOLD_LINE = {TST_IDS[0]: "151", TST_IDS[1]: "302", TST_IDS[2]: "151"}


def babi_dir(root: Path, name: str = "babi", cands: bytes | str | None = None, tst: bytes | str | None = None) -> Path:
    d = root / name
    d.mkdir(parents=True)
    for fname, content, default in (("dialog-babi-candidates.txt", cands, "".join(f"1 {c}\n" for c in BABI_CANDS)),
                                    (f"{STEM}-tst.txt", tst, BABI_TST), (f"{STEM}-dev.txt", None, BABI_TST)):
        content = default if content is None else content
        (d / fname).write_bytes(content.encode() if isinstance(content, str) else content)
    return d


def ranked(pairs) -> list[dict]:
    return [{"dialog_id": i, "lst_candidate_id": [{"candidate_id": c, "rank": r} for r, c in enumerate(ids, 1)]}
            for i, ids in pairs]


def write_json(path: Path, obj) -> Path:
    path.write_text(json.dumps(obj))
    return path


def babi_perfect() -> list[dict]:
    return ranked((i, [GOLD_LINE[i], "1"]) for i in TST_IDS)


def babi_args(sub, data="babi", *more) -> list:
    return ["score", sub, "--benchmark", "babi", "--data", data, "--split", "tst", *more]


# ------------------------------------------------------------------------------------------- Movie Dialog data
ENT_GOLD = {4711: "Gold Zeta \x1b[1m Picture", 4712: "Girl, Interrupted", 4713: "Zeb Quorum-Director"}
ENT_LINES = [f"Filler Movie {i:04d}" for i in range(1, 5001)]
for _n, _t in ENT_GOLD.items():
    ENT_LINES[_n - 1] = _t
MOVIE_SECRETS = [f"e{n}" for n in ENT_GOLD] + list(ENT_GOLD.values())
MOVIE_T1 = (
    "1 what did Zeb direct?\tGold Zeta \x1b[1m Picture, Girl, Interrupted\n"  # two golds, one with a comma
    "1 who directed Gold Zeta?\tZeb Quorum-Director\n"
)
MOVIE_T4 = "1 best film?\tzq reply one .\n2 why?\tzq reply two .\n"
REDDIT = "".join(f"1 reddit candidate {i}\n\n" for i in range(1, 101))


def movie_dir(root: Path, name: str = "movie", entities=None, t1=None, t4=None, cands=None) -> Path:
    d = root / name
    d.mkdir(parents=True)
    for fname, content, default in (("entities.txt", entities, "\n".join(ENT_LINES) + "\n"),
                                    ("task1_qa_test.txt", t1, MOVIE_T1), ("task4_reddit_test.txt", t4, MOVIE_T4),
                                    ("task4_reddit_cand-test.txt", cands, REDDIT)):
        content = default if content is None else content
        (d / fname).write_bytes(content.encode() if isinstance(content, str) else content)
    return d


def movie_sub() -> list[dict]:
    """Ranks filler entities only: the submission holds no secret."""
    return ranked([("task1_qa_test:1:1", ["e1", "e2"]), ("task1_qa_test:2:1", ["e3"])])


def movie_args(sub, data="movie", *more) -> list:
    return ["score", sub, "--benchmark", "movie-dialog", "--data", data, "--split", "test", *more]


# ---------------------------------------------------------------------------------------------------- the cases
ENCODINGS = {  # a file's bytes in a wrong form, and what the message says
    "bom": (lambda b: b"\xef\xbb\xbf" + b, None),
    "utf16": (lambda b: b.decode().encode("utf-16"), r"UTF-16"),
    "gzip": (lambda b: gzip.compress(b, mtime=0), r"gzip"),
    "binary": (lambda b: b"\x00\x01\x02" * 100 + b, r"binary"),
}
SPECIAL = {"fifo": r"not a regular file \(a FIFO\)", "dev-zero": r"not a regular file \(a character device\)"}


def special(path: Path, kind: str) -> None:
    """Replace ``path`` by a FIFO (no writer) or a symbolic link to /dev/zero: both must be refused at once."""
    path.unlink(missing_ok=True)
    if kind == "fifo":
        fifo(path)
    else:
        os.symlink("/dev/zero", path)


CASES: dict[str, object] = {}
"""Case name -> builder(root) returning (Hostile, extra check or None or "submission-form"); files are made
when the case runs, so that collecting the suite writes nothing."""


FAST = {"seconds": 1.0, "rss": 100 * MB}
"""A FIFO or a device is refused in under 1 s (the harness allows TIME_SLACK on a loaded machine) and 100 MB."""


def case(name: str):
    def register(fn):
        assert name not in CASES, name
        CASES[name] = fn
        return fn
    return register


def shared(root: Path) -> None:
    """What many cases use: the good data folders and submissions."""
    babi_dir(root)
    movie_dir(root)
    write_json(root / "perfect.json", babi_perfect())
    write_json(root / "msub.json", movie_sub())
    write_json(root / "mperfect.json", ranked([("task1_qa_test:1:1", ["e4711", "e4712"]),
                                               ("task1_qa_test:2:1", ["e4713"])]))


def accuracy_is_one(o) -> None:
    rep = json.loads(o.stdout)
    vals = {r["metric"]: r["value"] for r in rep["results"] if r["average"] is None}
    assert vals == {"per-response-accuracy": 1.0, "per-dialog-accuracy": 1.0}, vals


def hits_at_1_is_one(o) -> None:
    rep = json.loads(o.stdout)
    vals = {r["metric"]: r["value"] for r in rep["results"] if r["group"] == "1" and r["average"] is None}
    assert vals["hits@1"] == 1.0, vals


def _short_lines(o) -> None:
    """A 5 MB id is named, not printed whole: no line of the output is longer than a screenful."""
    assert max(map(len, (o.stdout + o.stderr).splitlines())) < 2000


# ---- bAbI: data files
@case("babi-control-characters-in-texts")
def _(root):
    return Hostile("", babi_args("perfect.json", "babi", "--json"), 0, [root / "babi"], GOLD), accuracy_is_one


for _fname in ("dialog-babi-candidates.txt", f"{STEM}-tst.txt"):
    for _kind, _msg in SPECIAL.items():
        @case(f"babi-{_fname.split('-')[-1][:-4]}-{_kind}")
        def _(root, fname=_fname, kind=_kind, msg=_msg):
            d = babi_dir(root, f"babi-{kind}-{fname}")
            special(d / fname, kind)
            return Hostile("", babi_args("perfect.json", d.name), 2, [], GOLD, msg, **FAST), None


@case("babi-candidates-1M-lines")
def _(root):
    big = "".join(f"1 {c}\n" for c in BABI_CANDS) + "".join(f"1 zq candidate {i} of a big file\n"
                                                            for i in range(1_000_000))
    d = babi_dir(root, "babi-1M", cands=big)
    return Hostile("", babi_args("perfect.json", d.name, "--json"), 0, [d, root / "perfect.json"], GOLD,
                   seconds=30), accuracy_is_one


@case("babi-candidates-empty")
def _(root):
    d = babi_dir(root, "babi-empty-cands", cands="")
    return Hostile("", babi_args("perfect.json", d.name), 2, [d], GOLD, r"no candidates"), None


@case("babi-task-file-empty")
def _(root):
    d = babi_dir(root, "babi-empty-tst", tst="\n\n")
    return Hostile("", babi_args("perfect.json", d.name), 2, [d], GOLD, r"no bot turns"), None


for _enc, (_convert, _msg) in ENCODINGS.items():
    @case(f"babi-candidates-{_enc}")
    def _(root, enc=_enc, convert=_convert, msg=_msg):
        raw = "".join(f"1 {c}\n" for c in BABI_CANDS).encode()
        d = babi_dir(root, f"babi-cands-{enc}", cands=convert(raw))
        return Hostile("", babi_args("perfect.json", d.name), 0 if msg is None else 2, [d], GOLD, msg), None


@case("babi-task-file-not-utf8")
def _(root):
    d = babi_dir(root, "babi-latin1", tst=BABI_TST.encode() + b"1 caf\xe9\tx\n")
    return Hostile("", babi_args("perfect.json", d.name), 2, [d], GOLD, r"not UTF-8 text at line 6 column 6"), None


@case("babi-line-id-superscript-digit")
def _(root):
    d = babi_dir(root, "babi-superscript", tst="\u00b2 hi\tthere\n" + BABI_TST)
    return Hostile("", babi_args("perfect.json", d.name), 2, [d], GOLD, r":1: expected 'ID text'"), None


@case("babi-line-id-5000-digits")
def _(root):
    d = babi_dir(root, "babi-longid", tst="9" * 5000 + " hi\tthere\n" + BABI_TST)
    return Hostile("", babi_args("perfect.json", d.name), 2, [d], GOLD, r":1: the line ID has 5000 digits"), None


@case("babi-line-without-id-is-not-shown")
def _(root):
    d = babi_dir(root, "babi-no-id", tst=f"hi\t{GOLD[0]}\n" + BABI_TST)
    return Hostile("", babi_args("perfect.json", d.name), 2, [d], GOLD, r":1: expected 'ID text'"), None


@case("babi-task-file-20MB-line")
def _(root):
    d = babi_dir(root, "babi-huge-tst", tst=BABI_TST + "\n1 " + "zq " * (7 * MB) + f"\t{GOLD[0]}\n")
    return Hostile("", babi_args("perfect.json", d.name), 0, [d, root / "perfect.json"], GOLD, seconds=20), None


@case("babi-candidates-20MB-line")
def _(root):
    d = babi_dir(root, "babi-huge-cands", cands="".join(f"1 {c}\n" for c in BABI_CANDS) + "1 " + "zq " * (7 * MB))
    return Hostile("", babi_args("perfect.json", d.name), 0, [d, root / "perfect.json"], GOLD, seconds=20), None


# ---- bAbI: submissions
@case("babi-submission-20000-candidates")
def _(root):
    write_json(root / "many.json", ranked([(TST_IDS[0], [str(i) for i in range(1, 20_001)])]))
    return Hostile("", babi_args("many.json"), 1, [root / "babi", root / "many.json"], GOLD,
                   r"is not a candidate of dialog", max_lines=None), None


WRONG_SPLIT = r"error \[wrong-split\] x1: .*\n +submission: {n} of the {m} item ids that are not in split {split} " \
    r"belong to split dev: score with --split dev\n"
"""The one wrong-split error on screen: its code line, then the hint (counts and split names, never an id)."""


def unknown_listed(o) -> None:
    """The unknown ids are still listed, under their own code, beside the one hint."""
    assert "[unknown-dialog]" in o.stderr and o.stderr.count("belong to split") == 1


def left_out(o) -> None:
    """Items of another split are left out unchecked: no unknown-dialog line, the one hint says where they belong."""
    assert "[unknown-dialog]" not in o.stderr and o.stderr.count("belong to split") == 1


def no_hint(o) -> None:
    assert "wrong-split" not in o.stdout + o.stderr and "[unknown-dialog]" in o.stderr


@case("babi-submission-ids-of-another-split")
def _(root):
    write_json(root / "dev-ids.json", ranked([(f"{STEM}-dev:1:1", ["151"])]))
    return Hostile("", babi_args("dev-ids.json"), 1, [root / "babi"], GOLD, WRONG_SPLIT.format(n=1, m=1, split="tst"),
                   max_lines=None), left_out


@case("babi-scores-json-ids-of-another-split")
def _(root):
    doc = {"format": "scores", "items": {i.replace("-tst:", "-dev:"): {"151": 1.0, "302": 0.5} for i in TST_IDS}}
    write_json(root / "dev-scores.json", doc)
    return Hostile("", babi_args("dev-scores.json"), 1, [root / "babi"], GOLD,
                   WRONG_SPLIT.format(n=3, m=3, split="tst"), max_lines=None), left_out


@case("babi-submission-300000-ids-naming-another-split")
def _(root):
    # 300,000 ids whose stem names the dev file (3 of them are dev items, left out; the others unknown, counted)
    ids = [f"{STEM}-dev:{c}:{k}" for c in range(1, 100_001) for k in (1, 2, 3)]
    write_json(root / "dev-many.json", ranked((i, ["151"]) for i in ids))
    return Hostile("", babi_args("dev-many.json"), 1, [root / "babi", root / "dev-many.json"], GOLD,
                   WRONG_SPLIT.format(n=3, m=300000, split="tst"), max_lines=None, seconds=20), None


@case("babi-submission-ids-of-a-fifo-split")
def _(root):
    d = babi_dir(root, "babi-fifo-dev")
    special(d / f"{STEM}-dev.txt", "fifo")  # the other split's file is never opened as a FIFO: no hint, no hang
    write_json(root / "dev-ids-2.json", ranked([(f"{STEM}-dev:1:1", ["151"])]))
    return Hostile("", babi_args("dev-ids-2.json", d.name), 1, [d], GOLD, r"is not an item of split tst",
                   max_lines=None, seconds=5), no_hint


@case("babi-submission-control-characters")
def _(root):
    write_json(root / "ctl.json", ranked([("evil\x1b[31m\nid\r\u2028", ["x\x1b]0;t\x07\n"])]))
    return Hostile("", babi_args("ctl.json"), 1, [root / "babi"], GOLD, r"evil\\x1b\[31m\\nid"), None


@case("babi-submission-5MB-item-id")
def _(root):
    write_json(root / "huge-id.json", ranked([("q" * (5 * MB), ["1"])]))
    return Hostile("", babi_args("huge-id.json"), 1, [root / "babi", root / "huge-id.json"], GOLD,
                   r"is not an item of split tst"), _short_lines


TINY_ITEMS = {  # a result array of millions of tiny items: the item, and the problems each one makes
    "{}": {"missing-key": 2},
    "[]": {"item-not-object": 1},
    "0": {"item-not-object": 1},
    '{"dialog_id":1}': {"wrong-type": 1, "missing-key": 1},
    '{"dialog_id":"x"}': {"unknown-dialog": 1, "missing-key": 1},
}
TINY_NAMES = dict(zip(TINY_ITEMS, ("objects", "arrays", "zeros", "integer-ids", "unknown-ids"), strict=True))
"""Seven million ``{}`` (21.5 MB) took 551 MB and 28 s through the shared ranking-entry checker: the generic JSON
objects of the whole file (64 bytes of dict per 3 bytes of text), and two problems built per item that the
per-code cap then dropped. A large array is now checked one item at a time and a dropped problem only counted."""


def not_listed_note(n: int, per_item: dict) -> str:
    dropped = {c: k * n - 20 for c, k in per_item.items()}
    return (f"... {sum(dropped.values()):,} more problems not listed ("
            + ", ".join(f"{c} {d:,}" for c, d in sorted(dropped.items())) + ")")


for _k, _item in enumerate(TINY_ITEMS):
    @case(f"babi-submission-array-of-7M-tiny-{TINY_NAMES[_item]}" if _item == "{}" else
          f"babi-submission-10MB-array-of-tiny-{TINY_NAMES[_item]}")
    def _(root, item=_item, k=_k):
        size = 21_500_000 if item == "{}" else 10_000_000  # 10 MB: enough for the whole tree to break the bound
        n = size // (len(item) + 1)
        (root / f"tiny-{k}.json").write_text("[" + ",".join([item] * n) + "]")
        json_report = item in ("{}", '{"dialog_id":"x"}')
        args = babi_args(f"tiny-{k}.json", "babi", "--json") if json_report else \
            ["validate", f"tiny-{k}.json", "--benchmark", "babi", "--data", "babi", "--split", "tst"]

        def same_problems(o) -> None:  # twenty per code, and the one note counting the rest
            note = not_listed_note(n, TINY_ITEMS[item])
            if json_report:
                rep = json.loads(o.stdout)
                codes = [p["code"] for p in rep["problems"] if p["severity"] == "error"]
                assert {c: codes.count(c) for c in set(codes)} == {c: 20 for c in TINY_ITEMS[item]}, codes
                assert rep["not_listed"] == [note]
            else:
                assert note in o.stderr

        return Hostile("", args, 1, [root / "babi", root / f"tiny-{k}.json"], GOLD, sorted(TINY_ITEMS[item])[0],
                       max_lines=None, seconds=15 if item == "{}" else 8), same_problems


for _kind in SPECIAL:
    @case(f"babi-submission-{_kind}")
    def _(root, kind=_kind):
        special(root / f"sub-{kind}.json", kind)
        return Hostile("", babi_args(f"sub-{kind}.json"), 2, [], GOLD, r"not a regular file", **FAST), None


for _enc, (_convert, _msg) in {**ENCODINGS, "empty": (lambda b: b"", r"empty")}.items():
    @case(f"babi-submission-{_enc}")
    def _(root, enc=_enc, convert=_convert, msg=_msg):
        (root / f"sub-{enc}.json").write_bytes(convert(json.dumps(babi_perfect()).encode()))
        return Hostile("", babi_args(f"sub-{enc}.json"), 1, [root / "babi"], GOLD, msg or r"BOM",
                       max_lines=None), "submission-form"


@case("babi-out-onto-the-submission")
def _(root):
    write_json(root / "out-sub.json", babi_perfect())
    return Hostile("", babi_args("out-sub.json", "babi", "--out", "out-sub.json"), 2, [root / "babi"], GOLD,
                   r"is the submission, an input of this run; refusing", unchanged=[root / "out-sub.json"]), None


@case("babi-out-onto-the-candidates")
def _(root):
    target = root / "babi" / "dialog-babi-candidates.txt"
    return Hostile("", babi_args("perfect.json", "babi", "--out", "babi/dialog-babi-candidates.txt"), 2,
                   [root / "babi"], GOLD, r"an input of this run; refusing", unchanged=[target]), None


@case("babi-per-item-onto-the-task-file")
def _(root):
    target = root / "babi" / f"{STEM}-tst.txt"
    return Hostile("", babi_args("perfect.json", "babi", "--per-item", f"babi/{STEM}-tst.txt"), 2, [root / "babi"],
                   GOLD, r"an input of this run; refusing", unchanged=[target]), None


# ---- Movie Dialog: data files
@case("movie-control-characters-and-comma-entities")
def _(root):
    return Hostile("", movie_args("mperfect.json", "movie", "--task", "1", "--json"), 0, [root / "movie"]), \
        hits_at_1_is_one


for _fname, _task in (("entities.txt", "1"), ("task1_qa_test.txt", "1"), ("task4_reddit_cand-test.txt", "4"),
                      ("task4_reddit_test.txt", "4")):
    for _kind, _msg in SPECIAL.items():
        @case(f"movie-{_fname[:-4]}-{_kind}")
        def _(root, fname=_fname, task=_task, kind=_kind, msg=_msg):
            d = movie_dir(root, f"movie-{kind}-{fname}")
            special(d / fname, kind)
            return Hostile("", movie_args("msub.json", d.name, "--task", task), 2, [], MOVIE_SECRETS, msg,
                           **FAST), None


for _fname, _key, _msg in (("entities.txt", "entities", r"no entities"), ("task1_qa_test.txt", "t1", r"no exchanges"),
                           ("task4_reddit_cand-test.txt", "cands", r"no candidates")):
    @case(f"movie-{_fname[:-4]}-empty")
    def _(root, fname=_fname, key=_key, msg=_msg):
        d = movie_dir(root, f"movie-empty-{fname}", **{key: "\n"})
        task = "4" if "reddit" in fname else "1"
        return Hostile("", movie_args("msub.json", d.name, "--task", task), 2, [d], MOVIE_SECRETS, msg), None


for _enc, (_convert, _msg) in ENCODINGS.items():
    @case(f"movie-entities-{_enc}")
    def _(root, enc=_enc, convert=_convert, msg=_msg):
        d = movie_dir(root, f"movie-ents-{enc}", entities=convert(("\n".join(ENT_LINES) + "\n").encode()))
        return Hostile("", movie_args("msub.json", d.name, "--task", "1"), 0 if msg is None else 2, [d],
                       MOVIE_SECRETS, msg), None


@case("movie-entities-2M-extra-lines")
def _(root):
    # a knowledge base of two million entities (53 MB): held as 8-byte hashes and one text block, not as four
    # Python objects per entity (826 MB before)
    extra = "".join(f"Extra Entity Number {i}\n" for i in range(2_000_000))
    d = movie_dir(root, "movie-2M-entities", entities="\n".join(ENT_LINES) + "\n" + extra)
    return Hostile("", movie_args("mperfect.json", d.name, "--task", "1", "--json"), 0, [d, root / "mperfect.json"],
                   seconds=30), hits_at_1_is_one


@case("movie-answer-of-1000-comma-parts")
def _(root):
    parts = ", ".join(ENT_LINES[(i * 37) % 4000] for i in range(1000))
    d = movie_dir(root, "movie-1000-parts", t1=MOVIE_T1 + f"1 list them all\t{parts}\n")
    return Hostile("", movie_args("msub.json", d.name, "--task", "1"), 0, [d], MOVIE_SECRETS, seconds=10), None


@case("movie-answer-of-100001-parts")
def _(root):
    d = movie_dir(root, "movie-100001-parts", t1=MOVIE_T1 + "1 q\t" + ", ".join(["x"] * 100_001) + "\n")
    return Hostile("", movie_args("msub.json", d.name, "--task", "1"), 2, [d], MOVIE_SECRETS,
                   r"task1_qa_test.txt:3: an answer of more than 100,000 comma-separated parts"), None


@case("movie-task-file-20MB-answer")
def _(root):
    d = movie_dir(root, "movie-huge-answer", t1=MOVIE_T1 + "1 q\t" + "zq " * (7 * MB) + "\n")
    return Hostile("", movie_args("msub.json", d.name, "--task", "1"), 0, [d], MOVIE_SECRETS, r"answer-not-entity",
                   seconds=20, max_lines=None), None


@case("movie-reddit-15000-candidates")
def _(root):
    d = movie_dir(root, "movie-15000-cands", cands="".join(f"1 reddit candidate {i}\n" for i in range(15_000)))
    write_json(root / "m4.json", ranked([("task4_reddit_test:1:1", ["c1"]), ("task4_reddit_test:1:2", ["c2"])]))

    def n_candidates(o):
        rows = [json.loads(x) for x in (root / "m4-items.jsonl").read_text().splitlines()]
        assert [r["n_candidates"] for r in rows] == [15_001, 15_001], rows

    return Hostile("", movie_args("m4.json", d.name, "--task", "4", "--per-item", "m4-items.jsonl"), 0, [d],
                   MOVIE_SECRETS), n_candidates


# ---- Movie Dialog: submissions
@case("movie-submission-20001-candidates")
def _(root):
    write_json(root / "m-many.json", ranked([("task4_reddit_test:1:1", [f"c{i}" for i in range(1, 20_002)])]))
    return Hostile("", movie_args("m-many.json", "movie", "--task", "4"), 1, [root / "movie", root / "m-many.json"],
                   MOVIE_SECRETS, r"is not a candidate of dialog", max_lines=None), None


@case("movie-submission-ids-of-another-split")
def _(root):
    d = movie_dir(root, "movie-dev")
    (d / "task1_qa_dev.txt").write_text(MOVIE_T1)
    write_json(root / "m-dev.json", ranked([("task1_qa_dev:1:1", ["e1"]), ("task1_qa_dev:2:1", ["e2"]),
                                            ("task1_qa_train:1:1", ["e3"])]))
    return Hostile("", movie_args("m-dev.json", d.name, "--task", "1"), 1, [d], MOVIE_SECRETS,
                   r"(?s)task1_qa_train:1:1\" is not an item of split test.*" + WRONG_SPLIT.format(n=2, m=3, split="test"),
                   max_lines=None), unknown_listed


@case("movie-submission-ids-of-no-split-the-data-has")
def _(root):
    write_json(root / "m-train.json", ranked([("task1_qa_dev:1:1", ["e1"]), ("task1_qa_train:1:1", ["e1"])]))
    return Hostile("", movie_args("m-train.json", "movie", "--task", "1"), 1, [root / "movie"], MOVIE_SECRETS,
                   r"task1_qa_dev:1:1\" is not an item of split test", max_lines=None), no_hint


@case("movie-submission-texts-with-control-characters")
def _(root):
    write_json(root / "m-text.json", ranked([("task1_qa_test:1:1", ["FILLER movie 0001!", "\x1b[2J\x00" * 1000,
                                                                     "q" * MB])]))
    # the first is an entity after normalisation; the others normalise to no candidate: unknown, named briefly
    return Hostile("", movie_args("m-text.json", "movie", "--task", "1"), 1, [root / "movie", root / "m-text.json"],
                   MOVIE_SECRETS, r"(?s)(?=.*text-normalised)(?=.*candidate_id \"\\x1b\[2J\\x00)", max_lines=None), \
        _short_lines


for _enc, (_convert, _msg) in {**ENCODINGS, "empty": (lambda b: b"", r"empty")}.items():
    @case(f"movie-submission-{_enc}")
    def _(root, enc=_enc, convert=_convert, msg=_msg):
        (root / f"msub-{enc}.json").write_bytes(convert(json.dumps(movie_sub()).encode()))
        return Hostile("", movie_args(f"msub-{enc}.json", "movie", "--task", "1"), 1, [root / "movie"],
                       MOVIE_SECRETS, msg or r"BOM", max_lines=None), "submission-form"


for _kind in SPECIAL:
    @case(f"movie-submission-{_kind}")
    def _(root, kind=_kind):
        special(root / f"msub-{kind}.json", kind)
        return Hostile("", movie_args(f"msub-{kind}.json", "movie", "--task", "1"), 2, [], MOVIE_SECRETS,
                       r"not a regular file", **FAST), None


@case("movie-out-onto-the-submission")
def _(root):
    write_json(root / "mout.json", movie_sub())
    return Hostile("", movie_args("mout.json", "movie", "--out", "mout.json"), 2, [root / "movie"], MOVIE_SECRETS,
                   r"is the submission, an input of this run; refusing", unchanged=[root / "mout.json"]), None


for _fname in ("entities.txt", "task1_qa_test.txt"):
    @case(f"movie-out-onto-{_fname[:-4]}")
    def _(root, fname=_fname):
        return Hostile("", movie_args("msub.json", "movie", "--out", f"movie/{fname}"), 2, [root / "movie"],
                       MOVIE_SECRETS, r"an input of this run; refusing", unchanged=[root / "movie" / fname]), None


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    r = tmp_path_factory.mktemp("hostile-text")
    shared(r)
    return r


@pytest.mark.parametrize("name", list(CASES))
def test_hostile(root, name, request):
    h, then = CASES[name](root)
    h.name = name
    if then == "submission-form":
        then = None
    outcome = h.check(cwd=root)
    if callable(then):
        then(outcome)
