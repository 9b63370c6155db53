// The explorer page's code: panels of points (plotly scattergl, WebGL) over a timeline of
// snapshots, small metric plots linked to the slider, a search that highlights one token in
// every panel with its trail and its nearest neighbours. Data: see explorer/frames.py.
"use strict";
let DATA = JSON.parse(document.getElementById("data").textContent);
const W = WORDS;
const BUCKET_DASH = ["dot", "dashdot", "dash", "solid"];
const state = { index: 0, selected: null, projection: "pca", playing: null };
let panels = [];     // one per (run, matrix): {run, panel, div, list, coords, vectors, ...}
let steps = [];      // the union of every run's snapshot steps: the slider's positions
const frameTimes = [];  // ms to move every panel to a new frame (read by the browser tests)

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
// Colour by log frequency: -0.05 (never seen) is grey, 0..1 a viridis ramp. Numbers and a
// colour scale, not 50,000 colour strings: WebGL gets one buffer, nothing to parse per frame.
const COLOURS = [[0, "#bbbbbb"], [0.047, "#bbbbbb"], [0.048, "#440154"], [0.3, "#3b528b"],
                 [0.55, "#21918c"], [0.8, "#5ec962"], [1, "#fde725"]];
function stepOf(s) { return s === null ? Infinity : s; }
function frameAt(run, step) {      // the last snapshot of `run` at or before `step`
  let k = 0;
  run.steps.forEach((s, i) => { if (stepOf(s) <= step) k = i; });
  return k;
}
function panelName(view) {
  const key = view.panel.key;
  return `${view.run.run} · ${view.run.model} · ${key === "E" && view.run.tied ? W.tied_E : W[key]}`;
}

function xy(view, k) {             // 2-D coordinates of frame k (or t-SNE of the last one)
  const V = view.run.tokens.length;
  if (state.projection === "tsne" && view.tsne) {
    return { x: Array.from({ length: V }, (_, i) => view.tsne[2 * i]),
             y: Array.from({ length: V }, (_, i) => view.tsne[2 * i + 1]) };
  }
  const c = view.coords, s = view.panel.scale, off = k * V * 2;
  const x = new Float32Array(V), y = new Float32Array(V);
  for (let i = 0; i < V; i++) { x[i] = c[off + 2 * i] * s; y[i] = c[off + 2 * i + 1] * s; }
  return { x, y };
}

function neighbours(view, id) {    // 10 nearest rows by cosine in the last snapshot
  if (!view.vectors) return null;
  const d = view.panel.d, V = view.run.tokens.length, v = view.vectors;
  const norm = i => { let n = 0; for (let j = 0; j < d; j++) n += v[i * d + j] ** 2; return Math.sqrt(n) || 1e-12; };
  const q = norm(id), sims = [];
  for (let i = 0; i < V; i++) {
    if (i === id) continue;
    let dot = 0;
    for (let j = 0; j < d; j++) dot += v[i * d + j] * v[id * d + j];
    sims.push([dot / (q * norm(i)), i]);
  }
  sims.sort((a, b) => b[0] - a[0]);
  return sims.slice(0, 10);
}

function buildPanels() {
  const box = document.getElementById("panels");
  box.innerHTML = "";
  panels = [];
  DATA.runs.forEach(run => run.panels.forEach(panel => {
    const div = document.createElement("div"); div.className = "panel";
    const h = document.createElement("h2");
    const plot = document.createElement("div"); plot.className = "plot";
    const ol = document.createElement("ol"); ol.className = "neighbours";
    div.append(h, plot, ol); box.appendChild(div);
    const view = { run, panel, div: plot, list: ol, frame: -1,
                   coords: new Int16Array(bytes(panel.coords)),
                   vectors: panel.vectors ? half(bytes(panel.vectors)) : null,
                   tsne: panel.tsne ? new Float32Array(bytes(panel.tsne)) : null };
    h.textContent = panelName(view);
    const logMax = Math.log1p(Math.max(...run.counts, 1));
    const colours = run.counts.map(c => c > 0 ? Math.log1p(c) / logMax : -0.05);
    const R = 32767 * panel.scale * 1.05;
    const p = xy(view, panel.frames - 1);
    Plotly.newPlot(plot, [
      { type: "scattergl", mode: "markers", x: p.x, y: p.y, text: run.tokens,
        hovertemplate: "%{text}<extra></extra>", marker: { size: 4, color: colours, colorscale: COLOURS, cmin: -0.05, cmax: 1 } },
      { type: "scattergl", mode: "lines+markers", x: [], y: [], name: W.trail,
        line: { color: "#e4572e", width: 1.5 }, marker: { size: 4, color: "#e4572e" },
        hoverinfo: "skip" },
      { type: "scattergl", mode: "markers", x: [], y: [], hoverinfo: "skip",
        marker: { size: [], color: "rgba(0,0,0,0)", line: { color: "#e4572e", width: 2 } } },
    ], { margin: { l: 30, r: 10, t: 10, b: 25 }, showlegend: false, dragmode: "pan",
         xaxis: { range: [-R, R], zeroline: false }, yaxis: { range: [-R, R], zeroline: false } },
    { displaylogo: false, responsive: false, displayModeBar: "hover" });
    plot.on("plotly_click", ev => {
      const pt = ev.points.find(q => q.curveNumber === 0);
      if (pt) select(run.tokens[pt.pointNumber]);
    });
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

function buildMetrics() {
  const box = document.getElementById("metrics");
  box.innerHTML = "";
  const charts = [];
  const add = (id, title, traces) => {
    if (!traces.length || DATA.runs.every(r => r.steps.length < 2)) return;
    const div = document.createElement("div"); div.className = "metric"; div.id = `metric-${id}`;
    box.appendChild(div);
    Plotly.newPlot(div, traces, {
      title: { text: title, font: { size: 12 } }, margin: { l: 40, r: 10, t: 30, b: 30 },
      legend: { font: { size: 9 }, orientation: "h", y: -0.3 },
      xaxis: { type: "log", title: { text: `${W.step} + 1`, font: { size: 10 } } },
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
  panels.forEach(view => {
    const k = state.projection === "tsne" ? view.panel.frames - 1 : frameAt(view.run, step);
    if (k !== view.frame) {
      view.frame = k;
      drawFrame(view);
    }
  });
  const shown = stepOf(step) === Infinity ? W.final : `${W.step} ${step}`;
  document.getElementById("step-label").textContent = `${shown} (${state.index + 1}/${steps.length})`;
  document.getElementById("slider").value = String(state.index);
  charts.forEach(div => Plotly.relayout(div, { shapes: [{
    type: "line", xref: "x", yref: "paper", x0: stepOf(step) + 1, x1: stepOf(step) + 1,
    y0: 0, y1: 1, line: { color: "#e4572e", width: 1.5 } }] }));
  frameTimes.push(performance.now() - t0);
}

function drawFrame(view) {          // the points of view.frame and the selection: one restyle
  const p = xy(view, view.frame), sel = selection(view, p);
  Plotly.restyle(view.div, { x: [p.x, sel.trail.x, sel.ring.x], y: [p.y, sel.trail.y, sel.ring.y],
                             "marker.size": [4, 4, sel.ring.size] }, [0, 1, 2]);
}

function drawSelection(view) {      // only the selection changed: points stay where they are
  const sel = selection(view, xy(view, view.frame));
  Plotly.restyle(view.div, { x: [sel.trail.x, sel.ring.x], y: [sel.trail.y, sel.ring.y],
                             "marker.size": [4, sel.ring.size] }, [1, 2]);
}

function selection(view, here) {    // the selected token's trail and ring, its neighbour list
  const id = state.selected === null ? -1 : view.run.tokens.indexOf(state.selected);
  view.list.innerHTML = "";
  view.div.dataset.selected = String(id);
  const trail = { x: [], y: [] }, ring = { x: [], y: [], size: [] };
  if (id < 0) { view.div.dataset.trail = "0"; return { trail, ring }; }
  if (state.projection === "tsne") { trail.x.push(here.x[id]); trail.y.push(here.y[id]); }
  else {                             // the token's own point in every frame up to this one
    const V = view.run.tokens.length, s = view.panel.scale;
    for (let k = 0; k <= view.frame; k++) {
      trail.x.push(view.coords[(k * V + id) * 2] * s);
      trail.y.push(view.coords[(k * V + id) * 2 + 1] * s);
    }
  }
  ring.x.push(here.x[id]); ring.y.push(here.y[id]); ring.size.push(14);
  if (view.nearFor !== id) { view.near = neighbours(view, id); view.nearFor = id; }
  const near = view.near;
  (near || []).forEach(([sim, j]) => {
    ring.x.push(here.x[j]); ring.y.push(here.y[j]); ring.size.push(8);
    const li = document.createElement("li");
    li.textContent = `"${view.run.tokens[j]}" ${sim.toFixed(3)}`;  // labels come escaped once
    li.dataset.token = view.run.tokens[j];
    view.list.appendChild(li);
  });
  if (!near) view.list.textContent = W.no_vectors;
  view.div.dataset.trail = String(trail.x.length);
  return { trail, ring };
}

function select(token) {
  state.selected = token;
  document.getElementById("search").value = token;
  panels.forEach(drawSelection);
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
  projection.onchange = () => { state.projection = projection.value; panels.forEach(v => { v.frame = -1; }); showFrame(); };
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

window.explorer = { state, panels: () => panels, steps: () => steps, setIndex, play, select,
                    frameTimes, charts: () => charts };
build();
