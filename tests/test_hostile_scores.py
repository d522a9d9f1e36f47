"""Hostile score-based submissions on the Ubuntu benchmark: ``.npy``, headerless ``.csv`` and JSON scores.

Each case is one CLI run judged by :class:`hostile.Hostile` (exit code, one-line messages, no Python wording,
no gold text in any output, peak memory <= 3x the input + 200 MB, time bounded). The matrix forms are judged
from their header before anything is allocated, pickled arrays are never unpickled, and every problem a
submission has is exit 1 with a code.
"""

from __future__ import annotations

import io
import json
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from hostile import MB, Hostile, fifo  # noqa: E402

from dialeval.formats.ubuntu import read_eval  # noqa: E402
from dialeval.simulator.ubuntu import write_fixture  # noqa: E402

ROWS = 20  # test.csv data rows of the fixture
AT_ONCE = 2.0
"""Seconds for a FIFO or a device to be refused, interpreter start-up included: 0.4 s on an idle machine, and
over 1 s seen while other suites load both cores; a reader that blocks on one is killed at 20 s, so any bound
under that still tells a refusal from a hang."""


def npy_header(shape, descr="<f8", fortran=False, version=(1, 0), pad_to=None) -> bytes:
    """The bytes of a .npy header exactly as numpy writes it, for any (lying) shape."""
    d = f"{{'descr': {descr!r}, 'fortran_order': {fortran!r}, 'shape': {tuple(shape)!r}, }}"
    body = d.encode("latin1")
    head_len = 10 if version == (1, 0) else 12
    total = head_len + len(body) + 1
    pad = (-total) % 64 if pad_to is None else pad_to
    body = body + b" " * pad + b"\n"
    size = struct.pack("<H", len(body)) if version == (1, 0) else struct.pack("<I", len(body))
    return b"\x93NUMPY" + bytes(version) + size + body


def npy_bytes(a: np.ndarray, allow_pickle: bool = False) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=allow_pickle)
    return buf.getvalue()


class _Boom:
    """Unpickling this would create a file: proof that no submission is ever unpickled."""

    def __init__(self, target: str):
        self.target = target

    def __reduce__(self):
        return (open, (self.target, "w"))


def build(tmp: Path, dry: bool = False) -> tuple[list[Hostile], dict]:
    """Every case, its files written under ``tmp`` (``dry``: the cases alone, no file written)."""
    data = tmp / "ubuntu"
    subs = tmp / "subs"
    secrets = []
    if not dry:
        write_fixture(data, seed=3, n_train=10, n_valid=5, n_test=ROWS)
        golds = [c[0] for c in read_eval(data / "test.csv").candidates]
        secrets = [g for g in golds if len(g) > 25][:5]
        subs.mkdir()
    # paths relative to the run's folder (cwd): messages name the submission, and a temp path is not one to show
    base = ["score", "--benchmark", "ubuntu", "--data", "ubuntu", "--split", "test"]
    cases: list[Hostile] = []
    rng = np.random.default_rng(0)
    good = rng.random((ROWS, 10))

    def case(name, content: bytes | None, suffix: str, exit: int, message=None, **kw):
        p = subs / f"{name}{suffix}"
        if content is not None and not dry:
            p.write_bytes(content() if callable(content) else content)
        args = [*base[:1], str(p.relative_to(tmp)), *base[1:]] + kw.pop("extra", [])
        cases.append(Hostile(name, args, exit, inputs=[p, data / "test.csv"], secrets=secrets, message=message,
                             max_lines=None, **kw))
        return p

    # ---- .npy --------------------------------------------------------------------------------------------------
    case("npy-huge-shape", npy_header((10**12, 10)), ".npy", 1, r"\[wrong-shape\]", seconds=5)
    case("npy-huge-columns", npy_header((ROWS, 10**12)), ".npy", 1, r"\[wrong-shape\]", seconds=5)
    case("npy-header-shorter-than-declared", npy_header((ROWS, 10))[:40], ".npy", 1, r"\[unreadable-matrix\]")
    case("npy-header-length-4gb", b"\x93NUMPY\x02\x00" + struct.pack("<I", 2**32 - 1) + b"{", ".npy", 1,
         r"\[unreadable-matrix\]", seconds=5)
    case("npy-data-truncated", npy_bytes(good)[:-20], ".npy", 1, r"\[unreadable-matrix\]")
    case("npy-cut-in-magic", b"\x93NUM", ".npy", 1, r"\[unreadable-matrix\]")
    case("npy-empty", b"", ".npy", 1, r"\[empty-file\]")
    case("npy-garbage-header", npy_header((ROWS, 10))[:10] + b"{'descr': __import__('os')}" + b" " * 40 + b"\n",
         ".npy", 1, r"\[unreadable-matrix\]")
    case("npy-negative-shape", npy_header((-5, 10)), ".npy", 1, r"\[unreadable-matrix\]")
    marker = tmp / "unpickled"
    obj = np.empty((ROWS, 10), dtype=object)
    obj[0, 0] = _Boom(str(marker))
    case("npy-object-pickled", npy_bytes(obj, allow_pickle=True), ".npy", 1, r"\[wrong-dtype\]")
    case("npy-fortran-order", npy_bytes(np.asfortranarray(good)), ".npy", 0)
    case("npy-big-endian", npy_bytes(good.astype(">f8")), ".npy", 0)
    case("npy-float16", npy_bytes(good.astype(np.float16)), ".npy", 0)
    case("npy-int64", npy_bytes((good * 1000).astype(np.int64)), ".npy", 0)
    case("npy-bool", npy_bytes(good > 0.5), ".npy", 1, r"\[wrong-dtype\]")
    case("npy-complex", npy_bytes(good.astype(complex)), ".npy", 1, r"\[wrong-dtype\]")
    case("npy-structured", npy_bytes(np.zeros(ROWS, dtype=[("a", "<f8")] * 1)), ".npy", 1, r"\[wrong-dtype\]")
    nan = good.copy()
    nan[3, 4], nan[7, 0] = np.nan, np.inf
    case("npy-nan-inf", npy_bytes(nan), ".npy", 1, r"\[score-not-finite\]")
    case("npy-3d", npy_bytes(np.zeros((ROWS, 10, 1))), ".npy", 1, r"\[wrong-shape\]")
    case("npy-wrong-rows", npy_bytes(np.zeros((ROWS + 1, 10))), ".npy", 1, r"\[wrong-shape\]")
    npz = io.BytesIO()
    np.savez(npz, a=good)
    case("npz-named-npy", npz.getvalue(), ".npy", 1, r"\[wrong-file-type\]")
    case("npz-as-npz", npz.getvalue(), ".npz", 1, r"\[wrong-file-type\]")
    case("npy-fifo", None, ".npy", 2, r"FIFO", seconds=AT_ONCE, rss=100 * MB)
    if not dry:
        fifo(subs / "npy-fifo.npy")
    cases.append(Hostile("npy-dev-zero", [*base[:1], "/dev/zero", *base[1:]], 2, message=r"not a regular file",
                         seconds=AT_ONCE, rss=100 * MB))

    # ---- organizer data: exit 2, and a FIFO is refused at once ----------------------------------------------------
    good_npy = case("data-good-npy", npy_bytes(good), ".npy", 0)
    for name, make in (("data-test-csv-fifo", None), ("data-test-csv-gzip", b"\x1f\x8b\x08\x00" + b"\x00" * 40)):
        d = tmp / name
        if not dry:
            d.mkdir()
            if make is None:
                fifo(d / "test.csv")
            else:
                (d / "test.csv").write_bytes(make)
        cases.append(Hostile(name, ["score", str(good_npy.relative_to(tmp)), "--benchmark", "ubuntu", "--data", name,
                                    "--split", "test"], 2, inputs=[good_npy],
                             message=r"FIFO" if make is None else r"gzip", seconds=AT_ONCE if make is None else 30,
                             rss=100 * MB))

    # ---- .csv --------------------------------------------------------------------------------------------------
    rows = [",".join(repr(float(x)) for x in r) for r in good]
    case("csv-crlf", ("\r\n".join(rows) + "\r\n").encode(), ".csv", 0)
    case("csv-quoted", "\n".join(",".join(f'"{c}"' for c in r.split(",")) for r in rows).encode(), ".csv", 0)
    case("csv-ragged", "\n".join(r if i % 2 else r + ",1.0" for i, r in enumerate(rows)).encode(), ".csv", 1,
         r"\[wrong-shape\]")
    case("csv-bom", b"\xef\xbb\xbf" + "\n".join(rows).encode(), ".csv", 0)
    case("csv-utf16", "\n".join(rows).encode("utf-16"), ".csv", 1, r"\[bad-encoding\]")
    case("csv-gzip", b"\x1f\x8b\x08\x00" + b"\x00" * 40, ".csv", 1, r"\[wrong-file-type\]")
    case("csv-words", "\n".join(["x"] * ROWS).encode(), ".csv", 1, r"\[score-not-number\]")
    if not dry:
        with open(subs / "csv-100mb-line.csv", "wb") as fh:
            cell = b"0.123456789,"
            fh.write(cell * (100 * MB // len(cell)) + b"1\n")
    case("csv-100mb-line", None, ".csv", 1, r"\[wrong-shape\]", seconds=30)
    case("csv-empty", b"", ".csv", 1, r"\[empty-file\]|\[wrong-shape\]")
    # one cell that will not parse: its excerpt is decoded from its first bytes (it cost 8x the file in numpy's
    # parser, then a decoded copy of the whole cell)
    case("csv-100mb-cell", lambda: b"x" * (100 * MB) + b"\n", ".csv", 1,
         r'line 1, column 1: "x{30,}\.\.\. is not a number', seconds=30)
    case("csv-unterminated-quote-then-100mb", lambda: b'"' + b"x" * (100 * MB) + b"\n", ".csv", 1,
         r'line 1, column 1: ""x{30,}\.\.\. is not a number', seconds=30)

    # ---- organizer data that is large but valid: held as read, never copied per character ------------------------
    big = tmp / "data-50mb-context"
    if not dry:
        import csv

        big.mkdir()
        with open(data / "test.csv", newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
        rows[1][0] = "zq " * (50 * MB // 3) + '"quoted" too'  # a quote elsewhere makes the whole row a quoted record
        with open(big / "test.csv", "w", newline="", encoding="utf-8") as fh:
            csv.writer(fh, lineterminator="\r\n").writerows(rows)
    cases.append(Hostile("data-test-csv-50mb-context", ["score", str(good_npy.relative_to(tmp)), "--benchmark", "ubuntu",
                                                         "--data", big.name, "--split", "test", "--json"], 0,
                         inputs=[good_npy, big / "test.csv"], secrets=secrets, seconds=30, max_lines=None))

    # ---- JSON scores ----------------------------------------------------------------------------------------------
    def doc(items) -> bytes:
        return json.dumps({"format": "scores", "items": items}).encode()

    items = {f"test:{i + 1}": {c: float(v) for c, v in zip(("gt", *[f"d{j}" for j in range(9)]), r, strict=True)}
             for i, r in enumerate(good)}
    ok = doc(items)
    case("json-ok", ok, ".json", 0)
    case("json-bom", b"\xef\xbb\xbf" + ok, ".json", 1, r"\[bad-encoding\]")
    case("json-trailing-text", ok + b" and more", ".json", 1, r"\[not-json\]")
    case("json-deep", b'{"format": "scores", "items": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", ".json", 1,
         r"\[json-too-deep\]")
    case("json-400-digit-int", ok.replace(b'"gt": ', b'"gt": 1' + b"7" * 400 + b", \"x\": ", 1), ".json", 1,
         r"\[score-out-of-range\]")
    case("json-1e6-digit-int", ok.replace(b'"gt": ', b'"gt": ' + b"9" * 10**6 + b", \"x\": ", 1), ".json", 1,
         r"\[score-out-of-range\]|\[not-json\]")
    case("json-duplicate-item", ok[:-2] + b', "test:1": {"gt": 1.0}}}', ".json", 1, r"\[duplicate-dialog\]")
    case("json-duplicate-candidate", ok.replace(b'"gt": ', b'"gt": 5.0, "gt": ', 1), ".json", 1,
         r"\[duplicate-candidate\]")
    ints = {k: dict(v) for k, v in items.items()}
    ints["test:1"] = {"gt": 2**62 + 1, "d0": 2**62}
    case("json-int-2p62-exact", doc(ints), ".json", 0, extra=["--json"])
    case("json-1m-candidates", lambda: doc({"test:1": {f"c{j}": 0.5 for j in range(1_000_000)}}), ".json", 1,
         r"\[unknown-candidate\]", seconds=30)
    case("json-1m-items", lambda: doc({f"x:{j}": {"gt": 1.0} for j in range(1_000_000)}), ".json", 1,
         r"\[unknown-dialog\]", seconds=30)
    # one 100 MB candidate id on a known item: its pointer and message need the id's first characters and its
    # length only (the whole id in the pointer cost two more copies and a 100 MB line: 437 MB peak, now 237)
    case("json-100mb-candidate", lambda: doc({"test:1": {"c" * (100 * MB): 0.5, "gt": 1.0}}), ".json", 1,
         r'#/items/test:1/c{200}\.\.\.\(104,857,600 characters\): candidate_id "c{30,}\.\.\. is not a candidate',
         seconds=30)
    case("json-many-bad-scores", doc({f"test:{i + 1}": {c: "high" for c in ("gt", "d0", "d1")} for i in range(ROWS)}),
         ".json", 1, r"more problems not listed")
    ranked = [{"dialog_id": "nope:1", "lst_candidate_id": [{"candidate_id": "gt", "rank": 10**9}]}]
    case("ranked-unknown-item-rank-1e9", json.dumps(ranked).encode(), ".json", 1, r"\[rank-out-of-range\]",
         seconds=5)
    return cases, {"marker": marker, "data": data, "cwd": tmp}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return build(tmp_path_factory.mktemp("hostile-scores"))


NAMES = [c.name for c in build(Path("."), dry=True)[0]]


@pytest.mark.parametrize("name", NAMES)
def test_hostile_score_submission(built, name):
    cases, extra = built
    c = next(c for c in cases if c.name == name)
    out = c.check(cwd=extra["cwd"])
    assert not extra["marker"].exists(), "a submitted pickle was unpickled"
    if name == "json-int-2p62-exact":  # 2**62 + 1 above 2**62: the gold ranks first, no tie
        assert '"r10@1"' in out.stdout or "r10@1" in out.stdout


if __name__ == "__main__":  # measure every case: name | exit | seconds | peak RSS MB
    import tempfile

    from hostile import run_isolated

    with tempfile.TemporaryDirectory() as d:
        cs, _ = build(Path(d))
        for c in cs:
            try:
                o = run_isolated(c.args, cwd=Path(d), env=c.env, timeout=max(c.seconds * 4, 20))
                first = (o.stderr.strip().splitlines() or [""])[-1][:150]
                print(f"{c.name} | {o.code} | {o.seconds:.2f} | {o.peak_rss / MB:.0f} | {first}", flush=True)
            except AssertionError as e:
                print(f"{c.name} | timeout | - | - | {str(e)[:150]}", flush=True)
