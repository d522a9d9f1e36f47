"""Organizer workflow: grading into the registry, hostile inputs, bands, reported results, the static site."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

from dialeval.leaderboard.demo import make_runs, organizer_demo
from dialeval.leaderboard.grade import grade
from dialeval.leaderboard.registry import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION, TABLES, Registry, RegistryError

REPO = Path(__file__).resolve().parents[1]
BASELINES = REPO / "submissions" / "baselines" / "default"
REPORTED = REPO / "submissions" / "reported" / "dstc6-2017.csv"


@pytest.fixture(scope="module")
def challenge():
    from dialeval.simulator.default import ensure_default_challenge

    return ensure_default_challenge()


@pytest.fixture(scope="module")
def demo(challenge, tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    index = organizer_demo(challenge, out, BASELINES)
    return out, index


def cli(*args, cwd=None, timeout=300):
    env = dict(os.environ, DIALEVAL_NO_PROGRESS="1")
    return subprocess.run([sys.executable, "-m", "dialeval", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


def gold_ids(challenge: Path) -> set[str]:
    out = set()
    for key in challenge.glob("tst*/*.answers.json"):
        for item in json.loads(key.read_text()):
            for c in item["lst_candidate_id"]:
                if c["rank"] == 1:
                    out.add(c["candidate_id"])
    return out


# ---- grading -----------------------------------------------------------------------------------------------
def test_demo_grades_baselines_and_teams_into_bands(demo):
    out, index = demo
    with Registry(out / "registry") as reg:
        assert reg.check() == []
        runs = {(r.team, r.system): r for r in reg.runs()}
        assert runs[("dialeval baselines", "rule-based")].kind == "baseline"
        assert runs[("Team Epsilon", "late-night")].status == "rejected"
        assert any(p["code"] == "rank-out-of-range" for p in reg.problems(runs[("Team Epsilon", "late-night")].run_id))
        from dialeval.leaderboard.bands import rank_board

        ranking = rank_board(reg, "demo", "p@1")
    order = [(r.team, r.system) for r in ranking.rows]
    assert order[0] == ("dialeval baselines", "rule-based")
    assert order[-1] == ("dialeval baselines", "tfidf")
    bands = [r.band for r in ranking.rows]
    assert bands == sorted(bands) and bands[0] == 1 and bands[-1] >= 4
    assert ranking.signature.startswith("dstc6|data:all#") and "|split:all|metric:p@1|bands:pairwise|" in ranking.signature
    assert index.is_file()


def test_regrading_is_a_noop_and_a_changed_submission_is_a_new_run(demo, challenge):
    out, _ = demo
    before = Registry(out / "registry").runs()
    summary = grade(out / "runs", "dstc6", challenge, out / "registry", progress=False, board="demo")
    assert {o.status for o in summary.outcomes} == {"unchanged"}
    assert len(Registry(out / "registry").runs()) == len(before)
    # the same team re-submits a changed file in a fresh folder
    runs2 = out / "runs2"
    (runs2 / "team-delta").mkdir(parents=True)
    from dialeval.leaderboard.demo import _members, degrade, write_tgz

    files = _members(BASELINES / "rule-based" / "submission.tgz")
    write_tgz(runs2 / "team-delta" / "submission.tgz", degrade(files, 0.6, 99))
    # seen inside the demo challenge's phase: the board's kept challenge.toml is enforced on every grade
    (runs2 / "team-delta" / "team.json").write_text(json.dumps({"team": "Team Delta", "system": "retrieval",
                                                                "submitted_at": "2017-09-14T08:00:00Z"}))
    s2 = grade(runs2, "dstc6", challenge, out / "registry", progress=False, board="demo", now="2017-09-14T08:00:00Z")
    assert [o.status for o in s2.outcomes] == ["valid"]
    with Registry(out / "registry") as reg:
        delta = [r for r in reg.runs() if r.team == "Team Delta"]
        assert len(delta) == 2 and delta[0].sha256 != delta[1].sha256
        assert reg.check() == []


def _tgz(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for info, data in members:
            tf.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _info(name, type_=tarfile.REGTYPE, size=0, linkname=""):
    i = tarfile.TarInfo(name)
    i.type, i.size, i.linkname = type_, size, linkname
    return i


def test_hostile_entries_get_one_line_each_and_nothing_half_recorded(tmp_path, challenge, monkeypatch):
    runs = tmp_path / "runs"
    runs.mkdir()

    def entry(name, team, archive_members=None, raw_team=None):
        d = runs / name
        d.mkdir()
        (d / "team.json").write_text(raw_team if raw_team is not None else json.dumps(team))
        if archive_members is not None:
            _tgz(d / "submission.tgz", archive_members)
        return d

    entry("a-traversal", {"team": "T1"}, [(_info("../evil.json", size=2), b"[]")])
    entry("b-absolute", {"team": "T2"}, [(_info("/etc/evil.json", size=2), b"[]")])
    entry("c-symlink", {"team": "T3"}, [(_info("tst1/x.answers.json", tarfile.SYMTYPE, linkname="/etc/passwd"), None)])
    entry("d-hardlink", {"team": "T4"}, [(_info("tst1/x.answers.json", tarfile.LNKTYPE, linkname="team.json"), None)])
    entry("e-device", {"team": "T5"}, [(_info("tst1/dev", tarfile.CHRTYPE), None)])
    entry("f-many", {"team": "T6"}, [(_info(f"tst1/f{i}.json"), b"") for i in range(10_050)])
    entry("g-notjson", None, [(_info("x.json", size=2), b"[]")], raw_team="{'team': 'single quotes'}")
    entry("h-javascript-url", {"team": "T8", "url": "javascript:alert(1)"}, [(_info("x.json", size=2), b"[]")])
    entry("i-html-team", {"team": "<script>alert(1)</script>"}, [(_info("x.json", size=2), b"[]")])
    (runs / "j-corrupt.tgz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    (runs / "j-corrupt.team.json").write_text(json.dumps({"team": "T10"}))
    bomb = runs / "k-bomb"
    bomb.mkdir()
    (bomb / "team.json").write_text(json.dumps({"team": "T11"}))
    # a bomb: 4 MiB of zeros (a few KiB compressed) against a 1 MiB unpack limit
    monkeypatch.setattr("dialeval.files.archive.MAX_ARCHIVE_BYTES", 1024**2)
    _tgz(bomb / "submission.tgz", [(_info("tst1/big.answers.json", size=4 * 1024**2), bytes(4 * 1024**2))])
    reg_dir = tmp_path / "reg"
    s = grade(runs, "dstc6", challenge, reg_dir, progress=False)
    by = {o.entry: o for o in s.outcomes}
    for name in ("a-traversal", "b-absolute", "c-symlink", "d-hardlink", "e-device", "f-many", "j-corrupt.tgz",
                 "k-bomb"):
        assert by[name].status == "rejected", name
        assert "\n" not in by[name].message and "Traceback" not in by[name].message
    assert "points outside" in by["a-traversal"].message
    assert "absolute path" in by["b-absolute"].message
    assert "link" in by["c-symlink"].message and "link" in by["d-hardlink"].message
    assert "more than" in by["f-many"].message
    assert "expands past" in by["k-bomb"].message
    assert by["g-notjson"].status == "skipped" and "not valid JSON (line 1, column 2)" in by["g-notjson"].message
    assert by["h-javascript-url"].status == "skipped" and '"url" must be an http' in by["h-javascript-url"].message
    assert by["i-html-team"].status in ("valid", "rejected")  # markup in a name is text, not a fault
    assert s.exit_code == 1
    assert not (tmp_path / "evil.json").exists()
    with Registry(reg_dir) as reg:
        assert reg.check() == []
        assert all(r.status == "rejected" for r in reg.runs())
    r = cli("registry", "check", "--registry", reg_dir)
    assert r.returncode == 0 and r.stdout.strip().endswith("runs)")


def test_corrupt_foreign_and_newer_registries_are_refused_in_one_line(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "registry.sqlite").write_bytes(b"this is not a database at all" * 100)
    with pytest.raises(RegistryError, match="not an SQLite database"):
        Registry(tmp_path / "a")
    (tmp_path / "b").mkdir()
    db = sqlite3.connect(tmp_path / "b" / "registry.sqlite")
    db.execute("CREATE TABLE photos (id INTEGER)")
    db.commit()
    db.close()
    with pytest.raises(RegistryError, match="another application"):
        Registry(tmp_path / "b")
    (tmp_path / "c").mkdir()
    db = sqlite3.connect(tmp_path / "c" / "registry.sqlite")
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute("PRAGMA user_version = 99")
    db.execute("CREATE TABLE meta (k)")
    db.commit()
    db.close()
    with pytest.raises(RegistryError, match="newer dialeval"):
        Registry(tmp_path / "c")
    # a truncated database: SQLite header intact, pages gone
    good = tmp_path / "d"
    with Registry(good) as reg:
        assert reg.check() == []
    data = (good / "registry.sqlite").read_bytes()
    (good / "registry.sqlite").write_bytes(data[:100] + b"\xff" * 3000)
    r = cli("registry", "check", "--registry", good)
    assert r.returncode in (1, 2)
    assert len(r.stderr.strip().splitlines() + r.stdout.strip().splitlines()) >= 1
    assert "Traceback" not in r.stderr
    r = cli("rank", "--registry", tmp_path / "a")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not an SQLite database" in r.stderr


def test_migration_from_schema_1_keeps_the_data(tmp_path):
    path = tmp_path / "registry.sqlite"
    db = sqlite3.connect(path)
    for stmt in MIGRATIONS[1]:
        db.execute(stmt)
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO teams VALUES (1, 'Old Team', NULL, NULL, NULL, '2017-01-01T00:00:00Z')")
    db.execute("INSERT INTO runs (run_id, team_id, system, kind, submitted_at, graded_at, benchmark, board, splits,"
               " metrics, version, status) VALUES (1, 1, 's', 'reported', 'x', 'x', 'dstc6', 'b', '[]', '[]', '0', 'valid')")
    db.execute("INSERT INTO records VALUES (1, 'tst1', '1', NULL, 'p@1', NULL, 0.5, NULL, 'sig')")
    db.commit()
    db.close()
    with Registry(tmp_path) as reg:
        assert reg.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert reg.runs()[0].team == "Old Team" and reg.runs()[0].note is None and reg.runs()[0].chosen is False
        assert reg.challenge_source("b") is None
        assert reg.check() == []
        # version 5 rebuilt the runs table: its children kept (the drop cascaded to nothing), NULL now allowed
        assert reg.db.execute("SELECT count(*) FROM records").fetchone()[0] == 1
        assert reg.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert [c[3] for c in reg.db.execute("PRAGMA table_info(runs)") if c[1] == "submitted_at"] == [0]


def _schema(db) -> dict:
    """Every table's columns (name, type, not null, default, primary key), foreign keys and indexes."""
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {t: ([r[1:] for r in db.execute(f"PRAGMA table_info({t})")],
                sorted(r[2:] for r in db.execute(f"PRAGMA foreign_key_list({t})")),
                sorted((r[1], r[2], [c[2] for c in db.execute(f"PRAGMA index_info({r[1]})")])
                       for r in db.execute(f"PRAGMA index_list({t})"))) for t in names}


@pytest.mark.parametrize("version", range(1, SCHEMA_VERSION))
def test_a_registry_of_every_older_schema_migrates_to_the_one_definition(tmp_path, version):
    """A file made by each older dialeval (its migrations replayed up to ``version``) ends with exactly the tables,
    columns, keys and indexes the schema's one definition (TABLES) declares, and keeps its rows."""
    path = tmp_path / "old" / "registry.sqlite"
    path.parent.mkdir()
    db = sqlite3.connect(path)
    for v in range(1, version + 1):
        for stmt in MIGRATIONS[v]:
            db.execute(stmt)
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute(f"PRAGMA user_version = {version}")
    db.execute("INSERT INTO teams VALUES (1, 'Old Team', NULL, NULL, NULL, '2017-01-01T00:00:00Z')")
    db.execute("INSERT INTO runs (run_id, team_id, system, kind, submitted_at, graded_at, benchmark, board, splits,"
               " metrics, version, status) VALUES (1, 1, 's', 'reported', 'x', 'x', 'dstc6', 'b', '[]', '[]', '0', 'valid')")
    db.execute("INSERT INTO records VALUES (1, 'tst1', '1', NULL, 'p@1', NULL, 0.5, NULL, 'sig')")
    db.commit()
    db.close()
    defined = sqlite3.connect(":memory:")
    for t in TABLES:
        defined.execute(t.create(SCHEMA_VERSION))
        for index in t.indexes:
            defined.execute(f"CREATE INDEX {index}")
    with Registry(path.parent) as old, Registry(tmp_path / "new") as new:
        assert _schema(old.db) == _schema(new.db) == _schema(defined)
        assert [(r.team, r.system, r.submitted_at) for r in old.runs()] == [("Old Team", "s", "x")]
        assert old.check() == []


def test_kill_mid_grading_leaves_a_valid_registry_and_regrading_completes(tmp_path, challenge):
    runs = tmp_path / "runs"
    make_runs(BASELINES, runs)
    reg_dir = tmp_path / "reg"
    env = dict(os.environ, DIALEVAL_NO_PROGRESS="1")
    proc = subprocess.Popen([sys.executable, "-m", "dialeval", "grade", str(runs), "--challenge", str(challenge),
                             "--registry", str(reg_dir)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    db_path = reg_dir / "registry.sqlite"
    deadline = time.time() + 120
    while time.time() < deadline:  # kill it once the first runs are committed, while it writes the others
        if db_path.exists():
            try:
                with sqlite3.connect(db_path, timeout=1) as db:
                    if db.execute("SELECT count(*) FROM runs").fetchone()[0] >= 2:
                        break
            except sqlite3.Error:
                pass
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert cli("registry", "check", "--registry", reg_dir).returncode == 0
    with Registry(reg_dir) as reg:
        partial = len(reg.runs())
    assert 2 <= partial < 9
    r = cli("grade", runs, "--challenge", challenge, "--registry", reg_dir)
    assert r.returncode == 1  # the deliberately broken run is rejected
    assert "unchanged" in r.stdout
    with Registry(reg_dir) as reg:
        assert len(reg.runs()) == 9 and reg.check() == []


def test_two_graders_at_once_record_each_run_once(tmp_path, challenge):
    runs = tmp_path / "runs"
    make_runs(BASELINES, runs)
    reg_dir = tmp_path / "reg"
    env = dict(os.environ, DIALEVAL_NO_PROGRESS="1")
    cmd = [sys.executable, "-m", "dialeval", "grade", str(runs), "--challenge", str(challenge), "--registry", str(reg_dir)]
    procs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 1 for p in procs), outs  # 1: the broken run is rejected, nothing else fails
    with Registry(reg_dir) as reg:
        assert len(reg.runs()) == 9
        assert reg.check() == []


def test_parallel_grading_records_the_same_numbers(tmp_path, challenge, demo):
    out, _ = demo
    runs = tmp_path / "runs"
    make_runs(BASELINES, runs)
    s = grade(runs, "dstc6", challenge, tmp_path / "reg", jobs=2, progress=False, board="demo")
    assert s.count("valid") == 8 and s.count("rejected") == 1
    with Registry(tmp_path / "reg") as a, Registry(out / "registry") as b:
        def key(reg):
            return {(r.team, r.system): [(x["split"], x["group"], x["metric"], x["average"], x["value"], x["signature"])
                                         for x in reg.records(run_id=r.run_id)] for r in reg.runs()
                    if r.source_name and not r.source_name.startswith("team-delta")}
        assert key(a) == key(b)


def test_run_ids_follow_submission_order_whatever_order_workers_finish_in(tmp_path, challenge, monkeypatch):
    """Same runs folder, graded into fresh registries with --jobs 1, --jobs 2 and --jobs 2 whose workers finish
    last-submitted-first (as when the early runs are the big ones): every run gets the same id."""
    import concurrent.futures
    import threading

    runs = tmp_path / "runs"
    make_runs(BASELINES, runs)
    n_runs = len([p for p in runs.iterdir() if not p.name.endswith(".team.json")])

    def ids(reg_dir):
        with Registry(reg_dir) as reg:
            return sorted((r.team, r.system, r.source_name, r.run_id) for r in reg.runs())

    grade(runs, "dstc6", challenge, tmp_path / "one", jobs=1, progress=False, board="demo")
    grade(runs, "dstc6", challenge, tmp_path / "two", jobs=2, progress=False, board="demo")
    assert ids(tmp_path / "two") == ids(tmp_path / "one")

    class ReversedPool:
        """Scores in this process, finishing the jobs in reverse order once all are submitted."""

        def __init__(self, *args, **kwargs):
            self.jobs = []

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def submit(self, fn, *args):
            fut = concurrent.futures.Future()
            self.jobs.append((fut, fn, args))
            if len(self.jobs) == n_runs:
                threading.Thread(target=self._finish, daemon=True).start()
            return fut

        def _finish(self):
            for fut, fn, args in reversed(self.jobs):
                fut.set_result(fn(*args))

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", ReversedPool)
    grade(runs, "dstc6", challenge, tmp_path / "reversed", jobs=2, progress=False, board="demo")
    assert ids(tmp_path / "reversed") == ids(tmp_path / "one")
    assert len(ids(tmp_path / "one")) == n_runs


# ---- commands ---------------------------------------------------------------------------------------------
def test_compare_and_rank_commands(demo):
    out, _ = demo
    with Registry(out / "registry") as reg:
        ids = {r.system: r.run_id for r in reg.runs()}
    r = cli("compare", ids["memnet-v2"], ids["hybrid"], "--registry", out / "registry", "--json")
    assert r.returncode == 0, r.stderr
    res = json.loads(r.stdout)["results"]
    assert [x["metric"] for x in res] == ["p@1", "p@2", "p@5", "mrr"]
    assert all("|bs:1000|seed:12345" in x["signature"] for x in res)
    assert res[0]["diff_low"] <= res[0]["diff"] <= res[0]["diff_high"]
    r = cli("rank", "--registry", out / "registry", "--board", "demo", "--json")
    ranking = json.loads(r.stdout)
    assert ranking["runs"][0]["system"] == "rule-based" and ranking["runs"][0]["band"] == 1
    r = cli("rank", "--registry", out / "registry", "--board", "nope")
    assert r.returncode == 2 and "no board 'nope'" in r.stderr


def test_a_rejected_run_is_the_submissions_fault_for_compare_rank_and_grade(demo, challenge, tmp_path):
    """Exit 1 is the submission's fault, 2 usage. Before: `compare` with a rejected registry run exited 2 ("was
    rejected: nothing to compare"), as for a mistyped option. Now 1, one line; `rank` leaves the rejected run out
    (exit 0); `grade` on a folder holding only that run exits 1."""
    import shutil

    out, _ = demo
    with Registry(out / "registry") as reg:
        runs = {r.system: r for r in reg.runs()}
    bad, good = runs["late-night"], runs["memnet-v2"]
    assert bad.status == "rejected"
    for pair in ((bad.run_id, good.run_id), (good.run_id, bad.run_id)):
        r = cli("compare", *pair, "--registry", out / "registry")
        assert (r.returncode, r.stderr) == (1, f"dialeval: error: run {bad.run_id} was rejected: nothing to compare\n")
    r = cli("rank", "--registry", out / "registry", "--board", "demo", "--json")
    assert r.returncode == 0 and bad.run_id not in {x["run_id"] for x in json.loads(r.stdout)["runs"]}, r.stderr
    folder = tmp_path / "runs"
    for p in (out / "runs").iterdir():
        if p.is_dir() and (p / "team.json").is_file() and json.loads((p / "team.json").read_text()).get("system") == "late-night":
            shutil.copytree(p, folder / p.name)
    assert len(list(folder.iterdir())) == 1
    r = cli("grade", folder, "--challenge", challenge, "--registry", tmp_path / "reg", "--board", "demo")
    assert r.returncode == 1 and "rejected" in r.stdout, r.stdout + r.stderr


def test_export_jsonl_matches_the_schema_and_csv_is_formula_safe(demo, tmp_path):
    out, _ = demo
    from dialeval.core.schemacheck import validator

    r = cli("registry", "export", "--registry", out / "registry", "--out", tmp_path / "runs.jsonl")
    assert r.returncode == 0, r.stderr
    v = validator("run-record")
    lines = (tmp_path / "runs.jsonl").read_text().splitlines()
    for line in lines:
        rec = json.loads(line)
        assert not list(v.iter_errors(rec))
        assert "contact" not in rec
    r = cli("registry", "export", "--registry", out / "registry", "--out", tmp_path / "records.csv")
    rows = list(csv.DictReader((tmp_path / "records.csv").open()))
    assert rows and all(row["signature"] for row in rows)
    from dialeval.leaderboard.site import csv_cell

    assert csv_cell("=HYPERLINK(\"x\")") == "'=HYPERLINK(\"x\")" and csv_cell("-1+2") == "'-1+2"
    assert csv_cell("@SUM(A1)") == "'@SUM(A1)" and csv_cell("+1") == "'+1" and csv_cell(0.5) == 0.5


# ---- reported results and the site ----------------------------------------------------------------------
def test_a_reported_file_refused_leaves_no_registry_behind(tmp_path):
    # before: `registry import empty.csv --registry new` said "no rows" (exit 2) and left new/registry.sqlite
    (tmp_path / "empty.csv").write_text("")
    r = cli("registry", "import", tmp_path / "empty.csv", "--registry", tmp_path / "new", "--board", "b")
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: {tmp_path / 'empty.csv'}: no rows\n")
    assert not (tmp_path / "new").exists()


def test_reported_columns_that_are_no_metric_of_the_benchmark_are_refused_all_at_once(tmp_path):
    # the DSTC6 overview's table as an organizer might type it: P@1 in capitals (fine), a typo, a name no
    # dialeval benchmark uses, a misspelt meta column; and one row with a number that is not one
    lines = REPORTED.read_text().splitlines()
    header = "team,split,task,P@1,mrrr,precision@5,Source,published_band"
    bad = tmp_path / "dstc6-typed.csv"
    bad.write_text("\n".join([header, *lines[1:3], lines[3].replace(",1.0,", ",1.O,", 1), *lines[4:]]) + "\n")
    r = cli("registry", "import", bad, "--registry", tmp_path / "reg", "--board", "dstc6-2017")
    # before: exit 0, "mrrr", "precision@5" and "Source" imported as three more metrics of every team
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"{bad}:1:5: column 'mrrr' is not a metric of dstc6 nor a column of reported results (did you mean 'mrr'?)",
        f"{bad}:1:6: column 'precision@5' is not a metric of dstc6 nor a column of reported results",
        f"{bad}:1:7: column 'Source' is not a metric of dstc6 nor a column of reported results (did you mean "
        "'source'?)",
        f"{bad}:4:4: column P@1: '1.O' is not a number",
        f"dialeval: error: {bad}: 4 problems, nothing imported (dstc6's metrics: p@1, p@2, p@5, mrr (any k of p@K); "
        "other columns: group, note, published_band, source, split, system, task, team)"]
    assert not (tmp_path / "reg").exists()
    # JSON: the same check, each problem at its JSON pointer
    rows = [dict(zip(header.split(","), line.split(","), strict=True)) for line in lines[1:3]]
    rows[1]["mrr/at 10"] = 0.5
    (tmp_path / "r.json").write_text(json.dumps(rows))
    r = cli("registry", "import", tmp_path / "r.json", "--registry", tmp_path / "reg", "--board", "b")
    assert r.returncode == 1
    assert [line.split(": column")[0] for line in r.stderr.splitlines()[:-1]] == [
        f"{tmp_path / 'r.json'}#/0/{k}" for k in ("mrrr", "precision@5", "Source")] + [
        f"{tmp_path / 'r.json'}#/1/mrr~1at 10"]
    # metric names in any case are the registered names: P@1 imports as p@1, numbers unchanged
    upper = tmp_path / "upper.csv"
    upper.write_text(REPORTED.read_text().replace("p@1,p@2,p@5", "P@1,P@2,p@5", 1))
    r = cli("registry", "import", upper, "--registry", tmp_path / "reg", "--board", "dstc6-2017")
    assert r.returncode == 0 and "imported 10" in r.stdout, r.stderr
    with Registry(tmp_path / "reg") as reg:
        assert {rec["metric"] for x in reg.runs() for rec in reg.records(run_id=x.run_id)} == {"p@1", "p@2", "p@5"}


def test_reported_airdialogue_columns_are_its_own_metrics(tmp_path):
    f = tmp_path / "air.csv"
    f.write_text("team,split,task,score,exact,name,flight,status,bleu,exactt,source\n"
                 "AirDialogue paper,dev,state,0.5,0.3,0.9,0.4,0.7,0.2,0.3,Wei et al. 2018\n")
    r = cli("registry", "import", f, "--registry", tmp_path / "reg", "--board", "air", "--benchmark", "airdialogue")
    assert r.returncode == 1 and r.stderr.splitlines()[0] == (
        f"{f}:1:10: column 'exactt' is not a metric of airdialogue nor a column of reported results (did you mean "
        "'exact'?)")
    f.write_text(f.read_text().replace(",exactt", "").replace(",0.3,Wei", ",Wei"))
    r = cli("registry", "import", f, "--registry", tmp_path / "reg", "--board", "air", "--benchmark", "airdialogue")
    assert r.returncode == 0 and "imported 1" in r.stdout, r.stderr


def test_reported_dstc6_2017_import_and_page(tmp_path):
    reg_dir = tmp_path / "reg"
    r = cli("registry", "import", REPORTED, "--registry", reg_dir, "--board", "dstc6-2017", "--team-prefix", "team ")
    assert r.returncode == 0 and "imported 10" in r.stdout, r.stderr
    r = cli("registry", "import", REPORTED, "--registry", reg_dir, "--board", "dstc6-2017", "--team-prefix", "team ")
    assert "imported 0" in r.stdout and "10 already there" in r.stdout
    with Registry(reg_dir) as reg:
        runs = {x.team: x for x in reg.runs() if x.team.startswith("team ")}
        assert len(runs) == 10 and all(x.kind == "reported" for x in runs.values())
        means = {t: next(rec["value"] for rec in reg.records(run_id=x.run_id)
                         if rec["split"] == "all" and rec["metric"] == "p@1") for t, x in runs.items()}
    # targets.md: mean P@1 over the 20 files
    expected = {"1": 1.0, "2": 1.0, "4": 1.0, "9": 0.981, "7": 0.977, "3": 0.963, "6": 0.808, "8": 0.565,
                "5": 0.596, "10": 0.336}
    for team, value in expected.items():
        assert means[f"team {team}"] == pytest.approx(value, abs=0.0006)
    r = cli("leaderboard", "build", "--registry", reg_dir, "--out", tmp_path / "site")
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "site" / "board-dstc6-2017.html").read_text()
    assert page.count('class="badge reported"') >= 10
    # published bands and the bands the numbers give disagree for teams 6, 7, 8: both shown, flagged
    assert page.count('class="disagree"') == 3
    assert "band from the numbers" in page and "published band" in page
    assert "<strong>Data:</strong> the numbers their sources published (reported results; no data were scored" in page


def test_public_site_holds_no_keys_contacts_or_hidden_splits(demo, challenge, tmp_path):
    out, _ = demo
    with Registry(out / "registry") as reg:
        from dialeval.leaderboard.site import build_site

        build_site(reg, tmp_path / "public", hidden_splits=["tst4"])
        build_site(reg, tmp_path / "private", private=True, hidden_splits=["tst4"])
    files = [p for p in (tmp_path / "public").rglob("*") if p.is_file()]
    text = "\n".join(p.read_text() for p in files if p.suffix != ".whl")
    assert "@example.org" not in text  # contact addresses never published
    golds = gold_ids(challenge)
    assert golds and not any(g in text for g in golds)
    # the dialeval wheel the challenge page links: package code and data, none of the challenge's gold ids
    for w in (p for p in files if p.suffix == ".whl"):
        with zipfile.ZipFile(w) as z:
            assert not any(g.encode() in z.read(n) for n in z.namelist() for g in golds), w.name
    items = {json.loads(k.read_text())[0]["dialog_id"] for k in challenge.glob("tst*/*.answers.json")}
    assert not any(i in text for i in items)  # no per-item results
    assert "tst4" not in text and "PRIVATE" not in text
    private = (tmp_path / "private" / "board-demo.html").read_text()
    assert "tst4" in private and "PRIVATE" in private
    # the public ranking is recomputed on tst1-tst3 (records that pool tst4 are dropped)
    data = json.loads((tmp_path / "public" / "board-demo.json").read_text())
    assert {r["split"] for r in data["records"]} == {"tst1", "tst2", "tst3"}
    assert "|split:tst1+tst2+tst3|" in data["ranking_signature"]


def test_team_text_is_escaped_everywhere(tmp_path, challenge):
    runs = tmp_path / "runs"
    (runs / "x").mkdir(parents=True)
    (runs / "x" / "submission.tgz").write_bytes((BASELINES / "random" / "submission.tgz").read_bytes())
    evil = "<img src=x onerror=alert(1)>\"'</script><script>alert(2)</script>"
    (runs / "x" / "team.json").write_text(json.dumps({"team": evil, "system": "=cmd|' /C calc'!A0",
                                                      "description": "\" onmouseover=\"alert(3)",
                                                      "url": "https://example.org/\"><script>alert(4)</script>"}))
    s = grade(runs, "dstc6", challenge, tmp_path / "reg", progress=False)
    assert s.outcomes[0].status == "skipped"  # the URL with quotes and markup is refused by the schema
    (runs / "x" / "team.json").write_text(json.dumps({"team": evil, "system": "=cmd|' /C calc'!A0",
                                                      "description": "\" onmouseover=\"alert(3)"}))
    s = grade(runs, "dstc6", challenge, tmp_path / "reg", progress=False)
    assert s.outcomes[0].status == "valid"
    with Registry(tmp_path / "reg") as reg:
        from dialeval.leaderboard.site import build_site

        build_site(reg, tmp_path / "site")
    for page in (tmp_path / "site").glob("*.html"):
        html = page.read_text()
        assert "<img src=x" not in html and "<script>alert" not in html and 'onmouseover="alert' not in html
    board = next((tmp_path / "site").glob("board-*.html")).read_text()
    assert "&lt;img src=x onerror=alert(1)&gt;" in board
    embedded = board.split('id="board-data">', 1)[1].split("</script>", 1)[0]
    assert "<" not in embedded and json.loads(embedded)["runs"] == [evil]
    rows = list(csv.DictReader(next((tmp_path / "site").glob("board-*.csv")).open()))
    assert rows[0]["system"] == "'=cmd|' /C calc'!A0"


def test_the_board_names_the_published_release_its_numbers_were_scored_on():
    from dialeval.leaderboard.site import _release_of

    def rec(data):
        return {"signature": f"dstc6|data:{data}|tasks:1-5|mode:strict|split:tst1|metric:p@1|v:0.1.0"}

    assert _release_of([rec("dstc6/tst1#9ba12a55"), rec("dstc6/all#1a2b3c4d")]) == "dstc6"
    assert _release_of([rec("dstc6/tst1#9ba12a55"), rec("modified/tst2#00ff00ff")]) == "modified"
    assert _release_of([rec("tst1#9ba12a55")]) == ""  # data of no known release: nothing claimed
    assert _release_of([rec("dstc6/tst1#9ba12a55"), rec("tst1#9ba12a55")]) == ""  # a mix: nothing claimed
    assert _release_of([]) == ""


def test_compare_signs_the_split_both_runs_cover_from_the_registry_and_from_files(tmp_path, challenge):
    runs = tmp_path / "runs"
    files = {}
    for name in ("tfidf", "nearest-neighbor"):
        members = {k: v for k, v in _members_of(BASELINES / name / "submission.tgz").items() if k.startswith("tst1/")}
        (runs / name).mkdir(parents=True)
        from dialeval.leaderboard.demo import write_tgz

        write_tgz(runs / name / "submission.tgz", members)
        (runs / name / "team.json").write_text(json.dumps({"team": f"T {name}"}))
        files[name] = runs / name / "submission.tgz"
    assert grade(runs, "dstc6", challenge, tmp_path / "reg", progress=False).exit_code == 0
    with Registry(tmp_path / "reg") as reg:
        ids = [r.run_id for r in reg.runs()]
    from_registry = cli("compare", *ids, "--registry", tmp_path / "reg", "--metric", "p@1")
    from_files = cli("compare", files["tfidf"], files["nearest-neighbor"], "--data", challenge, "--metric", "p@1")
    for r in (from_registry, from_files):
        assert r.returncode == 0, r.stderr
        assert "scope: tst1 (the answer-key items of the scope)" in r.stdout
        sig = next(line for line in r.stdout.splitlines() if line.startswith("signature:"))
        assert "|data:tst1#" in sig and "|split:tst1|" in sig
    r = cli("compare", *ids, "--registry", tmp_path / "reg", "--metric", "p@1", "--json")
    assert json.loads(r.stdout)["scope"] == "tst1"
    # an unknown split is a usage error, as for grade and leaderboard build
    r = cli("rank", "--registry", tmp_path / "reg", "--split", "tst9")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "'tst9' is not a split" in r.stderr
    assert "(it has: tst1)" in r.stderr


def _members_of(tgz: Path) -> dict[str, bytes]:
    from dialeval.leaderboard.demo import _members

    return _members(tgz)


def test_the_demo_site_shows_the_data_statement_the_evidence_and_a_phone_ready_ranking(demo):
    out, index = demo
    board = (index.parent / "board-demo.html").read_text(encoding="utf-8")
    assert "<strong>Data:</strong> simulated with dialeval&#39;s simulator (seed 2017), not the DSTC6 data." in board
    assert board.count('<span class="why"') >= 3 and 'id="matrix"' in board and 'id="matrix-compact"' in board
    assert 'class="sortable cards" id="ranking"' in board and 'class="c-score"' in board
    css = (index.parent / "static" / "site.css").read_text()
    assert "@media (max-width: 600px)" in css and "table.cards tbody tr { display: flex;" in css
    index_html = index.read_text(encoding="utf-8")
    assert '<th data-type="text">data</th>' in index_html


def test_hidden_splits_are_checked_board_by_board(tmp_path, challenge):
    from dialeval.core.errors import UsageError
    from dialeval.leaderboard.demo import write_tgz
    from dialeval.leaderboard.site import build_site

    for board, keep in (("full", ("tst",)), ("partial", ("tst1/",))):
        runs = tmp_path / f"runs-{board}"
        (runs / "x").mkdir(parents=True)
        members = _members_of(BASELINES / "tfidf" / "submission.tgz")
        write_tgz(runs / "x" / "submission.tgz", {k: v for k, v in members.items() if k.startswith(keep)})
        (runs / "x" / "team.json").write_text(json.dumps({"team": f"T {board}"}))
        grade(runs, "dstc6", challenge, tmp_path / "reg", progress=False, board=board)
    with Registry(tmp_path / "reg") as reg:
        # tst4 is a split of one board only: hiding it everywhere is ambiguous (a typo for the other board
        # would publish its real split), so it must be scoped
        with pytest.raises(UsageError, match="'tst4' is not a split of board 'partial'.*BOARD:SPLIT"):
            build_site(reg, tmp_path / "s1", hidden_splits=["tst4"])
        with pytest.raises(UsageError, match="no board 'nope'"):
            build_site(reg, tmp_path / "s2", hidden_splits=["nope:tst4"])
        with pytest.raises(UsageError, match="'tst9' is not a split of board 'full'"):
            build_site(reg, tmp_path / "s3", hidden_splits=["full:tst9"])
        assert not any((tmp_path / s).exists() for s in ("s1", "s2", "s3"))
        site = build_site(reg, tmp_path / "site", hidden_splits=["full:tst4"]).parent
    assert "tst4" not in (site / "board-full.html").read_text() and "tst3" in (site / "board-full.html").read_text()
    r = cli("leaderboard", "build", "--registry", tmp_path / "reg", "--out", tmp_path / "s4", "--hidden-splits", "tst1")
    assert r.returncode == 0, r.stderr  # tst1 is a split of both boards
    assert "tst1" not in (tmp_path / "s4" / "board-partial.html").read_text()


def test_rank_ranks_the_runs_the_site_ranks(tmp_path, challenge):
    runs = tmp_path / "runs"
    for folder, team, source, when in (("a1", "Team R", "random", "2017-09-02T00:00:00Z"),
                                       ("a2", "Team R", "tfidf", "2017-09-03T00:00:00Z"),
                                       ("b", "Team S", "nearest-neighbor", "2017-09-02T00:00:00Z")):
        (runs / folder).mkdir(parents=True)
        (runs / folder / "submission.tgz").write_bytes((BASELINES / source / "submission.tgz").read_bytes())
        (runs / folder / "team.json").write_text(json.dumps({"team": team, "system": source, "submitted_at": when}))
    grade(runs, "dstc6", challenge, tmp_path / "reg", progress=False, board="b")
    ranked = json.loads(cli("rank", "--registry", tmp_path / "reg", "--json").stdout)
    assert [(r["team"], r["system"]) for r in ranked["runs"]] == [("Team S", "nearest-neighbor"), ("Team R", "tfidf")]
    assert any("1 superseded run(s) left out" in n for n in ranked["notes"])
    assert cli("leaderboard", "build", "--registry", tmp_path / "reg", "--out", tmp_path / "site").returncode == 0
    site = json.loads((tmp_path / "site" / "board-b.json").read_text())
    assert [r["run_id"] for r in site["ranking"]] == [r["run_id"] for r in ranked["runs"]]
    every = json.loads(cli("rank", "--registry", tmp_path / "reg", "--json", "--all-runs").stdout)
    assert len(every["runs"]) == 3


# ---- determinism -------------------------------------------------------------------------------------------
def _tree_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_two_demos_write_byte_identical_registries_and_sites(tmp_path, challenge):
    """The demo pins its grader's clock to its runs' own dates: the registry's creation, each team's and the
    kept challenge's timestamps are the grading time, never the wall clock, so two demos (seconds apart) write
    the same bytes, registry.sqlite included."""
    for d in ("a", "b"):
        organizer_demo(challenge, tmp_path / d, BASELINES)
    a, b = _tree_bytes(tmp_path / "a"), _tree_bytes(tmp_path / "b")
    assert "registry/registry.sqlite" in a and sorted(a) == sorted(b)
    assert [name for name in a if a[name] != b[name]] == []
    with Registry(tmp_path / "a" / "registry") as reg:
        first = min(r.graded_at for r in reg.runs())
        assert first == "2017-09-01T00:00:30Z"  # the baselines' date plus the demo's grading delay
        assert reg.db.execute("SELECT value FROM meta WHERE key = 'created_at'").fetchone()[0] == first
        team_times = {row[0] for row in reg.db.execute("SELECT created_at FROM teams")}
        assert team_times <= {r.graded_at for r in reg.runs()}
