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
                        "zz-long": {"team": LONG, "system": "s"}})
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
    assert f'<bdi class="name" title="{LONG}">{LONG[:79]}…</bdi>' in board


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
        latest = max(r.submitted_at for r in reg.runs())
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
    progress = board.split('<svg class="progress"')[1].split("</svg>")[0]
    assert "submission date (UTC)" in progress and ">p@1</text>" in progress and '<path d="M' in progress
    assert progress.count("<circle") == board.split('id="ranking"')[1].split("</tbody>")[0].count("<tr ")
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

    index = build(tmp, {"zz-old": run("v1", "2017-09-05T00:00:00Z", "nearest-neighbor"),
                        "zz-new": run("v2", "2017-09-09T00:00:00Z", "tfidf")}, all_runs=all_runs)
    return index.parent.joinpath("board-demo.html").read_text(encoding="utf-8")


def test_a_teams_latest_run_is_ranked_and_its_older_runs_are_marked_superseded(tmp_path):
    pytest.importorskip("jinja2")
    board = _resubmitted(tmp_path / "latest", all_runs=False)
    ranking = board.split('id="ranking"')[1].split("</table>")[0]
    assert ranking.count(">Resub Team</bdi>") == 1 and ">v2</bdi>" in ranking and ">v1</bdi>" not in ranking
    old = board.split('id="superseded"')[1].split("</table>")[0]
    assert ">v1</bdi>" in old and "superseded" in old and ">v2</bdi>" not in old
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
