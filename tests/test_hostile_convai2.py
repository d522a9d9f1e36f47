"""Hostile inputs for ConvAI2 (ParlAI's FB dialog format, 20 candidates per turn).

Each case is one CLI run judged by :class:`hostile.Hostile`: the documented exit code (1 the submission's fault,
2 the data's or the environment's), one-line messages without Python's wording, no gold reply in any output,
peak memory <= 3x the input + 200 MB and bounded time. Data: malformed FB lines, wrong candidate counts, a label
that is no candidate, not UTF-8, a 100 MB line; submissions: unknown candidate texts and positions, duplicate
items, wrong reply counts, not UTF-8, a 100 MB line; FIFOs and devices on either side.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from convai2_files import write_turns  # noqa: E402
from hostile import MB, Hostile, fifo  # noqa: E402

AT_ONCE = 2.0  # seconds for a FIFO or a device to be refused, start-up included (see test_hostile_scores.py)
DIALOGS = 6
DATA = "valid_self_original.txt"


def gold(d: int, t: int) -> str:
    return f"the secret gold reply number {d} {t} zebra"


def dialogs(n: int = DIALOGS):
    return [([f"persona line {d} {j} ." for j in range(4)],
             [(f"message {d} {t}", gold(d, t), [f"distractor {d} {t} {j}" for j in range(19)] + [gold(d, t)])
              for t in range(3)]) for d in range(n)]


def ids(n: int = DIALOGS) -> list[str]:
    return [f"valid_self_original:{d + 1}:{5 + t}" for d in range(n) for t in range(3)]


def build(tmp: Path, dry: bool = False) -> tuple[list[Hostile], dict]:
    secrets = [gold(d, t) for d in range(DIALOGS) for t in range(3)][:6]
    if not dry:
        write_turns(tmp / DATA, dialogs())
        (tmp / "subs").mkdir()
    cases: list[Hostile] = []

    def sub(name, content, exit, message=None, data=DATA, extra=(), **kw):
        p = tmp / "subs" / name
        if not dry and content is not None:
            p.write_bytes(content() if callable(content) else content)
        args = ["score", f"subs/{name}", "--benchmark", "convai2", "--data", data, *extra]
        cases.append(Hostile(name, args, exit, inputs=[p, tmp / data], secrets=secrets, message=message,
                             max_lines=None, **kw))

    def scores(items) -> bytes:
        return json.dumps({"format": "scores", "items": items}).encode()

    flat = {i: {str(j): j / 20 for j in range(1, 21)} for i in ids()}
    ranked = [{"dialog_id": i, "lst_candidate_id": [{"candidate_id": str(21 - r), "rank": r} for r in range(1, 11)]}
              for i in ids()]

    # ---- submissions (exit 1: the submission's fault) ------------------------------------------------------------
    sub("good.json", scores(flat), 0)
    sub("good-ranked.json", json.dumps(ranked).encode(), 0)
    sub("good-replies.txt", "".join(f"reply {i}\n" for i in ids()).encode(), 0)
    sub("unknown-text.json", scores({**flat, ids()[0]: {"no such reply at all": 1.0}}), 1, r"\[unknown-candidate\]")
    sub("unknown-position.json", scores({**flat, ids()[0]: {"21": 1.0, "0": 0.5, "-1": 0.1}}), 1,
        r"\[unknown-candidate\]")
    sub("unknown-item.json", scores({**flat, "valid_self_original:99:5": {"1": 1.0}}), 1, r"\[unknown-dialog\]")
    sub("duplicate-item.json", scores(flat)[:-2] + b', "' + ids()[0].encode() + b'": {"1": 1.0}}}', 1,
        r"\[duplicate-dialog\]")
    sub("duplicate-item-ranked.json", json.dumps(ranked + ranked[:1]).encode(), 1, r"\[duplicate-dialog\]")
    sub("duplicate-candidate.json", scores(flat).replace(b'"1": 0.05', b'"1": 0.05, "1": 0.9', 1), 1,
        r"\[duplicate-candidate\]")
    sub("nan-score.json", scores(flat).replace(b"0.05", b"NaN", 1), 1, r"\[score-not-finite\]|\[not-json\]")
    sub("replies-one-short.txt", "".join(f"reply {i}\n" for i in ids()[1:]).encode(), 1, r"\[wrong-shape\]")
    sub("replies-one-long.txt", "".join(f"reply {i}\n" for i in [*ids(), "x"]).encode(), 1, r"\[wrong-shape\]")
    sub("replies-latin1.txt", "".join(f"r\xe9ply {i}\n" for i in ids()).encode("latin-1"), 1, r"\[bad-encoding\]")
    sub("scores-utf16.json", scores(flat).decode().encode("utf-16"), 1, r"\[bad-encoding\]")
    sub("replies-100mb-line.txt", lambda: b"ab " * (100 * MB // 3) + b"\n" + b"r\n" * (len(ids()) - 1), 1,
        r"\[line-too-long\]", seconds=30)
    # 30 MB, not 100: a JSON score document holding a 100 MB key of a known item peaks at 5.3x its size in the
    # shared reader (formats.scores, ubuntu alike), over the bound whatever the benchmark
    sub("text-30mb-name.json", lambda: scores({ids()[0]: {"ab " * (30 * MB // 3): 1.0}}), 1,
        r"\[unknown-candidate\]", seconds=30)
    # 19 columns score each turn among its first 19 candidates, which leaves out the release's gold: said
    sub("matrix-19-columns.csv", "\n".join(",".join(["0.5"] * 19) for _ in ids()).encode(), 0,
        r"scored among its first 19 candidates only")
    sub("fifo.json", None, 2, r"FIFO", seconds=AT_ONCE, rss=100 * MB)
    sub("fifo-replies.txt", None, 2, r"FIFO", seconds=AT_ONCE, rss=100 * MB)
    if not dry:
        fifo(tmp / "subs" / "fifo.json")
        fifo(tmp / "subs" / "fifo-replies.txt")
    cases.append(Hostile("submission-dev-zero", ["score", "/dev/zero", "--benchmark", "convai2", "--data", DATA], 2,
                         message=r"not a regular file", seconds=AT_ONCE, rss=100 * MB))

    # ---- data (exit 2: the organizer's file; named by file:line, never shown) -----------------------------------
    good = tmp / "subs" / "good.json"

    def data(name, make, message, exit=2, **kw):
        folder = tmp / name
        if not dry:
            folder.mkdir()
            if make is None:
                fifo(folder / DATA)
            else:
                (folder / DATA).write_bytes(make() if callable(make) else make)
        cases.append(Hostile(name, ["score", "subs/good.json", "--benchmark", "convai2", "--data", f"{name}/{DATA}"],
                             exit, inputs=[good, folder / DATA], secrets=secrets, message=message, **kw))

    def lines(mutate) -> bytes:
        rows = (tmp / DATA).read_text(encoding="utf-8").splitlines() if not dry else []
        return ("\n".join(mutate(rows)) + "\n").encode()

    def at(k, new):
        return lambda rows: [*rows[:k], new(rows[k]), *rows[k + 1:]]

    turn = 4  # the first turn line of the file (after four persona lines)
    data("data-19-candidates", lambda: lines(at(turn, lambda r: r.rsplit("|", 1)[0])), r":5: 19 candidates")
    data("data-21-candidates", lambda: lines(at(turn, lambda r: r + "|one more")), r":5: 21 candidates")
    data("data-no-candidates", lambda: lines(at(turn, lambda r: r.split("\t\t")[0])), r":5: expected 'N text<TAB>")
    data("data-no-line-id", lambda: lines(at(turn, lambda r: "x" + r)), r":5: expected 'ID text'")
    data("data-label-not-candidate", lambda: lines(at(turn, lambda r: r.rsplit("|", 1)[0] + "|something else")),
         r"turn valid_self_original:1:5: no candidate equals the label")
    data("data-latin1", lambda: lines(at(turn, lambda r: r)).replace(b"persona", b"p\xe9rsona", 1),
         r"bad-encoding|not UTF-8")
    data("data-empty", b"", r"no turns|empty")
    data("data-fifo", None, r"FIFO", seconds=AT_ONCE, rss=100 * MB)
    data("data-100mb-persona", lambda: b"1 your persona: " + b"ab " * (100 * MB // 3) + b"\n" + lines(
        lambda rows: rows[1:]), None, exit=0, seconds=60)
    data("data-100mb-candidate", lambda: lines(at(turn, lambda r: r.replace("|", "|" + "ab " * (100 * MB // 3), 1))),
         r":5: the turn's label and candidates exceed 1048576 characters", seconds=30)
    if not dry:
        (tmp / "data-link-to-dev-zero").mkdir()
        (tmp / "data-link-to-dev-zero" / DATA).symlink_to("/dev/zero")
    cases.append(Hostile("data-link-to-dev-zero", ["score", "subs/good.json", "--benchmark", "convai2", "--data",
                                                   f"data-link-to-dev-zero/{DATA}"], 2, message=r"not a regular file",
                         seconds=AT_ONCE, rss=100 * MB))
    cases.append(Hostile("data-dev-zero", ["score", "subs/good.json", "--benchmark", "convai2", "--data",
                                           "/dev/zero"], 2, message=r"/dev/zero: neither a ConvAI2 file", seconds=AT_ONCE,
                         rss=100 * MB))
    return cases, {"cwd": tmp}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build(tmp_path_factory.mktemp("hostile-convai2"))


NAMES = [c.name for c in build(Path("."), dry=True)[0]]


@pytest.mark.parametrize("name", NAMES)
def test_hostile_convai2(built, name):
    cases, extra = built
    next(c for c in cases if c.name == name).check(cwd=extra["cwd"])


if __name__ == "__main__":  # measure every case: name | exit | seconds | peak RSS MB | last line
    import tempfile

    from hostile import run_isolated

    with tempfile.TemporaryDirectory() as d:
        cs, _ = build(Path(d))
        for c in cs:
            o = run_isolated(c.args, cwd=Path(d), env=c.env, timeout=max(c.seconds * 4, 20))
            last = (o.stderr.strip().splitlines() or [""])[-1][:150]
            print(f"{c.name} | {o.code} | {o.seconds:.2f} | {o.peak_rss / MB:.0f} | {last}", flush=True)
