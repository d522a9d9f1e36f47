"""The static site's HTML, read as text: names cannot spoof, pages are deterministic (no browser needed)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BASELINES = REPO / "submissions" / "baselines" / "default"
BIDI = "abc\u202egnp.exe"  # shows as "abcexe.png" when the override is honoured
LONG = "L" * 120
INVISIBLE = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u200b\u2060\ufeff"


def build(tmp: Path, extra: dict[str, dict], **kw) -> Path:
    from dialeval.leaderboard.demo import make_runs
    from dialeval.leaderboard.grade import grade
    from dialeval.leaderboard.registry import Registry
    from dialeval.leaderboard.site import build_site
    from dialeval.simulator.default import ensure_default_challenge

    runs = tmp / "runs"
    make_runs(BASELINES, runs)
    for folder, meta in extra.items():
        d = runs / folder
        d.mkdir()
        meta = dict(meta)
        shutil.copyfile(BASELINES / meta.pop("_from", "nearest-neighbor") / "submission.tgz", d / "submission.tgz")
        (d / "team.json").write_text(json.dumps(meta))
    grade(runs, "dstc6", ensure_default_challenge(), tmp / "registry", progress=False, board="demo")
    with Registry(tmp / "registry") as reg:
        return build_site(reg, tmp / "site", **kw)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("jinja2")
    tmp = tmp_path_factory.mktemp("render")
    index = build(tmp, {"zz-bidi": {"team": BIDI, "system": "sys" + INVISIBLE, "description": "d\u202eesc"},
                        "zz-long": {"team": LONG, "system": "s", "paper": "https://example.org/paper",
                                    "code": "https://example.org/code"}})
    return index.parent


def pages(site: Path) -> dict[str, str]:
    return {p.name: p.read_text(encoding="utf-8") for p in sorted(site.glob("*.html"))}


def test_bidi_and_invisible_characters_never_reach_any_page_raw(site):
    for name, html in pages(site).items():
        for ch in INVISIBLE:
            assert ch not in html, (name, f"U+{ord(ch):04X}")


def test_a_bidi_name_renders_escaped_and_isolated_in_every_page(site):
    from markupsafe import escape

    shown = '<bdi class="name" title="abc\\u202egnp.exe">abc<span class="esc" title="invisible character U+202E">' \
            '\\u202e</span>gnp.exe</bdi>'
    html = pages(site)
    team_pages = [n for n, h in html.items() if n.startswith("team-") and f'title="{escape("abc")}' in h
                  and "<h1>" in h and "gnp.exe</bdi></h1>" in h]
    assert len(team_pages) == 1
    assert "<title>abc\\u202egnp.exe · " in html[team_pages[0]]
    board = html["board-demo.html"]
    ranking = board.split('id="ranking"')[1].split("</table>")[0]
    assert shown in ranking
    per_task = board.split('id="per-task"')[1]
    assert per_task.count(shown) >= 4  # one per split's table at least
    for label in ("\\u202a", "\\u202b", "\\u202c", "\\u202d", "\\u2066", "\\u2069", "\\u200e", "\\u200f", "\\u061c",
                  "\\u200b", "\\u2060", "\\ufeff"):
        assert f">{label}</span>" in ranking
    assert "d<span class=\"esc\" title=\"invisible character U+202E\">\\u202e</span>esc" in html[team_pages[0]]


def test_long_names_are_cut_with_an_ellipsis_and_keep_the_full_name_in_the_tooltip(site):
    board = pages(site)["board-demo.html"]
    assert f'<bdi class="name cut" tabindex="0" title="{LONG}">{LONG[:79]}…</bdi>' in board


def test_the_site_is_byte_identical_when_built_again(site, tmp_path):
    from dialeval.leaderboard.registry import Registry
    from dialeval.leaderboard.site import build_site

    with Registry(site.parent / "registry") as reg:
        again = build_site(reg, tmp_path / "again").parent
    for name, html in pages(site).items():
        assert (again / name).read_text(encoding="utf-8") == html, name


def test_board_has_a_title_and_a_last_updated_date_from_the_registry(site, tmp_path):
    from dialeval.leaderboard.registry import Registry
    from dialeval.leaderboard.site import build_site

    with Registry(site.parent / "registry") as reg:
        latest = max(r.graded_at for r in reg.runs())
        built = build_site(reg, tmp_path / "titled", title="DSTC6 track 1 — open board").parent
    board = (built / "board-demo.html").read_text(encoding="utf-8")
    assert "<h1>DSTC6 track 1 — open board</h1>" in board
    assert f'last updated <time datetime="{latest}"' in board
    assert f'Last updated <time datetime="{latest}"' in (built / "index.html").read_text(encoding="utf-8")


def test_every_chart_has_axes_and_labels(site):
    html = pages(site)
    board = html["board-demo.html"]
    head = board.split('<th class="nosort chart">')[1].split("</th>")[0]
    assert "p@1 (95 % CI)" in head and head.count('class="axis"') >= 4 and ">0.6<" in head
    for width in ("wide", "narrow"):  # phones get their own drawing, so its text is not shrunk
        progress = board.split(f'<svg class="progress {width}"')[1].split("</svg>")[0]
        assert "date graded (UTC)" in progress and ">p@1</text>" in progress and '<path d="M' in progress
        assert progress.count("<circle") == board.split('id="ranking"')[1].split("</tbody>")[0].count("data-run=")
    team = next(h for n, h in html.items() if n.startswith("team-") and 'class="bars"' in h)
    bars = team.split('<svg class="bars"')[1].split("</svg>")[0]
    assert ">split</text>" in bars and ">p@1</text>" in bars and ">0.5</text>" in bars and ">1</text>" in bars


def test_per_task_view_is_one_table_per_split_and_metric_with_tasks_as_columns(site):
    board = pages(site)["board-demo.html"]
    per_task = board.split('id="per-task"')[1]
    splits = ["tst1", "tst2", "tst3", "tst4"]
    for i, s in enumerate(splits):
        assert f'id="pt-s{i}"' in per_task and f">{s}</label>" in per_task
    tables = per_task.count("<table")
    metrics = per_task.count('name="pt-metric"')
    assert metrics >= 2 and tables == len(splits) * metrics
    first = per_task.split('<div class="pt pt-0-0 first"')[1].split("</table>")[0]
    assert [f"task {g}" in first for g in range(1, 6)] == [True] * 5
    assert "#pt-s0:checked ~ #pt-m0:checked ~ .pt-tables .pt-0-0" in board  # a CSS-only selector: no JS needed


def test_outputs_do_not_depend_on_the_wall_clock(site, tmp_path, monkeypatch):
    import time as _time

    from dialeval.leaderboard.registry import Registry
    from dialeval.leaderboard.site import build_site

    monkeypatch.setattr(_time, "time", lambda: 4_000_000_000.0)
    with Registry(site.parent / "registry") as reg:
        later = build_site(reg, tmp_path / "later").parent
    assert (later / "board-demo.html").read_bytes() == (site / "board-demo.html").read_bytes()


def _resubmitted(tmp: Path, all_runs: bool) -> str:
    def run(system, when, baseline):
        return {"team": "Resub Team", "system": system, "submitted_at": when, "_from": baseline}

    # graded together: their entry names say which came first (grade never orders runs by submitted_at)
    index = build(tmp, {"zz-1-old": run("v1", "2017-09-05T00:00:00Z", "nearest-neighbor"),
                        "zz-2-new": run("v2", "2017-09-09T00:00:00Z", "tfidf")}, all_runs=all_runs)
    return index.parent.joinpath("board-demo.html").read_text(encoding="utf-8")


def test_a_teams_latest_run_is_ranked_and_its_older_runs_are_marked_superseded(tmp_path):
    pytest.importorskip("jinja2")
    board = _resubmitted(tmp_path / "latest", all_runs=False)
    ranking = board.split('id="ranking"')[1].split("</table>")[0]
    assert ranking.count(">Resub Team</bdi>") == 1 and ">v2</bdi>" in ranking and ">v1</bdi>" not in ranking
    old = board.split('id="superseded"')[1].split("</table>")[0]
    assert ">v1</bdi>" in old and "superseded" in old
    # the run that replaced it is named as the ranking shows it (system, run id, date), not by a bare id
    assert '<bdi class="name" title="v2">v2</bdi> <span class="nowrap">(run ' in old
    board = _resubmitted(tmp_path / "all", all_runs=True)
    ranking = board.split('id="ranking"')[1].split("</table>")[0]
    assert ranking.count(">Resub Team</bdi>") == 2 and 'id="superseded"' not in board
    v1 = [row for row in ranking.split("<tr ")[1:] if ">v1</bdi>" in row]
    assert len(v1) == 1 and 'superseded" data-run' in v1[0] and 'class="badge superseded"' in v1[0]


def test_chart_axes_cover_the_data_on_round_ticks():
    from dialeval.leaderboard.site import axis

    assert axis([0.55, 0.62, 0.58]) == (0.54, 0.62, [0.54, 0.56, 0.58, 0.6, 0.62])
    lo, hi, ticks = axis([0.134, 0.962])
    assert lo <= 0.134 and hi >= 0.962 and len(ticks) <= 6 and ticks[0] == lo and ticks[-1] == hi
    assert axis([1.0, 1.0]) == (0.99, 1.0, [0.99, 1.0])  # all at the top: the scale stays below 1
    assert axis([None]) == (0.0, 1.0, [0.0, 0.25, 0.5, 0.75, 1.0])


def _ranking_rows(board: str) -> list[str]:
    return board.split('id="ranking"')[1].split("</tbody>")[0].split("<tr ")[1:]


def test_every_band_start_names_the_run_it_differs_from_and_the_p_value(site):
    board = pages(site)["board-demo.html"]
    rows = _ranking_rows(board)
    starts = [r for r in rows if "band-start" in r.split(">")[0]]
    assert starts, "the demo has several bands"
    for row in starts:
        why = row.split('<span class="why"')[1].split("</span>")[0]
        assert "differs from #" in why and ", p " in why
    # McNemar p-values far below any resampling floor print as numbers or "< 1e-300", never as 0
    assert ", p 0<" not in board and ", p 0.0000" not in board


def test_equal_scores_share_a_rank_and_are_marked_tied(site):
    board = pages(site)["board-demo.html"]
    rows = _ranking_rows(board)
    # three runs are the same nearest-neighbor file: the baseline, the bidi-named team and the long-named team
    tied = [r for r in rows if 'class="badge tied"' in r]
    assert len(tied) == 3
    ranks = {r.split('class="c-rank"')[1].split(">")[1].split("<")[0] for r in tied}
    assert len(ranks) == 1 and ranks.pop().endswith("=")


def test_the_significance_matrix_holds_every_pair_and_a_compact_list(site):
    board = pages(site)["board-demo.html"]
    matrix = board.split('id="matrix"')[1].split("</table>")[0]
    n = len(_ranking_rows(board))
    assert matrix.count("<tr>") == n + 1  # the header and one row per banded run
    assert matrix.count('<td class="self">') == n and "✱</strong>" in matrix
    compact = board.split('id="matrix-compact"')[1].split("</ul>")[0]
    assert compact.count("<li>") == n and "differs from #" in compact and "not from #" in compact


def test_every_board_states_its_data_and_the_index_has_a_data_column(site):
    board = pages(site)["board-demo.html"]
    assert ("<strong>Data:</strong> simulated with dialeval&#39;s simulator (seed 2017), not the DSTC6 data."
            in board)
    index = pages(site)["index.html"]
    assert '<th data-type="text">data</th>' in index
    assert "simulated with dialeval&#39;s simulator (seed 2017), not the DSTC6 data" in index


def test_data_statement_names_a_release_or_says_it_matches_none():
    from dialeval.leaderboard.site import data_statement

    real = {"release": "dstc6", "simulated": None, "embedded_default": False}
    assert data_statement([real], "DSTC6", "dstc6")["text"] == "the published dstc6 release"
    assert data_statement([{"release": None}], "DSTC6", "")["text"] == "data that match no published release"
    assert data_statement([{"release": "modified"}], "DSTC6", "modified")["text"].startswith(
        "data that match no published release")
    sim = {"simulated": {"generator": "dialeval-simulator", "seed": 7}}
    assert data_statement([sim], "bAbI dialog", "")["text"] == (
        "simulated with dialeval's simulator (seed 7), not the bAbI dialog data")
    assert data_statement([sim, real], "DSTC6", "")["kind"] == "unknown"  # a mix claims nothing
    assert data_statement([{"sample": True}], "bAbI dialog", "")["text"] == (
        "data that match no published release (dialeval's constructed sample data, not the bAbI dialog data)")


def test_index_counts_every_graded_run(site):
    from dialeval.leaderboard.registry import Registry

    with Registry(site.parent / "registry") as reg:
        graded = [r for r in reg.runs(board="demo") if r.kind != "reported"]
    index = pages(site)["index.html"]
    row = index.split('href="board-demo.html"')[1].split("</tr>")[0]
    assert f'<td data-sort="{len(graded)}">{len(graded)}</td>' in row  # rejected runs included


def test_rejected_runs_show_their_error_codes_not_their_messages(site):
    html = pages(site)
    board = html["board-demo.html"]
    rejected = board.split('id="rejected"')[1].split("</table>")[0]
    assert "<code title=" in rejected and ">rank-out-of-range</code>" in rejected
    team = next(h for n, h in html.items() if n.startswith("team-") and "Team Epsilon" in h)
    assert "Not scored: 1 error:" in team and "<code>rank-out-of-range</code>" in team


def test_splits_and_tasks_are_named_and_described_by_the_benchmark(site):
    board = pages(site)["board-demo.html"]
    meaning = board.split('id="meaning"')[1]
    assert "<dt>tst2</dt><dd>a new knowledge base" in meaning
    for name in ("API", "Refine", "Options", "Infos", "Full"):
        assert f" · {name}</dt>" in meaning and f" · {name}</th>" in board


def test_per_task_winners_are_teams_not_baselines(site):
    board = pages(site)["board-demo.html"]
    first = board.split('<div class="pt pt-0-0 first"')[1].split("</table>")[0]
    winners = first.split('<p class="winners">')[1].split("</p>")[0]
    assert "dialeval baselines" not in winners  # the perfect rule-based baseline is a reference, not a winner
    assert winners.count("task ") == 5
    stars = [row for row in first.split("<tr>")[1:] if 'class="best"' in row]
    assert stars and not any("badge baseline" in row for row in stars)


def test_paper_and_code_links_are_in_the_ranking(site):
    board = pages(site)["board-demo.html"]
    row = next(r for r in _ranking_rows(board) if LONG[:20] in r)
    assert '<a class="ext" href="https://example.org/paper" rel="nofollow noopener noreferrer">paper</a>' in row
    assert '<a class="ext" href="https://example.org/code" rel="nofollow noopener noreferrer">code</a>' in row


def test_downloads_carry_the_ranking_and_neutralise_invisible_characters(site):
    import csv
    import io

    raw = (site / "board-demo.csv").read_text(encoding="utf-8")
    for ch in INVISIBLE:
        assert ch not in raw, f"U+{ord(ch):04X}"
    rows = list(csv.DictReader(io.StringIO(raw)))
    bidi = [r for r in rows if r["team"].startswith("abc")]
    assert bidi and bidi[0]["team"] == "abc\\u202egnp.exe"
    ranked = [r for r in rows if r["rank"]]
    for r in ranked:
        # submitted_at is the team's own claim, empty where team.json gave none (never the file's time)
        assert r["band"] and r["score"] and r["ci_low"] and r["ci_high"] and "submitted_at" in r and r["run_id"]
        assert r["signature"] and r["ranking_signature"].startswith("dstc6|data:")
    assert any(r["submitted_at"] for r in ranked)
    assert any(r["p_vs_band_above"] for r in ranked) and any(r["tied"] == "True" for r in ranked)
    text = (site / "board-demo.json").read_text(encoding="utf-8")
    assert text.isascii() and "\\u202e" in text  # the exact name, written with escapes
    data = json.loads(text)
    assert BIDI in {r["team"] for r in data["ranking"]}
    first = data["ranking"][0]
    assert {"rank", "band", "score", "ci_low", "ci_high", "p_vs_band_above", "submitted_at", "run_id"} <= set(first)
    assert any(r["p_vs_band_above"] for r in data["ranking"])
    assert data["data"].startswith("simulated with dialeval's simulator")


def test_hiding_a_split_keeps_superseded_scores_and_chart_points(tmp_path):
    pytest.importorskip("jinja2")

    def run(system, when, baseline):
        return {"team": "Resub Team", "system": system, "submitted_at": when, "_from": baseline}

    index = build(tmp_path, {"zz-1-old": run("v1", "2017-09-05T00:00:00Z", "nearest-neighbor"),  # name order: v2 last
                             "zz-2-new": run("v2", "2017-09-09T00:00:00Z", "tfidf")}, hidden_splits=["tst4"])
    board = index.parent.joinpath("board-demo.html").read_text(encoding="utf-8")
    old = board.split('id="superseded"')[1].split("</table>")[0]
    score = old.split(">v1</bdi>")[1].split("</td>")[1]
    assert "–" not in score and float(score.split(">")[-1]) > 0.5
    progress = board.split('<svg class="progress wide"')[1].split("</svg>")[0]
    assert "v1 (superseded):" in progress
    for f in index.parent.rglob("*"):
        if f.is_file():
            assert "tst4" not in f.read_text(encoding="utf-8"), f.name


def test_every_benchmark_declares_its_data_and_split_meanings():
    """The site renders what each benchmark declares, generically: a benchmark added later declares its own."""
    from dialeval.benchmarks import registry

    for b in registry.all_benchmarks():
        assert b.data_name, b.name
        assert set(b.split_names) <= set(b.split_descriptions), (b.name, b.split_names)
        assert all(isinstance(v, str) and v for v in [*b.split_descriptions.values(), *b.group_descriptions.values()])
    dstc6 = registry.get("dstc6")
    assert [dstc6.group_names[str(t)] for t in range(1, 6)] == ["API", "Refine", "Options", "Infos", "Full"]
    assert "new knowledge base" in dstc6.split_descriptions["tst2"] and "restrictions" in dstc6.split_descriptions["tst3"]
    assert sorted(registry.get("babi").group_names) == ["1", "2", "3", "4", "5", "6"]


def test_a_backdated_resubmission_is_still_the_latest_run_everywhere_on_the_site(tmp_path):
    """team.json's submitted_at is the team's word: the site orders runs by when grade first saw them. Team
    Backdate sends v1 on 9 September, then v2 on 12 September dated 1 August: v2 is its latest run (ranked), v1
    is replaced by v2 (never a run replaced by an older one), and v2, tied with the nearest-neighbor baseline it
    copies, is listed after that baseline (graded first); the chart and "last updated" use the grading times."""
    pytest.importorskip("jinja2")
    from dialeval.leaderboard.demo import make_runs
    from dialeval.leaderboard.grade import grade
    from dialeval.leaderboard.registry import Registry
    from dialeval.leaderboard.site import build_site
    from dialeval.simulator.default import ensure_default_challenge

    challenge, runs = ensure_default_challenge(), tmp_path / "runs"

    def send(folder, system, dated, baseline, seen):
        d = runs / folder
        d.mkdir(parents=True)
        shutil.copyfile(BASELINES / baseline / "submission.tgz", d / "submission.tgz")
        (d / "team.json").write_text(json.dumps({"team": "Team Backdate", "system": system, "submitted_at": dated}))
        grade(runs, "dstc6", challenge, tmp_path / "registry", progress=False, board="demo", now=seen)

    make_runs(BASELINES, runs)
    grade(runs, "dstc6", challenge, tmp_path / "registry", progress=False, board="demo", now="2017-09-05T00:00:00Z")
    send("zz-v1", "v1", "2017-09-09T00:00:00Z", "tfidf", "2017-09-09T00:00:10Z")
    send("zz-v2", "v2", "2017-08-01T00:00:00Z", "nearest-neighbor", "2017-09-12T00:00:10Z")
    with Registry(tmp_path / "registry") as reg:
        assert [r.system for r in reg.runs() if r.team == "Team Backdate"] == ["v1", "v2"]  # in the order seen
        site = build_site(reg, tmp_path / "site").parent
    board = (site / "board-demo.html").read_text(encoding="utf-8")
    ranking = board.split('id="ranking"')[1].split("</table>")[0]
    assert ">v2</bdi>" in ranking and ">v1</bdi>" not in ranking
    old = board.split('id="superseded"')[1].split("</table>")[0]
    assert ">v1</bdi>" in old and '<bdi class="name" title="v2">v2</bdi> <span class="nowrap">(run ' in old
    assert ", graded 2017-09-12)" in old
    rows = _ranking_rows(board)
    tied = [r for r in rows if 'class="badge tied"' in r]
    assert [("nearest-neighbor" in r, ">v2</bdi>" in r) for r in tied][-2:] == [(True, False), (False, True)]
    # shown as information, with the grading time beside it
    assert '<time datetime="2017-08-01T00:00:00Z" title="2017-08-01T00:00:00Z (team.json); graded 2017-09-12' in ranking
    assert 'last updated <time datetime="2017-09-12T00:00:10Z"' in board
    progress = board.split('<svg class="progress wide"')[1].split("</svg>")[0]
    assert "(2017-09-12T00:00:10Z)</title>" in progress and "2017-08-01" not in progress
    data = json.loads((site / "board-demo.json").read_text(encoding="utf-8"))
    assert [r["submitted_at"] for r in data["ranking"] if r["system"] == "v2"] == ["2017-08-01T00:00:00Z"]
