"""Issue 26 items 3 and 4: an organizer's challenge.toml (validated, published as the challenge's pages with
contacts kept private), and the quotas, phases, counting rule and hidden test phases it makes `grade` and
`leaderboard build` enforce. "Now" comes from --now / DIALEVAL_NOW, never the clock."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from dialeval.core.errors import UsageError
from dialeval.leaderboard import challenge as challenges
from dialeval.leaderboard.grade import grade
from dialeval.leaderboard.registry import Registry

HEAD = 'title = "T"\noverview = "O"\n'


@pytest.fixture(scope="module")
def data():
    from dialeval.simulator.default import ensure_default_challenge

    return ensure_default_challenge()


def cli(*args, env=None, timeout=300):
    env = dict(os.environ, DIALEVAL_NO_PROGRESS="1", **(env or {}))
    return subprocess.run([sys.executable, "-m", "dialeval", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=timeout)


def one_result_file(data: Path, split: str, quality: float, seed: int) -> bytes:
    """A ranking of task 1's test file of ``split``: the gold first in about a ``quality`` share of the items."""
    test = next((data / split).glob("*task1API*kb*atmosphere-*tst200.json"))
    gold = {i["dialog_id"]: i["lst_candidate_id"][0]["candidate_id"]
            for i in json.loads(test.with_name(test.name[:-5] + ".answers.json").read_text())}
    rng = random.Random(seed)
    out = []
    for item in json.loads(test.read_text()):
        ids = [c["candidate_id"] for c in item["candidates"]]
        ids.sort(key=lambda c: c != gold[item["dialog_id"]])
        if rng.random() > quality:
            ids[0], ids[1] = ids[1], ids[0]
        out.append({"dialog_id": item["dialog_id"],
                    "lst_candidate_id": [{"candidate_id": c, "rank": r} for r, c in enumerate(ids, 1)]})
    return json.dumps(out).encode()


def add_run(runs: Path, name: str, data: Path, team: str, when: str, split="tst1", quality=0.9, seed=0, **meta):
    runs.mkdir(exist_ok=True)
    (runs / f"{name}.json").write_bytes(one_result_file(data, split, quality, seed))
    (runs / f"{name}.team.json").write_text(json.dumps({"team": team, "system": name, "submitted_at": when, **meta}))


def write_challenge(path: Path, text: str) -> Path:
    path.write_text(HEAD + text)
    return path


# ---- the file ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, expected", [
    ('counts = "best"\n', '/counts: must be one of latest, best-public, chosen'),
    ('[quota]\nper_day = 0\n', '/quota/per_day: must be at least 1'),
    ('colour = "red"\n', "/: unknown key 'colour'"),
    ('[[phases]]\nname = "a"\nstart = 2017-09-02\nend = 2017-09-01\n', "/phases/0: ends (2017-09-01T23:59:59Z) before"),
    ('[[phases]]\nname = "a"\nstart = "soon"\nend = 2017-09-01\n', "/phases/0/start: must be a date or date-time"),
    ('[[contacts]]\nname = "x"\nemail = "not an address"\n', "/contacts/0/email: not a valid value"),
    ('title = "again"\n', "not valid TOML"),
])
def test_a_bad_challenge_file_is_one_line_exit_2_naming_where(tmp_path, data, text, expected):
    bad = write_challenge(tmp_path / "challenge.toml", text)
    with pytest.raises(UsageError) as e:
        challenges.load(bad)
    assert expected in str(e.value) and "\n" not in str(e.value)
    (tmp_path / "runs").mkdir()
    r = cli("grade", tmp_path / "runs", "--data", data, "--registry", tmp_path / "reg", "--challenge-file", bad)
    assert r.returncode == 2 and expected in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr and not (tmp_path / "reg").exists()


def test_a_challenge_file_that_is_a_fifo_or_a_folder_is_refused_unread(tmp_path):
    fifo = tmp_path / "challenge.toml"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path):
        with pytest.raises(UsageError) as e:
            challenges.load(path)  # a FIFO is refused before it is opened: this does not block
        assert "\n" not in str(e.value)


def test_toml_dates_become_utc_and_a_phase_split_must_be_the_datas(tmp_path, data):
    ch = challenges.parse(HEAD + '[[phases]]\nname = "a"\nstart = 2017-09-01\nend = 2017-09-02T10:00:00+02:00\n'
                          'splits = ["tst9"]\n')
    assert (ch.phases[0].start, ch.phases[0].end) == ("2017-09-01T00:00:00Z", "2017-09-02T08:00:00Z")
    (tmp_path / "runs").mkdir()
    with pytest.raises(UsageError, match=r"/phases/0/splits: 'tst9' is not a split of the data"):
        grade(tmp_path / "runs", "dstc6", data, tmp_path / "reg", progress=False, challenge=ch)


def test_the_shipped_default_challenge_is_valid_and_keeps_its_private_contact_private():
    ch = challenges.load(challenges.DEFAULT_FILE)
    assert ch.benchmark == "dstc6" and ch.per_day == 5 and ch.total == 20 and ch.phases
    assert [c.name for c in ch.public_contacts()] == ["dialeval demo organizers"]
    assert any(c.email and not c.public for c in ch.contacts)


# ---- quotas and phases in grade ----------------------------------------------------------------------------
QUOTA = """
[quota]
per_day = 2
total = 3

[[phases]]
name = "test"
start = 2017-09-01
end = 2017-09-30
"""


def test_quota_rejects_unscored_and_deleting_a_run_gives_nothing_back(tmp_path, data, monkeypatch):
    monkeypatch.setenv("DIALEVAL_NOW", "2017-09-10T12:00:00Z")  # the day the grader sees the runs
    ch = challenges.load(write_challenge(tmp_path / "challenge.toml", QUOTA))
    runs, reg_dir = tmp_path / "runs", tmp_path / "reg"
    for i, when in enumerate(["2017-09-10T08:00:00Z", "2017-09-10T09:00:00Z", "2017-09-10T10:00:00Z"]):
        add_run(runs, f"a{i}", data, "Team A", when, seed=i)
    s = grade(runs, "dstc6", data, reg_dir, progress=False, board="b", challenge=ch)
    by = {o.entry: o for o in s.outcomes}
    assert [by[f"a{i}.json"].status for i in range(3)] == ["valid", "valid", "rejected"]
    assert "[over-quota]" in by["a2.json"].message and "2 of its 2 runs for 2017-09-10" in by["a2.json"].message
    assert s.exit_code == 1
    # seen after the phase ended: refused, though team.json dates it inside the phase; baselines are exempt
    monkeypatch.setenv("DIALEVAL_NOW", "2017-10-01T00:00:00Z")
    add_run(runs, "late", data, "Team B", "2017-09-20T00:00:00Z")
    add_run(runs, "base", data, "dialeval baselines", "2017-10-02T00:00:00Z", baseline=True)
    by = {o.entry: o for o in grade(runs, "dstc6", data, reg_dir, progress=False, board="b").outcomes}
    assert by["late.json"].status == "rejected" and "[outside-phases]" in by["late.json"].message
    assert "2017-10-01T00:00:00Z" in by["late.json"].message and "2017-09-20" not in by["late.json"].message
    assert by["base.json"].status == "valid"
    with Registry(reg_dir) as reg:
        refused = [r for r in reg.runs() if r.status == "rejected"]
        assert all(reg.records(run_id=r.run_id) == [] and reg.table(r.run_id) is None for r in refused)
        assert reg.check() == [] and reg.challenge_source("b") == ch.source
    # the team deletes its runs and sends a new one the next day: the registry remembers the two it used
    for p in runs.glob("a*"):
        p.unlink()
    add_run(runs, "a3", data, "Team A", "2017-09-11T08:00:00Z", seed=3)
    add_run(runs, "a4", data, "Team A", "2017-09-11T09:00:00Z", seed=4)
    monkeypatch.setenv("DIALEVAL_NOW", "2017-09-11T12:00:00Z")
    s = grade(runs, "dstc6", data, reg_dir, progress=False, board="b")  # no file given: the board's kept one holds
    assert s.challenge == "kept"
    by = {o.entry: o for o in s.outcomes}
    assert by["a3.json"].status == "valid"  # 3rd of 3 in all (the refused one is not charged)
    assert by["a4.json"].status == "rejected" and "3 of its 3 runs" in by["a4.json"].message
    assert by["late.json"].status == "unchanged" and by["late.json"].run_status == "rejected"
    with Registry(reg_dir) as reg:
        assert reg.quota_used("b", "Team A", "2017-09-11") == (1, 3)
        assert reg.submission_counts("b") == {"Team A": 5, "Team B": 1}


def test_a_phase_admits_a_run_by_when_grade_first_saw_it_not_team_json(tmp_path, data, monkeypatch):
    """A run sent after the phase closed but dated inside it by team.json is refused (before, it was scored: a
    team could backdate a run into an open phase); a run the team dated before the phase opened, but sent while it
    is open, is scored. submitted_at stays recorded, as information."""
    ch = challenges.load(write_challenge(tmp_path / "challenge.toml", QUOTA))  # open 2017-09-01 to 2017-09-30
    runs, reg_dir = tmp_path / "runs", tmp_path / "reg"
    add_run(runs, "early-dated", data, "Team A", "2017-08-01T00:00:00Z", seed=1)
    monkeypatch.setenv("DIALEVAL_NOW", "2017-09-15T00:00:00Z")
    s = grade(runs, "dstc6", data, reg_dir, progress=False, board="b", challenge=ch)
    assert [(o.entry, o.status) for o in s.outcomes] == [("early-dated.json", "valid")]
    add_run(runs, "backdated", data, "Team B", "2017-09-29T23:00:00Z", seed=2)
    monkeypatch.setenv("DIALEVAL_NOW", "2017-10-03T09:00:00Z")
    s = grade(runs, "dstc6", data, reg_dir, progress=False, board="b")  # the board's kept challenge.toml
    back = {o.entry: o for o in s.outcomes}["backdated.json"]
    assert back.status == "rejected" and "[outside-phases]" in back.message and s.exit_code == 1
    assert "first seen by the grader at 2017-10-03T09:00:00Z" in back.message
    with Registry(reg_dir) as reg:
        runs_by = {r.team: r for r in reg.runs()}
        assert runs_by["Team B"].submitted_at == "2017-09-29T23:00:00Z"  # kept as the team's word
        assert runs_by["Team B"].graded_at == "2017-10-03T09:00:00Z" and reg.records(run_id=runs_by["Team B"].run_id) == []
    # --now on the command line is the same clock (an organizer replaying runs collected while the phase was open)
    r = cli("grade", runs, "--data", data, "--registry", tmp_path / "reg2", "--challenge-file", tmp_path / "challenge.toml",
            "--now", "2017-09-30T12:00:00Z", "--json")
    assert r.returncode == 0, r.stderr
    assert {x["status"] for x in json.loads(r.stdout)["runs"]} == {"valid"}
    r = cli("grade", runs, "--data", data, "--registry", tmp_path / "reg3", "--now", "soon")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "reg3").exists()


def test_the_per_day_quota_counts_the_day_grade_first_saw_a_run_not_team_json(tmp_path, data, monkeypatch):
    """team.json's submitted_at is the team's word: three runs sent on one day but dated on three days are three
    runs of that day (before, each counted for the day it claimed, and all three were scored)."""
    ch = challenges.load(write_challenge(tmp_path / "challenge.toml", QUOTA))
    runs, reg_dir = tmp_path / "runs", tmp_path / "reg"
    for i, when in enumerate(["2017-09-05T08:00:00Z", "2017-09-06T08:00:00Z", "2017-09-07T08:00:00Z"]):
        add_run(runs, f"a{i}", data, "Team A", when, seed=i)
    monkeypatch.setenv("DIALEVAL_NOW", "2017-09-12T10:00:00Z")
    s = grade(runs, "dstc6", data, reg_dir, progress=False, board="b", challenge=ch)
    by = {o.entry: o for o in s.outcomes}
    assert [by[f"a{i}.json"].status for i in range(3)] == ["valid", "valid", "rejected"]
    assert "2 of its 2 runs for 2017-09-12 (UTC)" in by["a2.json"].message
    with Registry(reg_dir) as reg:
        assert {r.graded_at for r in reg.runs()} == {"2017-09-12T10:00:00Z"}  # recorded: when grade saw them
        assert sorted(r.submitted_at[:10] for r in reg.runs()) == ["2017-09-05", "2017-09-06", "2017-09-07"]
        assert reg.quota_used("b", "Team A", "2017-09-12") == (2, 2)
    # a later run, dated back into the quiet days, counts for the day it is seen
    add_run(runs, "a3", data, "Team A", "2017-09-01T08:00:00Z", seed=3)
    s = grade(runs, "dstc6", data, reg_dir, progress=False, board="b")
    a3 = {o.entry: o for o in s.outcomes}["a3.json"]
    assert a3.status == "rejected" and "2 of its 2 runs for 2017-09-12" in a3.message


def test_a_run_recorded_meanwhile_by_another_grader_still_counts_against_the_quota(tmp_path, data):
    """The quota is checked again inside the recording transaction: two graders deciding at once cannot both
    use a team's last run."""
    from dialeval.leaderboard.registry import Quota
    from dialeval.leaderboard.scoring import score_submission

    add_run(tmp_path / "runs", "one", data, "Team A", "2017-09-10T00:00:00Z")
    graded = score_submission(tmp_path / "runs" / "one.json", "dstc6", data, split="tst1")
    assert graded.valid
    with Registry(tmp_path / "reg") as reg:
        team = {"team": "Team A", "system": "s"}
        for key in ("k1", "k2"):  # both graders saw 0 of 1 runs used before scoring
            reg.record_run(team=team, graded=graded, grading_key=key, kind="submission", board="b",
                           submitted_at="2017-09-10T00:00:00Z", source_name=key, sha256=key, quota=Quota(total=1))
        first, second = reg.runs()
        assert first.status == "valid" and second.status == "rejected"
        assert [p["code"] for p in reg.problems(second.run_id)] == ["over-quota"]
        assert reg.records(run_id=second.run_id) == [] and reg.table(second.run_id) is None and reg.check() == []


def test_a_phase_grades_only_its_splits(tmp_path, data):
    ch = challenges.parse(HEAD + '[[phases]]\nname = "dev"\nstart = 2017-09-01\nend = 2017-09-09\nsplits = ["tst1"]\n'
                          '[[phases]]\nname = "test"\nstart = 2017-09-10\nend = 2017-09-20\nsplits = ["tst2"]\n'
                          'hidden = true\n')
    runs = tmp_path / "runs"
    add_run(runs, "dev-tst2", data, "Team A", "2017-09-05T00:00:00Z", split="tst2")
    s = grade(runs, "dstc6", data, tmp_path / "reg", progress=False, board="b", challenge=ch, now="2017-09-05T00:00:00Z")
    assert [(o.entry, o.status) for o in s.outcomes] == [("dev-tst2.json", "outside")]
    add_run(runs, "test-tst2", data, "Team A", "2017-09-15T00:00:00Z", split="tst2")
    s = grade(runs, "dstc6", data, tmp_path / "reg", progress=False, board="b", now="2017-09-15T00:00:00Z")
    assert {o.entry: o.status for o in s.outcomes}["test-tst2.json"] == "valid"


# ---- the site: counting rule, hidden phases, reveal, counts, deadlines, the challenge page --------------------
PHASED = """
rules = "Be kind."
counts = "{counts}"

[[contacts]]
name = "Public Person"
url = "https://example.org/board"
public = true

[[contacts]]
name = "Private Person"
email = "secret-organizer@example.org"

[[phases]]
name = "dev"
start = 2017-09-01
end = 2017-09-09
splits = ["tst1"]

[[phases]]
name = "final test"
start = 2017-09-10
end = 2017-09-20
splits = ["tst2"]
hidden = true
"""


@pytest.fixture(scope="module")
def phased(tmp_path_factory, data):
    """A registry graded under the phased challenge: Team A's best dev run is its first, its latest is its worst."""
    tmp = tmp_path_factory.mktemp("phased")
    ch = challenges.parse(HEAD + PHASED.format(counts="latest"))
    runs = tmp / "runs"
    add_run(runs, "a1", data, "Team A", "2017-09-02T00:00:00Z", quality=0.95, seed=1)
    add_run(runs, "a2", data, "Team A", "2017-09-03T00:00:00Z", quality=0.6, seed=2, chosen=True)
    add_run(runs, "a3", data, "Team A", "2017-09-04T00:00:00Z", quality=0.3, seed=3)
    add_run(runs, "b1", data, "Team B", "2017-09-05T00:00:00Z", quality=0.8, seed=4)
    # graded as they arrive: a phase admits a run by when grade sees it
    s = grade(runs, "dstc6", data, tmp / "reg", progress=False, board="b", challenge=ch, now="2017-09-05T12:00:00Z")
    assert {o.status for o in s.outcomes} == {"valid"}
    add_run(runs, "b-test", data, "Team B", "2017-09-12T00:00:00Z", split="tst2", quality=0.99, seed=5)
    s = grade(runs, "dstc6", data, tmp / "reg", progress=False, board="b", now="2017-09-12T00:00:00Z")
    assert {o.status for o in s.outcomes} == {"valid", "unchanged"}
    return tmp / "reg"


def build(reg_dir: Path, out: Path, **kw) -> Path:
    from dialeval.leaderboard.site import build_site

    with Registry(reg_dir) as reg:
        return build_site(reg, out, **kw).parent


def counted(reg_dir: Path, counts: str, team: str = "Team A", hidden=frozenset({"tst2"}), private=False) -> str:
    from dialeval.leaderboard.site import collect_board

    ch = challenges.parse(HEAD + PHASED.format(counts=counts))
    with Registry(reg_dir) as reg:
        view = collect_board(reg, "b", set(hidden), private, challenge=ch)
    return next(v["system"] for v in view["ranked"] if v["team"] == team)


def test_the_board_ranks_the_run_its_rule_says(phased):
    assert counted(phased, "latest") == "a3"
    assert counted(phased, "best-public") == "a1"
    assert counted(phased, "chosen") == "a2"
    # best-public compares the splits public while the challenge runs: Team B's test-phase run (0.99 on the
    # hidden split) never beats its dev run, before or after the reveal, nor on a private build
    assert counted(phased, "latest", "Team B", hidden=set()) == "b-test"
    for hidden, private in (({"tst2"}, False), (set(), False), ({"tst2"}, True)):
        assert counted(phased, "best-public", "Team B", hidden, private) == "b1"


def test_rank_ranks_the_run_the_boards_rule_says(phased, tmp_path):
    import sqlite3

    copy = tmp_path / "reg"
    copy.mkdir()
    src, dst = sqlite3.connect(phased / "registry.sqlite"), sqlite3.connect(copy / "registry.sqlite")
    src.backup(dst)
    src.close()
    dst.close()
    with Registry(copy) as reg:
        reg.set_challenge("b", HEAD + PHASED.format(counts="chosen"))
    r = cli("rank", "--registry", copy, "--board", "b", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["runs"]
    assert [x["system"] for x in rows if x["team"] == "Team A"] == ["a2"]


def test_the_registry_export_says_which_run_each_team_chose(phased, tmp_path):
    from dialeval.core.schemacheck import validator

    r = cli("registry", "export", "--registry", phased, "--out", tmp_path / "runs.jsonl")
    assert r.returncode == 0, r.stderr
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert {x["system"]: x["chosen"] for x in runs} == {"a1": False, "a2": True, "a3": False, "b1": False,
                                                        "b-test": False}  # before: no "chosen" at all
    assert not [e for x in runs for e in validator("run-record").iter_errors(x)]


def test_a_hidden_phase_stays_hidden_until_its_end_and_then_until_reveal(phased, tmp_path, data):
    tst2 = {i["dialog_id"] for f in (data / "tst2").glob("*.json") if not f.name.endswith(".answers.json")
            for i in json.loads(f.read_text())}

    keys = {f.read_bytes() for f in (data / "tst2").glob("*.answers.json")}

    def leaks(site: Path) -> list[str]:
        pages = {p.name: p.read_text(errors="replace") for p in site.rglob("*") if p.is_file() and p.suffix != ".whl"}
        # the dialeval wheel the challenge page links, read unpacked: package code and data only, which name the
        # benchmark's splits (tst2 too) but hold none of the challenge's answer keys or gold ids
        wheel = {}
        for w in site.glob("*.whl"):
            with zipfile.ZipFile(w) as z:
                assert not keys & {z.read(n) for n in z.namelist()}, w.name
                wheel.update({f"{w.name}/{n}": z.read(n).decode(errors="replace") for n in z.namelist()})
        return ([n for n, t in pages.items() if "tst2" in t or any(i in t for i in list(tst2)[:50])]
                + [n for n, t in wheel.items() if any(i in t for i in tst2)])

    during = build(phased, tmp_path / "during", now="2017-09-15T00:00:00Z")
    assert leaks(during) == []
    r = cli("leaderboard", "build", "--registry", phased, "--out", tmp_path / "early", "--reveal",
            "--now", "2017-09-15T00:00:00Z")
    assert r.returncode == 2 and "phase 'final test' ends 2017-09-20T23:59:59Z" in r.stderr
    assert not (tmp_path / "early").exists()
    after = build(phased, tmp_path / "after", now="2017-09-21T00:00:00Z")
    assert leaks(after) == []  # ended, not yet revealed
    r = cli("leaderboard", "build", "--registry", phased, "--out", tmp_path / "revealed", "--reveal",
            env={"DIALEVAL_NOW": "2017-09-21T00:00:00Z"})
    assert r.returncode == 0, r.stderr
    assert "tst2" in (tmp_path / "revealed" / "board-b.json").read_text()
    assert "published after the phase ended" in (tmp_path / "revealed" / "challenge-b.html").read_text()
    # "now" decides, the clock does not: the same registry and now build the same bytes
    again = build(phased, tmp_path / "again", now="2017-09-15T00:00:00Z")
    for p in [*during.glob("*.html"), *during.glob("*.whl")]:
        assert (again / p.name).read_bytes() == p.read_bytes()


def test_the_challenge_page_and_the_board_show_rules_phases_submission_and_counts(phased, tmp_path):
    from dialeval import __version__

    site = build(phased, tmp_path / "site", now="2017-09-15T00:00:00Z")
    page = (site / "challenge-b.html").read_text()
    wheel = f"dialeval-{__version__}-py3-none-any.whl"
    for text in ("Be kind.", "final test", "2017-09-20", "hidden until the phase ends", "Public Person",
                 f"pip install ./{wheel}", f'href="{wheel}"', "dialeval validate RUN --benchmark dstc6 --data DATA"):
        assert text in page, text
    # dialeval is not on PyPI: no page asks for it there, the site serves the wheel it names
    assert (site / wheel).is_file() and not any("dialeval==" in p.read_text(errors="replace")
                                                for p in site.rglob("*") if p.is_file())
    for p in site.rglob("*"):
        if p.is_file():
            assert "secret-organizer@example.org" not in p.read_text(errors="replace") and "Private Person" not in \
                p.read_text(errors="replace"), p.name
    board = (site / "board-b.html").read_text()
    assert 'href="challenge-b.html"' in board and 'href="challenge-b.html"' in (site / "index.html").read_text()
    assert "runs sent" in board and 'data-sort="3" data-label="runs sent">3</td>' in board  # Team A sent 3 runs
    # both deadlines on the chart drawn for wide screens and on the one drawn for phones
    assert board.count('class="deadline"') == 4 and "final test ends 2017-09-20" in board


def test_deadlines_widen_the_progress_axis():
    from dialeval.leaderboard.site import progress_chart

    rows = [{"run_id": 1, "team": "t", "system": "s", "kind": "submission", "score": 0.5,
             "graded_at": "2017-09-02T00:00:00Z"},
            {"run_id": 2, "team": "t", "system": "s", "kind": "submission", "score": 0.6,
             "graded_at": "2017-09-04T00:00:00Z"}]
    pc = progress_chart(rows, deadlines=[("test ends", "2017-09-12T00:00:00Z")])
    assert pc["deadlines"][0]["x"] == pc["right"] and pc["points"][1]["x"] < pc["right"]
    assert pc["xticks"][-1]["label"] == "2017-09-12"


@pytest.mark.parametrize("width", [1280, 390])
def test_challenge_page_and_deadlines_in_a_browser(phased, tmp_path, width):
    """Headless Chromium (Debian's, driven by Playwright; skipped without them): the challenge page and the board
    fit the window, the deadline lines are drawn, nothing errors and nothing is fetched from outside."""
    from dialeval import __version__

    chromium = Path("/usr/bin/chromium")
    if not chromium.exists():
        pytest.skip("Debian chromium is not installed at /usr/bin/chromium")
    sync = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    site = build(phased, tmp_path / "site", now="2017-09-15T00:00:00Z")
    with sync.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(chromium), args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": width, "height": 900})
        errors, outside = [], []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("request", lambda r: outside.append(r.url) if not r.url.startswith("file://") else None)
        for name in ("challenge-b.html", "board-b.html"):
            page.goto((site / name).as_uri())
            page.wait_for_load_state("load")
            scroll, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            assert scroll <= inner, (name, width, scroll)
        shown = page.evaluate("[...document.querySelectorAll('svg.progress')].filter(s => s.getBoundingClientRect()"
                              ".width > 0).map(s => s.querySelectorAll('line.deadline').length)")
        assert shown == [2]  # the chart drawn for this width marks both deadlines
        page.goto((site / "challenge-b.html").as_uri())
        assert f"pip install ./dialeval-{__version__}-py3-none-any.whl" in page.text_content("pre")
        browser.close()
    assert errors == [] and outside == []


def test_rank_ranks_the_run_the_boards_counting_rule_picks(tmp_path, data):
    """`dialeval rank` and the site rank the same runs: here the board counts each team's best public run."""
    ch = challenges.parse(HEAD + PHASED.format(counts="best-public"))
    runs = tmp_path / "runs"
    add_run(runs, "a1", data, "Team A", "2017-09-02T00:00:00Z", quality=0.95, seed=1)
    add_run(runs, "a3", data, "Team A", "2017-09-04T00:00:00Z", quality=0.3, seed=3)
    add_run(runs, "b1", data, "Team B", "2017-09-05T00:00:00Z", quality=0.8, seed=4)
    grade(runs, "dstc6", data, tmp_path / "reg", progress=False, board="b", challenge=ch, now="2017-09-05T12:00:00Z")
    r = cli("rank", "--registry", tmp_path / "reg", "--json")
    assert r.returncode == 0, r.stderr
    ranked = json.loads(r.stdout)
    assert [(x["team"], x["system"]) for x in ranked["runs"]] == [("Team A", "a1"), ("Team B", "b1")]
    assert cli("leaderboard", "build", "--registry", tmp_path / "reg", "--out", tmp_path / "site").returncode == 0
    site = json.loads((tmp_path / "site" / "board-b.json").read_text())
    assert [x["run_id"] for x in site["ranking"]] == [x["run_id"] for x in ranked["runs"]]


def test_grading_with_a_pinned_clock_writes_byte_identical_registries_and_sites(tmp_path, data, monkeypatch):
    """DIALEVAL_NOW pins every timestamp the registry writes (its creation, a new team, the kept challenge.toml,
    graded_at), so the same runs graded twice give the same bytes. Every run shares one graded_at: the site then
    orders by run id, which follows the entry names (a team's later-named run is its latest)."""
    from dialeval.leaderboard.site import build_site

    ch = challenges.load(write_challenge(tmp_path / "challenge.toml", QUOTA))
    runs = tmp_path / "runs"
    add_run(runs, "a1", data, "Team A", "2017-09-05T08:00:00Z", quality=0.5, seed=1)
    add_run(runs, "a2", data, "Team A", "2017-09-05T09:00:00Z", quality=0.7, seed=2)
    add_run(runs, "b1", data, "Team B", "2017-09-05T08:30:00Z", quality=0.9, seed=3)
    monkeypatch.setenv("DIALEVAL_NOW", "2017-09-12T10:00:00Z")
    out = {}
    for d in ("one", "two"):
        grade(runs, "dstc6", data, tmp_path / d / "reg", progress=False, board="b", challenge=ch)
        with Registry(tmp_path / d / "reg") as reg:
            build_site(reg, tmp_path / d / "site")
        out[d] = {p.relative_to(tmp_path / d).as_posix(): p.read_bytes()
                  for p in sorted((tmp_path / d).rglob("*")) if p.is_file()}
        time.sleep(1.1)  # the wall clock moves on between the two; the registry must not notice
    assert "reg/registry.sqlite" in out["one"] and sorted(out["one"]) == sorted(out["two"])
    assert [name for name in out["one"] if out["one"][name] != out["two"][name]] == []
    with Registry(tmp_path / "one" / "reg") as reg:
        stamps = {*(r.graded_at for r in reg.runs()),
                  *(row[0] for row in reg.db.execute("SELECT created_at FROM teams")),
                  *(row[0] for row in reg.db.execute("SELECT stored_at FROM challenges")),
                  reg.db.execute("SELECT value FROM meta WHERE key = 'created_at'").fetchone()[0]}
        assert stamps == {"2017-09-12T10:00:00Z"}
    board = json.loads(out["one"]["site/board-b.json"])
    assert [(r["team"], r["system"]) for r in board["ranking"]] == [("Team B", "b1"), ("Team A", "a2")]


def test_runs_graded_together_are_ordered_by_entry_name_never_by_a_backdated_submitted_at(tmp_path, data, monkeypatch):
    """Runs one grade sees together share a graded_at, so their run ids order them on the site: which of a team's
    runs is its latest, and which of two equal scores is listed first. The ids follow the entry names the
    organizer gave them (here, as they arrived), never team.json's submitted_at: a run sent last but dated back is
    still the team's latest, and a team dating its run back does not jump ahead of an equal score."""
    from dialeval.leaderboard.site import build_site

    runs = tmp_path / "runs"
    add_run(runs, "0001-a", data, "Team A", "2017-09-05T08:00:00Z", quality=0.5, seed=1)
    add_run(runs, "0002-b", data, "Team B", "2017-09-05T09:00:00Z", quality=0.9, seed=3)
    add_run(runs, "0003-a", data, "Team A", "2017-08-01T00:00:00Z", quality=0.7, seed=2)  # sent last, dated back
    add_run(runs, "0004-c", data, "Team C", "2017-08-01T00:00:00Z", quality=0.9, seed=3)  # B's answers, dated back
    monkeypatch.setenv("DIALEVAL_NOW", "2017-09-12T10:00:00Z")
    grade(runs, "dstc6", data, tmp_path / "reg", progress=False, board="b")
    with Registry(tmp_path / "reg") as reg:
        ids = {r.source_name: r.run_id for r in reg.runs()}
        assert sorted(ids, key=ids.get) == ["0001-a.json", "0002-b.json", "0003-a.json", "0004-c.json"]
        build_site(reg, tmp_path / "site")
    ranking = json.loads((tmp_path / "site" / "board-b.json").read_text())["ranking"]
    assert [(r["team"], r["system"]) for r in ranking] == [("Team B", "0002-b"), ("Team C", "0004-c"),
                                                           ("Team A", "0003-a")]
    assert ranking[0]["score"] == ranking[1]["score"]  # equal scores: listed in entry-name order


def test_team_json_without_submitted_at_is_recorded_absent_not_the_file_time(tmp_path, data):
    """Two grades of the same run whose files differ only in modification time, clock pinned: the same bytes."""
    registries = []
    for n, mtime in ((0, 1_500_000_000), (1, 1_600_000_000)):
        runs = tmp_path / f"runs{n}"
        add_run(runs, "one", data, "Team A", "unused")
        (runs / "one.team.json").write_text(json.dumps({"team": "Team A", "system": "one"}))
        for f in runs.iterdir():
            os.utime(f, (mtime, mtime))
        grade(runs, "dstc6", data, tmp_path / f"reg{n}", split="tst1", progress=False, now="2017-09-10T12:00:00Z")
        registries.append((tmp_path / f"reg{n}" / "registry.sqlite").read_bytes())
    assert registries[0] == registries[1]  # before: the file's mtime was recorded as submitted_at
    with Registry(tmp_path / "reg0") as reg:
        assert [r.submitted_at for r in reg.runs()] == [None]
    pages = {p.name: p.read_text() for p in build(tmp_path / "reg0", tmp_path / "site").rglob("*.html")}
    shown = [n for n, t in pages.items() if "no submitted_at in team.json" in t or "submitted — (team.json)" in t]
    assert shown and not [n for n, t in pages.items() if ">None<" in t or '"None"' in t]
