"""Tables on narrow terminals and their headers: no cell breaks inside a word at any width (every table goes
through ``dialeval.core.termsafe.print_table``), and metric headers follow one rule on every benchmark."""

from __future__ import annotations

import io
import re

import pytest
from conftest import REPO, run_cli

ANSI = re.compile(r"\x1b\[[0-9;]*m")
SAMPLES = REPO / "submissions" / "samples"


def _rows(text: str) -> list[list[str]]:
    """The body rows of a box table, as lists of stripped cells (continuation rows included)."""
    return [[c.strip() for c in line.split("│")[1:-1]] for line in ANSI.sub("", text).splitlines()
            if line.startswith("│")]


def _terminal(columns: int) -> dict[str, str]:
    # rich treats FORCE_COLOR as a terminal: the table is drawn for a COLUMNS-wide terminal, as under `script`
    return {"FORCE_COLOR": "1", "COLUMNS": str(columns), "TERM": "xterm"}


@pytest.mark.parametrize("width", [60, 80])
def test_a_table_narrower_than_its_text_wraps_between_words_only(width):
    from rich.console import Console
    from rich.table import Table

    from dialeval.core.termsafe import print_table

    table = Table(title="known releases")
    for col in ("release", "benchmark", "splits", "files hashed", "present", "size", "source"):
        table.add_column(col, no_wrap=col in ("release", "benchmark", "size"), overflow="fold")
    table.add_row("dstc6", "dstc6", "tst1 tst2 tst3 tst4", "40", "-", "-", "organizers only")
    table.add_row("movie-dialog", "movie-dialog", "dev test", "11", "-", "-", "public archive")
    out = io.StringIO()
    print_table(Console(file=out, width=width, force_terminal=True, color_system=None), table)
    words = {w for line in _rows(out.getvalue()) for cell in line for w in cell.split()}
    # before: rich cut "organiz" / "ers" and "archiv" / "e" to fit 80 columns, and worse at 60
    assert {"organizers", "only", "public", "archive", "tst1", "tst4", "movie-dialog"} <= words
    assert not words & {"organiz", "ers", "archiv", "e"}
    lines = ANSI.sub("", out.getvalue()).splitlines()
    if width == 80:  # it fits once every column keeps its longest word: it stays within the terminal
        assert max(len(line) for line in lines) <= 80


@pytest.mark.parametrize("width", [60, 80])
def test_data_list_on_a_narrow_terminal_keeps_every_word_whole(tmp_path, width):
    r = run_cli("data", "list", env={"DIALEVAL_CACHE_DIR": str(tmp_path / "cache"), **_terminal(width)})
    assert r.returncode == 0, r.stderr
    rows = _rows(r.stdout)
    sources = [row[-1] for row in rows if row[-1]]
    assert set(sources) <= {"organizers", "only", "public", "archive", "organizers only", "public archive"}, sources
    words = {w for row in rows for cell in row for w in cell.split()}
    assert "organizers" in words and "archive" in words and not words & {"organiz", "ers", "archiv"}
    splits = {w for row in rows for w in row[2].split()}
    assert {"tst1", "tst-OOV", "train", "valid"} <= splits  # no split name cut either


def test_a_score_table_on_a_narrow_terminal_never_cuts_a_number(tmp_path):
    run = SAMPLES / "movie-dialog" / "example-run.json"
    r = run_cli("score", run, "--benchmark", "movie-dialog", "--data", "sample:movie-dialog", "--split", "dev",
                env={"DIALEVAL_CACHE_DIR": str(tmp_path / "cache"), **_terminal(40)})
    assert r.returncode == 0, r.stderr
    values = [cell for row in _rows(r.stdout) for cell in row[2:-1]]
    assert values and all(re.fullmatch(r"\d\.\d{4}|-|", v) for v in values), values  # before: "1.0…", "0…"
    assert "HITS@100" in ANSI.sub("", r.stdout)


def _header(stdout: str) -> list[str]:
    line = next(ln for ln in ANSI.sub("", stdout).splitlines() if ln.startswith("┃"))
    return [c.strip() for c in line.split("┃")[1:-1]]


def test_metric_headers_are_capitals_for_abbreviations_and_lower_case_for_words(tmp_path):
    from dialeval.metrics import label

    assert [label(m) for m in ("p@1", "hits@10", "r10@2", "r@100", "mrr", "map", "f1", "bleu")] == [
        "P@1", "HITS@10", "R10@2", "R@100", "MRR", "MAP", "F1", "BLEU"]
    assert [label(m) for m in ("score", "exact", "name", "name-exact", "status", "noesis-score")] == [
        "score", "exact", "name", "name-exact", "status", "noesis-score"]
    env = {"DIALEVAL_CACHE_DIR": str(tmp_path / "cache")}
    preds = tmp_path / "preds.jsonl"
    r = run_cli("airdialogue", "baseline", "cheapest-flight", "--data", "sample:airdialogue", "--split", "dev",
                "--out", preds, env=env)
    assert r.returncode == 0, r.stderr
    r = run_cli("score", preds, "--benchmark", "airdialogue", "--data", "sample:airdialogue", "--split", "dev",
                "--flight-distance", "legacy", env=env)
    assert r.returncode == 0, r.stderr
    # before: SCORE, EXACT, NAME beside name-exact, flight, flight-exact, status (capitals for any name of <= 5)
    assert _header(r.stdout) == ["task", "subset", "score", "exact", "name", "name-exact", "flight", "flight-exact",
                                 "status", "n"]
    r = run_cli("score", SAMPLES / "movie-dialog" / "example-run.json", "--benchmark", "movie-dialog", "--data",
                "sample:movie-dialog", "--split", "dev", env=env)
    # before: hits@1, hits@10, hits@100 here, HITS@1 ... in the same benchmark's --protocols lines
    assert _header(r.stdout)[-4:] == ["HITS@1", "HITS@10", "HITS@100", "n"]
