"""Hostile inputs for the DSTC7 / DSTC8 reader: rankings, data files, ground-truth TSVs, FIFOs and devices.

Each case is one CLI run judged by :class:`hostile.Hostile`: the documented exit code (1 the submission's fault,
2 usage / organiser data), one whole message per line and no Python wording, no correct id of the data in any
output, peak memory <= 3x the inputs + 200 MB, and bounded time (a FIFO or a device is refused at once).

``python tests/test_hostile_dstc7.py`` prints every case's exit code, seconds and peak RSS (the closing table).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hostile import MB, Hostile, fifo  # noqa: E402

from dialeval.baselines.dstc7 import write_samples  # noqa: E402

AT_ONCE = 2.0
"""Seconds for a FIFO or a device to be refused, interpreter start-up included (see test_hostile_scores.py)."""


def ranking(eid, ids):
    return {"example-id": eid, "candidate-ranking": [{"candidate-id": c, "confidence": 1.0} for c in ids]}


def build(tmp: Path, dry: bool = False) -> list[Hostile]:
    data = tmp / "data"
    subs = tmp / "subs"
    examples, secrets = [], []
    if not dry:
        write_samples(data, "dstc7")
        subs.mkdir()
        examples = json.loads((data / "ubuntu_dev_subtask_1.json").read_text())
        secrets = [c["candidate-id"] for e in examples for c in e["options-for-correct-answers"]]
    dev1 = data / "ubuntu_dev_subtask_1.json"
    cases: list[Hostile] = []

    def wrong(e) -> list[str]:  # an example's options without its correct ids (a run that shows no gold)
        gold = {c["candidate-id"] for c in e["options-for-correct-answers"]}
        return [o["candidate-id"] for o in e["options-for-next"] if o["candidate-id"] not in gold]

    def case(name, content, exit: int, message=None, data_file: Path = dev1, extra=(), **kw) -> Path:
        p = subs / f"{name}.json"
        if content is not None and not dry:
            p.write_bytes(content() if callable(content) else content)
        args = ["score", str(p.relative_to(tmp)), "--benchmark", kw.pop("benchmark", "dstc7"), "--data",
                str(data_file.relative_to(tmp)), *extra]
        cases.append(Hostile(name, args, exit, inputs=[p, data_file], secrets=secrets, message=message,
                             max_lines=None, **kw))
        return p

    def runs(make) -> bytes:
        return json.dumps([make(e) for e in examples]).encode()

    # ---- rankings the data does not allow ---------------------------------------------------------------------
    case("duplicate-example-id", lambda: runs(lambda e: ranking(examples[0]["example-id"], wrong(e))), 1,
         r"\[duplicate-dialog\]")
    case("candidate-outside-example", lambda: runs(lambda e: ranking(e["example-id"], ["ZZZZZZZZZZZZ", *wrong(e)])),
         1, r"(?s)\[unknown-candidate\].*ZZZZZZZZZZZZ")
    case("candidate-listed-twice", lambda: runs(lambda e: ranking(e["example-id"], wrong(e) + wrong(e)[:1])), 1,
         r"\[duplicate-candidate\]")
    case("none-in-subtask-1", lambda: runs(lambda e: ranking(e["example-id"], ["NONE", *wrong(e)])), 1,
         r"NONE is an answer only where")
    case("example-id-object", lambda: runs(lambda e: ranking({"id": e["example-id"]}, wrong(e))), 1, r"\[wrong-type\]")
    case("unknown-examples-only", json.dumps([ranking(9_000_000 + j, ["A"]) for j in range(50_000)]).encode(), 1,
         r"\[unknown-dialog\].*more problems not listed|more problems not listed")
    case("empty-array", b"[]", 0, r"\[missing-dialog\]")
    case("a-million-empty-objects", b"[" + b",".join([b"{}"] * 1_000_000) + b"]", 1, r"\[missing-key\]")
    case("lenient-crash", lambda: runs(lambda e: {"example-id": str(e["example-id"]), "candidate-ranking": [{}]}), 1,
         r"\[official-crash\]", extra=["--lenient"])
    # subtask 2: one ranking of 10^6 ids, none of them in the pool; and 10^4 rankings of 100 pool ids each
    pool = [f"P{j:011d}" for j in range(1000)]
    st2 = data / "ubuntu_dev_subtask_2.json"
    st2_big = data / "big" / "ubuntu_dev_subtask_2.json"
    if not dry:
        st2.write_text(json.dumps([{"example-id": 1, "options-for-next": [{"candidate-id": c} for c in pool],
                                    "options-for-correct-answers": [{"candidate-id": pool[7]}], "scenario": 2}]))
        st2_big.parent.mkdir()
        st2_big.write_text(json.dumps([{"example-id": e, "options-for-next": [{"candidate-id": pool[(e * 7 + j) % 1000]}
                                                                              for j in range(10)],
                                        "options-for-correct-answers": [{"candidate-id": pool[(e * 7) % 1000]}],
                                        "scenario": 2} for e in range(10_000)]))
    case("subtask-2-a-million-ids-outside-the-pool",
         lambda: json.dumps([ranking(1, [f"Q{j:011d}" for j in range(1_000_000)])]).encode(), 1,
         r"\[unknown-candidate\]", data_file=st2)
    case("subtask-2-a-million-entries", lambda: json.dumps(
        [ranking(e, [pool[(e * 13 + j) % 1000] for j in range(100)]) for e in range(10_000)]).encode(), 0,
        data_file=st2_big)
    # the released form: data files list no candidates, the 120,000-candidate pool is a file beside them
    st2_pool = data / "pooled" / "ubuntu_dev_subtask_2.json"
    if not dry:
        st2_pool.parent.mkdir()
        (st2_pool.parent / "candidate_pool.tsv").write_text("".join(f"C{j:011d}\tu\n" for j in range(120_000)))
        st2_pool.write_text(json.dumps([{"example-id": e, "options-for-next": [], "scenario": 2,
                                         "options-for-correct-answers": [{"candidate-id": f"C{e * 11:011d}"}]}
                                        for e in range(10_000)]))
    case("subtask-2-pool-file-a-million-entries", lambda: json.dumps(
        [ranking(e, [f"C{(e * 13 + j) % 120_000:011d}" for j in range(100)]) for e in range(10_000)]).encode(), 0,
        data_file=st2_pool)
    case("subtask-2-pool-file-a-million-ids-outside", lambda: json.dumps(
        [ranking(1, [f"Q{j:011d}" for j in range(1_000_000)])]).encode(), 1, r"\[unknown-candidate\]",
        data_file=st2_pool)

    # ---- files that are not a UTF-8 JSON array ----------------------------------------------------------------
    case("latin-1-bytes", b'[{"example-id": 1, "candidate-ranking": [{"candidate-id": "caf\xe9"}]}]', 1,
         r"\[bad-encoding\]")
    case("utf-16", "[]".encode("utf-16"), 1, r"\[bad-encoding\]")
    case("gzip", b"\x1f\x8b\x08\x00" + b"\x00" * 40, 1, r"\[wrong-file-type\]")
    case("empty-file", b"", 1, r"\[empty-file\]")
    case("truncated", b'[{"example-id": 1, "candidate-ranking": [{"candidate-id": "A', 1, r"\[truncated-json\]")
    case("top-level-object", b'{"example-id": 1}', 1, r"\[not-a-list\]")
    case("nested-too-deep", b"[" * 100_000 + b"]" * 100_000, 1, r"\[json-too-deep\]|\[wrong-type\]|\[item-not")
    case("a-100-mb-line", lambda: b'[{"example-id": 1001, "candidate-ranking": [{"candidate-id": "' + b"x" * (100 * MB)
         + b'"}]}]', 1, r"\[unknown-candidate\]", seconds=30)
    fifo_sub = case("submission-fifo", None, 2, r"FIFO", seconds=AT_ONCE, rss=100 * MB)
    if not dry:
        fifo(fifo_sub)
    cases.append(Hostile("submission-dev-zero", ["score", "/dev/zero", "--benchmark", "dstc7", "--data",
                                                 str(dev1.relative_to(tmp))], 2, message=r"not a regular file",
                         seconds=AT_ONCE, rss=100 * MB))

    # ---- organiser files: exit 2 --------------------------------------------------------------------------------
    good = case("good-run", lambda: runs(lambda e: ranking(e["example-id"], wrong(e))), 0)
    bad_data = {"data-fifo": None, "data-latin-1": b'[{"example-id": "caf\xe9"}]', "data-not-a-list": b"{}",
                "data-no-example-id": b'[{"options-for-next": []}]',
                "data-100-mb-utterance": None}
    for name, content in bad_data.items():
        d = tmp / name / "ubuntu_dev_subtask_1.json"
        if not dry:
            d.parent.mkdir()
            if name == "data-fifo":
                fifo(d)
            elif name == "data-100-mb-utterance":  # organiser data with a huge text: scored, the text never decoded
                e = dict(examples[0], **{"messages-so-far": [{"speaker": "p", "utterance": "y" * (100 * MB)}]})
                d.write_text(json.dumps([e, *examples[1:]]))
            else:
                d.write_bytes(content)
        exit = 0 if name == "data-100-mb-utterance" else 2
        cases.append(Hostile(name, ["score", str(good.relative_to(tmp)), "--benchmark", "dstc7", "--data",
                                    str(d.relative_to(tmp))], exit, inputs=[good, d], secrets=secrets,
                             seconds=AT_ONCE if name == "data-fifo" else 30, max_lines=None,
                             rss=100 * MB if name == "data-fifo" else None))
    test1 = data / "ubuntu_test_subtask_1.json"
    for name, content in {"keys-fifo": None, "keys-latin-1": b"1001\tcaf\xe9\n", "keys-no-tab": b"1001 ABC\n"}.items():
        k = tmp / f"{name}.tsv"
        if not dry:
            fifo(k) if content is None else k.write_bytes(content)
        cases.append(Hostile(name, ["score", str(good.relative_to(tmp)), "--benchmark", "dstc7", "--data",
                                    str(test1.relative_to(tmp)), "--keys", str(k.relative_to(tmp))], 2,
                             inputs=[good, test1], secrets=secrets, seconds=AT_ONCE if content is None else 30,
                             rss=100 * MB if content is None else None, max_lines=None))
    cases.append(Hostile("data-dev-zero", ["score", str(good.relative_to(tmp)), "--benchmark", "dstc7", "--data",
                                           "/dev/zero"], 2, message=r"not a regular file", seconds=AT_ONCE,
                         rss=100 * MB))
    return cases


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hostile-dstc7")
    return build(tmp), tmp


NAMES = [c.name for c in build(Path("."), dry=True)]


@pytest.mark.parametrize("name", NAMES)
def test_hostile_dstc7(built, name):
    cases, tmp = built
    next(c for c in cases if c.name == name).check(cwd=tmp)


if __name__ == "__main__":  # measure every case: name | exit | seconds | peak RSS MB | last stderr line
    import tempfile

    from hostile import run_isolated

    with tempfile.TemporaryDirectory() as d:
        for c in build(Path(d)):
            o = run_isolated(c.args, cwd=Path(d), env=c.env, timeout=max(c.seconds * 4, 20))
            last = (o.stderr.strip().splitlines() or [""])[-1][:120]
            print(f"{c.name} | {o.code} | {o.seconds:.2f} | {o.peak_rss / MB:.0f} | {last}", flush=True)
