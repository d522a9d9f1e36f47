"""Hostile inputs for AirDialogue (issue 18, item 4): predictions, data and KB files, infer-bleu hypotheses.

Each case is one CLI run judged by :class:`hostile.Hostile` (exit code, one-line messages, no Python wording, no
secret in any output, memory within 3x the inputs + 200 MB, time). The split is simulated, then its flight numbers
are renumbered to long unique numbers, so that a gold flight number (a secret, with the gold names) cannot appear
in an output by accident (``1003`` would match byte counts).
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from hostile import MB, Hostile, fifo

N = 40
FLIGHT_BASE = 7_391_840_000  # renumbered flights: 7391840000 + 100 * line + column


def _renumber(data_dir: Path) -> tuple[list[str], list[str]]:
    """Renumber every flight (KB, gold, the human's action); returns (gold names, gold flight numbers)."""
    data = [json.loads(x) for x in (data_dir / "dev_data.json").read_text().splitlines()]
    kbs = [json.loads(x) for x in (data_dir / "dev_kb.json").read_text().splitlines()]
    names, flights = [], []
    for i, (d, kb) in enumerate(zip(data, kbs)):
        new = {f["flight_number"]: FLIGHT_BASE + 100 * i + j for j, f in enumerate(kb["kb"])}
        for f in kb["kb"]:
            f["flight_number"] = new[f["flight_number"]]
        if kb.get("reservation"):
            kb["reservation"] = new.get(kb["reservation"], kb["reservation"])
        for key in ("expected_action", "action"):
            if isinstance(d.get(key), dict):
                d[key]["flight"] = [new[f] for f in d[key].get("flight", [])]
        names.append(d["expected_action"]["name"])
        flights.extend(str(f) for f in d["expected_action"]["flight"])
    (data_dir / "dev_data.json").write_text("".join(json.dumps(d) + "\n" for d in data))
    (data_dir / "dev_kb.json").write_text("".join(json.dumps(k) + "\n" for k in kbs))
    return names, flights


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    from dialeval.simulator.airdialogue import write_airdialogue

    d = tmp_path_factory.mktemp("air") / "data"
    write_airdialogue(d, seed=11, n=N, split="dev")
    names, flights = _renumber(d)
    return d, names + flights


def line(name="Zed Qux", flight=(), status="book", **extra) -> str:
    return json.dumps({"action": {"name": name, "flight": list(flight), "status": status}, **extra})


def good_lines(n=N) -> list[str]:
    return [line() for _ in range(n)]


def write(path: Path, lines: list[str] | bytes) -> Path:
    path.write_bytes(lines if isinstance(lines, bytes) else "".join(x + "\n" for x in lines).encode())
    return path


def score_args(tmp, sub, data, *more) -> list:
    return ["score", rel(tmp, sub), "--benchmark", "airdialogue", "--data", rel(tmp, data), "--split", "dev", *more]


def rel(tmp: Path, p: Path) -> str:
    """``p`` as the run (started in ``tmp``) names it: user paths under pytest's temp folder must not look like
    private temp paths to the harness."""
    try:
        return os.path.relpath(p, tmp)
    except ValueError:
        return str(p)


def link_data(tmp: Path, data: Path) -> Path:
    """The shared split, seen from ``tmp`` as ``data/``."""
    d = tmp / "data"
    if not d.exists():
        os.symlink(data, d)
    return d


def copy_split(src: Path, dst: Path) -> Path:
    dst.mkdir(parents=True)
    for name in ("dev_data.json", "dev_kb.json"):
        (dst / name).write_bytes((src / name).read_bytes())
    return dst


# ---------------------------------------------------------------------------------------------- predictions
def _prediction_cases(tmp: Path):
    """(name, prediction bytes or lines, extra args, exit, message regex)."""
    long_flights = line(flight=range(100_000))  # ~ 700 KB: several flights, a wrong answer
    return [
        ("valid-wrong-answers", good_lines(), [], 0, None),
        ("missing-lines", good_lines(N - 3), [], 1, r"\[line-count\]"),
        ("extra-lines", good_lines(N + 5), [], 1, r"\[line-count\]"),
        ("blank-line", good_lines(5) + [""] + good_lines(N - 6), [], 1, r"\[blank-line\]"),
        ("not-json", good_lines(5) + ["{'action': 1}"] + good_lines(N - 6), [], 1, r"\[not-json\]"),
        ("wrong-types", [json.dumps({"action": {"name": 5, "flight": "1000", "status": None}})] + good_lines(N - 1),
         [], 1, r"\[wrong-type\]"),
        ("flight-array-of-strings", [line(flight=["x"] * 50_000)] + good_lines(N - 1), [], 1,
         r"and 49999 more in this array"),
        ("not-an-object", ["[1, 2]"] + good_lines(N - 1), [], 1, r"\[item-not-object\]"),
        ("unknown-status", [line(status="BOOK")] + good_lines(N - 1), [], 1, r"\[unknown-status\]"),
        ("huge-name", [line(name="Q" * 900_000)] + good_lines(N - 1), [], 0, None),
        ("huge-flight-list", [long_flights] + good_lines(N - 1), [], 0, None),
        ("line-over-1-MiB", [line(name="Q" * (2 * MB))] + good_lines(N - 1), [], 1, r"\[line-too-long\]"),
        ("predicted-flight-past-64-bits", [line(flight=[2**64 + 5])] + good_lines(N - 1), [], 0, None),
        ("predicted-flight-of-5000-digits", ['{"action": {"name": "a b", "flight": [' + "9" * 5000 +
                                             '], "status": "book"}}'] + good_lines(N - 1), [], 1,
         r"(?s)\[wrong-type\].*#/0/action/flight/0: line 1: an integer of more than 4,300 digits"),
        ("id-of-5000-digits", ['{"id": ' + "9" * 4000 + ', "action": {"name": "a b", "flight": [], '
                               '"status": "book"}}'] + good_lines(N - 1), [], 1, r"\[id-mismatch\]"),
        ("bom", b"\xef\xbb\xbf" + "".join(x + "\n" for x in good_lines()).encode(), [], 1, r"\[bad-encoding\]"),
        ("utf-16", "".join(x + "\n" for x in good_lines()).encode("utf-16"), [], 1, r"\[bad-encoding\]"),
        ("gzip", gzip.compress("".join(x + "\n" for x in good_lines()).encode(), mtime=0), [], 1,
         r"(?s)\[wrong-file-type\].*gzip"),
        ("binary", b"\x7fELF\x02\x01\x01" + bytes(4096), [], 1, r"(?s)\[wrong-file-type\].*binary data"),
        ("empty", b"", [], 1, r"\[empty-file\]"),
        ("crlf", "".join(x + "\r\n" for x in good_lines()).encode(), [], 0, None),
        ("lenient-one-word-name", [line(name="Zed")] + good_lines(N - 1), ["--lenient"], 0,
         r"one-word name|name without a space"),
        ("lenient-blank-line", good_lines(5) + [""] + good_lines(N - 6), ["--lenient"], 1, r"\[official-crash\]"),
        ("lenient-5000-digits", ['{"action": {"name": "a b", "flight": [' + "9" * 5000 + '], "status": "book"}}']
         + good_lines(N - 1), ["--lenient"], 1, r"\[official-crash\]"),
        ("lenient-huge-flight-strings", [json.dumps({"action": {"name": "a b", "flight": ["7" * 5000] * 100,
                                                                "status": "book"}})] + good_lines(N - 1),
         ["--lenient"], 0, None),
    ]


CASE_NAMES = [c[0] for c in _prediction_cases(Path("."))]


@pytest.mark.parametrize("case", CASE_NAMES)
def test_prediction_file(split, tmp_path, case):
    data, secrets = split
    data = link_data(tmp_path, data)
    name, content, extra, code, message = next(c for c in _prediction_cases(tmp_path) if c[0] == case)
    sub = write(tmp_path / "preds.jsonl", content)
    Hostile(case, score_args(tmp_path, sub, data, *extra), code, inputs=[sub, data], secrets=secrets, message=message,
            max_lines=None if code == 1 else 1).check(cwd=tmp_path)


def test_million_blank_lines_list_a_bounded_number_of_problems(split, tmp_path):
    """Every line is a problem; the report keeps 1,000 per code and says how many more there are."""
    data, secrets = split
    data = link_data(tmp_path, data)
    sub = write(tmp_path / "blank.jsonl", b"\n" * 1_000_000)
    out = tmp_path / "report.json"
    Hostile("1M-blank-lines", score_args(tmp_path, sub, data, "--out", rel(tmp_path, out)), 1, inputs=[sub, data], secrets=secrets,
            message=r"\.\.\. 999,000 more problems not listed \(blank-line 999,000\)", outputs=[out], max_lines=None, seconds=30).check(cwd=tmp_path)
    report = json.loads(out.read_text())
    assert sum(p["code"] == "blank-line" for p in report["problems"]) == 1000


def test_single_50_MB_line(split, tmp_path):
    data, secrets = split
    data = link_data(tmp_path, data)
    sub = tmp_path / "one-line.jsonl"
    with open(sub, "wb") as f:
        f.write(b'{"action": {"name": "')
        f.write(b"Q" * (50 * MB))
        f.write(b'", "flight": [], "status": "book"}}\n')
    Hostile("50-MB-line", score_args(tmp_path, sub, data), 1, inputs=[sub, data], secrets=secrets,
            message=r"\[line-too-long\]", max_lines=None, rss=150 * MB + 200 * MB).check(cwd=tmp_path)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory", "missing"])
def test_special_prediction_files(split, tmp_path, kind):
    data, secrets = split
    data = link_data(tmp_path, data)
    sub = {"fifo": lambda: fifo(tmp_path / "p.jsonl"), "dev-zero": lambda: Path("/dev/zero"),
           "directory": lambda: tmp_path / "data", "missing": lambda: tmp_path / "none.jsonl"}[kind]()
    Hostile(f"predictions-{kind}", score_args(tmp_path, sub, data), 2, secrets=secrets, seconds=1.0 if kind in
            ("fifo", "dev-zero") else 30, rss=100 * MB, message=r"not a regular file|directory|no such file").check(cwd=tmp_path)


# ---------------------------------------------------------------------------------------------- data and KB
@pytest.mark.parametrize("which,kind", [("dev_data.json", "fifo"), ("dev_kb.json", "fifo"),
                                        ("dev_data.json", "dev-zero"), ("dev_kb.json", "dev-zero")])
def test_special_data_files(split, tmp_path, which, kind):
    data, secrets = split
    d = copy_split(data, tmp_path / "d")
    (d / which).unlink()
    if kind == "fifo":
        fifo(d / which)
    else:
        os.symlink("/dev/zero", d / which)
    sub = write(tmp_path / "p.jsonl", good_lines())
    Hostile(f"{which}-{kind}", score_args(tmp_path, sub, d), 2, secrets=secrets, seconds=1.0, rss=100 * MB,
            message=r"not a regular file").check(cwd=tmp_path)


def _kb_line(n_flights: int, first: int) -> bytes:
    """A KB line of ``n_flights`` flights numbered from ``first`` (so the line's own gold flights are among them)."""
    f = {"departure_airport": "HOU", "return_airport": "JFK", "departure_month": "Feb", "return_month": "Feb",
         "departure_day": "22", "return_day": "23", "departure_time_num": 2, "return_time_num": 11,
         "class": "economy", "price": 100, "num_connections": 1, "airline": "JetBlue", "flight_number": 0}
    head = json.dumps(f)[:-2]  # up to the flight number
    return (b'{"kb": [' + b", ".join(f"{head}{first + i}}}".encode() for i in range(n_flights))
            + b'], "reservation": 0}')


@pytest.mark.parametrize("n_flights,code,message", [(100_000, 2, r"dev_kb.json line 4: .*longer than the limit"),
                                                    (5_000, 2, r"dev_kb.json line 4: .*at most 1000"),
                                                    (1_000, 0, None)])
def test_kb_with_many_flights_on_a_line(split, tmp_path, n_flights, code, message):
    """100,000 flights on one line (30 MB) once took 2.2 GB; now a data error in bounded memory. 1,000 flights (the
    documented maximum) are scored, the prediction's distance taken over all of them."""
    data, secrets = split
    d = copy_split(data, tmp_path / "d")
    lines = (d / "dev_kb.json").read_bytes().splitlines()
    lines[3] = _kb_line(n_flights, FLIGHT_BASE + 300)
    (d / "dev_kb.json").write_bytes(b"\n".join(lines) + b"\n")
    preds = good_lines()
    preds[3] = line(flight=[FLIGHT_BASE + 300 + n_flights - 1])  # in the KB, never a gold flight
    sub = write(tmp_path / "p.jsonl", preds)
    Hostile(f"kb-{n_flights}-flights", score_args(tmp_path, sub, d), code, inputs=[sub, d], secrets=secrets,
            message=message).check(cwd=tmp_path)


def _edit_gold(d: Path, lineno: int, **changes) -> None:
    lines = (d / "dev_data.json").read_text().splitlines()
    obj = json.loads(lines[lineno])
    obj["expected_action"].update(changes)
    lines[lineno] = json.dumps(obj)
    (d / "dev_data.json").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("case,changes,message", [
    ("gold-flight-past-64-bits", {"flight": [2**64 + 7]}, r"dev_data.json line 3: .*not a 64-bit integer"),
    ("gold-flight-5000-digits", None, r"dev_data.json line 3: "),
    ("gold-flight-list-2000", {"flight": [FLIGHT_BASE] * 2000}, r"dev_data.json line 3: .*at most 1000"),
    ("gold-flight-not-in-kb", {"flight": [123456789]}, r"dev_data.json line 3: .*not in the line's KB"),
    ("gold-name-not-a-string", {"name": 17}, r"dev_data.json line 3: "),
])
def test_bad_gold(split, tmp_path, case, changes, message):
    data, secrets = split
    d = copy_split(data, tmp_path / "d")
    if changes is None:
        lines = (d / "dev_data.json").read_text().splitlines()
        lines[2] = '{"expected_action": {"name": "a b", "status": "book", "flight": [' + "9" * 5000 + "]}}"
        (d / "dev_data.json").write_text("\n".join(lines) + "\n")
    else:
        _edit_gold(d, 2, **changes)
    sub = write(tmp_path / "p.jsonl", good_lines())
    Hostile(case, score_args(tmp_path, sub, d), 2, inputs=[sub, d], secrets=secrets, message=message).check(cwd=tmp_path)


def test_data_and_kb_misaligned(split, tmp_path):
    data, secrets = split
    d = copy_split(data, tmp_path / "d")
    kb = (d / "dev_kb.json").read_text().splitlines()
    (d / "dev_kb.json").write_text("\n".join(kb[:-2]) + "\n")
    sub = write(tmp_path / "p.jsonl", good_lines())
    Hostile("kb-shorter-than-data", score_args(tmp_path, sub, d), 2, inputs=[sub, d], secrets=secrets,
            message=r"must align").check(cwd=tmp_path)


@pytest.mark.parametrize("which", ["dev_data.json", "dev_kb.json"])
def test_gzip_and_blank_data(split, tmp_path, which):
    data, secrets = split
    d = copy_split(data, tmp_path / "d")
    (d / which).write_bytes(gzip.compress((d / which).read_bytes(), mtime=0))
    sub = write(tmp_path / "p.jsonl", good_lines())
    Hostile(f"{which}-gzip", score_args(tmp_path, sub, d), 2, inputs=[sub, d], secrets=secrets, message=r"gzip").check(cwd=tmp_path)
    d2 = copy_split(data, tmp_path / "d2")
    lines = (d2 / which).read_text().splitlines()
    lines[4] = ""
    (d2 / which).write_text("\n".join(lines) + "\n")
    Hostile(f"{which}-blank-line", score_args(tmp_path, sub, d2), 2, inputs=[sub, d2], secrets=secrets,
            message=rf"{which} line 5: blank line").check(cwd=tmp_path)


# ---------------------------------------------------------------------------------------------- outputs
@pytest.mark.parametrize("target", ["submission", "data", "kb"])
def test_out_onto_an_input_is_refused(split, tmp_path, target):
    data, secrets = split
    d = copy_split(data, tmp_path / "d")
    sub = write(tmp_path / "p.jsonl", good_lines())
    out = {"submission": sub, "data": d / "dev_data.json", "kb": d / "dev_kb.json"}[target]
    Hostile(f"out-onto-{target}", score_args(tmp_path, sub, d, "--json", "--out", rel(tmp_path, out)), 2, secrets=secrets,
            unchanged=[out], message=r"refusing|overwrite").check(cwd=tmp_path)


def test_baseline_out_onto_the_data_is_refused(split, tmp_path):
    data, secrets = split
    d = copy_split(data, tmp_path / "d")
    out = d / "dev_data.json"
    Hostile("baseline-out-onto-data", ["airdialogue", "baseline", "rule-based", "--data", "d", "--out", "d/dev_data.json"],
            2, unchanged=[out], message=r"refusing").check(cwd=tmp_path)


# ---------------------------------------------------------------------------------------------- infer-bleu
@pytest.mark.parametrize("kind,code,message", [
    ("fifo", 2, r"not a regular file"), ("dev-zero", 2, r"not a regular file"),
    ("gzip", 1, r"\[wrong-file-type\]"), ("bom", 1, r"\[bad-encoding\]"), ("latin-1", 1, r"\[bad-encoding\]"),
    ("line-over-1-MiB", 1, r"\[line-too-long\]"), ("wrong-count", 1, r"\[line-count\]"),
])
def test_infer_bleu_hypotheses(split, tmp_path, kind, code, message):
    data, secrets = split
    hyp = tmp_path / "h.txt"
    if kind == "fifo":
        fifo(hyp)
    elif kind == "dev-zero":
        hyp = Path("/dev/zero")
    else:
        hyp.write_bytes({"gzip": gzip.compress(b"hello\n", mtime=0), "bom": b"\xef\xbb\xbfhello\n",
                         "latin-1": b"caf\xe9\n", "line-over-1-MiB": b"w " * MB + b"\n",
                         "wrong-count": b"hello\n"}[kind])
    Hostile(f"infer-bleu-{kind}", ["airdialogue", "infer-bleu", rel(tmp_path, hyp), "--data", rel(tmp_path, link_data(tmp_path, data))], code,
            secrets=secrets, message=message, seconds=1.0 if kind in ("fifo", "dev-zero") else 30,
            rss=100 * MB if kind in ("fifo", "dev-zero") else None, inputs=[hyp, data]).check(cwd=tmp_path)
