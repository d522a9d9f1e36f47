"""Issue 20 items 1, 2, 4, 6: outputs never destroy inputs, hidden splits stay hidden, every documented run
layout grades, workers die with their grader, the site is readable and the registry private."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from dialeval.leaderboard.demo import organizer_demo

REPO = Path(__file__).resolve().parents[1]
BASELINES = REPO / "submissions" / "baselines" / "default"


@pytest.fixture(scope="module")
def challenge():
    from dialeval.simulator.default import ensure_default_challenge

    return ensure_default_challenge()


@pytest.fixture(scope="module")
def demo(challenge, tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    organizer_demo(challenge, out, BASELINES)
    return out


def cli(*args, cwd=None, timeout=300):
    env = dict(os.environ, DIALEVAL_NO_PROGRESS="1")
    return subprocess.run([sys.executable, "-m", "dialeval", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


def one_line_exit_2(r):
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    return lines[0]


def snapshot(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---- item 2: hidden means hidden --------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["TST4", "tst9", "tst4,tst5", "tst4, Tst3"])
def test_unknown_or_misspelled_hidden_split_is_refused_and_nothing_written(demo, tmp_path, value):
    site = tmp_path / "site"
    line = one_line_exit_2(cli("leaderboard", "build", "--registry", demo / "registry", "--out", site,
                               "--hidden-splits", value))
    assert "not a split of the boards" in line
    assert not site.exists() and list(tmp_path.iterdir()) == []  # not even a temporary folder beside it
    if value == "TST4":
        assert "did you mean 'tst4'" in line


def test_public_site_never_names_the_hidden_split_or_its_items(demo, challenge, tmp_path):
    site = tmp_path / "site"
    r = cli("leaderboard", "build", "--registry", demo / "registry", "--out", site, "--hidden-splits", "tst4")
    assert r.returncode == 0, r.stderr
    ids = {item["dialog_id"] for f in (challenge / "tst4").glob("*.json") if not f.name.endswith(".answers.json")
           for item in json.loads(f.read_text())}
    assert len(ids) == 1000
    files = [p for p in site.rglob("*") if p.is_file()]
    assert len(files) > 5
    for p in files:
        text = p.read_text(encoding="utf-8", errors="replace")
        assert "tst4" not in text.lower(), p.name
        assert not [i for i in ids if i in text], p.name


# ---- item 1: outputs never destroy inputs ------------------------------------------------------------------
def test_site_out_refuses_the_registry_a_runs_folder_the_cwd_and_foreign_folders(demo, tmp_path):
    reg = demo / "registry"
    before = {"reg": snapshot(reg), "runs": snapshot(demo / "runs")}
    line = one_line_exit_2(cli("leaderboard", "build", "--registry", reg, "--out", reg))
    assert "holds the registry" in line
    line = one_line_exit_2(cli("leaderboard", "build", "--registry", reg, "--out", demo / "runs" / "team-alpha"))
    assert "team.json" in line or "submission.tgz" in line
    one_line_exit_2(cli("leaderboard", "build", "--registry", reg, "--out", demo / "runs"))
    one_line_exit_2(cli("leaderboard", "build", "--registry", reg, "--out", demo))  # holds the registry
    empty = tmp_path / "empty"
    empty.mkdir()
    for cwd, out in ((empty, "."), (empty, ".."), (demo, "."), (demo / "runs", "..")):
        line = one_line_exit_2(cli("leaderboard", "build", "--registry", reg.resolve(), "--out", out, cwd=cwd))
    assert list(empty.iterdir()) == []
    other = tmp_path / "papers"
    other.mkdir()
    (other / "draft.tex").write_text("mine")
    line = one_line_exit_2(cli("leaderboard", "build", "--registry", reg, "--out", other))
    assert "draft.tex" in line
    assert (other / "draft.tex").read_text() == "mine"
    assert snapshot(reg) == before["reg"] and snapshot(demo / "runs") == before["runs"]


def test_site_is_rebuilt_only_over_a_folder_a_build_made(demo, tmp_path):
    reg = demo / "registry"
    site = tmp_path / "site"
    keep = tmp_path / "site.old"  # an earlier build renamed the old site to <out>.old and deleted it
    keep.mkdir()
    (keep / "notes.txt").write_text("mine")
    assert cli("leaderboard", "build", "--registry", reg, "--out", site).returncode == 0
    assert (site / ".dialeval-site").is_file()
    r = cli("leaderboard", "build", "--registry", reg, "--out", site)  # a folder a build made: replaced
    assert r.returncode == 0, r.stderr
    assert (keep / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", "site.old"]  # nothing left beside it
    (site / "notes.txt").write_text("added by hand")
    line = one_line_exit_2(cli("leaderboard", "build", "--registry", reg, "--out", site))
    assert "notes.txt" in line and (site / "notes.txt").is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli("leaderboard", "build", "--registry", reg, "--out", empty).returncode == 0


# ---- item 6: processes and files -------------------------------------------------------------------------
def _children(pid: int) -> set[int]:
    """Live descendants of ``pid`` (Linux /proc)."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                kids.setdefault(int(fields[1]), []).append(int(d.name))
    out, todo = set(), [pid]
    while todo:
        for k in kids.get(todo.pop(), []):
            out.add(k)
            todo.append(k)
    return out


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_exit_when_the_grader_is_killed(tmp_path, challenge):
    import signal
    import time

    from dialeval.leaderboard.demo import make_runs

    runs = tmp_path / "runs"
    make_runs(BASELINES, runs)
    for i in range(12):  # enough work that the workers are still scoring when the grader dies
        (runs / f"copy-{i}").mkdir()
        (runs / f"copy-{i}" / "submission.tgz").write_bytes((runs / "team-alpha" / "submission.tgz").read_bytes())
        (runs / f"copy-{i}" / "team.json").write_text(json.dumps({"team": f"copy {i}"}))
    env = dict(os.environ, DIALEVAL_NO_PROGRESS="1")
    proc = subprocess.Popen([sys.executable, "-m", "dialeval", "grade", str(runs), "--challenge", str(challenge),
                             "--registry", str(tmp_path / "reg"), "--jobs", "2"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    kids: set[int] = set()
    while time.time() < deadline and len(kids) < 3:  # two workers and the resource tracker
        kids = _children(proc.pid)
        time.sleep(0.05)
    assert len(kids) >= 3, kids
    time.sleep(1.0)  # the workers have taken jobs
    kids |= _children(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 5
    while time.time() < deadline and any(_alive(k) for k in kids):
        time.sleep(0.1)
    left = [k for k in kids if _alive(k)]
    for k in left:  # do not leave them behind whatever the outcome
        os.kill(k, signal.SIGKILL)
    assert not left, "workers outlived their grader"


def test_site_is_readable_under_the_umask_and_the_registry_private(demo, tmp_path):
    old = os.umask(0o022)
    try:
        r = cli("leaderboard", "build", "--registry", demo / "registry", "--out", tmp_path / "site")
        assert r.returncode == 0, r.stderr
        r = cli("leaderboard", "build", "--registry", demo / "registry", "--out", tmp_path / "site")  # rebuilt
        assert r.returncode == 0, r.stderr
    finally:
        os.umask(old)
    site = tmp_path / "site"
    assert stat.S_IMODE(site.stat().st_mode) == 0o755
    assert stat.S_IMODE((site / "static").stat().st_mode) == 0o755
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o644 for p in site.rglob("*") if p.is_file())
    old = os.umask(0o077)  # a private umask stays private
    try:
        assert cli("leaderboard", "build", "--registry", demo / "registry", "--out", tmp_path / "own").returncode == 0
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "own").stat().st_mode) == 0o700


def test_registry_file_is_0600_new_or_old(tmp_path, challenge):
    from dialeval.leaderboard.registry import Registry

    old = os.umask(0o022)
    try:
        with Registry(tmp_path / "reg") as reg:
            reg.meta()
        db = tmp_path / "reg" / "registry.sqlite"
        assert stat.S_IMODE(db.stat().st_mode) == 0o600
        for p in (tmp_path / "reg").iterdir():
            assert stat.S_IMODE(p.stat().st_mode) & 0o077 == 0, p.name
        os.chmod(db, 0o644)  # made by an earlier dialeval
        with Registry(tmp_path / "reg") as reg:
            reg.meta()
        assert stat.S_IMODE(db.stat().st_mode) == 0o600
    finally:
        os.umask(old)


# ---- item 4: every documented run layout grades ------------------------------------------------------------
@pytest.fixture
def layouts(tmp_path):
    """RUNS with a single result file (tst3's items, all tasks), a misplaced folder run and an archive run."""
    import tarfile

    runs = tmp_path / "runs"
    runs.mkdir()
    with tarfile.open(BASELINES / "rule-based" / "submission.tgz") as tf:
        members = {m.name: tf.extractfile(m).read() for m in tf if m.isfile()}
    items = [i for name in sorted(members) if name.startswith("tst3/") for i in json.loads(members[name])]
    (runs / "solo.json").write_text(json.dumps(items))
    (runs / "solo.team.json").write_text(json.dumps({"team": "Solo"}))
    for name, data in members.items():
        if name.startswith("tst1/"):
            (runs / "nested" / "sub" / name).parent.mkdir(parents=True, exist_ok=True)
            (runs / "nested" / "sub" / name).write_bytes(data)
    (runs / "nested" / "team.json").write_text(json.dumps({"team": "Nested"}))
    (runs / "full").mkdir()
    (runs / "full" / "submission.tgz").write_bytes((BASELINES / "random" / "submission.tgz").read_bytes())
    (runs / "full" / "team.json").write_text(json.dumps({"team": "Full"}))
    return runs


def _grade_json(runs, challenge, reg, *extra):
    r = cli("grade", runs, "--challenge", challenge, "--registry", reg, "--json", *extra)
    assert r.returncode in (0, 1), r.stderr
    return {o["entry"]: o for o in json.loads(r.stdout)["runs"]}


def test_single_file_run_grades_on_the_split_of_its_ids(layouts, challenge, tmp_path):
    from dialeval.leaderboard.registry import Registry

    out = _grade_json(layouts, challenge, tmp_path / "reg")
    assert out["solo.json"]["status"] == "valid", out["solo.json"]
    assert out["solo.json"]["headline"] == 1.0
    with Registry(tmp_path / "reg") as reg:
        solo = reg.run(out["solo.json"]["run_id"])
        assert solo.splits == ["tst3"] and reg.check() == []
    # validate agrees
    assert cli("validate", layouts / "solo.json", "--challenge", challenge, "--split", "tst3").returncode == 0
    # and the public site lists it among the ranked runs, not under "Rejected runs"
    r = cli("leaderboard", "build", "--registry", tmp_path / "reg", "--out", tmp_path / "site")
    assert r.returncode == 0, r.stderr
    board = next((tmp_path / "site").glob("board-*.json"))
    assert {x["team"] for x in json.loads(board.read_text())["records"]} >= {"Solo", "Full"}


def test_misplaced_run_folder_gets_a_hint(layouts, challenge, tmp_path):
    out = _grade_json(layouts, challenge, tmp_path / "reg")
    nested = out["nested"]
    assert nested["status"] == "skipped" and nested["run_id"] is None
    assert "found sub/tst1/…: move it up" in nested["message"]
    assert nested["team"] == "Nested"


def test_grade_split_restricts_only_what_it_says_and_never_records_twice(layouts, challenge, tmp_path):
    from dialeval.leaderboard.registry import Registry

    reg_dir = tmp_path / "reg"
    first = _grade_json(layouts, challenge, reg_dir)
    with Registry(reg_dir) as reg:
        n = len(reg.runs())
    again = _grade_json(layouts, challenge, reg_dir, "--split", "tst3")
    assert again["solo.json"]["status"] == "unchanged" and again["full"]["status"] == "unchanged"
    assert again["solo.json"]["run_id"] == first["solo.json"]["run_id"]
    with Registry(reg_dir) as reg:
        assert len(reg.runs()) == n  # nothing recorded twice
    # on a new registry, --split tst1 grades the archive on tst1 only and leaves the tst3 file out (not rejected)
    fresh = _grade_json(layouts, challenge, tmp_path / "reg2", "--split", "tst1")
    assert fresh["solo.json"]["status"] == "outside" and fresh["solo.json"]["run_id"] is None
    assert "tst3" in fresh["solo.json"]["message"]
    assert fresh["full"]["status"] == "valid"
    with Registry(tmp_path / "reg2") as reg:
        runs = reg.runs()
        assert [r.splits for r in runs] == [["tst1"]] and not [r for r in runs if r.status == "rejected"]


def test_grade_split_typo_is_refused_and_all_means_everything(layouts, challenge, tmp_path):
    r = cli("grade", layouts, "--challenge", challenge, "--registry", tmp_path / "reg", "--split", "tst9")
    assert "not a split of the data" in one_line_exit_2(r)
    assert not (tmp_path / "reg").exists()
    out = _grade_json(layouts, challenge, tmp_path / "reg", "--split", "all")
    assert out["solo.json"]["status"] == "valid" and out["full"]["status"] == "valid"
