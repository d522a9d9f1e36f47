"""The static site in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright; never downloaded)."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
REPO = Path(__file__).resolve().parents[1]
BASELINES = REPO / "submissions" / "baselines" / "default"
EVIL = "<img src=x onerror=alert(1)>"
LONG = "Long-Named Team " + "x" * 104  # 120 characters
BIDI = "abc\u202egnp.exe"

pytestmark = [
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install '.[test]')")
    from dialeval.leaderboard.demo import make_runs
    from dialeval.leaderboard.grade import grade
    from dialeval.leaderboard.registry import Registry
    from dialeval.leaderboard.site import build_site
    from dialeval.simulator.default import ensure_default_challenge

    out = tmp_path_factory.mktemp("site")
    runs = out / "runs"
    make_runs(BASELINES, runs)
    evil = runs / "zz-evil"
    evil.mkdir()
    shutil.copyfile(BASELINES / "nearest-neighbor" / "submission.tgz", evil / "submission.tgz")
    (evil / "team.json").write_text(json.dumps({"team": EVIL, "system": "x\" onfocus=\"alert(2)"}))
    for folder, team in (("zz-long", LONG), ("zz-bidi", BIDI)):
        (runs / folder).mkdir()
        shutil.copyfile(BASELINES / "nearest-neighbor" / "submission.tgz", runs / folder / "submission.tgz")
        (runs / folder / "team.json").write_text(json.dumps({"team": team, "system": "s" * 120}))
    grade(runs, "dstc6", ensure_default_challenge(), out / "registry", progress=False, board="demo")
    with Registry(out / "registry") as reg:
        index = build_site(reg, out / "site")
        records = {(r["run_id"], r["split"], r["group"], r["metric"], r["average"]): r
                   for r in reg.records(board="demo")}
    return index, records


@pytest.fixture(scope="module")
def browser():
    sync = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


def open_page(browser, url):
    page = browser.new_page(accept_downloads=True)
    errors, dialogs = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(url)
    page.wait_for_load_state("load")
    return page, errors, dialogs


def test_overview_loads_from_file_url_without_errors_and_sorts(site, browser, tmp_path):
    index, _ = site
    page, errors, dialogs = open_page(browser, index.as_uri())
    page.click("text=demo")
    page.wait_for_load_state("load")
    assert "board-demo.html" in page.url
    page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)
    assert (tmp_path / "overview.png").stat().st_size > 10_000

    def systems():
        return page.eval_on_selector_all("#ranking tbody tr td:nth-child(4)", "els => els.map(e => e.textContent.trim())")

    ranked = systems()
    assert ranked[0].startswith("rule-based")
    page.click("#ranking thead th:nth-child(4) button")  # system: A-Z
    assert systems() == sorted(ranked, key=str.lower)
    page.click("#ranking thead th:nth-child(5) button")  # the metric: best first
    scores = page.eval_on_selector_all("#ranking tbody tr td:nth-child(5)", "els => els.map(e => +e.dataset.sort)")
    assert scores == sorted(scores, reverse=True)
    page.click("#ranking thead th:nth-child(5) button")  # again: reversed
    scores2 = page.eval_on_selector_all("#ranking tbody tr td:nth-child(5)", "els => els.map(e => +e.dataset.sort)")
    assert scores2 == sorted(scores)
    assert errors == [] and dialogs == []


def test_hostile_team_name_renders_as_text_and_runs_nothing(site, browser):
    index, _ = site
    board = index.parent / "board-demo.html"
    page, errors, dialogs = open_page(browser, board.as_uri())
    teams = page.eval_on_selector_all("#ranking tbody tr td:nth-child(3) a", "els => els.map(e => e.textContent)")
    assert EVIL in teams
    assert page.eval_on_selector_all("img", "els => els.length") == 0
    page.focus("body")
    for link in page.query_selector_all("a[href^='team-']"):
        if link.text_content() == EVIL:
            link.click()
            page.wait_for_load_state("load")
            break
    assert page.text_content("h1") == EVIL
    assert dialogs == [] and errors == []


def test_downloads_equal_the_registry_records(site, browser):
    index, records = site
    page, errors, _ = open_page(browser, (index.parent / "board-demo.html").as_uri())
    # Chromium does not fire download events for file:// links: follow the links the page offers instead
    from urllib.parse import unquote, urlparse

    def linked(selector):
        return Path(unquote(urlparse(page.eval_on_selector(selector, "a => a.href")).path))

    csv_path, json_path = linked("a[href$='.csv']"), linked("a[href$='.json']")
    assert page.eval_on_selector("a[href$='.csv']", "a => a.hasAttribute('download')")
    rows = list(csv.DictReader(csv_path.open()))
    assert len(rows) == len(records)
    for row in rows:
        rec = records[(int(row["run_id"]), row["split"], row["group"], row["metric"], row["average"] or None)]
        assert float(row["value"]) == rec["value"] and row["signature"] == rec["signature"]
    data = json.loads(json_path.read_text())
    assert {(r["run_id"], r["split"], r["group"], r["metric"], r["average"]): (r["value"], r["signature"])
            for r in data["records"]} == {k: (v["value"], v["signature"]) for k, v in records.items()}
    assert errors == []


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    """Screenshots are kept as test artifacts in pytest's temporary folder (its path is printed with -s)."""
    folder = tmp_path_factory.mktemp("screenshots")
    print(f"screenshots: {folder}")
    return folder


@pytest.mark.parametrize("width", [1280, 390])
def test_pages_fit_the_window_at_desktop_and_phone_widths(site, browser, artifacts, width):
    assert len(LONG) == 120
    index, _ = site
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    names = ["index.html", "board-demo.html"] + sorted(p.name for p in index.parent.glob("team-*.html"))
    for name in names:
        page.goto((index.parent / name).as_uri())
        page.wait_for_load_state("load")
        scroll_width, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert scroll_width <= inner, (name, width, scroll_width)
        if name in ("index.html", "board-demo.html") or LONG in page.text_content("h1"):
            shot = artifacts / f"{width}px-{name.replace('.html', '')}.png"
            page.screenshot(path=str(shot), full_page=True)
            assert shot.stat().st_size > 10_000
    page.goto((index.parent / "board-demo.html").as_uri())
    height = page.evaluate("document.querySelector('.pertask').getBoundingClientRect().height")
    assert height < (600 if width == 1280 else 900), height  # was 5,500 px with 20 stacked per-task tables
    # the long name is cut with an ellipsis inside its cell, and the tooltip holds all of it
    cell = page.query_selector(f"bdi.name[title='{LONG}']")
    box = cell.bounding_box()
    assert box["width"] < 300 and cell.evaluate("e => e.scrollWidth > e.clientWidth")
    # the bidi override is shown, not obeyed
    assert "abc\\u202egnp.exe" in page.text_content("#ranking")
    assert errors == []
    page.close()


def test_per_task_selector_switches_tables_without_javascript(site, browser):
    index, _ = site
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto((index.parent / "board-demo.html").as_uri())

    def shown():
        return [t.get_attribute("data-split") + "/" + t.get_attribute("data-metric")
                for t in page.query_selector_all(".pt") if t.is_visible()]

    assert shown() == ["tst1/p@1"]
    page.click("label[for=pt-s2]")
    assert shown() == ["tst3/p@1"]
    page.click("label[for=pt-m1]")
    assert shown() == ["tst3/p@2"]
    context.close()
