"""A second newcomer's stumbles (hostile and careless commands): each as typed, the wrong outcome before, the right
one now."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import shutil
import tarfile
from pathlib import Path

import pytest
from conftest import REPO, run_cli

SAMPLES = REPO / "submissions" / "samples"
PYTHON_OR_CLICK = re.compile(r"Invalid value for|Directory '|File '|Compressed file ended|end-of-stream|"
                             r"Unknown compression|truncated header|invalid header|CRC check|Error -\d|internal error")


def _dstc6_copy(tmp_path: Path) -> Path:
    data = tmp_path / "challenge"
    shutil.copytree(SAMPLES / "dstc6", data)
    return data


def _contents(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_baseline_run_never_writes_over_the_challenges_answer_keys(tmp_path):
    # before: `baseline run random --challenge DIR --split tst1 --out DIR/tst1/<stem>.answers.json` (or `--out DIR`)
    # replaced the answer key with the baseline's ranking, exit 0
    data = _dstc6_copy(tmp_path)
    before = _contents(data)
    key = sorted((data / "tst1").glob("*.answers.json"))[0]
    for out in (key, data):
        r = run_cli("baseline", "run", "random", "--challenge", data, "--split", "tst1", "--out", out)
        assert r.returncode == 2, r.stderr
        assert r.stderr == (f"dialeval: error: {key}: is a file of the challenge, an input of this run; refusing to "
                            "overwrite it\n")
    assert _contents(data) == before
    r = run_cli("baseline", "run", "random", "--challenge", data, "--split", "tst1", "--out", tmp_path / "new" / "r.json")
    assert r.returncode == 0 and (tmp_path / "new" / "r.json").is_file(), r.stderr  # a new folder is still made


def test_two_outputs_spelled_differently_are_still_one_file(tmp_path):
    # before: `--out o.json --per-item ./o.json` wrote the report, then the per-item lines over it, and said
    # "report written to ./o.json" (exit 0); dstc6-to-babi's --out and --candidates-out likewise
    run = SAMPLES / "dstc6" / "example-run.json"
    r = run_cli("score", run, "--data", "sample:dstc6", "--out", "o.json", "--per-item", "./o.json", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (2, "dialeval: error: --out and --per-item name the same file (./o.json); give "
                                           "each its own file\n")
    (tmp_path / "real.json").write_text("")
    (tmp_path / "link.json").symlink_to("real.json")
    r = run_cli("score", run, "--data", "sample:dstc6", "--out", "real.json", "--per-item", "link.json", cwd=tmp_path)
    assert r.returncode == 2 and "name the same file" in r.stderr
    assert (tmp_path / "real.json").read_text() == ""
    dataset = sorted((SAMPLES / "dstc6" / "tst1").glob("*task1*.json"))
    r = run_cli("convert", "dstc6-to-babi", "--dataset", dataset[1], "--answers", dataset[0], "--out", "y.txt",
                "--candidates-out", "./y.txt", cwd=tmp_path)
    assert (r.returncode, r.stderr) == (2, "dialeval: error: --out and --candidates-out name the same file (y.txt); "
                                           "give each its own file\n")
    assert not (tmp_path / "y.txt").exists()


def test_converting_onto_an_input_says_it_is_the_input_not_to_pass_force(tmp_path):
    # before: "<dataset> already exists; pass --force to replace it", and with --force: "is an input of the
    # conversion, an input of this run"
    data = _dstc6_copy(tmp_path)
    answers, dataset = sorted((data / "tst1").glob("*task1*.json"))
    for out, what in ((dataset, "the dataset"), (answers, "the answer key")):
        for force in ([], ["--force"]):
            r = run_cli("convert", "dstc6-to-babi", "--dataset", dataset, "--answers", answers, "--out", out, *force)
            assert (r.returncode, r.stderr) == (2, f"dialeval: error: {out}: is {what}, an input of this run; "
                                                   "refusing to overwrite it\n")
    r = run_cli("convert", "dstc6-to-babi", "--dataset", dataset, "--answers", answers, "--out", tmp_path / "n" / "t.txt")
    assert r.returncode == 0 and (tmp_path / "n" / "t-candidates.txt").is_file(), r.stderr


@pytest.mark.parametrize("args, said", [
    (["score", "{run}", "--data", "sample:dstc6", "--out", "{dir}"], "--out {dir}: is a directory, not a file"),
    (["score", "{run}", "--challenge", "{run}"], "--challenge {run}: is a file, not a folder"),
    (["grade", "{tmp}/nope", "--registry", "{tmp}/reg"], "{tmp}/nope: no such folder"),
    (["grade", "{run}", "--registry", "{tmp}/reg"], "{run}: is a file, not a folder"),
    (["rank", "--registry", "{run}"], "--registry {run}: is a file, not a folder"),
    (["data", "verify", "{run}"], "{run}: is a file, not a folder"),
    (["airdialogue", "infer-bleu", "{tmp}/nope.txt", "--data", "sample:airdialogue"], "{tmp}/nope.txt: no such file"),
    (["airdialogue", "infer-bleu", "{tmp}/link.txt", "--data", "sample:airdialogue"],
     "{tmp}/link.txt: is a symbolic link to nothing"),
])
def test_path_options_are_refused_in_dialevals_words(tmp_path, args, said):
    # before: click's "Invalid value for '--challenge': Directory 'run.json' is a file." (which one is wrong?)
    (tmp_path / "dir").mkdir()
    (tmp_path / "link.txt").symlink_to("missing.txt")
    fill = {"run": SAMPLES / "dstc6" / "example-run.json", "dir": tmp_path / "dir", "tmp": tmp_path}
    r = run_cli(*[a.format(**fill) for a in args])
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: {said.format(**fill)}\n")


def _tar_gz(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_unreadable_archives_are_described_in_our_words(tmp_path):
    # before: "(Compressed file ended before the end-of-stream marker was reached)", "(truncated header)",
    # "(CRC check failed 0x... != 0x...)": Python's words; a damaged .xz was "internal error: LZMAError" (exit 3)
    run = (SAMPLES / "dstc6" / "example-run.json").read_bytes()
    tgz = _tar_gz({"tst1/" + p.name: run for p in sorted((SAMPLES / "dstc6" / "tst1").glob("*.answers.json"))})
    crc = bytearray(tgz)
    crc[-6] ^= 0xFF
    cases = {
        "truncated.tgz": (tgz[: len(tgz) // 2], "it ends early: truncated?"),
        "crc.tgz": (bytes(crc), "its checksum does not match its content: damaged"),
        "hello.tgz": (gzip.compress(b"hello"), "no tar member header where one should be"),
        "garbage.tgz": (b"\x1f\x8b" + bytes(range(256)) * 8, "its compressed data is damaged"),
        "bad-xz.tgz": (b"\xfd7zXZ\x00" + bytes(range(256)) * 8, "its compressed data is damaged"),
        "cut-bz2.tgz": (bz2.compress(gzip.decompress(tgz))[:400], "it ends early: truncated?"),
        "text.tar": (b"not an archive\n" * 100, "no tar member header where one should be"),
        "cut-xz.tgz": (lzma.compress(gzip.decompress(tgz))[:300], "it ends early: truncated?"),
    }
    for name, (data, why) in cases.items():
        (tmp_path / name).write_bytes(data)
        r = run_cli("score", tmp_path / name, "--data", "sample:dstc6", "--split", "tst1")
        assert r.returncode == 2, (name, r.stderr)
        assert r.stderr.endswith(f"({why})\n") and len(r.stderr.splitlines()) == 1, (name, r.stderr)
        assert not PYTHON_OR_CLICK.search(r.stderr), (name, r.stderr)
        assert os.fspath(tmp_path / name) in r.stderr


def test_a_challenge_file_missing_keys_names_each_missing_key_once():
    # before: '/phases/0: "start" is required; /phases/0: "start" is required' for a phase without start and end
    from dialeval.core.errors import UsageError
    from dialeval.leaderboard.challenge import parse

    with pytest.raises(UsageError) as e:
        parse('title = "x"\n[[phases]]\nname = 3\n', "c.toml")
    assert str(e.value) == ('c.toml: /: "overview" is required; /phases/0: "start" and "end" are required; '
                            '/phases/0/name: must be text')


def test_an_unknown_airdialogue_baseline_names_the_argument_not_a_brace_list():
    # before: "Invalid value for '{random|cheapest-flight|rule-based}': 'nope' is not one of ..."
    r = run_cli("airdialogue", "baseline", "nope", "--data", "sample:airdialogue", "--out", "x.jsonl")
    assert r.returncode == 2 and "NAME: unknown value 'nope' (one of: random, cheapest-flight, rule-based)" in r.stderr
    assert "{" not in r.stderr


@pytest.mark.parametrize("line, said", [
    (b'{"kb": [{"price": 1', "dev_kb.json line 2: not valid JSON: the line ends before the JSON value does (truncated?) "
                           "at column 20"),
    (b'{"kb": [1], "reservation": 0}', "dev_kb.json line 2: not an AirDialogue KB line (a value has the wrong type "
                                       "at /kb/0)"),
    (b"{}", "dev_kb.json line 2: not an AirDialogue KB line (a required field is missing at /)"),
    (b'{"kb": xyz}', "dev_kb.json line 2: not valid JSON at column 8: unexpected character"),
])
def test_a_broken_airdialogue_data_line_is_said_in_our_words(tmp_path, line, said):
    # before: msgspec's own words: "dev_kb.json line 2: Input data was truncated", "Expected object, got int - at
    # $.kb[0]", "JSON is malformed: invalid character (byte 7)"
    data = tmp_path / "air"
    shutil.copytree(SAMPLES / "airdialogue", data)
    lines = (data / "dev_kb.json").read_bytes().split(b"\n")
    lines[1] = line
    (data / "dev_kb.json").write_bytes(b"\n".join(lines))
    r = run_cli("score", data / "example-run.jsonl", "--benchmark", "airdialogue", "--data", data)
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: {said}\n")


@pytest.mark.parametrize("args, said", [
    (["score", "{run}", "--data", "sample:dstc6", "--task", ""], "--task is empty (leave it out to take every task)"),
    (["validate", "{run}", "--data", "sample:dstc6", "--task", ","], "--task is empty (leave it out to take every task)"),
    (["score", "{run}", "--data", "sample:dstc6", "--metrics", ""],
     "--metrics is empty (leave it out for the benchmark's own metrics)"),
    (["compare", "{run}", "{run}", "--data", "sample:dstc6", "--metric", " "],
     "--metric is empty (leave it out for the runs' metrics)"),
    (["rank", "--registry", "{tmp}", "--metric", ""], "--metric is empty (leave it out for the benchmark's first metric)"),
])
def test_an_empty_list_option_is_refused_not_taken_as_its_default(tmp_path, args, said):
    # before: `--task "$TASKS"` with the variable empty scored every task, `--metrics ""` the default metrics (exit 0)
    fill = {"run": SAMPLES / "dstc6" / "example-run.json", "tmp": tmp_path}
    r = run_cli(*[a.format(**fill) for a in args])
    assert (r.returncode, r.stderr) == (2, f"dialeval: error: {said}\n")


@pytest.mark.parametrize("name, run, data, group", [
    ("dstc7", "dstc7/Ubuntu_subtask_1.json", "dstc7/ubuntu_dev_subtask_1.json", "ubuntu-1"),
    ("dstc8", "dstc8/example-run.json", "dstc8", "ubuntu-1"),
], ids=["dstc7", "dstc8"])
def test_a_pool_given_for_data_without_one_is_refused_not_ignored(tmp_path, name, run, data, group):
    # before: --pool nope.json on subtask 1 data was never read (not even found missing) and the run scored, exit 0
    r = run_cli("score", SAMPLES / run, "--benchmark", name, "--data", SAMPLES / data, "--pool", tmp_path / "nope")
    assert r.returncode == 2
    assert r.stderr.startswith("dialeval: error: --pool: only subtask 2 ranks a shared candidate pool; ") and \
        f"is {group} data" in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr


def test_simulate_force_never_replaces_the_current_folder_or_one_holding_it(tmp_path):
    # before: `dialeval simulate --out . --force` swapped the working folder for the challenge: keep.txt was gone
    here = tmp_path / "work"
    here.mkdir()
    (here / "keep.txt").write_text("precious")
    for out in (".", "..", here):
        r = run_cli("simulate", "--out", out, "--force", "--train", "0", "--test", "1", cwd=here)
        assert (r.returncode, r.stderr) == (2, f"dialeval: error: --out {out}: is the current folder or holds it; the "
                                               "output folder is replaced as a whole, give a folder of its own\n")
    assert sorted(p.name for p in here.iterdir()) == ["keep.txt"]
    r = run_cli("simulate", "--out", "sim", "--force", "--train", "0", "--test", "1", cwd=here)
    assert r.returncode == 0 and (here / "sim" / "tst1").is_dir(), r.stderr


@pytest.mark.parametrize("args, said", [
    (["score", "{babi_run}"], "give --split for a single result file (one of: tst1, tst2, tst3, tst4): none of "
     "its dialog ids is an item of the data, or it is no result file (another benchmark's run? give --benchmark)"),
    (["score", "{dstc6_run}", "--benchmark", "babi", "--data", "sample:babi"],
     "babi: give --split (one of: trn, dev, tst, tst-OOV): none of the submission's item ids is one of the data's "
     "(another benchmark's run? give --benchmark)"),
])
def test_a_run_for_another_benchmark_is_pointed_at_benchmark_not_only_at_split(args, said):
    # before: only "give --split ...", and with --split a page of unknown-dialog errors: the --benchmark forgotten
    # was never named
    fill = {"babi_run": SAMPLES / "babi" / "example-run.json", "dstc6_run": SAMPLES / "dstc6" / "example-run.json"}
    r = run_cli(*[a.format(**fill) for a in args])
    assert (r.returncode, r.stderr.splitlines()[-1]) == (2, f"dialeval: error: {said}"), r.stderr


def test_a_glove_file_saved_with_a_bom_keeps_its_first_word(tmp_path):
    # before: the BOM stayed glued to the first word ("\ufeffthe"), whose vector was then silently never found
    import gzip as gz

    from dialeval.core.errors import UsageError
    from dialeval.formats.vectors import load_vectors

    text = b"the 0.1 0.9\nfood 0.2 0.3\n"
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbf" + text)
    (tmp_path / "bom.txt.gz").write_bytes(gz.compress(b"\xef\xbb\xbf" + text))
    for name in ("bom.txt", "bom.txt.gz"):
        vec = load_vectors(tmp_path / name, need_mean=True)
        assert sorted(vec.key_to_index) == ["food", "the"] and vec.dim == 2, name
        assert vec.matrix[vec.key_to_index["the"]].tolist() == pytest.approx([0.1, 0.9])
    (tmp_path / "w2v.txt").write_bytes(b"\xef\xbb\xbf2 2\n" + text)  # gensim would read "\ufeff2" as the count
    with pytest.raises(UsageError, match=r"w2v.txt: starts with a UTF-8 BOM \(byte-order mark\), which word2vec"):
        load_vectors(tmp_path / "w2v.txt")


@pytest.mark.parametrize("args, code, said", [
    (["benchmarks"], 0, ""),
    (["validate", "{run}", "--data", "sample:dstc6"], 0, ""),
    (["score", "{run}", "--data", "sample:dstc6", "--out", "-"], 2, "dialeval: error: -: standard output is closed; "
                                                                    "give a file name\n"),
    (["score", "{run}", "--data", "sample:dstc6", "--json", "--out", "{tmp}/r.json", "--per-item", "-"], 2,
     "dialeval: error: -: standard output is closed; give a file name\n"),
])
def test_standard_output_closed_is_no_internal_error(tmp_path, args, code, said):
    # before: `dialeval benchmarks >&-` was "internal error: AttributeError: 'NoneType' object has no attribute
    # 'flush'" (exit 3); `--per-item - --out r.json` wrote r.json, then failed on standard output
    import subprocess
    import sys

    from conftest import cli_env

    fill = {"run": SAMPLES / "dstc6" / "example-run.json", "tmp": tmp_path}
    env = {**cli_env(), "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-c", "from dialeval.cli import run; run()",
                        *[a.format(**fill) for a in args]], cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True,
                       timeout=120, preexec_fn=lambda: os.close(1))
    assert (r.returncode, r.stderr) == (code, said)
    assert not (tmp_path / "r.json").exists()  # refused before any work: nothing half done


def test_grade_takes_runs_given_as_the_benchmarks_score_files(tmp_path):
    # before: "rd/a.txt: not a submission (a folder, .tgz, .tar or .json)" for a Douban score file, and a run folder
    # holding scores.txt "holds no submission": score-based runs of 7 benchmarks could not be graded at all
    runs = tmp_path / "runs"
    (runs / "c").mkdir(parents=True)
    shutil.copy(SAMPLES / "douban" / "example-scores.txt", runs / "a.txt")
    (runs / "a.team.json").write_text('{"team": "A"}')
    shutil.copy(SAMPLES / "douban" / "example-scores.txt", runs / "c" / "scores.txt")
    (runs / "c" / "team.json").write_text('{"team": "C"}')
    r = run_cli("grade", runs, "--registry", tmp_path / "reg", "--benchmark", "douban", "--data", "sample:douban",
                "--json")
    assert r.returncode == 0, r.stderr
    import json

    graded = {e["entry"]: e for e in json.loads(r.stdout)["runs"]}
    assert {k: v["status"] for k, v in graded.items()} == {"a.txt": "valid", "c": "valid"}
    ubuntu = tmp_path / "u"
    ubuntu.mkdir()
    shutil.copy(SAMPLES / "ubuntu" / "example-scores.csv", ubuntu / "u.csv")
    (ubuntu / "u.team.json").write_text('{"team": "U"}')
    (ubuntu / "notes.txt").write_text("not a run")  # no Ubuntu submission ends in .txt
    r = run_cli("grade", ubuntu, "--registry", tmp_path / "reg2", "--benchmark", "ubuntu", "--data", "sample:ubuntu",
                "--split", "test", "--json")
    graded = {e["entry"]: e for e in json.loads(r.stdout)["runs"]}
    assert graded["u.csv"]["status"] == "valid" and graded["notes.txt"]["status"] == "skipped"
    assert "not a submission (a folder, .tgz, .tar, .json, .npy or .csv)" in r.stdout


def test_grade_takes_a_data_file_and_a_keys_tsv_as_score_does(tmp_path):
    # before: "--data .../test.txt: is a file, not a folder" and "--keys GROUND_TRUTH.tsv: is a file, not a folder":
    # Douban, ConvAI2 or DSTC7 runs could not be graded on the single data files their releases are
    import json

    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(SAMPLES / "dstc7" / "Ubuntu_subtask_1.json", runs / "Ubuntu_subtask_1.json")
    (runs / "Ubuntu_subtask_1.team.json").write_text('{"team": "S"}')
    shutil.copy(SAMPLES / "douban" / "example-scores.txt", runs / "d.txt")
    (runs / "d.team.json").write_text('{"team": "D"}')
    r = run_cli("grade", runs, "--registry", tmp_path / "reg", "--benchmark", "dstc7", "--data",
                SAMPLES / "dstc7" / "ubuntu_test_subtask_1.json", "--keys", SAMPLES / "dstc7" / "GROUND_TRUTH.tsv",
                "--json")
    graded = {e["entry"]: e for e in json.loads(r.stdout)["runs"]}
    assert graded["Ubuntu_subtask_1.json"]["status"] == "valid", r.stdout
    r = run_cli("grade", runs, "--registry", tmp_path / "reg2", "--benchmark", "douban", "--data",
                SAMPLES / "douban" / "test.txt", "--json")
    graded = {e["entry"]: e for e in json.loads(r.stdout)["runs"]}
    assert graded["d.txt"]["status"] == "valid", r.stdout


@pytest.mark.parametrize("text, column", [
    (b'[{"dialog_id": trux, "lst_candidate_id": []}]', 16),  # the misspelt literal's first letter
    (b"[tru]", 2), (b"[nul]", 2), (b"[fals]", 2), (b"[xyz]", 2), (b"[1,,2]", 4),
])
def test_a_misspelt_literal_is_placed_at_its_first_letter(tmp_path, text, column):
    # before: "line 1 column 20" for `trux` at column 16: msgspec reads a literal's whole length before it judges
    # it, and its position was taken as the bad character's
    (tmp_path / "run.json").write_bytes(text)
    r = run_cli("validate", tmp_path / "run.json", "--data", "sample:dstc6", "--split", "tst1")
    assert r.returncode == 1 and f"run.json: not valid JSON at line 1 column {column}: unexpected character" in \
        r.stdout + r.stderr, r.stderr


def test_a_sample_is_never_copied_into_the_samples_folder_itself():
    # before: `dialeval data sample babi --out submissions/samples/babi2` (from a checkout) wrote the copy there,
    # and every later `dialeval data sample` listed a twelfth sample, "babi2"
    from dialeval.core.resources import samples_dir

    target = samples_dir() / "babi-copy-newcomer2"  # the installed package's samples under tox, the checkout's here
    try:
        r = run_cli("data", "sample", "babi", "--out", target)
        assert (r.returncode, r.stderr) == (2, f"dialeval: error: --out {target}: inside dialeval's own samples "
                                               "folder, where a copy would be listed as one more sample; give a "
                                               "folder elsewhere\n")
        assert not target.exists()
    finally:
        shutil.rmtree(target, ignore_errors=True)
