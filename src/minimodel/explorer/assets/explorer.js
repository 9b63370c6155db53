// The explorer page's code: panels of points (regl-scatterplot, WebGL) over a timeline of
// snapshots, small metric plots (plotly.js) linked to the slider, a search that highlights one
// token in every panel with its trail and its nearest neighbours. Data: see explorer/frames.py.
//
// A frame change hands each panel's scatterplot the new positions (`draw(points)`): the
// library writes them into one WebGL texture and redraws, without rebuilding the plot.
"use strict";
let DATA = JSON.parse(document.getElementById("data").textContent);
const W = WORDS;
const BUCKET_DASH = ["dot", "dashdot", "dash", "solid"];
const state = { index: 0, selected: null, projection: "pca", playing: null };
let panels = [];     // one per (run, matrix): {run, panel, div, list, coords, vectors, ...}
let steps = [];      // the union of every run's snapshot steps: the slider's positions
const frameTimes = [];  // ms from a slider move to every panel drawn (read by the browser tests)

document.querySelectorAll("[data-w]").forEach(el => { el.textContent = W[el.dataset.w]; });

function bytes(b64) {
  const text = atob(b64), out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out.buffer;
}
function half(buffer) {            // float16 (IEEE 754 half) -> Float32Array
  const h = new Uint16Array(buffer), out = new Float32Array(h.length);
  for (let i = 0; i < h.length; i++) {
    const s = h[i] & 0x8000 ? -1 : 1, e = (h[i] >> 10) & 0x1f, m = h[i] & 0x3ff;
    out[i] = e === 0 ? s * m * 2 ** -24 : e === 31 ? (m ? NaN : s * Infinity)
                     : s * (1 + m / 1024) * 2 ** (e - 15);
  }
  return out;
}
// Colour by log frequency: index 0 (never seen) is grey, 1..32 a viridis ramp from rare to
// frequent. Each point carries its colour index, so WebGL looks colours up in one small table.
const VIRIDIS = [[0x44, 0x01, 0x54], [0x3b, 0x52, 0x8b], [0x21, 0x91, 0x8c], [0x5e, 0xc9, 0x62],
                 [0xfd, 0xe7, 0x25]];
const PALETTE = ["#bbbbbb", ...Array.from({ length: 32 }, (_, i) => {
  const t = i / 31 * (VIRIDIS.length - 1), k = Math.min(Math.floor(t), VIRIDIS.length - 2);
  const rgb = VIRIDIS[k].map((c, j) => Math.round(c + (VIRIDIS[k + 1][j] - c) * (t - k)));
  return `#${rgb.map(c => c.toString(16).padStart(2, "0")).join("")}`;
})];
const colourIndex = (count, logMax) =>        // a token's row of PALETTE
  count > 0 ? 1 + Math.round(Math.log1p(count) / logMax * 31) : 0;
const HIGHLIGHT = "#e4572e";
const PLOT_WIDTH = 420, PLOT_HEIGHT = 400;   // CSS pixels, as .plot in page.py
const PANEL_CHROME = 20;   // a panel's padding and borders around its plot, CSS pixels (rounded up)
function stepOf(s) { return s === null ? Infinity : s; }
function stepName(s) { return stepOf(s) === Infinity ? W.final : `${W.step} ${s}`; }
function frameAt(run, step) {      // the last snapshot of `run` at or before `step`
  let k = 0;
  run.steps.forEach((s, i) => { if (stepOf(s) <= step) k = i; });
  return k;
}
function panelName(view) {
  const key = view.panel.key;
  return `${view.run.run} · ${view.run.model} · ${key === "E" && view.run.tied ? W.tied_E : W[key]}`;
}

// The scatterplot draws x, y in [-1, 1]; int16 coordinates span ±32767 (times the panel's
// scale), so dividing by 32767 · 1.05 leaves a 5 % margin. t-SNE is scaled to its largest value.
const SPAN = 32767 * 1.05;
const showsTsne = view => state.projection === "tsne" && view.tsne !== null;
function place(view, k) {          // write frame k's 2-D coordinates (or t-SNE's) into view.points
  const points = view.points, V = points.length;
  if (showsTsne(view)) {
    const t = view.tsne, m = 1.05 * t.reduce((a, b) => Math.max(a, Math.abs(b)), 1e-12);
    for (let i = 0; i < V; i++) { points[i][0] = t[2 * i] / m; points[i][1] = t[2 * i + 1] / m; }
    return;
  }
  const c = view.coords, off = k * V * 2;
  for (let i = 0; i < V; i++) {
    points[i][0] = c[off + 2 * i] / SPAN;
    points[i][1] = c[off + 2 * i + 1] / SPAN;
  }
}

// The vectors the page carries for a frame: frame k's own when shipped, else the nearest
// shipped frame's (the caption under the list then names its step).
function searchFrame(view, k) {
  let best = null;
  view.vectors.forEach(f => { if (!best || Math.abs(f.frame - k) < Math.abs(best.frame - k)) best = f; });
  return best;
}
function neighbours(f, d, id) {    // 10 nearest rows of frame f's vectors by cosine
  const v = f.data, V = v.length / d;
  if (!f.norms) {                  // once per frame: every row's length
    f.norms = new Float32Array(V);
    for (let i = 0; i < V; i++) {
      let n = 0;
      for (let j = 0; j < d; j++) n += v[i * d + j] ** 2;
      f.norms[i] = Math.sqrt(n) || 1e-12;
    }
  }
  const sims = [];
  for (let i = 0; i < V; i++) {
    if (i === id) continue;
    let dot = 0;
    for (let j = 0; j < d; j++) dot += v[i * d + j] * v[id * d + j];
    sims.push([dot / (f.norms[id] * f.norms[i]), i]);
  }
  sims.sort((a, b) => b[0] - a[0]);
  return sims.slice(0, 10);
}

// One WebGL context for every panel, its canvas the size of one panel: the scatterplots draw
// into it in turn and copy the picture to their own canvas. (The library's default is a
// window-sized canvas, which costs a software renderer several times more per frame.) Its
// size must be the panels': a larger one draws the view for its own size and the panel shows
// only the top-left corner of it.
let renderer = null, rendererSize = "";
function panelRenderer(size) {
  if (!renderer || rendererSize !== `${size.width}x${size.height}`) {
    const canvas = document.createElement("canvas");
    canvas.width = size.width * devicePixelRatio; canvas.height = size.height * devicePixelRatio;
    renderer = reglScatterplot.createRenderer({ canvas });
    rendererSize = `${size.width}x${size.height}`;
  }
  return renderer;
}

// The scatterplots' size: 420 x 400 CSS pixels, narrowed (same shape) when the page is
// narrower than a panel (a phone), so no plot reaches past the window and gets cut off.
function plotSize(box) {
  const width = Math.max(160, Math.min(PLOT_WIDTH, box.clientWidth - PANEL_CHROME));
  return { width, height: Math.round(width * PLOT_HEIGHT / PLOT_WIDTH) };
}

function buildPanels() {
  panels.forEach(view => { view.gone = true; view.plot.destroy(); });  // a live reload: anew
  const box = document.getElementById("panels");
  box.innerHTML = "";
  panels = [];
  const size = plotSize(box);
  box.style.setProperty("--plot-width", `${size.width}px`);
  box.style.setProperty("--plot-height", `${size.height}px`);
  DATA.runs.forEach(run => run.panels.forEach(panel => {
    const div = document.createElement("div"); div.className = "panel";
    const h = document.createElement("h2");
    const plot = document.createElement("div"); plot.className = "plot";
    const canvas = document.createElement("canvas"), tip = document.createElement("span");
    tip.className = "tip"; tip.hidden = true;
    plot.append(canvas, tip);
    const ol = document.createElement("ol"); ol.className = "neighbours";
    const caption = document.createElement("p"); caption.className = "near-caption";
    div.append(h, plot, caption, ol); box.appendChild(div);
    const logMax = Math.log1p(Math.max(...run.counts, 1));
    const view = { run, panel, div: plot, list: ol, caption, frame: -1, drawing: null,
                   again: false, coords: new Int16Array(bytes(panel.coords)),
                   vectors: panel.vectors.map(f => ({ frame: f.frame, data: half(bytes(f.data)) })),
                   tsne: panel.tsne ? new Float32Array(bytes(panel.tsne)) : null,
                   // [x, y, colour index, unused] per token: the library's point format,
                   // allocated once; a frame change only writes x and y.
                   points: run.counts.map(c => [0, 0, colourIndex(c, logMax), 0]) };
    h.textContent = panelName(view);
    view.plot = reglScatterplot.createScatterplot({
      renderer: panelRenderer(size), canvas, width: size.width, height: size.height,
      backgroundColor: "#ffffff",
      pointSize: 4, pointColor: PALETTE, colorBy: "valueA", opacity: 0.9,
      pointColorActive: HIGHLIGHT, pointSizeSelected: 3, pointOutlineWidth: 2,
      annotationLineColor: HIGHLIGHT, annotationLineWidth: 1.5 });
    view.plot.subscribe("select", ({ points }) => {           // a click on a point
      if (points.length) select(run.tokens[points[0]]);
    });
    view.plot.subscribe("deselect", () => drawSelection(view));   // a click on empty space
    view.plot.subscribe("pointover", i => { tip.textContent = run.tokens[i]; tip.hidden = false; });
    view.plot.subscribe("pointout", () => { tip.hidden = true; });
    canvas.addEventListener("pointermove", () => indexPanel(view));
    panels.push(view);
  }));
}

function metricTraces(key, label) {
  const traces = [];
  DATA.runs.forEach((run, r) => {
    const series = run.metrics[key];
    if (!series) return;
    traces.push({ type: "scatter", mode: "lines+markers", name: `${run.run} ${label || ""}`.trim(),
                  x: run.steps.map(s => stepOf(s) + 1), y: series,
                  line: { dash: r ? "dash" : "solid" }, marker: { size: 4 } });
  });
  return traces;
}

// The metric charts' x axis: step + 1 on a log scale, a tick at every power of ten up to the
// last step (1000 included), and a little room at both ends so no curve runs into the frame.
function stepAxis() {
  const last = Math.max(2, ...DATA.runs.map(r => Math.max(...r.steps.map(s => stepOf(s) + 1))));
  const ticks = [];
  for (let t = 1; t <= last * 1.0001; t *= 10) ticks.push(t);
  const pad = 0.04 * Math.log10(last);
  return { type: "log", range: [-pad, Math.log10(last) + pad], tickvals: ticks,
           ticktext: ticks.map(String), title: { text: `${W.step} + 1`, font: { size: 10 } } };
}

function buildMetrics() {
  const box = document.getElementById("metrics");
  box.innerHTML = "";
  const charts = [];
  const xaxis = stepAxis();
  const add = (id, title, traces) => {
    if (!traces.length || DATA.runs.every(r => r.steps.length < 2)) return;
    const div = document.createElement("div"); div.className = "metric"; div.id = `metric-${id}`;
    box.appendChild(div);
    Plotly.newPlot(div, traces, {
      title: { text: title, font: { size: 12 } }, margin: { l: 40, r: 10, t: 30, b: 30 },
      legend: { font: { size: 9 }, orientation: "h", y: -0.3 },
      xaxis,
    }, { displaylogo: false, responsive: false, displayModeBar: false });
    charts.push(div);
  };
  add("loss", W.probe_loss, metricTraces("probe_loss"));
  add("erank", W.erank, [...metricTraces("erank_E", "E"), ...metricTraces("erank_W", "W")]);
  const share = metricTraces("lookup_share", W.overall);
  DATA.runs.forEach(run => {
    const by = run.metrics.lookup_share_by_bucket;
    if (!by || !run.tied) return;
    W.buckets.forEach((name, b) => share.push({
      type: "scatter", mode: "lines", name: `${run.run} ${name}`, x: run.steps.map(s => stepOf(s) + 1),
      y: by.map(row => row[b]), line: { dash: BUCKET_DASH[b], width: 1 } }));
  });
  add("ledger", W.lookup_share, share);
  add("churn", W.churn, [...metricTraces("churn_E", "E"), ...metricTraces("churn_W", "W")]);
  const norms = [];
  DATA.runs.forEach(run => (run.metrics.norm_E ? [["E", run.metrics.norm_E]] : []).forEach(([key, rows]) =>
    W.buckets.forEach((name, b) => norms.push({
      type: "scatter", mode: "lines", name: `${run.run} ${key} ${name}`,
      x: run.steps.map(s => stepOf(s) + 1), y: rows.map(row => row[b]),
      line: { dash: BUCKET_DASH[b], width: 1 } }))));
  add("norm", W.norm, norms);
  return charts;
}
let charts = [];

function showFrame() {
  const t0 = performance.now();
  const step = steps[state.index];
  const drawn = panels.map(view => {
    const k = state.projection === "tsne" ? view.panel.frames - 1 : frameAt(view.run, step);
    if (k === view.frame) return view.drawing;
    view.frame = k;
    return drawFrame(view);
  });
  const shown = stepName(step);
  document.getElementById("step-label").textContent = `${shown} (${state.index + 1}/${steps.length})`;
  document.getElementById("slider").value = String(state.index);
  charts.forEach(div => Plotly.relayout(div, { shapes: [{
    type: "line", xref: "x", yref: "paper", x0: stepOf(step) + 1, x1: stepOf(step) + 1,
    y0: 0, y1: 1, line: { color: HIGHLIGHT, width: 1.5 } }] }));
  Promise.all(drawn).then(() => frameTimes.push(performance.now() - t0));
}

// One draw at a time per panel (the library refuses a second while one runs): a frame asked
// for meanwhile is drawn when the current one is on screen. The points, the outlined
// neighbours and the trail all change before the library's next animation frame, so the
// panel is rendered once per frame. Resolves once view.frame is on screen.
//
// The hover index. With every `draw` the library builds a k-d tree of the points (which
// point is under the mouse?): at V = 50,257 that costs more than writing the positions. A
// frame change hands it the tree it already has instead (`spatialIndex`: taken as is), so
// the tree may lag behind the points; it is rebuilt for the frame on screen when the mouse
// moves over that panel (indexPanel). Meanwhile hover can miss a point that moved, never name
// a wrong one: the library checks the points the tree proposes at their current positions.
function drawFrame(view) {
  if (view.gone) return null;
  if (view.drawing) { view.again = true; return view.drawing; }
  place(view, view.frame);
  const sel = selection(view);
  const drawnFrame = view.frame, building = view.wantIndex || !view.index;
  view.drawing = Promise.all([
    view.plot.draw(view.points, { zDataType: "categorical", preventFilterReset: true,
                                  select: sel.near,
                                  spatialIndex: building ? undefined : view.index }),
    view.plot.drawAnnotations(sel.marks),
  ]).then(() => {
    if (building) {                 // the library built a tree of this frame: keep it
      view.index = view.plot.get("spatialIndex");
      view.indexed = drawnFrame;
      view.wantIndex = false;
    }
    view.drawing = null;
    if (view.again) { view.again = false; return drawFrame(view); }
  });
  return view.drawing;
}

function indexPanel(view) {         // the mouse is over the panel: a tree of what it shows
  if (view.frame < 0 || view.indexed === view.frame || view.wantIndex) return;
  view.wantIndex = true;
  drawFrame(view);
}

function drawSelection(view) {      // only the selection changed: points stay where they are
  const sel = selection(view);
  view.plot.select(sel.near, { preventEvent: true });
  return view.plot.drawAnnotations(sel.marks);
}

// The selected token's trail (a line through its point in every frame so far), a ring around
// it, its nearest neighbours (outlined by the scatterplot) and their list under the panel.
function selection(view) {
  const id = state.selected === null ? -1 : view.run.tokens.indexOf(state.selected);
  view.list.innerHTML = "";
  view.div.dataset.selected = String(id);
  if (id < 0) { view.div.dataset.trail = "0"; return { near: [], marks: [] }; }
  const [x, y] = view.points[id], trail = [];
  if (showsTsne(view)) trail.push([x, y]);   // t-SNE has one frame: no path
  else {                             // the token's own point in every frame up to this one
    const V = view.points.length;
    for (let k = 0; k <= view.frame; k++) {
      trail.push([view.coords[(k * V + id) * 2] / SPAN, view.coords[(k * V + id) * 2 + 1] / SPAN]);
    }
  }
  const ring = Array.from({ length: 25 }, (_, a) => [x + 0.04 * Math.cos(a * Math.PI / 12),
                                                     y + 0.04 * Math.sin(a * Math.PI / 12)]);
  const marks = [{ vertices: ring, lineWidth: 2.5 }];
  if (trail.length > 1) marks.push({ vertices: trail });
  // The neighbours of the frame on screen (t-SNE maps the last one), not of the end of training.
  const shown = showsTsne(view) ? view.panel.frames - 1 : view.frame;
  const f = view.vectors.length ? searchFrame(view, shown) : null;
  const key = f ? `${id}@${f.frame}` : null;
  if (view.nearFor !== key) { view.near = f ? neighbours(f, view.panel.d, id) : null; view.nearFor = key; }
  (view.near || []).forEach(([sim, j]) => {
    const li = document.createElement("li");
    li.textContent = `"${view.run.tokens[j]}" ${sim.toFixed(3)}`;  // labels come escaped once
    li.dataset.token = view.run.tokens[j];
    view.list.appendChild(li);
  });
  view.caption.textContent = !f ? W.no_vectors : (f.frame === shown ? W.near_at : W.near_nearest)
    .replace("{step}", stepName(view.run.steps[f.frame]));
  view.div.dataset.nearFrame = f ? String(f.frame) : "";
  view.div.dataset.trail = String(trail.length);
  return { near: (view.near || []).map(([, j]) => j), marks };
}

function select(token) {
  state.selected = token;
  document.getElementById("search").value = token;
  panels.forEach(view => {
    if (view.drawing) view.again = true;     // the frame being drawn has the old selection
    else if (view.frame >= 0) drawSelection(view);
  });
}

function setIndex(i) { state.index = Math.max(0, Math.min(steps.length - 1, i)); showFrame(); }
function play() {
  const button = document.getElementById("play");
  if (state.playing) { clearInterval(state.playing); state.playing = null; button.textContent = W.play; return; }
  if (state.index >= steps.length - 1) setIndex(0);
  button.textContent = W.pause;
  state.playing = setInterval(() => {
    if (state.index >= steps.length - 1) { play(); return; }
    setIndex(state.index + 1);
  }, 250);
}

let built = false;
function build() {
  const wasAtEnd = !built || state.index >= steps.length - 1;
  steps = [...new Set(DATA.runs.flatMap(run => run.steps.map(stepOf)))].sort((a, b) => a - b)
    .map(s => (s === Infinity ? null : s));
  buildPanels();
  charts = buildMetrics();
  const slider = document.getElementById("slider");
  slider.max = String(steps.length - 1);
  slider.oninput = () => setIndex(Number(slider.value));
  document.getElementById("play").textContent = W.play;
  document.getElementById("play").onclick = play;
  const projection = document.getElementById("projection");
  projection.innerHTML = "";
  ["pca", ...(DATA.runs.some(r => r.panels.some(p => p.tsne)) ? ["tsne"] : [])].forEach(k => {
    const o = document.createElement("option"); o.value = k; o.textContent = W[k]; projection.appendChild(o); });
  projection.value = state.projection;
  projection.onchange = () => {
    state.projection = projection.value;
    panels.forEach(v => { v.frame = -1; v.indexed = null; });   // other coordinates
    showFrame();
  };
  const list = document.getElementById("token-list");
  list.innerHTML = "";
  [...new Set(DATA.runs.flatMap(run => run.tokens))].slice(0, 5000).forEach(t => {
    const o = document.createElement("option"); o.value = t; list.appendChild(o); });
  const frames = DATA.runs.reduce((n, r) => Math.max(n, r.steps.length), 0);
  document.getElementById("status").textContent =
    `${DATA.runs.length} ${W.runs}, ${frames} ${W.frames}. ${W.search_hint}.` + (DATA.live ? ` ${W.live}.` : "");
  state.index = wasAtEnd ? steps.length - 1 : Math.min(state.index, steps.length - 1);
  built = true;
  showFrame();
  if (state.selected !== null) select(state.selected);
}

document.getElementById("search").addEventListener("input", e => {
  const t = e.target.value;
  if (DATA.runs.some(run => run.tokens.includes(t))) select(t);
});

if (DATA.live) {          // `minimodel explore --serve`: ask the server for new snapshots
  setInterval(() => {
    fetch("data.json", { cache: "no-store" }).then(r => r.json()).then(fresh => {
      const before = DATA.runs.map(r => r.steps.length).join(","), after = fresh.runs.map(r => r.steps.length).join(",");
      if (before !== after) { DATA = fresh; build(); }
    }).catch(() => {});
  }, 1500);
}

// For the browser tests: idle() resolves when every panel has drawn what was asked.
const idle = () => Promise.all(panels.map(view => view.drawing)).then(() => undefined);
window.explorer = { state, panels: () => panels, steps: () => steps, setIndex, play, select,
                    frameTimes, charts: () => charts, idle };
build();
