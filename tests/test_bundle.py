"""Issue 26 item 5: dialeval as Codabench's and EvalAI's scoring program.

The Codabench bundle's scoring program is run as Codabench's compute worker runs it (the metadata.yaml command,
with /app/input/res, /app/input/ref and /app/output mapped to temporary folders); EvalAI's evaluate() is
imported from the unpacked evaluation_script.zip and called as EvalAI's worker calls it. Both must give
exactly `dialeval score`'s numbers on a baseline run of the embedded default challenge, and a bad submission
one line on stderr and no scores.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import io
import json
import os
import shlex
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BASELINE = REPO / "submissions" / "baselines" / "default" / "tfidf" / "submission.tgz"
yaml = pytest.importorskip("yaml")  # only to read the bundles as the platforms do (PyYAML); dialeval writes YAML itself


@pytest.fixture(scope="module")
def data():
    from dialeval.simulator.default import ensure_default_challenge

    return ensure_default_challenge()


def cli(*args, cwd=None, env=None, timeout=300):
    env = dict(os.environ, DIALEVAL_NO_PROGRESS="1", **(env or {}))
    return subprocess.run([sys.executable, "-m", "dialeval", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=timeout)


@pytest.fixture(scope="module")
def reference_scores(data):
    """`dialeval score --json` on the baseline run: {split or "all": {metric: value}} (group all, micro)."""
    r = cli("score", BASELINE, "--data", data, "--json")
    assert r.returncode == 0, r.stderr
    out: dict[str, dict[str, float]] = {}
    for rec in json.loads(r.stdout)["results"]:
        if rec["group"] == "all" and rec["average"] == "micro" and rec["subset"] is None:
            out.setdefault(rec["split"], {})[rec["metric"]] = rec["value"]
    assert set(out) == {"all", "tst1", "tst2", "tst3", "tst4"}
    return out


@pytest.fixture(scope="module")
def bundles(data, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bundles")
    for kind in ("codabench", "evalai"):  # no --data: the embedded default, with its shipped challenge.toml
        r = cli("bundle", kind, "--out", tmp / f"{kind}.zip", env={"DIALEVAL_CHALLENGE": ""})
        assert r.returncode == 0, r.stderr
    return tmp


def gold_ids(data: Path) -> set[str]:
    return {c["candidate_id"] for k in data.glob("tst*/*.answers.json") for i in json.loads(k.read_text())
            for c in i["lst_candidate_id"]}


def unzip(path: Path, dest: Path) -> Path:
    with zipfile.ZipFile(path) as z:
        z.extractall(dest)
    return dest


def broken_run(dest: Path) -> Path:
    """The baseline's tst1 files with one rank out of range: strict validation rejects the run."""
    dest.mkdir(parents=True)
    with tarfile.open(BASELINE) as tf:
        members = [m for m in tf if m.isfile() and m.name.startswith("tst1/")]
        for m in members:
            (dest / m.name).parent.mkdir(parents=True, exist_ok=True)
            (dest / m.name).write_bytes(tf.extractfile(m).read())
    first = dest / members[0].name
    items = json.loads(first.read_text())
    items[0]["lst_candidate_id"][0]["rank"] = 0
    first.write_text(json.dumps(items))
    return dest


# ---- Codabench ----------------------------------------------------------------------------------------------
def test_codabench_bundle_has_what_the_v2_unpacker_reads(bundles, data):
    from dialeval import __version__

    z = zipfile.ZipFile(bundles / "codabench.zip")
    names = z.namelist()
    assert names == sorted(names) and all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in z.infolist())
    comp = yaml.safe_load(z.read("competition.yaml"))
    assert comp["version"] == 2 and comp["title"] and comp["image"] in names and comp["terms"] in names
    assert all(p["file"] in names and z.read(p["file"]).strip() for p in comp["pages"])
    assert [t["index"] for t in comp["tasks"]] == [p["index"] for p in comp["phases"]] == [0]
    for t in comp["tasks"]:
        assert f"{t['scoring_program']}/metadata.yaml" in names
        assert any(n.startswith(f"{t['reference_data']}/tst4/") and n.endswith(".answers.json") for n in names)
    phase = comp["phases"][0]
    assert phase["tasks"] == [0] and phase["start"] == "2017-09-01 00:00:00"
    assert (phase["max_submissions_per_day"], phase["max_submissions"]) == (5, 20)
    board = comp["leaderboards"][0]
    assert [c["key"] for c in board["columns"]] == ["p@1", "p@2", "p@5", "mrr"] and board["submission_rule"] == "Force_Last"
    wheel = f"scoring_program_0/dialeval-{__version__}-py3-none-any.whl"
    assert wheel in names and f"COPY {wheel} " in z.read("Dockerfile").decode()
    # answer keys only in the reference data: a gold id elsewhere only as a candidate listed in the public data
    assert leaks(participant_files(bundles / "codabench.zip"), gold_ids(data)) == []
    assert any(n.startswith("public_data_0/tst4/") for n in names)
    # the pages say how to submit with the exact version
    # dialeval is not on PyPI: the participants' page names the bundle's wheel, never a `dialeval==` requirement
    submit = z.read("pages/submit.md").decode()
    assert f"pip install ./dialeval-{__version__}-py3-none-any.whl" in submit and "Files tab, in the starting kit" in submit
    assert not any("dialeval==" in z.read(n).decode() for n in names if n.startswith("pages/"))


def test_bundles_are_deterministic_and_never_written_over_an_input(bundles, data, tmp_path):
    r = cli("bundle", "codabench", "--out", tmp_path / "again.zip", env={"DIALEVAL_CHALLENGE": ""})
    assert r.returncode == 0 and (tmp_path / "again.zip").read_bytes() == (bundles / "codabench.zip").read_bytes()
    r = cli("bundle", "evalai", "--out", tmp_path / "again-evalai.zip", env={"DIALEVAL_CHALLENGE": ""})
    assert r.returncode == 0 and (tmp_path / "again-evalai.zip").read_bytes() == (bundles / "evalai.zip").read_bytes()
    key = next((data / "tst1").glob("*.answers.json"))
    before = key.read_bytes()
    for out in (key, data / "tst1" / "new.zip"):
        r = cli("bundle", "evalai", "--data", data, "--out", out)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr, r.stderr
    assert key.read_bytes() == before and not (data / "tst1" / "new.zip").exists()
    challenge = tmp_path / "challenge.zip"
    challenge.write_text('title = "T"\noverview = "O"\n')
    r = cli("bundle", "codabench", "--data", data, "--challenge", challenge, "--out", challenge)
    assert r.returncode == 2 and challenge.read_text().startswith("title")


def run_as_codabench_worker(bundle_dir: Path, task: int, submission: Path, app: Path, site: Path | None = None,
                            python_env: Path | None = None) -> subprocess.CompletedProcess:
    """What the compute worker does for the scoring step: program/ = the task's scoring program, input/ref = its
    reference data, input/res = the unpacked submission, output/ empty; run metadata.yaml's command in program/.
    The image's Python: ``site``, a folder holding the bundle's wheel installed (put on PYTHONPATH), or
    ``python_env``, a Python environment; never this checkout's editable install, which the command would
    replace with the wheel (it is not the wheel's build)."""
    import shutil

    (app / "input").mkdir(parents=True)
    shutil.copytree(bundle_dir / f"scoring_program_{task}", app / "program")
    shutil.copytree(bundle_dir / f"reference_data_{task}", app / "input" / "ref")
    if submission.is_dir():
        shutil.copytree(submission, app / "input" / "res")
    else:
        with tarfile.open(submission) as tf:
            tf.extractall(app / "input" / "res", filter="data")
    (app / "output").mkdir()
    command = yaml.safe_load((app / "program" / "metadata.yaml").read_text())["command"]
    argv = [a.replace("/app/", f"{app}/") for a in shlex.split(command)]
    assert argv[:2] == ["sh", "-c"] and "exec dialeval bundle codabench-score " in argv[2]
    assert (site is None) != (python_env is None)
    bin_dir = site / "bin" if site else python_env / "bin"
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
               PYTHONUNBUFFERED="1", PIP_NO_INDEX="1")  # never a download of dialeval here
    if site:
        # python3 is then the machine's own interpreter: should the command's install branch run (a build check that
        # fails), pip must refuse rather than put the wheel into that shared interpreter, where it would shadow every
        # editable install of dialeval made over it (it did, twice, in one session)
        env["PYTHONPATH"] = str(site)
        env["PIP_REQUIRE_VIRTUALENV"] = "1"
    return subprocess.run(argv, cwd=app / "program", capture_output=True, text=True, env=env, timeout=300)


def test_codabench_scoring_program_gives_exactly_dialeval_scores_numbers(bundles, tmp_path, reference_scores, data,
                                                                        wheel_install):
    bundle = unzip(bundles / "codabench.zip", tmp_path / "bundle")
    r = run_as_codabench_worker(bundle, 0, BASELINE, tmp_path / "app", wheel_install)
    assert r.returncode == 0, r.stderr
    scores = json.loads((tmp_path / "app" / "output" / "scores.json").read_text())
    assert scores == reference_scores["all"]  # exactly, float for float
    # Codabench reads scores.json by the leaderboard's column keys (Competition-Bundle-Structure.md)
    columns = yaml.safe_load((bundle / "competition.yaml").read_text())["leaderboards"][0]["columns"]
    assert set(scores) == {c["key"] for c in columns}
    details = (tmp_path / "app" / "output" / "detailed_results.html").read_text()
    assert "tst4" in details and f"{reference_scores['tst4']['p@1']:.4f}" in details
    assert not any(g in details for g in gold_ids(data))


def test_codabench_scoring_program_on_a_bad_submission_says_one_line_and_scores_nothing(bundles, tmp_path, wheel_install):
    bundle = unzip(bundles / "codabench.zip", tmp_path / "bundle")
    r = run_as_codabench_worker(bundle, 0, broken_run(tmp_path / "bad"), tmp_path / "app", wheel_install)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "invalid submission, not scored" in lines[0] and "rank" in lines[0], r.stderr
    assert "Traceback" not in r.stderr and list((tmp_path / "app" / "output").iterdir()) == []


# ---- EvalAI ---------------------------------------------------------------------------------------------------
@pytest.fixture()
def evalai(bundles, tmp_path, wheel_install):
    """The challenge as EvalAI's worker loads it: evaluation_script.zip unpacked as a package and imported. The
    worker's dialeval is the wheel's (its metadata first on sys.path), so the script installs nothing into this
    checkout's environment (the code that runs is the same)."""
    bundle = unzip(bundles / "evalai.zip", tmp_path / "bundle")
    config = yaml.safe_load((bundle / "challenge_config.yaml").read_text())
    package = tmp_path / "challenge_data" / "challenge_1"
    unzip(bundle / config["evaluation_script"], package)
    sys.path[:0] = [str(wheel_install), str(package.parent)]
    try:
        from dialeval.leaderboard.own_wheel import BUILD_FILE, build_id

        assert importlib.metadata.distribution("dialeval").read_text(BUILD_FILE).strip() == build_id()
        module = importlib.import_module("challenge_1")
        yield bundle, config, module
    finally:
        sys.path.remove(str(package.parent))
        sys.path.remove(str(wheel_install))
        for name in [n for n in sys.modules if n == "challenge_1" or n.startswith("challenge_1.")]:
            del sys.modules[name]


def test_evalai_config_and_evaluate_give_exactly_dialeval_scores_numbers(evalai, reference_scores):
    bundle, config, module = evalai
    assert config["leaderboard"][0]["schema"]["labels"] == ["p@1", "p@2", "p@5", "mrr"]
    splits = {s["codename"] for s in config["dataset_splits"]}
    phase = config["challenge_phases"][0]
    assert (bundle / phase["test_annotation_file"]).is_file() and phase["max_submissions_per_day"] == 5
    out = module.evaluate(str(bundle / phase["test_annotation_file"]), str(BASELINE), phase["codename"],
                          submission_metadata={"participant_team": 1})
    assert [list(item) for item in out["result"]] == [["tst1"], ["tst2"], ["tst3"], ["tst4"]]
    for item in out["result"]:
        (split, values), = item.items()
        assert split in splits and values == reference_scores[split]
    assert out["submission_result"] == {s: reference_scores[s] for s in ("tst1", "tst2", "tst3", "tst4")}


def test_evalai_evaluate_on_a_bad_submission_says_one_line_and_scores_nothing(evalai, tmp_path, capfd):
    bundle, config, module = evalai
    bad = broken_run(tmp_path / "bad")
    tgz = tmp_path / "bad.tgz"
    with tarfile.open(tgz, "w:gz") as tf:
        tf.add(bad, arcname=".")
    phase = config["challenge_phases"][0]
    with pytest.raises(Exception) as e:
        module.evaluate(str(bundle / phase["test_annotation_file"]), str(tgz), phase["codename"])
    err = capfd.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "invalid submission, not scored" in err[0] and "\n" not in str(e.value)


# ---- a challenge with a dev phase and a hidden test phase ---------------------------------------------------
PHASED = """title = "Two phases"
overview = "Dev, then a hidden test."
counts = "chosen"
[quota]
total = 7
[[phases]]
name = "dev"
start = 2017-06-01
end = 2017-08-31
splits = ["tst1", "tst2", "tst3"]
[[phases]]
name = "Final Test"
start = 2017-09-01
end = 2017-09-15
splits = ["tst4"]
hidden = true
"""


def test_phases_become_tasks_with_only_their_own_reference_data(data, tmp_path):
    toml = tmp_path / "challenge.toml"
    toml.write_text(PHASED)
    for kind in ("codabench", "evalai"):
        r = cli("bundle", kind, "--data", data, "--challenge", toml, "--out", tmp_path / f"{kind}.zip")
        assert r.returncode == 0, r.stderr
    z = zipfile.ZipFile(tmp_path / "codabench.zip")
    comp = yaml.safe_load(z.read("competition.yaml"))
    assert [p["name"] for p in comp["phases"]] == ["dev", "Final Test"] and comp["phases"][1]["end"] == "2017-09-15 23:59:59"
    assert comp["leaderboards"][0]["submission_rule"] == "Add_And_Delete" and comp["phases"][0]["max_submissions"] == 7
    assert [p["max_submissions_per_day"] for p in comp["phases"]] == [0, 0]  # no daily limit: Codabench's 0, not its 5
    # each phase's split folders, and the simulator's mark beside them (the scored copy's reports say "simulated" as
    # dialeval score's do)
    tops = {n.split("/")[1] for n in z.namelist() if n.startswith("reference_data_1/")}
    assert tops == {"tst4", "simulator.json"} and \
        {n.split("/")[1] for n in z.namelist() if n.startswith("reference_data_0/")} == {"tst1", "tst2", "tst3", "simulator.json"}
    e = zipfile.ZipFile(tmp_path / "evalai.zip")
    config = yaml.safe_load(e.read("challenge_config.yaml"))
    assert [p["codename"] for p in config["challenge_phases"]] == ["dev", "final-test"]
    assert all(p["is_restricted_to_select_one_submission"] for p in config["challenge_phases"])
    # EvalAI refuses a phase restricted to one chosen submission that also makes submissions public
    assert not any(p["is_submission_public"] for p in config["challenge_phases"])
    assert not any(s["show_leaderboard_by_latest_submission"] for s in config["challenge_phase_splits"])
    vis = {(s["challenge_phase_id"], s["dataset_split_id"]): s["visibility"] for s in config["challenge_phase_splits"]}
    assert vis == {(1, 1): 3, (1, 2): 3, (1, 3): 3, (2, 4): 1}  # the hidden phase: host only
    with tarfile.open(fileobj=io.BytesIO(e.read("annotations/final-test.tgz"))) as tf:
        assert {m.name.split("/")[0] for m in tf} == {"tst4", "simulator.json"}


def test_a_challenge_without_a_quota_is_unlimited_on_codabench_too(data):
    """Codabench's v2 importer gives a phase that omits the limits 5 submissions a day and 100 in all; the bundle
    writes 0 ("no limit" there) so the platform enforces exactly the challenge's rule."""
    from dialeval.leaderboard import challenge as challenges
    from dialeval.leaderboard.hosting import codabench_bundle

    ch = challenges.parse('title = "No quota"\noverview = "O"\n[[phases]]\nname = "test"\nstart = 2017-09-01\n'
                          'end = 2017-09-15\n')
    assert not (ch.per_day or ch.total)
    comp = yaml.safe_load(codabench_bundle("dstc6", data, ch=ch)["competition.yaml"])
    assert [(p["max_submissions_per_day"], p["max_submissions"]) for p in comp["phases"]] == [(0, 0)]


def test_a_bundle_for_another_benchmark_scores_like_dialeval_score(tmp_path, wheel_install):
    """bAbI's shipped sample data: the whole data folder is the reference data; the worker's numbers are
    `dialeval score`'s."""
    samples = REPO / "submissions" / "samples" / "babi"
    run = samples / "example-run.json"
    r = cli("score", run, "--benchmark", "babi", "--data", samples, "--json")
    assert r.returncode == 0, r.stderr
    recs = [x for x in json.loads(r.stdout)["results"] if x["group"] == "all" and x["average"] == "micro"
            and x["subset"] is None]
    split = "all" if any(x["split"] == "all" for x in recs) else recs[0]["split"]
    expected = {x["metric"]: x["value"] for x in recs if x["split"] == split}
    r = cli("bundle", "codabench", "--benchmark", "babi", "--data", samples, "--out", tmp_path / "babi.zip")
    assert r.returncode == 0, r.stderr
    bundle = unzip(tmp_path / "babi.zip", tmp_path / "bundle")
    (tmp_path / "res").mkdir()
    (tmp_path / "res" / run.name).write_bytes(run.read_bytes())  # the participant's zip held one result file
    r = run_as_codabench_worker(bundle, 0, tmp_path / "res", tmp_path / "app", wheel_install)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "app" / "output" / "scores.json").read_text()) == expected


def test_a_run_zipped_with_its_folder_scores_the_same(bundles, tmp_path, reference_scores, wheel_install):
    """Participants often zip the folder holding their run: Codabench unpacks it as res/<folder>/tst1/..."""
    bundle = unzip(bundles / "codabench.zip", tmp_path / "bundle")
    wrapped = tmp_path / "res" / "my-run"
    wrapped.mkdir(parents=True)
    with tarfile.open(BASELINE) as tf:
        tf.extractall(wrapped, filter="data")
    r = run_as_codabench_worker(bundle, 0, tmp_path / "res", tmp_path / "app", wheel_install)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "app" / "output" / "scores.json").read_text()) == reference_scores["all"]


# ---- the scoring image and a hidden phase on Codabench ----------------------------------------------------------
def run_scoring_script(script: str, where: Path, has_dialeval: bool, pip_works: bool = True):
    """The metadata.yaml script in a stand-in image: python3 -c (the version check) succeeds when the image holds
    dialeval, any other python3 call is pip (logged; fails when the worker has no network), dialeval is logged."""
    bin_ = where / "bin"
    bin_.mkdir(parents=True)
    log = where / "log"
    log.touch()
    (bin_ / "python3").write_text(f'#!/bin/sh\nif [ "$1" = -c ]; then exit {0 if has_dialeval else 1}; fi\n'
                                   f'echo "pip $*" >> {log}\nexit {0 if pip_works else 1}\n')
    (bin_ / "dialeval").write_text(f'#!/bin/sh\necho "dialeval $*" >> {log}\n')
    for f in bin_.iterdir():
        f.chmod(0o755)
    r = subprocess.run(["sh", "-c", script], env={"PATH": f"{bin_}:/usr/bin:/bin"}, capture_output=True, text=True)
    return r, log.read_text().splitlines()


def test_codabench_default_image_is_pythons_and_the_command_installs_exactly_this_dialeval(bundles, tmp_path):
    """The default docker_image is one Codabench can pull (the Dockerfile's own base); the command installs the
    pinned dialeval there, and only when the image holds another version or none; --image names a built one."""
    from dialeval import __version__
    from dialeval.leaderboard.hosting import BASE_IMAGE

    z = zipfile.ZipFile(bundles / "codabench.zip")
    comp = yaml.safe_load(z.read("competition.yaml"))
    assert comp["docker_image"] == BASE_IMAGE == "python:3.12-slim"
    assert f"FROM {BASE_IMAGE}" in z.read("Dockerfile").decode().splitlines()
    assert f"the dialeval wheel its scoring program carries, dialeval-{__version__}-py3-none-any.whl" in \
        z.read("README.txt").decode()
    script = shlex.split(yaml.safe_load(z.read("scoring_program_0/metadata.yaml"))["command"])[2]
    # the same script in an image without dialeval (python3 -c fails) and in one with it (python3 -c succeeds)
    for has_it in (False, True):
        r, calls = run_scoring_script(script, tmp_path / f"image{has_it}", has_it)
        assert r.returncode == 0, r.stderr
        assert calls[-1].startswith("dialeval bundle codabench-score /app/input/res /app/input/ref /app/output")
        assert len(calls) == (1 if has_it else 3)
        if not has_it:  # the wheel alone (replacing another build of the version), then for its dependencies
            wheel = f" /app/program/dialeval-{__version__}-py3-none-any.whl"
            assert calls[0].startswith("pip -m pip install") and " --force-reinstall --no-deps " in calls[0]
            assert calls[0].endswith(wheel) and calls[1].endswith(wheel) and "--force-reinstall" not in calls[1]
    # a worker without network: pip fails, and the scoring stops with one line saying what to do (exit 2)
    r, calls = run_scoring_script(script, tmp_path / "offline", False, pip_works=False)
    assert r.returncode == 2 and len(calls) == 1 and calls[0].startswith("pip ")
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"could not install the bundled dialeval {__version__}" in lines[0]
    assert "come from PyPI" in lines[0] and "--image NAME" in lines[0]
    out = tmp_path / "own.zip"
    r = cli("bundle", "codabench", "--image", "ghcr.io/org/dialeval-scoring:1", "--out", out,
            env={"DIALEVAL_CHALLENGE": ""})
    assert r.returncode == 0, r.stderr
    own = zipfile.ZipFile(out)
    assert yaml.safe_load(own.read("competition.yaml"))["docker_image"] == "ghcr.io/org/dialeval-scoring:1"
    assert "docker build -t ghcr.io/org/dialeval-scoring:1 . && docker push" in own.read("README.txt").decode()


def test_a_bundle_for_a_built_image_scores_offline_and_never_runs_pip(tmp_path):
    """--image names an image built from the bundle's Dockerfile (dialeval preinstalled): its scoring program
    installs nothing, so it works on a Codabench worker without network; an image holding another dialeval (or
    none) stops with one line naming the image, never another version's numbers."""
    from dialeval import __version__

    out = tmp_path / "own.zip"
    r = cli("bundle", "codabench", "--image", "ghcr.io/org/dialeval-scoring:1", "--out", out,
            env={"DIALEVAL_CHALLENGE": ""})
    assert r.returncode == 0 and "note:" not in r.stdout, r.stderr
    z = zipfile.ZipFile(out)
    command = yaml.safe_load(z.read("scoring_program_0/metadata.yaml"))["command"]
    assert "pip" not in command
    script = shlex.split(command)[2]
    r, calls = run_scoring_script(script, tmp_path / "built", True, pip_works=False)
    assert r.returncode == 0 and len(calls) == 1 and calls[0].startswith("dialeval bundle codabench-score "), r.stderr
    r, calls = run_scoring_script(script, tmp_path / "stale", False, pip_works=False)
    assert r.returncode == 2 and calls == []
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "ghcr.io/org/dialeval-scoring:1 does not hold this bundle's dialeval " + __version__ in lines[0]
    assert "the scoring program installs nothing, so the\n   workers need no network" in z.read("README.txt").decode()
    default = cli("bundle", "codabench", "--out", tmp_path / "default.zip", env={"DIALEVAL_CHALLENGE": ""})
    assert default.returncode == 0 and "note: its scoring installs dialeval with pip" in default.stdout


def test_a_hidden_phase_keeps_its_scores_from_participants_on_codabench(data, tmp_path, reference_scores, wheel_install):
    """Per phase, what Codabench supports: hide_output on the hidden phase, and a scoring program that puts no
    number where participants see it (log, detailed results). The one leaderboard serves every phase and hides
    without a date: it starts hidden, and README.txt says what to switch by hand and why (with the sources)."""
    toml = tmp_path / "challenge.toml"
    toml.write_text(PHASED)
    r = cli("bundle", "codabench", "--data", data, "--challenge", toml, "--out", tmp_path / "c.zip")
    assert r.returncode == 0, r.stderr
    bundle = unzip(tmp_path / "c.zip", tmp_path / "bundle")
    comp = yaml.safe_load((bundle / "competition.yaml").read_text())
    assert [p.get("hide_output", False) for p in comp["phases"]] == [False, True]
    assert comp["leaderboards"][0]["hidden"] is True
    readme = (bundle / "README.txt").read_text()
    assert "Final Test (ends 2017-09-15T23:59:59Z)" in readme and "base_unpacker.py" in readme and "1777" in readme
    dev = yaml.safe_load((bundle / "scoring_program_0" / "metadata.yaml").read_text())["command"]
    assert "--hidden-until" not in dev
    r = run_as_codabench_worker(bundle, 1, BASELINE, tmp_path / "app", wheel_install)
    assert r.returncode == 0, r.stderr
    scores = json.loads((tmp_path / "app" / "output" / "scores.json").read_text())
    assert scores == reference_scores["tst4"]  # the leaderboard still gets the phase's exact numbers
    details = (tmp_path / "app" / "output" / "detailed_results.html").read_text()
    assert "hidden until it ends (2017-09-15T23:59:59Z)" in details
    for v in scores.values():
        assert f"{v:.4f}" not in details and f"{v:.4f}" not in r.stdout


def test_a_challenge_without_a_quota_writes_evalais_documented_no_limit_explicitly(data):
    """EvalAI documents max_submissions_per_day, max_submissions_per_month and max_submissions as optional
    positive integers defaulting to 100000 (docs/source/configuration.md): the bundle writes each one, with
    challenge.toml's quota where it sets one, so the configuration says what EvalAI will enforce."""
    from dialeval.leaderboard import challenge as challenges
    from dialeval.leaderboard.hosting import evalai_bundle

    ch = challenges.parse('title = "No quota"\noverview = "O"\n[[phases]]\nname = "test"\nstart = 2017-09-01\n'
                          'end = 2017-09-15\n')
    text = evalai_bundle("dstc6", data, ch=ch)["challenge_config.yaml"].decode()
    phase = yaml.safe_load(text)["challenge_phases"][0]
    limits = ("max_submissions_per_day", "max_submissions_per_month", "max_submissions")
    assert [phase[k] for k in limits] == [100000, 100000, 100000]
    assert "# Submission limits are written for every phase" in text and "default for an omitted limit" in text
    ch = challenges.parse('title = "Daily"\noverview = "O"\n[quota]\nper_day = 3\n[[phases]]\nname = "test"\n'
                          'start = 2017-09-01\nend = 2017-09-15\n')
    phase = yaml.safe_load(evalai_bundle("dstc6", data, ch=ch)["challenge_config.yaml"])["challenge_phases"][0]
    assert [phase[k] for k in limits] == [3, 100000, 100000]


# ---- the dialeval the bundles install: their own wheel, never PyPI's (dialeval is not published there) ---------
def wheel_of(bundles: Path) -> tuple[str, bytes, bytes]:
    """(file name, the Codabench scoring program's wheel, the EvalAI evaluation script's wheel)."""
    from dialeval import __version__

    name = f"dialeval-{__version__}-py3-none-any.whl"
    codabench = zipfile.ZipFile(bundles / "codabench.zip").read(f"scoring_program_0/{name}")
    script = zipfile.ZipFile(io.BytesIO(zipfile.ZipFile(bundles / "evalai.zip").read("evaluation_script.zip")))
    return name, codabench, script.read(name)


def test_bundles_carry_this_dialeval_as_a_wheel_and_never_ask_pypi_for_it(bundles, data):
    """Both bundles hold the same wheel of the running dialeval: a valid PEP 427 wheel (RECORD hashes, the
    console script, the requirements pip needs to fetch numpy & co.), package code and data only (no cache, no
    answer key), and no generated install step names a `dialeval==` requirement (that would ask PyPI)."""
    import base64
    import hashlib

    from dialeval import __version__

    name, wheel, same = wheel_of(bundles)
    assert wheel == same
    z = zipfile.ZipFile(io.BytesIO(wheel))
    names = z.namelist()
    info = f"dialeval-{__version__}.dist-info"
    assert names[-1] == f"{info}/RECORD" and all(i.date_time == (1980, 1, 1, 0, 0, 0) for i in z.infolist())
    for want in ("dialeval/__init__.py", "dialeval/cli.py", "dialeval/leaderboard/hosting.py", "dialeval/baselines/__init__.py",
                 "dialeval/schemas/dstc6-result.schema.json", "dialeval/files/releases.json",
                 "dialeval/samples/babi/sample.json"):
        assert want in names, want
    # the reference runs (3 MB) stay out: only `dialeval demo` reads them, and it remakes them
    assert not [n for n in names if "reference_runs" in n or n.endswith("submission.tgz")]
    assert not [n for n in names if "__pycache__" in n or "_kernel_cache" in n or n.endswith((".pyc", ".nbi", ".nbc"))]
    assert "Tag: py3-none-any" in z.read(f"{info}/WHEEL").decode()
    assert "dialeval = dialeval.cli:run" in z.read(f"{info}/entry_points.txt").decode()
    meta = z.read(f"{info}/METADATA").decode()
    assert f"Version: {__version__}\n" in meta and "Requires-Dist: numpy" in meta and "Requires-Dist: scipy" in meta
    rows = [line.split(",") for line in z.read(f"{info}/RECORD").decode().splitlines()]
    assert sorted(r[0] for r in rows) == sorted(names)
    for path, digest, size in rows:
        if path != f"{info}/RECORD":
            body = z.read(path)
            assert digest == "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(body).digest()).rstrip(b"=").decode()
            assert int(size) == len(body)
    # package code only: no answer key of the challenge in it
    golds = gold_ids(data)
    keys = {k.read_bytes() for k in data.glob("tst*/*.answers.json")}
    for n in names:
        body = z.read(n)
        assert body not in keys and not any(g.encode() in body for g in golds), n
    # every install step of both bundles uses the wheel, none a PyPI requirement on dialeval
    c = zipfile.ZipFile(bundles / "codabench.zip")
    script = zipfile.ZipFile(io.BytesIO(zipfile.ZipFile(bundles / "evalai.zip").read("evaluation_script.zip")))
    steps = {"Dockerfile": c.read("Dockerfile"), "metadata.yaml": c.read("scoring_program_0/metadata.yaml"),
             "codabench README.txt": c.read("README.txt"), "__init__.py": script.read("__init__.py"),
             "evalai README.txt": zipfile.ZipFile(bundles / "evalai.zip").read("README.txt")}
    for what, text in steps.items():
        assert "dialeval==" not in text.decode() and name in text.decode(), what
    assert f"RUN pip install --no-cache-dir /tmp/{name}" in steps["Dockerfile"].decode()
    # and the participants' pages tell teams to install that wheel too (EvalAI's: HTML templates)
    e = zipfile.ZipFile(bundles / "evalai.zip")
    guide = e.read("templates/submission_guidelines.html").decode()
    assert f"pip install ./{name}" in guide and "linked from this page" in guide
    assert not any("dialeval==" in e.read(n).decode() for n in e.namelist() if n.startswith("templates/"))


@pytest.fixture(scope="module")
def wheel_install(bundles, tmp_path_factory):
    """The bundle's wheel installed (no dependencies: they are this Python's) into a folder of its own: put on
    PYTHONPATH it is the dialeval imported, ahead of this checkout's editable install."""
    name, wheel, _ = wheel_of(bundles)
    tmp = tmp_path_factory.mktemp("wheel")
    (tmp / name).write_bytes(wheel)
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-qq", "--no-deps", "--no-index", "--target",
                        tmp / "site", tmp / name], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return tmp / "site"


def test_the_bundled_wheel_installs_a_dialeval_that_scores_the_bundle_exactly(bundles, wheel_install, tmp_path,
                                                                             reference_scores):
    """Installed from the wheel alone, dialeval reports its version, is imported from the install (not the
    checkout) and, run as the Codabench worker runs the scoring program, gives exactly `dialeval score`'s numbers."""
    from dialeval import __version__

    env = {"PYTHONPATH": str(wheel_install)}
    r = cli("--version", cwd=tmp_path, env=env)
    assert r.returncode == 0 and __version__ in r.stdout, r.stderr
    r = subprocess.run([sys.executable, "-c", "import dialeval.leaderboard.hosting as h; print(h.__file__)"],
                       capture_output=True, text=True, cwd=tmp_path, env=dict(os.environ, **env))
    assert Path(r.stdout.strip()).is_relative_to(wheel_install), r.stdout + r.stderr
    bundle = unzip(bundles / "codabench.zip", tmp_path / "bundle")
    r = run_as_codabench_worker(bundle, 0, BASELINE, tmp_path / "app", wheel_install)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "app" / "output" / "scores.json").read_text()) == reference_scores["all"]


def test_a_regular_install_makes_the_same_wheel_as_an_editable_one(bundles, wheel_install, tmp_path):
    """The wheel comes from the installed package's files: made by a regular install (the one from the wheel:
    everything under site-packages/dialeval) it is byte for byte the one this editable checkout made."""
    _, wheel, _ = wheel_of(bundles)
    r = subprocess.run([sys.executable, "-c", "import sys; from dialeval.leaderboard.hosting import dialeval_wheel; "
                        "sys.stdout.buffer.write(dialeval_wheel())"], capture_output=True, cwd=tmp_path,
                       env=dict(os.environ, PYTHONPATH=str(wheel_install)))
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == wheel


@pytest.fixture()
def bare_python(tmp_path):
    """A Python environment without dialeval (a virtual environment over the base interpreter's packages), as
    a worker's image is before the scoring program installs it; skipped where those packages lack pip or
    dialeval's dependencies (they cannot be downloaded here)."""
    env_dir = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", env_dir], check=True)
    python = env_dir / "bin" / "python3"
    r = subprocess.run([python, "-c", "import pip, numpy, scipy, pandas, jsonschema, msgspec, click, rich, pooch, "
                        "platformdirs, filelock, jinja2, threadpoolctl"], capture_output=True, cwd=tmp_path)
    if r.returncode != 0:
        pytest.skip("the base Python lacks pip or dialeval's dependencies: no environment to install the wheel into")
    r = subprocess.run([python, "-c", "import dialeval"], capture_output=True, cwd=tmp_path)
    assert r.returncode != 0, "the base Python already has a dialeval"
    return env_dir


def test_codabench_default_command_installs_the_bundled_wheel_offline_and_scores(bundles, bare_python, tmp_path,
                                                                                   reference_scores):
    """The metadata.yaml command, verbatim, in an image without dialeval and with pip's index switched off: it
    installs the scoring program's own wheel (so never a download of dialeval) and scores exactly; in an image
    holding another build of the same version it replaces that build (pip alone would keep it)."""
    from dialeval.leaderboard.own_wheel import BUILD_FILE, build_id

    bundle = unzip(bundles / "codabench.zip", tmp_path / "bundle")
    r = run_as_codabench_worker(bundle, 0, BASELINE, tmp_path / "app", python_env=bare_python)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "app" / "output" / "scores.json").read_text()) == reference_scores["all"]
    site, = (bare_python / "lib").glob("python3*/site-packages")
    build = next(site.glob(f"dialeval-*.dist-info/{BUILD_FILE}"))
    assert build.read_text().strip() == build_id()
    init = site / "dialeval" / "__init__.py"
    original = init.read_bytes()
    init.write_bytes(original + b"raise SystemExit('a stale build ran')\n")  # another build of the same version
    build.write_text("0" * 64 + "\n")
    r = run_as_codabench_worker(bundle, 0, BASELINE, tmp_path / "again", python_env=bare_python)
    assert r.returncode == 0, r.stderr
    assert init.read_bytes() == original and build.read_text().strip() == build_id()
    assert json.loads((tmp_path / "again" / "output" / "scores.json").read_text()) == reference_scores["all"]


def test_evalai_script_installs_its_wheel_where_the_worker_lacks_dialeval(bundles, bare_python, tmp_path,
                                                                         reference_scores):
    """EvalAI's worker imports the unpacked evaluation script: in a Python without dialeval it installs the wheel
    it carries (pip's index off) and evaluate() gives exactly `dialeval score`'s numbers."""
    bundle = unzip(bundles / "evalai.zip", tmp_path / "bundle")
    config = yaml.safe_load((bundle / "challenge_config.yaml").read_text())
    unzip(bundle / config["evaluation_script"], tmp_path / "challenge_data" / "challenge_1")
    phase = config["challenge_phases"][0]
    code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import challenge_1; "
            "print(json.dumps(challenge_1.evaluate(sys.argv[2], sys.argv[3], sys.argv[4])['submission_result']))")
    r = subprocess.run([bare_python / "bin" / "python3", "-c", code, tmp_path / "challenge_data",
                        bundle / phase["test_annotation_file"], BASELINE, phase["codename"]], capture_output=True,
                       text=True, cwd=tmp_path, env=dict(os.environ, PIP_NO_INDEX="1", DIALEVAL_NO_PROGRESS="1"),
                       timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out == {s: reference_scores[s] for s in ("tst1", "tst2", "tst3", "tst4")}


# ---- the platforms' documented formats --------------------------------------------------------------------------
# Codabench v2 competition.yaml, from github.com/codalab/codabench:
#   documentation/docs/Organizers/Benchmark_Creation/Yaml-Structure.md (https://docs.codabench.org/latest/
#   Organizers/Benchmark_Creation/Yaml-Structure/) and the importer src/apps/competitions/unpackers/v2.py
#   (raises without title's image, terms, tasks, phases, leaderboards; phases need tasks; tasks a scoring_program);
#   leaderboard/column fields: src/apps/api/serializers/leaderboards.py, src/apps/leaderboards/models.py.
CODABENCH_TOP = {"version", "title", "image", "terms", "description", "registration_auto_approve", "docker_image",
                 "make_programs_available", "make_input_data_available", "queue", "enable_detailed_results",
                 "show_detailed_results_in_submission_panel", "show_detailed_results_in_leaderboard", "contact_email",
                 "reward", "auto_run_submissions", "can_participants_make_submissions_public", "forum_enabled",
                 "competition_type", "fact_sheet", "pages", "phases", "tasks", "solutions", "leaderboards"}
CODABENCH_TOP_REQUIRED = {"version", "title", "image", "terms", "pages", "phases", "tasks", "leaderboards"}
CODABENCH_PAGE = {"title", "file"}
CODABENCH_PHASE = {"index", "name", "description", "start", "end", "tasks", "max_submissions", "max_submissions_per_day",
                   "auto_migrate_to_this_phase", "execution_time_limit", "hide_output", "hide_prediction_output",
                   "hide_score_output", "starting_kit", "public_data", "accepts_only_result_submissions"}
CODABENCH_PHASE_REQUIRED = {"name", "start", "tasks"}
CODABENCH_TASK = {"index", "key", "name", "description", "scoring_program", "reference_data", "input_data",
                  "ingestion_program", "ingestion_only_during_scoring"}
CODABENCH_TASK_REQUIRED = {"index", "name", "scoring_program"}
CODABENCH_LEADERBOARD = {"id", "primary_index", "title", "key", "columns", "hidden", "submission_rule"}
CODABENCH_LEADERBOARD_REQUIRED = {"title", "key", "columns"}
CODABENCH_RULES = {"Add", "Add_And_Delete", "Add_And_Delete_Multiple", "Force_Last", "Force_Latest_Multiple", "Force_Best"}
CODABENCH_COLUMN = {"id", "title", "key", "index", "sorting", "computation", "computation_indexes", "precision", "hidden"}
CODABENCH_COLUMN_REQUIRED = {"title", "key", "index"}
CODABENCH_METADATA = {"command"}  # the scoring program's metadata.yaml (Competition-Bundle-Structure.md)
# EvalAI challenge_config.yaml, from github.com/Cloud-CV/EvalAI: docs/source/02-for-challenge-hosts/configuration/
#   yaml-reference.md and challenge-phases-setup.md (https://evalai.readthedocs.io), and the upload check
#   apps/challenges/challenge_config_utils.py (what it refuses: the *_REQUIRED sets, expected_keys of a phase split,
#   is_submission_public with is_restricted_to_select_one_submission, an evaluation_script that is not a .zip).
EVALAI_TOP = {"title", "short_description", "description", "evaluation_details", "terms_and_conditions", "image",
              "submission_guidelines", "leaderboard_description", "evaluation_script", "remote_evaluation",
              "is_docker_based", "start_date", "end_date", "published", "tags", "domain", "sponsors", "prizes",
              "leaderboard", "challenge_phases", "dataset_splits", "challenge_phase_splits"}
EVALAI_TOP_REQUIRED = {"title", "description", "evaluation_details", "terms_and_conditions", "submission_guidelines",
                       "evaluation_script", "start_date", "end_date", "leaderboard", "challenge_phases",
                       "dataset_splits", "challenge_phase_splits"}
EVALAI_LEADERBOARD = {"id", "schema"}
EVALAI_SCHEMA = {"labels", "default_order_by", "metadata"}
EVALAI_PHASE = {"id", "name", "description", "leaderboard_public", "is_public", "challenge", "is_active",
                "max_concurrent_submissions_allowed", "allowed_email_ids", "disable_logs", "is_submission_public",
                "start_date", "end_date", "test_annotation_file", "codename", "max_submissions_per_day",
                "max_submissions_per_month", "max_submissions", "default_submission_meta_attributes",
                "submission_meta_attributes", "is_restricted_to_select_one_submission",
                "is_partial_submission_evaluation_enabled", "allowed_submission_file_types"}
EVALAI_PHASE_REQUIRED = {"id", "name", "description", "codename", "start_date", "end_date", "test_annotation_file"}
# yaml-reference.md shows every phase with is_active, challenge and allowed_email_ids; what EvalAI does with them
# on upload (apps/challenges/serializers.py ChallengePhaseCreateSerializer, models.py ChallengePhase):
# is_active is a ReadOnlyField (ChallengePhase.is_active is a property: start_date < now < end_date), challenge is
# one of the upload's exclude_fields (the phase joins the challenge being created), so neither is the config's to
# set; allowed_email_ids is an optional ArrayField (blank, default empty) and apps/jobs refuses a submitter only
# when the list is non-empty: [] lets every participant submit.
EVALAI_PHASE_SET_BY_EVALAI = {"is_active", "challenge"}
EVALAI_SPLIT = {"id", "name", "codename"}
EVALAI_PHASE_SPLIT = {"challenge_phase_id", "leaderboard_id", "dataset_split_id", "visibility",
                      "leaderboard_decimal_precision", "is_leaderboard_order_descending", "show_execution_time",
                      "show_leaderboard_by_latest_submission"}
EVALAI_PHASE_SPLIT_REQUIRED = {"challenge_phase_id", "leaderboard_id", "dataset_split_id", "visibility",
                               "leaderboard_decimal_precision", "is_leaderboard_order_descending"}
DATE = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"  # both document YYYY-MM-DD HH:MM:SS, in UTC


def keys_ok(obj: dict, documented: set[str], required: set[str], what: str) -> None:
    assert set(obj) <= documented, f"{what}: undocumented {sorted(set(obj) - documented)}"
    assert required <= set(obj), f"{what}: missing {sorted(required - set(obj))}"


@pytest.mark.parametrize("challenge", ["default", "phased"])
def test_codabench_competition_yaml_uses_only_documented_keys(data, tmp_path, challenge):
    import re

    from dialeval.leaderboard import challenge as challenges
    from dialeval.leaderboard.hosting import codabench_bundle
    from dialeval.leaderboard.own_wheel import wheel_name

    ch = challenges.load(challenges.DEFAULT_FILE) if challenge == "default" else challenges.parse(PHASED)
    entries = codabench_bundle("dstc6", data, ch=ch)
    names = set(entries)

    def exists(path: str) -> bool:  # a file of the bundle, or a folder of it (Codabench zips folders)
        return path in names or any(n.startswith(path.rstrip("/") + "/") for n in names)

    comp = yaml.safe_load(entries["competition.yaml"])
    keys_ok(comp, CODABENCH_TOP, CODABENCH_TOP_REQUIRED, "competition")
    assert comp["version"] == 2 and exists(comp["image"]) and exists(comp["terms"])
    for page in comp["pages"]:
        keys_ok(page, CODABENCH_PAGE, CODABENCH_PAGE, "page")
        assert exists(page["file"])
    for t in comp["tasks"]:
        keys_ok(t, CODABENCH_TASK, CODABENCH_TASK_REQUIRED, "task")
        assert exists(t["scoring_program"]) and exists(t["reference_data"]) and len(t["name"]) <= 256
        metadata = yaml.safe_load(entries[f"{t['scoring_program']}/metadata.yaml"])
        keys_ok(metadata, CODABENCH_METADATA, CODABENCH_METADATA, "metadata.yaml")
    for p in comp["phases"]:
        keys_ok(p, CODABENCH_PHASE, CODABENCH_PHASE_REQUIRED, "phase")
        assert all(re.fullmatch(DATE, p[k]) for k in ("start", "end") if k in p)
        # the starting kit every phase offers participants holds the wheel they install (dialeval is not on PyPI)
        assert entries[f"{p['starting_kit']}/{wheel_name()}"] == entries[f"scoring_program_0/{wheel_name()}"]
    (board,) = comp["leaderboards"]
    keys_ok(board, CODABENCH_LEADERBOARD, CODABENCH_LEADERBOARD_REQUIRED, "leaderboard")
    assert board["submission_rule"] in CODABENCH_RULES
    for c in board["columns"]:
        keys_ok(c, CODABENCH_COLUMN, CODABENCH_COLUMN_REQUIRED, "column")
        assert c["sorting"] in ("asc", "desc") and len(c["key"]) <= 36 and len(c["title"]) <= 36
        assert c["precision"] == 4  # Codabench's default, 2, would tie 0.962 with 0.958


@pytest.mark.parametrize("challenge", ["default", "phased"])
def test_evalai_challenge_config_uses_only_documented_keys(data, challenge):
    import re

    from dialeval.leaderboard import challenge as challenges
    from dialeval.leaderboard.hosting import evalai_bundle

    ch = challenges.load(challenges.DEFAULT_FILE) if challenge == "default" else challenges.parse(PHASED)
    entries = evalai_bundle("dstc6", data, ch=ch)
    config = yaml.safe_load(entries["challenge_config.yaml"])
    keys_ok(config, EVALAI_TOP, EVALAI_TOP_REQUIRED, "challenge")
    for k in ("description", "evaluation_details", "terms_and_conditions", "submission_guidelines"):
        assert config[k].endswith(".html") and config[k] in entries
    assert config["evaluation_script"].endswith(".zip") and config["evaluation_script"] in entries
    assert all(re.fullmatch(DATE, config[k]) for k in ("start_date", "end_date"))
    (board,) = config["leaderboard"]
    keys_ok(board, EVALAI_LEADERBOARD, EVALAI_LEADERBOARD, "leaderboard")
    keys_ok(board["schema"], EVALAI_SCHEMA, {"labels", "default_order_by"}, "leaderboard schema")
    assert board["schema"]["default_order_by"] in board["schema"]["labels"]
    for p in config["challenge_phases"]:
        keys_ok(p, EVALAI_PHASE, EVALAI_PHASE_REQUIRED, "phase")
        assert p["description"] in entries and p["test_annotation_file"] in entries
        assert all(re.fullmatch(DATE, p[k]) for k in ("start_date", "end_date"))
        assert not (p["is_submission_public"] and p["is_restricted_to_select_one_submission"])
        assert p["allowed_email_ids"] == [] and not EVALAI_PHASE_SET_BY_EVALAI & set(p)
        # EvalAI refuses an upload whose name ends otherwise: a run folder as .tgz, a DSTC6 result file as .json
        types = [t.strip() for t in p["allowed_submission_file_types"].split(",")]
        assert {".tgz", ".json"} <= set(types) and all(t.startswith(".") for t in types)
    for s in config["dataset_splits"]:
        keys_ok(s, EVALAI_SPLIT, EVALAI_SPLIT, "dataset split")
    for s in config["challenge_phase_splits"]:
        keys_ok(s, EVALAI_PHASE_SPLIT, EVALAI_PHASE_SPLIT_REQUIRED, "challenge phase split")
        assert s["leaderboard_decimal_precision"] == 4
        # EvalAI ranks each team's best submission unless told to rank the latest, as counts = "latest" asks
        assert s["show_leaderboard_by_latest_submission"] == (ch.counts == "latest")


def test_the_readmes_say_which_wheel_participants_get_and_where(bundles):
    """README.txt tells the organizer exactly which file participants install, where it is in the bundle and how
    participants get it: Codabench serves the starting kit; EvalAI has no such entry, so the organizer publishes
    the wheel taken out of the evaluation script and links it from the submission guidelines."""
    from dialeval import __version__

    wheel = f"dialeval-{__version__}-py3-none-any.whl"
    z = zipfile.ZipFile(bundles / "codabench.zip")
    readme = " ".join(z.read("README.txt").decode().split())
    assert f"the file to publish is starting_kit/{wheel}" in readme
    assert "names starting_kit/ as its starting_kit" in readme and "(Files tab)" in readme
    assert z.read(f"starting_kit/{wheel}") == z.read(f"scoring_program_0/{wheel}")
    kit = z.read("starting_kit/README.md").decode()
    assert f"pip install ./{wheel}" in kit and "dialeval validate RUN --benchmark dstc6 --data DATA" in kit
    e = zipfile.ZipFile(bundles / "evalai.zip")
    readme = " ".join(e.read("README.txt").decode().split())
    assert f"unzip evaluation_script.zip {wheel}" in readme and "public URL" in readme
    assert "templates/submission_guidelines.html" in readme and f"pip install ./{wheel}" in readme
    script = zipfile.ZipFile(io.BytesIO(e.read("evaluation_script.zip")))
    assert wheel in script.namelist() and "templates/submission_guidelines.html" in e.namelist()
    assert "linked from this page" in e.read("templates/submission_guidelines.html").decode()


# ---- a release that is one data file (and a keys file) -----------------------------------------------------------
SAMPLES = REPO / "submissions" / "samples"
FILE_CASES = {  # benchmark: (run, --data FILE, --keys FILE or None)
    "douban": (SAMPLES / "douban" / "example-scores.txt", SAMPLES / "douban" / "test.txt", None),
    "dstc7": (SAMPLES / "dstc7" / "Ubuntu_subtask_1.json", SAMPLES / "dstc7" / "ubuntu_test_subtask_1.json",
              SAMPLES / "dstc7" / "GROUND_TRUTH.tsv"),
}


@pytest.mark.parametrize("bench", sorted(FILE_CASES))
def test_a_bundle_made_from_a_data_file_and_its_keys_file_scores_like_dialeval_score(bench, tmp_path,
                                                                                    wheel_install):
    """Before: `bundle --data test.txt` was refused ("is a file, not a folder"), and given a file it found "no
    reference data for phase". Now the data file and the keys file are the reference data, the scoring program
    reads them as those files, and the answer keys are nowhere else in the bundle."""
    from dialeval.leaderboard.hosting import evalai_evaluate

    run, data_file, keys_file = FILE_CASES[bench]
    keys = ["--keys", keys_file] if keys_file else []
    r = cli("score", run, "--benchmark", bench, "--data", data_file, *keys, "--json")
    assert r.returncode == 0, r.stderr
    recs = [x for x in json.loads(r.stdout)["results"] if x["group"] == "all" and x["average"] == "micro"
            and x["subset"] is None]
    split = "all" if any(x["split"] == "all" for x in recs) else recs[0]["split"]
    expected = {x["metric"]: x["value"] for x in recs if x["split"] == split}
    for kind in ("codabench", "evalai"):
        r = cli("bundle", kind, "--benchmark", bench, "--data", data_file, *keys, "--out", tmp_path / f"{kind}.zip")
        assert r.returncode == 0, r.stderr
    bundle = unzip(tmp_path / "codabench.zip", tmp_path / "bundle")
    ref = {p.name for p in (bundle / "reference_data_0").iterdir()}
    assert ref == {data_file.name} | ({keys_file.name} if keys_file else set())
    (tmp_path / "res").mkdir()
    (tmp_path / "res" / run.name).write_bytes(run.read_bytes())
    r = run_as_codabench_worker(bundle, 0, tmp_path / "res", tmp_path / "app", wheel_install)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "app" / "output" / "scores.json").read_text()) == expected
    # EvalAI: the evaluation script names the files inside the annotation archive; evaluate scores them the same
    e = unzip(tmp_path / "evalai.zip", tmp_path / "evalai")
    main = zipfile.ZipFile(e / "evaluation_script.zip").read("main.py").decode()
    assert f"DATA_FILE = {data_file.name!r}" in main and f"KEYS_FILES = {{'test': {keys_file.name if keys_file else None!r}}}" in main
    phase = yaml.safe_load((e / "challenge_config.yaml").read_text())["challenge_phases"][0]
    # EvalAI takes an upload only when its name ends with an allowed type (Douban's run is a .txt)
    assert run.suffix in [t.strip() for t in phase["allowed_submission_file_types"].split(",")]
    out = evalai_evaluate(str(e / phase["test_annotation_file"]), str(run), phase["codename"], benchmark=bench,
                          data_file=data_file.name, keys_file=keys_file.name if keys_file else None)
    assert [list(v.values()) for v in out["submission_result"].values()] == [list(expected.values())]
    # the answer keys only in the reference data and the annotation archives: never a page or the starting kit,
    # and a gold id in the public data only as one of its example's listed candidates
    if keys_file:
        golds = {g for line in keys_file.read_text().splitlines() for g in line.split("\t")[1].split(",")}
        for z, private in ((zipfile.ZipFile(tmp_path / "codabench.zip"), "reference_data_"),
                           (zipfile.ZipFile(tmp_path / "evalai.zip"), "annotations/")):
            assert leaks({n: z.read(n) for n in z.namelist() if not n.startswith(private)}, golds) == []


FILE_CHALLENGE = """title = "One file, two phases"
overview = "A dev phase, then a hidden final phase, both on the release's one test file."
benchmark = "{bench}"
[[phases]]
name = "dev"
start = 2019-06-01
end = 2019-06-30
splits = ["{split}"]
[[phases]]
name = "final"
start = 2019-07-01
end = 2019-07-15
splits = ["{split}"]
hidden = true
"""


@pytest.mark.parametrize("bench", sorted(FILE_CASES))
def test_a_file_release_with_a_challenge_whose_phases_name_its_split(bench, tmp_path, wheel_install):
    """`bundle --data FILE [--keys FILE] --challenge C` where C's phases name the file's split: every phase's task
    holds the file and its keys, its scoring program scores that split (hidden phase: no number shown), exactly
    as `dialeval score --split`; EvalAI's evaluate maps each phase to that split. A phase naming a split the file
    does not hold is a usage error (exit 2, one line), and no bundle is written."""
    from dialeval.benchmarks import registry
    from dialeval.leaderboard.hosting import evalai_evaluate

    run, data_file, keys_file = FILE_CASES[bench]
    keys = ["--keys", keys_file] if keys_file else []
    (split,) = registry.get(bench).splits(data_file)
    r = cli("score", run, "--benchmark", bench, "--data", data_file, *keys, "--split", split, "--json")
    assert r.returncode == 0, r.stderr
    expected = {x["metric"]: x["value"] for x in json.loads(r.stdout)["results"] if x["group"] == "all"
                and x["average"] == "micro" and x["subset"] is None and x["split"] == split}
    toml = tmp_path / "challenge.toml"
    toml.write_text(FILE_CHALLENGE.format(bench=bench, split=split))
    for kind in ("codabench", "evalai"):
        r = cli("bundle", kind, "--benchmark", bench, "--data", data_file, *keys, "--challenge", toml,
                "--out", tmp_path / f"{kind}.zip")
        assert r.returncode == 0, r.stderr
    bundle = unzip(tmp_path / "codabench.zip", tmp_path / "bundle")
    comp = yaml.safe_load((bundle / "competition.yaml").read_text())
    assert [p["name"] for p in comp["phases"]] == ["dev", "final"] and comp["phases"][1]["hide_output"] is True
    (tmp_path / "res").mkdir()
    (tmp_path / "res" / run.name).write_bytes(run.read_bytes())
    for task in (0, 1):
        ref = {p.name for p in (bundle / f"reference_data_{task}").iterdir()}
        assert ref == {data_file.name} | ({keys_file.name} if keys_file else set())
        app = tmp_path / f"app{task}"
        r = run_as_codabench_worker(bundle, task, tmp_path / "res", app, wheel_install)
        assert r.returncode == 0, r.stderr
        assert json.loads((app / "output" / "scores.json").read_text()) == expected
        details = (app / "output" / "detailed_results.html").read_text()
        assert (f"{next(iter(expected.values())):.4f}" in details) == (task == 0)  # the hidden phase shows none
    e = unzip(tmp_path / "evalai.zip", tmp_path / "evalai")
    config = yaml.safe_load((e / "challenge_config.yaml").read_text())
    assert [s["codename"] for s in config["dataset_splits"]] == [split]
    for phase in config["challenge_phases"]:
        out = evalai_evaluate(str(e / phase["test_annotation_file"]), str(run), phase["codename"], benchmark=bench,
                              phases={phase["codename"]: [split]}, data_file=data_file.name,
                              keys_file=keys_file.name if keys_file else None)
        assert out["submission_result"] == {split: expected}
    # a phase naming a split the file does not hold: one line, exit 2, nothing written
    toml.write_text(FILE_CHALLENGE.format(bench=bench, split="nosuchsplit"))
    for kind in ("codabench", "evalai"):
        out = tmp_path / f"refused-{kind}.zip"
        r = cli("bundle", kind, "--benchmark", bench, "--data", data_file, *keys, "--challenge", toml, "--out", out)
        assert r.returncode == 2 and not out.exists(), r.stderr
        (line,) = r.stderr.strip().splitlines()
        assert "nosuchsplit" in line and f"it has: {split}" in line and "Traceback" not in r.stderr


# ---- Codabench public data: the test inputs, never an answer ---------------------------------------------------
def participant_files(bundle_zip: Path) -> dict[str, bytes]:
    """Every file of a Codabench bundle that a participant can see or download, archives opened (the wheel in
    the starting kit): all but the reference data. (The scoring programs are not shown to participants unless
    make_programs_available is set; they are scanned all the same.)"""
    out: dict[str, bytes] = {}

    def add(name: str, body: bytes) -> None:
        if name.endswith((".zip", ".whl")):
            with zipfile.ZipFile(io.BytesIO(body)) as z:
                for n in z.namelist():
                    add(f"{name}!{n}", z.read(n))
        elif name.endswith((".tgz", ".tar.gz")):
            with tarfile.open(fileobj=io.BytesIO(body)) as tf:
                for m in tf:
                    if m.isfile():
                        add(f"{name}!{m.name}", tf.extractfile(m).read())
        else:
            out[name] = body

    with zipfile.ZipFile(bundle_zip) as z:
        for n in z.namelist():
            if not n.startswith("reference_data_"):
                add(n, z.read(n))
    return out


def listed_candidates(raw: bytes) -> list[str]:
    """The candidate ids a data file lists as its items' candidates (DSTC6 ``candidates``, DSTC7
    ``options-for-next``): where a gold id may appear, since participants rank it among them."""
    try:
        items = json.loads(raw)
    except ValueError:
        return []
    out = []
    for item in items if isinstance(items, list) else []:
        for key, id_key in (("candidates", "candidate_id"), ("options-for-next", "candidate-id")):
            out += [c.get(id_key) for c in (item.get(key) or []) if isinstance(item, dict) and isinstance(c, dict)]
    return out


def leaks(files: dict[str, bytes], golds: set[str]) -> list[str]:
    """``file: gold id`` wherever a gold id appears other than as a listed candidate (an answers file, an inline
    ``answer`` or ``options-for-correct-answers``, a ground-truth TSV, a page, a sample run built from keys)."""
    found = []
    for name, body in files.items():
        text = body.decode("utf-8", "replace")
        allowed = listed_candidates(body) if name.endswith(".json") else []
        for g in golds:
            if text.count(g) > allowed.count(g):
                found.append(f"{name}: {g}")
    return found


def remapped(text: str, ids: set[str]) -> str:
    """``text`` with every id in ``ids`` replaced by a fresh one (data no file of dialeval's wheel holds)."""
    import re

    return re.sub("|".join(sorted(map(re.escape, ids), key=len, reverse=True)), lambda m: "Q7" + m.group(0)[::-1], text)


def test_codabench_public_data_is_the_dstc6_test_dialogs_and_no_answer_reaches_participants(data, tmp_path):
    """Each phase's public_data holds its splits' dialog files, without their answers files and without an inline
    `answer` (a test file carrying one, as the format allows, is published without it); `dialeval validate` takes
    them as DATA; no gold id appears anywhere a participant can look other than as a listed candidate."""
    import shutil

    release = tmp_path / "release"
    for split in ("tst1", "tst4"):
        shutil.copytree(data / split, release / split)
    first = sorted((release / "tst1").glob("*.answers.json"))[0]
    dialogs_file = first.with_name(first.name.replace(".answers.json", ".json"))
    gold_of = {i["dialog_id"]: i["lst_candidate_id"][0]["candidate_id"] for i in json.loads(first.read_text())}
    dialogs = json.loads(dialogs_file.read_text())
    for d in dialogs:  # this test file carries its answers inline too
        d["answer"] = {"candidate_id": gold_of[d["dialog_id"]], "utterance": ""}
    dialogs_file.write_text(json.dumps(dialogs))
    toml = tmp_path / "challenge.toml"
    toml.write_text(PHASED.replace('["tst1", "tst2", "tst3"]', '["tst1"]'))
    out = tmp_path / "codabench.zip"
    r = cli("bundle", "codabench", "--data", release, "--challenge", toml, "--out", out)
    assert r.returncode == 0, r.stderr
    z = zipfile.ZipFile(out)
    comp = yaml.safe_load(z.read("competition.yaml"))
    assert [p["public_data"] for p in comp["phases"]] == ["public_data_0", "public_data_1"]
    for i, split in enumerate(("tst1", "tst4")):
        public = sorted(n.split("/", 1)[1] for n in z.namelist() if n.startswith(f"public_data_{i}/"))
        expected = sorted(p.relative_to(release).as_posix() for p in (release / split).glob("*.json")
                          if not p.name.endswith(".answers.json"))
        assert public == expected and len(public) == 5
    published = json.loads(z.read(f"public_data_0/tst1/{dialogs_file.name}"))
    assert [{k: v for k, v in d.items() if k != "answer"} for d in dialogs] == published
    assert z.read(f"public_data_1/tst4/{expected[0].split('/')[1]}") == (release / expected[0]).read_bytes()
    # participants check a run against the public data alone
    unzip(out, tmp_path / "bundle")
    run = tmp_path / "run"
    with tarfile.open(BASELINE) as tf:
        tf.extractall(run, filter="data", members=[m for m in tf if m.name.startswith("tst4/")])
    r = cli("validate", run, "--data", tmp_path / "bundle" / "public_data_1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "public_data_N (its public_data) holds its test files without the answers" in z.read("README.txt").decode()
    assert "DATA: the test files, the phase's public data on the Files tab" in z.read("starting_kit/README.md").decode()
    golds = {c["candidate_id"] for k in release.glob("*/*.answers.json") for i in json.loads(k.read_text())
             for c in i["lst_candidate_id"]}
    visible = participant_files(out)
    assert any(n.startswith("starting_kit/dialeval-") and "!" in n for n in visible)  # the wheel is opened
    assert leaks(visible, golds) == []
    # the scan is not blind: the answers file, or the inline answers, would be found
    assert leaks({first.name: first.read_bytes()}, golds) and leaks({dialogs_file.name: dialogs_file.read_bytes()}, golds)
    # EvalAI: the same files under public_data/<phase codename>/ for the organizer to publish (no config entry)
    r = cli("bundle", "evalai", "--data", release, "--challenge", toml, "--out", tmp_path / "evalai.zip")
    assert r.returncode == 0, r.stderr
    e = zipfile.ZipFile(tmp_path / "evalai.zip")
    codes = [p["codename"] for p in yaml.safe_load(e.read("challenge_config.yaml"))["challenge_phases"]]
    for i, code in enumerate(codes):
        assert {n.split("/", 2)[2]: e.read(n) for n in e.namelist() if n.startswith(f"public_data/{code}/")} == \
            {n.split("/", 1)[1]: z.read(n) for n in z.namelist() if n.startswith(f"public_data_{i}/")}
    assert "public_data/<phase codename>/ holds each phase's test files without the answers" in e.read("README.txt").decode()
    assert leaks({n: e.read(n) for n in e.namelist() if not n.startswith("annotations/")}, golds) == []
    # the keys in a folder of their own (--keys): the reference data hold them, the public data never do
    keys = tmp_path / "keys"
    for k in release.glob("*/*.answers.json"):
        (keys / k.parent.name).mkdir(parents=True, exist_ok=True)
        k.rename(keys / k.parent.name / k.name)
    out = tmp_path / "apart.zip"
    r = cli("bundle", "codabench", "--data", release, "--keys", keys, "--out", out)
    assert r.returncode == 0, r.stderr
    names = zipfile.ZipFile(out).namelist()
    assert sum(n.startswith("reference_data_0/") and n.endswith(".answers.json") for n in names) == 10
    assert sorted(n for n in names if n.startswith("public_data_0/")) == \
        sorted(f"public_data_0/{p.relative_to(release).as_posix()}" for p in release.glob("*/*.json"))
    assert leaks(participant_files(out), golds) == []


def test_codabench_public_data_of_dstc7_files_drops_the_ground_truth(tmp_path):
    """DSTC7 from a test file and its GROUND_TRUTH.tsv, and from a dev file that lists its correct answers
    inline: the public data is the data file, never the TSV, with no options-for-correct-answers; validate takes
    it; no gold id is anywhere a participant looks other than as a listed candidate."""
    src = SAMPLES / "dstc7"
    ids = {c["candidate-id"] for f in ("ubuntu_test_subtask_1.json", "ubuntu_dev_subtask_1.json")
           for e in json.loads((src / f).read_text()) for c in e["options-for-next"]}
    for f in ("ubuntu_test_subtask_1.json", "ubuntu_dev_subtask_1.json", "GROUND_TRUTH.tsv", "Ubuntu_subtask_1.json"):
        (tmp_path / f).write_text(remapped((src / f).read_text(), ids))
    golds = {g for line in (tmp_path / "GROUND_TRUTH.tsv").read_text().splitlines() for g in line.split("\t")[1].split(",")}
    dev = json.loads((tmp_path / "ubuntu_dev_subtask_1.json").read_text())
    golds |= {c["candidate-id"] for e in dev for c in e["options-for-correct-answers"]}
    assert golds and not golds & ids  # fresh ids: the wheel's samples hold none of them
    for data, keys in (("ubuntu_test_subtask_1.json", "GROUND_TRUTH.tsv"), ("ubuntu_dev_subtask_1.json", None)):
        out = tmp_path / f"{data}.zip"
        r = cli("bundle", "codabench", "--benchmark", "dstc7", "--data", tmp_path / data,
                *(["--keys", tmp_path / keys] if keys else []), "--out", out)
        assert r.returncode == 0, r.stderr
        z = zipfile.ZipFile(out)
        assert [n for n in z.namelist() if n.startswith("public_data_")] == [f"public_data_0/{data}"]
        assert yaml.safe_load(z.read("competition.yaml"))["phases"][0]["public_data"] == "public_data_0"
        published = json.loads(z.read(f"public_data_0/{data}"))
        original = json.loads((tmp_path / data).read_text())
        assert published == [{k: v for k, v in e.items() if k != "options-for-correct-answers"} for e in original]
        assert leaks(participant_files(out), golds) == []
        if keys:  # the release's test file has no answers inline: published byte for byte
            assert z.read(f"public_data_0/{data}") == (tmp_path / data).read_bytes()
            (tmp_path / "public.json").write_bytes(z.read(f"public_data_0/{data}"))
            r = cli("validate", tmp_path / "Ubuntu_subtask_1.json", "--benchmark", "dstc7", "--data", tmp_path / "public.json")
            assert r.returncode == 0, r.stdout + r.stderr
    assert leaks({"ubuntu_dev_subtask_1.json": (tmp_path / "ubuntu_dev_subtask_1.json").read_bytes(),
                  "GROUND_TRUTH.tsv": (tmp_path / "GROUND_TRUTH.tsv").read_bytes()}, golds)  # not blind


@pytest.mark.parametrize("bench", ["douban", "ubuntu", "convai2", "babi"])
def test_a_release_with_answers_inline_gets_no_public_data_and_readme_says_why(bench, tmp_path):
    """Douban's labels, Ubuntu v2's Ground Truth column, ConvAI2's label field, bAbI's bot turns: the answers are
    in the test file itself, so no phase names public data, README.txt says why, and no line of the data file
    (its answers with it) is anywhere a participant looks."""
    from dialeval.benchmarks import registry

    data = SAMPLES / bench
    out = tmp_path / "codabench.zip"
    r = cli("bundle", "codabench", "--benchmark", bench, "--data", data, "--out", out)
    assert r.returncode == 0, r.stderr
    z = zipfile.ZipFile(out)
    assert not [n for n in z.namelist() if n.startswith("public_data")]
    assert not any("public_data" in p for p in yaml.safe_load(z.read("competition.yaml"))["phases"])
    readme = " ".join(z.read("README.txt").decode().split())
    assert f"No public data: the phases name none, because {registry.get(bench).public_data_note}" in readme
    r = cli("bundle", "evalai", "--benchmark", bench, "--data", data, "--out", tmp_path / "evalai.zip")
    assert r.returncode == 0, r.stderr
    e = zipfile.ZipFile(tmp_path / "evalai.zip")
    assert not [n for n in e.namelist() if n.startswith("public_data")]
    assert f"No public data: because {registry.get(bench).public_data_note}" in " ".join(e.read("README.txt").decode().split())
    files = [p for p in data.iterdir() if p.suffix in (".txt", ".csv") and not p.name.startswith("example")]
    lines = {ln for f in files for ln in f.read_text().splitlines() if len(ln) > 40}
    assert lines
    for name, body in participant_files(out).items():
        if not name.startswith("scoring_program_") and "!" not in name:  # the wheel's samples are this data
            text = body.decode("utf-8", "replace")
            assert not any(ln in text for ln in lines), name


# ---- a folder release: each phase's reference data is what scoring its split reads ------------------------------
def split_release(tmp: Path, bench: str) -> Path:
    """A DSTC7 (DSTC8) folder holding train, dev and test files, the sample run and the ground truth beside them;
    the test file carries its answers inline (from GROUND_TRUTH.tsv), so that every phase scores without --keys."""
    folder = tmp / f"{bench}-release"
    folder.mkdir()
    src = SAMPLES / bench
    for f in src.iterdir():
        (folder / f.name).write_bytes(f.read_bytes())
    if bench == "dstc7":
        (folder / "ubuntu_train_subtask_1.json").write_bytes((src / "ubuntu_dev_subtask_1.json").read_bytes())
        gold = {int(a): b.split(",") for a, b in (ln.split("\t") for ln in (src / "GROUND_TRUTH.tsv").read_text().splitlines())}
        test = json.loads((src / "ubuntu_test_subtask_1.json").read_text())
        for e in test:
            e["options-for-correct-answers"] = [c for c in e["options-for-next"] if c["candidate-id"] in gold[e["example-id"]]]
        (folder / "ubuntu_test_subtask_1.json").write_text(json.dumps(test))
    else:
        (folder / "task-1.ubuntu.train.json").write_bytes((src / "task-1.ubuntu.dev.json").read_bytes())
    return folder


def first_listed_run(data_file: Path, dest: Path) -> Path:
    """A run ranking each example's options in the data's order (a run for a dev file, which the samples lack)."""
    dest.write_text(json.dumps([{"example-id": e["example-id"], "candidate-ranking": [
        {"candidate-id": c["candidate-id"], "confidence": 1.0 / (i + 1)} for i, c in enumerate(e["options-for-next"])]}
        for e in json.loads(data_file.read_text())]))
    return dest


def reference_cases(tmp: Path) -> list[tuple[str, Path, Path, str, set[str]]]:
    """(benchmark, data folder, run, split, the split's files that runs for its other groups read): each sample folder (its README, sample.json and example runs beside the
    data; bAbI's trn/dev/tst-OOV, Ubuntu's train.csv, DSTC6's trn/) and the DSTC7 and DSTC8 train/dev/test folders."""
    cases = [(b, SAMPLES / b, SAMPLES / b / run, split, set()) for b, run, split in (
        ("babi", "example-run.json", "tst"), ("dstc6", "example-run.json", "tst1"),
        ("movie-dialog", "example-run.json", "dev"), ("ubuntu", "example-scores.csv", "test"),
        ("douban", "example-scores.txt", "test"), ("convai2", "example-run.json", "valid"),
        ("airdialogue", "example-run.jsonl", "dev"))]
    dstc7 = split_release(tmp, "dstc7")
    dstc8 = split_release(tmp, "dstc8")
    dev_run = first_listed_run(dstc7 / "ubuntu_dev_subtask_1.json", tmp / "Ubuntu_subtask_1.json")
    return cases + [("dstc7", dstc7, dstc7 / "Ubuntu_subtask_1.json", "test", set()),
                    ("dstc7", dstc7, dev_run, "dev", {"advising_dev_subtask_3.json", "ubuntu_dev_subtask_4.json"}),
                    ("dstc8", dstc8, dstc8 / "example-run.json", "dev", set())]


def test_reference_data_holds_exactly_the_files_scoring_its_split_reads_and_scores_the_same(tmp_path):
    """Before: a folder release's reference data (non-DSTC6) was every file of the folder: train files, READMEs,
    runs. Now a phase's reference data is the benchmark's scoring_files for its split: the very files `dialeval
    score --split` reads (its data identity lists them), and scoring a copy of it gives the same numbers."""
    import shutil

    from dialeval.api import score
    from dialeval.leaderboard.hosting import reference_files

    for bench, folder, run, split, also in reference_cases(tmp_path):
        full = score(str(run), split, benchmark=bench, data=str(folder))
        assert full.valid, (bench, full.errors)
        ref = reference_files(bench, folder, None, [split])
        marks = {"sample.json", "simulator.json"}  # read by the data identity (provenance, no answer)
        assert {Path(n).name for n in ref} - marks == set(full.data.files) | also, bench  # nothing else or missing
        assert {n for n in ref if Path(n).name in marks} == {n for n in marks if (folder / n).is_file()}, bench
        copy = tmp_path / f"ref-{bench}-{split}"
        for name, f in ref.items():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, copy / name)
        alone = score(str(run), split, benchmark=bench, data=str(copy))
        assert alone.records == full.records, bench  # every number and signature (the data digest in it)
        assert alone.data.digest == full.data.digest, bench


DSTC7_PHASES = """title = "DSTC7 from its folder"
overview = "A dev phase, then the test phase, from one folder holding train, dev and test."
benchmark = "dstc7"
[[phases]]
name = "dev"
start = 2018-06-01
end = 2018-08-31
splits = ["dev"]
[[phases]]
name = "test"
start = 2018-09-01
end = 2018-09-15
splits = ["test"]
"""


def test_a_dstc7_folder_release_gives_each_phase_only_its_split_and_scores_like_dialeval_score(tmp_path,
                                                                                           wheel_install):
    """Before: every phase's reference data (and EvalAI annotation archive) held the whole folder, train included.
    Now only the phase's split's data files; the bundled scoring program still gives `dialeval score --split`'s
    numbers exactly, for each phase."""
    from dialeval.leaderboard.hosting import evalai_evaluate

    folder = split_release(tmp_path, "dstc7")
    runs = {"test": folder / "Ubuntu_subtask_1.json",
            "dev": first_listed_run(folder / "ubuntu_dev_subtask_1.json", tmp_path / "Ubuntu_subtask_1.json")}
    toml = tmp_path / "challenge.toml"
    toml.write_text(DSTC7_PHASES)
    for kind in ("codabench", "evalai"):
        r = cli("bundle", kind, "--benchmark", "dstc7", "--data", folder, "--challenge", toml,
                "--out", tmp_path / f"{kind}.zip")
        assert r.returncode == 0, r.stderr
    bundle = unzip(tmp_path / "codabench.zip", tmp_path / "bundle")
    e = unzip(tmp_path / "evalai.zip", tmp_path / "evalai")
    config = yaml.safe_load((e / "challenge_config.yaml").read_text())
    # the split's data files, and the samples' mark (constructed data, named so in every report): never the train
    # file, the other split's, the ground truth TSV, the README or the run left in the folder
    want = {"dev": {"advising_dev_subtask_3.json", "ubuntu_dev_subtask_1.json", "ubuntu_dev_subtask_4.json", "sample.json"},
            "test": {"ubuntu_test_subtask_1.json", "sample.json"}}
    for i, (split, run) in enumerate(sorted(runs.items())):  # dev is phase 0, test phase 1
        assert {p.name for p in (bundle / f"reference_data_{i}").iterdir()} == want[split]
        phase = config["challenge_phases"][i]
        with tarfile.open(e / phase["test_annotation_file"]) as tf:
            assert {m.name for m in tf if m.isfile()} == want[split]
        r = cli("score", run, "--benchmark", "dstc7", "--data", folder, "--split", split, "--json")
        assert r.returncode == 0, r.stderr
        expected = {x["metric"]: x["value"] for x in json.loads(r.stdout)["results"]
                    if x["group"] == "all" and x["average"] == "micro" and x["subset"] is None}
        assert expected
        (tmp_path / f"res{i}").mkdir()
        (tmp_path / f"res{i}" / run.name).write_bytes(run.read_bytes())
        r = run_as_codabench_worker(bundle, i, tmp_path / f"res{i}", tmp_path / f"app{i}", wheel_install)
        assert r.returncode == 0, r.stderr
        assert json.loads((tmp_path / f"app{i}" / "output" / "scores.json").read_text()) == expected
        out = evalai_evaluate(str(e / phase["test_annotation_file"]), str(run), phase["codename"], benchmark="dstc7",
                              phases={phase["codename"]: [split]})
        assert out["submission_result"] == {split: expected}


def test_the_readmes_say_exactly_what_the_wheel_handed_to_participants_holds(bundles):
    """Before: the README said the wheel carries "no answer key", yet it holds dialeval/samples/ with their answers
    (DSTC7's GROUND_TRUTH.tsv, Douban's labelled test.txt). Now both bundles' README.txt and the README's hosting
    section say what it holds, samples and their answers included, and every data file in it is of a kind named."""
    from dialeval.leaderboard.hosting import WHEEL_CONTENTS

    _, wheel, _ = wheel_of(bundles)
    names = zipfile.ZipFile(io.BytesIO(wheel)).namelist()
    named = ("dialeval/schemas/", "dialeval/files/releases.json", "dialeval/leaderboard/templates/",
             "dialeval/leaderboard/static/", "dialeval/leaderboard/default-challenge.toml", "dialeval/samples/")
    data = [n for n in names if not n.endswith(".py") and ".dist-info/" not in n]
    assert data and [n for n in data if not n.startswith(named)] == []
    for answers in ("dialeval/samples/dstc7/GROUND_TRUTH.tsv", "dialeval/samples/douban/test.txt"):
        assert answers in names  # the samples keep their answers: the statement must say so
    assert any(n.startswith("dialeval/samples/dstc6/") and n.endswith(".answers.json") for n in names)
    said = " ".join(WHEEL_CONTENTS.split())
    for kind in ("codabench", "evalai"):
        readme = " ".join(zipfile.ZipFile(bundles / f"{kind}.zip").read("README.txt").decode().split())
        assert said in readme, kind
    for text in (WHEEL_CONTENTS, (REPO / "README.md").read_text()):
        flat = " ".join(text.split())
        assert "no answer key," not in flat and "GROUND_TRUTH.tsv" in flat and "with their answers" in flat


# ---- a release whose test answers come apart (DSTC7/DSTC8 ground truth): each phase gets only its own key -------
KEYED_PHASES = """title = "{bench} dev, then test"
overview = "A dev phase on the dev file (answers inline), then the test phase on the test file and its ground truth."
benchmark = "{bench}"
[[phases]]
name = "dev"
start = 2019-06-01
end = 2019-06-30
splits = ["dev"]
[[phases]]
name = "test"
start = 2019-07-01
end = 2019-07-15
splits = ["test"]
"""


def keyed_release(tmp: Path, bench: str) -> tuple[Path, Path, set[str]]:
    """(data folder, ground truth TSV in a folder of its own, the test's gold ids): a DSTC7 (DSTC8) release as the
    organisers shipped it, 100 candidates per example: train and dev files listing their correct answers, a test
    file withholding them, with example ids of its own, and the test ground truth (``example-id<TAB>ids``) apart."""
    import random

    from dialeval.baselines.dstc7 import _examples

    rng = random.Random(11)
    subtask = 1 if bench == "dstc7" else 4  # DSTC8: every example may have its answer absent (NONE), as subtask 4
    name = "ubuntu_{split}_subtask_1.json" if bench == "dstc7" else "task-1.ubuntu.{split}.json"
    folder, keys = tmp / f"{bench}-keyed", tmp / f"{bench}-keys"
    folder.mkdir()
    keys.mkdir()
    for split in ("train", "dev"):
        (folder / name.format(split=split)).write_text(json.dumps(_examples(rng, "ubuntu", subtask, split, 6, 100)))
    test = _examples(rng, "ubuntu", subtask, "test", 6, 100)
    for k, e in enumerate(test):
        e["example-id"] = 70001 + k  # the test examples are not the dev ones
    truth = [(e["example-id"], [c["candidate-id"] for c in e.pop("options-for-correct-answers")]) for e in test]
    (folder / name.format(split="test")).write_text(json.dumps(test))
    (keys / "GROUND_TRUTH.tsv").write_text("".join(f"{i}\t{','.join(g)}\n" for i, g in truth))
    return folder, keys / "GROUND_TRUTH.tsv", {g for _, gold in truth for g in gold}


@pytest.mark.parametrize("bench", ["dstc7", "dstc8"])
def test_a_release_with_a_ground_truth_gives_the_key_to_the_test_phase_only(bench, tmp_path, wheel_install):
    """Before: `bundle --data FOLDER --keys GROUND_TRUTH.tsv` with a dev and a test phase put the test key in every
    phase, so the dev phase's scoring failed as `dialeval score --split dev --keys TSV` does (no line for a dev
    example). Now the key goes to the phase whose split's examples it answers (the test file, which withholds
    them): the dev phase scores from the dev file's own answers, the test phase from the key, each exactly as
    `dialeval score --split` does, on Codabench and on EvalAI."""
    import importlib.util

    folder, key, golds = keyed_release(tmp_path, bench)
    toml = tmp_path / "challenge.toml"
    toml.write_text(KEYED_PHASES.format(bench=bench))
    run_name = "Ubuntu_subtask_1.json" if bench == "dstc7" else "example-run.json"
    runs = {s: first_listed_run(next(folder.glob(f"*{s}*")), tmp_path / s / run_name) for s in ("dev", "test")
            if (tmp_path / s).mkdir() is None}
    for kind in ("codabench", "evalai"):
        r = cli("bundle", kind, "--benchmark", bench, "--data", folder, "--keys", key, "--challenge", toml,
                "--out", tmp_path / f"{kind}.zip")
        assert r.returncode == 0, r.stderr
    bundle = unzip(tmp_path / "codabench.zip", tmp_path / "bundle")
    e = unzip(tmp_path / "evalai.zip", tmp_path / "evalai")
    config = yaml.safe_load((e / "challenge_config.yaml").read_text())
    unzip(e / "evaluation_script.zip", tmp_path / "script")
    spec = importlib.util.spec_from_file_location("keyed_main", tmp_path / "script" / "main.py")
    main = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(main)  # the script's evaluate() with its per-phase constants (no wheel install here)
    for i, split in enumerate(("dev", "test")):
        has_key = {p.name for p in (bundle / f"reference_data_{i}").iterdir()} >= {key.name}
        assert has_key == (split == "test"), split  # the dev phase's reference data never hold the test key
        keys = ["--keys", key] if split == "test" else []
        r = cli("score", runs[split], "--benchmark", bench, "--data", folder, *keys, "--split", split, "--json")
        assert r.returncode == 0, r.stderr
        expected = {x["metric"]: x["value"] for x in json.loads(r.stdout)["results"]
                    if x["group"] == "all" and x["average"] == "micro" and x["subset"] is None}
        assert expected
        r = run_as_codabench_worker(bundle, i, runs[split].parent, tmp_path / f"app{i}", wheel_install)
        assert r.returncode == 0, r.stderr
        assert json.loads((tmp_path / f"app{i}" / "output" / "scores.json").read_text()) == expected
        phase = config["challenge_phases"][i]
        with tarfile.open(e / phase["test_annotation_file"]) as tf:
            assert (key.name in {m.name for m in tf if m.isfile()}) == (split == "test")
        out = main.evaluate(str(e / phase["test_annotation_file"]), str(runs[split]), phase["codename"])
        assert out["submission_result"] == {split: expected}
    assert leaks(participant_files(tmp_path / "codabench.zip"), golds) == []


@pytest.mark.parametrize("bench", ["dstc7", "dstc8"])
def test_a_key_for_no_phase_or_for_two_splits_is_refused_in_one_line_naming_no_gold_id(bench, tmp_path):
    """A ground truth answering none of the phases' splits, one answering two splits that both withhold their
    answers (a blind dev file too), two keys for one split, a split no phase is on: exit 2, one line that says
    what to do, nothing written, and never a gold id or an example id in it. Named (--keys SPLIT=FILE), each key
    goes to its split's phase; a key that also answers a dev file listing its own answers goes to the test phase."""
    folder, key, golds = keyed_release(tmp_path, bench)
    dev_file = next(folder.glob("*dev*"))
    dev = json.loads(dev_file.read_text())
    both = tmp_path / "both.tsv"  # dev's answers, then the test's
    both.write_text("".join(f"{x['example-id']}\t{','.join(c['candidate-id'] for c in x['options-for-correct-answers'])}\n"
                            for x in dev) + key.read_text())
    golds |= {c["candidate-id"] for x in dev for c in x["options-for-correct-answers"]}
    ids = {str(x["example-id"]) for x in dev} | {ln.split("\t")[0] for ln in key.read_text().splitlines()}
    blind = tmp_path / "blind"  # the same release with the dev answers withheld as well
    blind.mkdir()
    for f in folder.iterdir():
        (blind / f.name).write_bytes(f.read_bytes())
    (blind / dev_file.name).write_text(json.dumps([{k: v for k, v in x.items() if k != "options-for-correct-answers"}
                                                  for x in dev]))
    dev_only = tmp_path / "dev-only.toml"
    dev_only.write_text(KEYED_PHASES.format(bench=bench).split("[[phases]]\nname = \"test\"")[0])
    toml = tmp_path / "challenge.toml"
    toml.write_text(KEYED_PHASES.format(bench=bench))
    cases = {"no phase": (folder, dev_only, [key], "answers no example of the phases' splits (dev)"),
             "named wrong": (folder, toml, [f"dev={key}"], "answers no example of split dev"),
             "two splits": (blind, toml, [both], "answers examples of 2 splits (dev, test)"),
             "two keys": (folder, toml, [key, f"test={both}"], "split test has 2 answer keys"),
             "unknown split": (folder, toml, [f"valid={key}"], "no phase is on split valid")}
    for case, (data, challenge, keys, said) in cases.items():
        for kind in ("codabench", "evalai"):
            out = tmp_path / f"{case}-{kind}.zip"
            r = cli("bundle", kind, "--benchmark", bench, "--data", data, *[a for k in keys for a in ("--keys", k)],
                    "--challenge", challenge, "--out", out)
            assert r.returncode == 2 and not out.exists(), (case, r.stdout + r.stderr)
            (line,) = r.stderr.strip().splitlines()
            assert said in line and "Traceback" not in line, (case, line)
            assert not [g for g in golds | ids if g in line], (case, line)
    for data, keys, want in ((blind, [f"dev={both}", f"test={key}"], ({"both.tsv"}, {key.name})),
                             (folder, [both], (set(), {"both.tsv"}))):
        out = tmp_path / f"{data.name}-named.zip"
        r = cli("bundle", "codabench", "--benchmark", bench, "--data", data, *[a for k in keys for a in ("--keys", k)],
                "--challenge", toml, "--out", out)
        assert r.returncode == 0, r.stderr
        names = zipfile.ZipFile(out).namelist()
        for i in (0, 1):
            assert {n.rpartition("/")[2] for n in names if n.startswith(f"reference_data_{i}/") and n.endswith(".tsv")} \
                == want[i], (data.name, i)
