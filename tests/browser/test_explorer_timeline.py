"""The explorer in a real headless Chromium: the timeline moves the points and the metrics,
play walks the snapshots, a search (or a click on a point) highlights one token in the tied
and untied twins, t-SNE redraws, the Spanish page draws the same, a live page picks up a new
snapshot, and a V = 50,257 run — one panel, and tied/untied twins (three panels) — loads and
moves. The points are read back from the WebGL scatterplot (regl-scatterplot) the page hands
them to. Screenshots and the measured browser timings go to the test artefacts (no assertion
on a time: a loaded machine would flip it)."""

from __future__ import annotations

import json
import shutil
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest
from safetensors.numpy import save_file
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.support.ui import WebDriverWait

from minimodel.cli import main
from minimodel.explorer import write_explorer
from minimodel.explorer.serve import LiveRuns, make_server

TINY = ["--tokenizer", "byte", "--d-model", "16", "--n-layer", "1", "--n-head", "2",
        "--block-size", "16", "--batch-size", "4", "--steps", "30", "--eval-interval", "10",
        "--seed", "3", "--quiet"]


def _severe(browser) -> list[str]:
    return [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]


def _remote(browser) -> list[str]:
    """Requests that left the machine since the page was opened (the page must need none)."""
    remote = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            url = urlparse(message["params"]["request"]["url"])
            if url.scheme not in ("file", "data", "blob", "about") and url.hostname != "127.0.0.1":
                remote.append(url.geturl())
    return remote


def _open(browser, url: str) -> None:
    browser.get_log("browser")            # drop what earlier pages logged
    browser.get_log("performance")
    browser.get(url)


def _ready(browser, timeout: float = 120) -> None:
    WebDriverWait(browser, timeout).until(
        lambda b: b.execute_script("return !!(window.explorer && window.explorer.steps().length)"))


def _first_x(browser, panel: int) -> list[float]:
    """x of the first 20 points as the panel's scatterplot holds them, once it has drawn."""
    return browser.execute_script(
        "return window.explorer.idle().then(() => window.explorer.panels()"
        f"[{panel}].plot.get('points').slice(0, 20).map(p => p[0]))")


@pytest.fixture(scope="module")
def twins(tmp_path_factory) -> Path:
    """A tied and an untied run of the same seed and data, and their explorer page."""
    root = tmp_path_factory.mktemp("twins")
    assert main(["train", *TINY, "--out", str(root / "tied")]) == 0
    assert main(["train", *TINY, "--untied", "--out", str(root / "untied")]) == 0
    page = root / "twins.html"
    write_explorer([root / "tied", root / "untied"], page)
    return page


def test_the_slider_moves_the_points_and_the_metrics_follow(browser, twins, artifacts):
    _open(browser, twins.as_uri())
    _ready(browser)
    steps = browser.execute_script("return window.explorer.steps()")
    assert steps[0] == 0 and steps[-1] == 30 and len(steps) > 10
    assert browser.execute_script("return window.explorer.panels().length") == 3  # E | E, W
    at_end = _first_x(browser, 0)
    slider = browser.find_element("id", "slider")
    browser.execute_script("arguments[0].value = 0; arguments[0].dispatchEvent(new Event('input'))",
                           slider)
    at_start = _first_x(browser, 0)
    assert np.abs(np.subtract(at_end, at_start)).max() > 1e-3     # the points moved
    cursors = browser.execute_script(
        "return window.explorer.charts().map(c => c.layout.shapes[0].x0)")
    assert cursors and all(x == 1 for x in cursors)               # step 0 (+1: log axis)
    assert "step 0" in browser.find_element("id", "step-label").text
    browser.save_screenshot(str(artifacts / "explorer-timeline-start.png"))
    browser.execute_script("window.explorer.setIndex(window.explorer.steps().length - 1)")
    assert _first_x(browser, 0) == pytest.approx(at_end)
    assert _severe(browser) == [] and _remote(browser) == []


def test_play_walks_the_snapshots_to_the_end(browser, twins):
    _open(browser, twins.as_uri())
    _ready(browser)
    browser.execute_script("window.explorer.setIndex(0)")
    browser.find_element("id", "play").click()
    last = browser.execute_script("return window.explorer.steps().length - 1")
    WebDriverWait(browser, 120).until(
        lambda b: b.execute_script("return window.explorer.state.index") == last)
    WebDriverWait(browser, 30).until(
        lambda b: b.execute_script("return window.explorer.state.playing") is None)
    times = browser.execute_script("return window.explorer.frameTimes")
    assert len(times) >= last


def test_a_search_highlights_the_token_in_every_twin(browser, twins, artifacts):
    _open(browser, twins.as_uri())
    _ready(browser)
    box = browser.find_element("id", "search")
    box.clear()
    box.send_keys("e")
    WebDriverWait(browser, 30).until(lambda b: b.execute_script(
        "return window.explorer.panels().every(v => v.div.dataset.selected === '101')"))
    lists = browser.execute_script(
        "return window.explorer.panels().map(v => v.list.querySelectorAll('li').length)")
    assert lists == [10, 10, 10]                                  # tied E, untied E, untied W
    trails = browser.execute_script(
        "return window.explorer.panels().map(v => Number(v.div.dataset.trail))")
    steps = browser.execute_script("return window.explorer.steps().length")
    assert trails == [steps] * 3                                  # the trail spans the run
    outlined = browser.execute_script(                            # the scatterplots outline
        "return window.explorer.idle().then(() => window.explorer.panels().map("  # them
        "v => v.plot.get('selectedPoints').length))")
    assert outlined == [10, 10, 10]
    browser.save_screenshot(str(artifacts / "explorer-twins-search.png"))
    assert _severe(browser) == [] and _remote(browser) == []


def test_the_neighbours_follow_the_slider(browser, twins, artifacts):
    # Regression: at step 0 (random initialisation) the list showed the neighbours of the last
    # snapshot, so a random embedding seemed to have meaningful neighbours already.
    _open(browser, twins.as_uri())
    _ready(browser)
    listed = ("return window.explorer.idle().then(() => window.explorer.panels().map(v => "
              "[Array.from(v.list.querySelectorAll('li')).map(li => li.textContent), "
              "v.div.dataset.nearFrame, v.div.parentNode.querySelector('.near-caption')"
              ".textContent]))")
    browser.execute_script("window.explorer.setIndex(window.explorer.steps().length - 1)")
    browser.find_element("id", "search").send_keys("e")
    WebDriverWait(browser, 30).until(lambda b: b.execute_script(
        "return window.explorer.panels().every(v => v.div.dataset.selected === '101')"))
    at_end = browser.execute_script(listed)
    last = browser.execute_script("return window.explorer.steps().length - 1")
    assert [frame for _, frame, _ in at_end] == [str(last)] * 3
    assert all(caption == "neighbours at step 30" for _, _, caption in at_end)
    browser.execute_script("window.explorer.setIndex(0)")
    at_start = browser.execute_script(listed)
    assert [frame for _, frame, _ in at_start] == ["0"] * 3
    assert all(caption == "neighbours at step 0" for _, _, caption in at_start)
    for (end, _, _), (start, _, _) in zip(at_end, at_start):
        assert len(start) == len(end) == 10 and start != end   # other vectors, other neighbours
    browser.save_screenshot(str(artifacts / "explorer-neighbours-step0.png"))


def test_hovering_a_point_names_it_and_a_click_selects_it_everywhere(browser, twins):
    _open(browser, twins.as_uri())
    _ready(browser)
    # A frame change keeps the hover index of the frame it was built for (the last one, at
    # load); the mouse over the panel has it rebuilt for the frame on screen.
    browser.execute_script("window.explorer.setIndex(0)")
    index_of = ("return window.explorer.idle().then(() => window.explorer.panels()"
                ".map(v => [v.indexed, v.frame]))")
    assert all(built != shown for built, shown in browser.execute_script(index_of))
    # The tied panel's outermost point (no neighbour under the mouse with it) and where the
    # scatterplot drew it, in CSS pixels from the canvas's top-left corner.
    token, x, y = browser.execute_script("""
        return window.explorer.idle().then(() => {
          const view = window.explorer.panels()[0], points = view.plot.get('points');
          const r = i => Math.hypot(points[i][0], points[i][1]);
          let far = 0;
          points.forEach((p, i) => { if (r(i) > r(far)) far = i; });
          return [view.run.tokens[far], ...view.plot.getScreenPosition(far)];
        });""")
    canvas = browser.find_elements("css selector", ".plot canvas")[0]
    size = canvas.size                    # selenium offsets count from the element's centre
    ActionChains(browser).move_to_element_with_offset(
        canvas, int(x - size["width"] / 2), int(y - size["height"] / 2)).perform()
    WebDriverWait(browser, 30).until(lambda b: b.execute_script(index_of)[0] == [0, 0])
    ActionChains(browser).move_by_offset(1, 0).move_by_offset(-1, 0).perform()  # hover anew
    WebDriverWait(browser, 30).until(
        lambda b: b.execute_script("return document.querySelector('.plot .tip').textContent")
        == token)                         # (textContent: the token may be a space)
    ActionChains(browser).click().perform()
    WebDriverWait(browser, 30).until(lambda b: b.execute_script(
        "return window.explorer.state.selected") == token)
    assert browser.find_element("id", "search").get_attribute("value") == token
    ids = browser.execute_script(
        "return window.explorer.panels().map(v => v.run.tokens.indexOf(arguments[0]))", token)
    selected = browser.execute_script(
        "return window.explorer.idle().then(() => window.explorer.panels().map("
        "v => Number(v.div.dataset.selected)))")
    assert selected == ids and min(ids) >= 0                      # in every twin
    assert _severe(browser) == [] and _remote(browser) == []


def test_the_tsne_projection_redraws_the_points_and_the_selection(browser, twins, tmp_path):
    pytest.importorskip("sklearn", reason="scikit-learn is in the test extra; install it")
    page = write_explorer([twins.parent / "tied"], tmp_path / "tsne.html", with_tsne=True)
    _open(browser, page.as_uri())
    _ready(browser)
    browser.execute_script("window.explorer.select('e')")
    pca = _first_x(browser, 0)
    browser.execute_script("const p = document.getElementById('projection');"
                           "p.value = 'tsne'; p.dispatchEvent(new Event('change'))")
    tsne = _first_x(browser, 0)
    assert np.abs(np.subtract(pca, tsne)).max() > 1e-3            # other coordinates
    assert max(map(abs, tsne)) <= 1                               # inside the plot
    state = browser.execute_script(
        "const v = window.explorer.panels()[0];"
        "return [v.div.dataset.trail, v.plot.get('selectedPoints').length]")
    assert state == ["1", 10]                 # one frame: the point itself, its neighbours
    assert _severe(browser) == [] and _remote(browser) == []


def test_the_spanish_page_draws_the_same_twins(browser, twins, artifacts):
    page = twins.with_name("twins.es.html")
    write_explorer([twins.parent / "tied", twins.parent / "untied"], page, lang="es")
    _open(browser, page.as_uri())
    _ready(browser)
    assert browser.find_element("id", "play").text == "reproducir"
    titles = [h.text for h in browser.find_elements("css selector", ".panel h2")]
    assert titles[0].endswith("E (atada: entrada y salida)") and titles[2].endswith("W (salida)")
    browser.execute_script("window.explorer.select('e')")
    drawn = browser.execute_script(
        "return window.explorer.idle().then(() => window.explorer.panels().map("
        "v => [v.plot.get('points').length, v.plot.get('selectedPoints').length]))")
    assert drawn == [[256, 10]] * 3                              # every byte token, 10 outlined
    browser.save_screenshot(str(artifacts / "explorer-twins-search-es.png"))
    assert _severe(browser) == [] and _remote(browser) == []


def test_a_live_page_picks_up_a_new_snapshot(browser, tmp_path, artifacts):
    run = tmp_path / "live"
    assert main(["train", *TINY, "--out", str(run)]) == 0
    index = run / "snapshots" / "index.jsonl"
    rows = index.read_text().splitlines()
    index.write_text("\n".join(rows[:-1]) + "\n")                 # as if still training
    server = make_server(LiveRuns([run], "en"), 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        _open(browser, f"http://127.0.0.1:{server.server_address[1]}/")
        _ready(browser)
        before = browser.execute_script("return window.explorer.steps().length")
        assert before == len(rows) - 1
        time.sleep(0.05)                  # a later mtime for the index, on coarse clocks too
        index.write_text("\n".join(rows) + "\n")                  # the run takes its snapshot
        WebDriverWait(browser, 60).until(
            lambda b: b.execute_script("return window.explorer.steps().length") == len(rows))
        assert browser.execute_script("return window.explorer.state.index") == len(rows) - 1
        browser.save_screenshot(str(artifacts / "explorer-live.png"))
        assert _severe(browser) == [] and _remote(browser) == []
        browser.get("about:blank")        # stop the page's polling before the server goes
    finally:
        server.shutdown()
        server.server_close()


def _big_run(folder: Path, tied: bool = True, vocab: int = 50_257, d: int = 16,
             frames: int = 24) -> Path:
    """A run folder with GPT-2's vocabulary size and snapshots drifting from a random start:
    a tied run keeps E, an untied one E and W (drifting to other targets), as `train` would."""
    rng = np.random.default_rng(0 if tied else 1)
    (folder / "snapshots").mkdir(parents=True)
    keys = ["E"] if tied else ["E", "W"]
    start = {k: rng.standard_normal((vocab, d)) * 0.02 for k in keys}
    target = {k: rng.standard_normal((vocab, d)) for k in keys}
    rows = []
    for k, step in enumerate(np.unique(np.geomspace(1, 1000, frames).astype(int))):
        t = k / (frames - 1)
        name = f"step-{step:06d}.safetensors"
        save_file({key: ((1 - t) * start[key] + t * target[key]).astype(np.float16)
                   for key in keys}, str(folder / "snapshots" / name))
        rows.append({"step": int(step), "file": name, "tied": tied, "probe_loss": 10.8 - 5 * t})
    (folder / "snapshots" / "index.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return folder


def _record(browser, page: Path, case: str, artifacts: Path, build_s: float) -> dict:
    """Open the page, step through 10 frames (each drawn before the next is asked for) and
    record load and frame times under `case` in explorer-timings.json (no assertion on them)."""
    t0 = time.perf_counter()
    _open(browser, page.as_uri())
    _ready(browser)
    load_s = time.perf_counter() - t0
    first = browser.execute_script(
        "return window.explorer.idle().then(() => window.explorer.panels().map(v => "
        "v.plot.get('points'))).then(ps => ps.map(p => [p.length, p[0][0], p[0][1]]))")
    assert all(n == 50_257 for n, _, _ in first)
    frame_ms = sorted(browser.execute_script("""
        const e = window.explorer;
        e.frameTimes.length = 0;
        return (async () => {
          for (let i = 0; i < 10; i++) { e.setIndex(i); await e.idle(); }
          return e.frameTimes.slice();
        })();"""))
    assert len(frame_ms) == 10
    moved = browser.execute_script(
        "return window.explorer.panels().map(v => v.plot.get('points')[0].slice(0, 2))")
    assert all(m != f[1:] for m, f in zip(moved, first))         # frame 9 is not the last
    # The floor under a frame: the library redrawing the same points, nothing recomputed
    # (the wait for the browser's next animation frame, then the WebGL draw of every panel).
    redraw_ms = sorted(browser.execute_script("""
        const plots = window.explorer.panels().map(v => v.plot), times = [];
        return (async () => {
          for (let i = 0; i < 10; i++) {
            const t = performance.now();
            await Promise.all(plots.map(p => p.drawAnnotations([])));
            times.push(performance.now() - t);
          }
          return times;
        })();"""))
    timings = {"vocab": 50_257, "panels": len(first),
               "page_MB": round(page.stat().st_size / 1e6, 1),
               "build_s": round(build_s, 2), "load_s": round(load_s, 2),
               "frame_ms_median": round(frame_ms[len(frame_ms) // 2], 1),
               "frame_ms_max": round(frame_ms[-1], 1),
               "redraw_ms_median": round(redraw_ms[len(redraw_ms) // 2], 1),
               "renderer": browser.execute_script(
                   "const g = document.createElement('canvas').getContext('webgl'),"
                   " e = g && g.getExtension('WEBGL_debug_renderer_info');"
                   "return e ? g.getParameter(e.UNMASKED_RENDERER_WEBGL) : 'unknown'")}
    record = artifacts.parent / "explorer-timings.json"
    try:
        recorded = json.loads(record.read_text())
    except (OSError, ValueError):
        recorded = {}
    recorded = recorded if "one_panel" in recorded or "twins" in recorded else {}
    recorded[case] = timings
    record.write_text(json.dumps(recorded, indent=1))
    print(f"explorer at V=50,257, {case}:", timings)
    browser.save_screenshot(str(artifacts / f"explorer-gpt2-size-{case}.png"))
    assert _severe(browser) == [] and _remote(browser) == []
    return timings


def test_a_gpt2_sized_vocabulary_loads_and_moves(browser, tmp_path, artifacts):
    t0 = time.perf_counter()
    page = write_explorer([_big_run(tmp_path / "gpt2-size")], tmp_path / "big.html")
    _record(browser, page, "one_panel", artifacts, time.perf_counter() - t0)
    shutil.rmtree(tmp_path / "gpt2-size")


def test_gpt2_sized_twins_load_and_move_in_all_three_panels(browser, tmp_path, artifacts):
    """A compare folder (tied/ and untied/ of the same vocabulary) at V = 50,257: three panels
    of 50,257 points (tied E | untied E | untied W) move together."""
    compare = tmp_path / "compare-gpt2-size"
    _big_run(compare / "tied")
    _big_run(compare / "untied", tied=False)
    t0 = time.perf_counter()
    page = write_explorer([compare], tmp_path / "big-twins.html")
    timings = _record(browser, page, "twins", artifacts, time.perf_counter() - t0)
    assert timings["panels"] == 3
    shutil.rmtree(compare)


def _overflows(browser) -> list[str]:
    """Every plot (a scatterplot's canvas, a metric chart) that reaches past its panel or past
    the window, and a page wider than the window (a sideways scroll cuts a plot off)."""
    return browser.execute_script("""
      const out = [], root = document.documentElement, inside = (a, b) =>
        a.left >= b.left - 1 && a.right <= b.right + 1 && a.top >= b.top - 1 && a.bottom <= b.bottom + 1;
      const view = {left: 0, top: -1e9, right: root.clientWidth, bottom: 1e9};
      if (root.scrollWidth > root.clientWidth) out.push(`page ${root.scrollWidth} > ${root.clientWidth}`);
      document.querySelectorAll('.panel').forEach((panel, i) => {
        const canvas = panel.querySelector('.plot canvas').getBoundingClientRect();
        if (!inside(canvas, panel.getBoundingClientRect())) out.push(`plot ${i} outside its panel`);
        if (!inside(canvas, view)) out.push(`plot ${i} outside the window`);
      });
      document.querySelectorAll('.metric').forEach(chart => {
        const svg = chart.querySelector('svg.main-svg').getBoundingClientRect();
        if (!inside(svg, chart.getBoundingClientRect())) out.push(`${chart.id} outside its box`);
        if (!inside(svg, view)) out.push(`${chart.id} outside the window`);
      });
      return out;""")


@pytest.mark.parametrize("width", [1280, 390])
def test_no_plot_is_cut_off_at_a_laptop_or_a_phone_width(browser, twins, artifacts, width):
    # Regression: at a phone's width the 430-pixel panels and 420-pixel charts reached past
    # the window (cut off, behind a sideways scroll), and a narrowed scatterplot drawn by a
    # renderer of the full size showed only the top-left part of its picture.
    browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False})
    try:
        _open(browser, twins.as_uri())
        _ready(browser)
        browser.execute_script("return window.explorer.idle()")
        assert _overflows(browser) == []
        # the shared WebGL canvas the panels draw in (explorer.js's `renderer`) is the size
        # of a panel's canvas, so the panel shows the whole picture, not its top-left part
        sizes = browser.execute_script(
            "const c = document.querySelector('.plot canvas');"
            "return [[c.width, c.height], [renderer.canvas.width, renderer.canvas.height]]")
        assert sizes[0] == sizes[1] and sizes[0][0] <= 420, sizes
        browser.save_screenshot(str(artifacts / f"explorer-at-{width}.png"))
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
