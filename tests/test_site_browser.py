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
    for folder, system, source, when in (("zz-resub-1", "v1", "random", "2017-09-02T00:00:00Z"),
                                         ("zz-resub-2", "v2", "nearest-neighbor", "2017-09-03T00:00:00Z")):
        (runs / folder).mkdir()  # a team that submitted again: its first run is listed as superseded
        shutil.copyfile(BASELINES / source / "submission.tgz", runs / folder / "submission.tgz")
        (runs / folder / "team.json").write_text(json.dumps({"team": "Resub Team", "system": system,
                                                              "submitted_at": when}))
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


# ---- phone, accessibility and the evidence, at desktop and phone widths --------------------------------------
CONTRAST_JS = """() => {
  function parse(c) {
    const m = /rgba?\\(([^)]+)\\)/.exec(c || "");
    if (!m) { return null; }
    const p = m[1].split(",").map(parseFloat);
    return {r: p[0], g: p[1], b: p[2], a: p.length > 3 ? p[3] : 1};
  }
  function over(c, b) { return {r: c.r * c.a + b.r * (1 - c.a), g: c.g * c.a + b.g * (1 - c.a), b: c.b * c.a + b.b * (1 - c.a)}; }
  function lum(c) {
    const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b);
  }
  function background(el) {
    const layers = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c.a > 0) { layers.push(c); if (c.a >= 1) { break; } }
    }
    let out = {r: 255, g: 255, b: 255};
    for (let i = layers.length - 1; i >= 0; i--) { out = over(layers[i], out); }
    return out;
  }
  const found = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let checked = 0;
  while (walk.nextNode()) {
    const node = walk.currentNode;
    const el = node.parentElement;
    if (!node.textContent.trim() || !el || el.getClientRects().length === 0) { continue; }
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || style.display === "none") { continue; }
    const bg = background(el);
    const fg = over(parse(el instanceof SVGElement ? style.fill : style.color), bg);
    const a = lum(fg), b = lum(bg);
    const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    checked++;
    if (ratio < 4.5) { found.push([el.tagName + "." + el.getAttribute("class"), node.textContent.trim().slice(0, 30), ratio.toFixed(2)]); }
  }
  return {checked: checked, low: found};
}"""

SVG_TEXT_JS = """() => Array.from(document.querySelectorAll("svg text")).filter(t => t.getClientRects().length > 0
  && getComputedStyle(t).display !== "none" && t.closest("svg").getClientRects().length > 0).map(t => {
    const m = t.getScreenCTM();
    return [t.textContent, parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b)];
})"""


@pytest.fixture(scope="module")
def hidden_site(site, tmp_path_factory):
    """The same registry built with tst4 hidden (the public site)."""
    from dialeval.leaderboard.registry import Registry
    from dialeval.leaderboard.site import build_site

    index, _ = site
    out = tmp_path_factory.mktemp("hidden")
    with Registry(index.parent.parent / "registry") as reg:
        return build_site(reg, out / "site", hidden_splits=["tst4"])


def visit(browser, url, width):
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors, requests = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: requests.append(r.url))
    page.goto(url)
    page.wait_for_load_state("load")
    return page, errors, requests


@pytest.mark.parametrize("width", [1280, 390])
def test_every_ranking_row_shows_its_score_and_interval_without_sideways_scrolling(site, browser, width):
    index, _ = site
    page, errors, requests = visit(browser, (index.parent / "board-demo.html").as_uri(), width)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    rows = page.eval_on_selector_all("#ranking tbody tr", """rows => rows.map(r => {
        const s = r.querySelector('.c-score').getBoundingClientRect();
        const box = r.closest('.scroll').getBoundingClientRect();
        const caps = Array.from(r.querySelectorAll('line.cap')).map(c => c.getBoundingClientRect());
        return {left: s.left, right: s.right, width: s.width, box: box.right, text: r.querySelector('.c-score').innerText,
                caps: caps.map(c => c.height), ci: r.querySelector('.c-ci').getClientRects().length};
    })""")
    assert len(rows) >= 10
    if width == 390:  # the cards fit their box: nothing in them reaches past it
        assert page.evaluate("(() => { const b = document.querySelector('.cards-wrap');"
                             " return b.scrollWidth <= b.clientWidth && !b.classList.contains('overflows'); })()")
    for r in rows:
        assert r["width"] > 0 and r["left"] >= 0 and r["right"] <= min(width, r["box"]) + 0.5, r
        assert r["text"][:1].isdigit()
        assert r["ci"] > 0 and len(r["caps"]) == 2 and min(r["caps"]) >= 8  # interval end marks, at any width
    assert errors == [] and all(u.startswith("file://") for u in requests), (errors, requests)
    page.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_all_text_meets_4_5_to_1_contrast_and_chart_text_is_at_least_11_px(site, browser, width):
    index, _ = site
    names = ["index.html", "board-demo.html"] + sorted(p.name for p in index.parent.glob("team-*.html"))[:3]
    for name in names:
        page, errors, requests = visit(browser, (index.parent / name).as_uri(), width)
        result = page.evaluate(CONTRAST_JS)
        assert result["checked"] > 20 and result["low"] == [], (name, result["low"][:10])
        sizes = page.evaluate(SVG_TEXT_JS)
        small = [(t, round(px, 1)) for t, px in sizes if px < 10.95]
        assert small == [], (name, small[:5])
        assert errors == [] and all(u.startswith("file://") for u in requests), (name, errors, requests)
        page.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_the_significance_evidence_is_visible(site, browser, width):
    index, _ = site
    page, errors, _ = visit(browser, (index.parent / "board-demo.html").as_uri(), width)
    whys = page.eval_on_selector_all("#ranking .why", "els => els.filter(e => e.getClientRects().length).map(e => e.innerText)")
    assert whys and all(w.startswith("differs from #") and ", p " in w for w in whys)
    matrix, compact = page.is_visible("#matrix"), page.is_visible("#matrix-compact")
    assert (matrix, compact) == ((True, False) if width == 1280 else (False, True))
    if width == 390:
        items = page.eval_on_selector_all("#matrix-compact li", "els => els.map(e => e.innerText)")
        assert items and all("differs from" in i for i in items)
    tied = page.eval_on_selector_all("#ranking .badge.tied", "els => els.filter(e => e.getClientRects().length).length")
    assert tied == 5  # the nearest-neighbor baseline and four teams that submitted the same file
    assert page.is_visible("#data-statement") and "not the DSTC6 data" in page.inner_text("#data-statement")
    assert errors == []
    page.close()


def test_everything_is_reachable_by_keyboard(site, browser):
    index, _ = site
    page, errors, _ = visit(browser, (index.parent / "board-demo.html").as_uri(), 1280)
    wanted = page.evaluate("""() => Array.from(document.querySelectorAll('a[href], button, input[type=radio]:checked'))
        .filter(e => e.getClientRects().length || e.type === 'radio').length""")
    seen = set()
    for _ in range(wanted + 40):
        page.keyboard.press("Tab")
        key = page.evaluate("""() => { const e = document.activeElement;
            if (e.tagName === 'BUTTON' || e.tagName === 'INPUT' || e.tagName === 'A' || e.tagName === 'BDI') {
                e.dataset.kb = e.dataset.kb || String(Math.random()); return e.tagName + e.dataset.kb; }
            return null; }""")
        if key:
            seen.add(key)
    reached = page.evaluate("""() => Array.from(document.querySelectorAll('a[href], button, input[type=radio]:checked'))
        .filter(e => e.dataset.kb).length""")
    assert reached == wanted, (reached, wanted)
    # the per-task tabs switch with the keyboard too
    page.focus("#pt-s0")
    page.keyboard.press("ArrowRight")
    assert page.is_visible(".pt-1-0") and not page.is_visible(".pt-0-0")
    assert errors == []
    page.close()


@pytest.mark.parametrize("width", [1280, 390])
def test_a_hidden_splits_numbers_are_absent_from_every_site_file(hidden_site, browser, width):
    index = hidden_site
    files = [p for p in index.parent.rglob("*") if p.is_file()]
    assert {p.suffix for p in files} >= {".html", ".csv", ".json", ".css", ".js"}
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert "tst4" not in text, f.name
    rows = list(csv.DictReader((index.parent / "board-demo.csv").open(encoding="utf-8")))
    assert rows and {r["split"] for r in rows} == {"tst1", "tst2", "tst3"}
    page, errors, requests = visit(browser, (index.parent / "board-demo.html").as_uri(), width)
    shown = page.inner_text("main")
    assert "tst4" not in shown and "tst3" in shown
    # superseded and ranked runs alike keep their scores on the public splits
    assert not page.eval_on_selector_all("#ranking .c-score", "els => els.filter(e => e.innerText.trim() === '–').length")
    assert errors == [] and all(u.startswith("file://") for u in requests)
    page.close()


def test_a_table_that_scrolls_in_its_box_says_so_and_takes_the_keyboard(site, browser):
    index, _ = site
    page, errors, _ = visit(browser, (index.parent / "board-demo.html").as_uri(), 390)
    boxes = page.eval_on_selector_all(".scroll", """els => els.filter(e => e.offsetParent !== null).map(e => ({
        over: e.scrollWidth > e.clientWidth + 1, marked: e.classList.contains('overflows'),
        tab: e.getAttribute('tabindex')}))""")
    assert any(b["over"] for b in boxes)  # the per-task tables are wider than a phone
    for b in boxes:
        assert b["marked"] == b["over"] and (b["tab"] == "0") == b["over"], b
    assert errors == []
    page.close()
