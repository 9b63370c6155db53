"""The embedding explorer: one self-contained HTML page to look at trained embeddings.

    minimodel explore runs/gpt-tied runs/gpt-untied --out explorer.html

For each run it shows every matrix that holds token vectors — the tied model's one matrix E,
the untied model's input matrix E and output matrix W — side by side, each as a scatter plot
of a projection of its rows (PCA in 2-D or 3-D; with ``--tsne``, t-SNE too, from scikit-learn),
coloured by how often the token occurs in the run's corpus. A search box finds a token and
lists its nearest neighbours by cosine similarity in every matrix, so you can see whether a
tied matrix, built for two roles, arranges tokens like either of the untied ones.

Everything is in the file: the data as JSON, the drawing code as a few hundred lines of plain
JavaScript on a <canvas>. It opens from ``file://`` with no network and no server.

Maths. PCA: centre the rows (X - mean), take the SVD X = U S V^T, and plot X V[:, :k], the
coordinates along the k directions of largest variance. Cosine neighbours: normalise each
row to unit length, then the similarity of all pairs is one product Xn @ Xn.T.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from minimodel._fileio import atomic_write_text

NEIGHBOURS = 10
MAX_POINTS = 20_000  # a canvas draws this many points smoothly; bigger vocabularies refuse


def pca(matrix: np.ndarray, k: int) -> np.ndarray:
    """Coordinates of the rows along the ``k`` principal directions, (V, k) float32."""
    centred = matrix - matrix.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return (centred @ vt[:k].T).astype(np.float32)


def tsne(matrix: np.ndarray, seed: int = 0) -> np.ndarray:
    """2-D t-SNE coordinates of the rows (scikit-learn; the same seed gives the same picture).

    t-SNE keeps each point's nearest neighbours near and lets far distances go, so clusters
    show that PCA's straight projection may overlap. It is slow (about 40 s for 3,000 rows on
    two cores), hence opt-in.
    """
    try:
        from sklearn.manifold import TSNE
    except ImportError:
        raise ValueError("t-SNE needs scikit-learn: pip install scikit-learn (or the docs "
                         "extra: pip install -e '.[docs]'), or leave out --tsne") from None
    perplexity = float(min(30, max(2, (len(matrix) - 1) // 3)))
    return TSNE(2, perplexity=perplexity, init="pca", random_state=seed).fit_transform(
        matrix).astype(np.float32)


def cosine_neighbours(matrix: np.ndarray, k: int = NEIGHBOURS) -> tuple[np.ndarray, np.ndarray]:
    """For each row, the ``k`` most cosine-similar other rows: (ids (V, k), similarities)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.maximum(norms, 1e-12)
    k = min(k, len(matrix) - 1)
    ids = np.empty((len(matrix), k), dtype=np.int64)
    sims = np.empty((len(matrix), k), dtype=np.float32)
    for lo in range(0, len(matrix), 2048):  # blocks: a (2048, V) similarity slab at a time
        block = unit[lo:lo + 2048] @ unit.T  # (b, V)
        block[np.arange(len(block)), np.arange(lo, lo + len(block))] = -np.inf  # not itself
        top = np.argpartition(-block, k, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(block, top, axis=1), axis=1)
        ids[lo:lo + len(block)] = np.take_along_axis(top, order, axis=1)
        sims[lo:lo + len(block)] = np.take_along_axis(block, ids[lo:lo + len(block)], axis=1)
    return ids, sims


def _labels_and_counts(run_dir: Path, model: Any) -> tuple[list[str], np.ndarray]:
    """Token labels and their counts in the run's corpus (zeros when it cannot be read)."""
    from minimodel.data import load_corpus
    from minimodel.data.cbow import words
    from minimodel.training.tasks import load_any_tokenizer

    tok = load_any_tokenizer(run_dir / "tokenizer.json")
    vocab = model.config.vocab_size
    if hasattr(tok, "itos"):
        labels = list(tok.itos)
    else:
        labels = [tok.id_to_token_str(i) for i in range(tok.vocab_size)]
    labels = (labels + [f"<{i}>" for i in range(len(labels), vocab)])[:vocab]
    counts = np.zeros(vocab, dtype=np.int64)
    try:
        info = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        corpus = info.get("config", {}).get("corpus")
        text = load_corpus(corpus)
        ids = (tok.encode_words(words(text)) if hasattr(tok, "itos")
               else np.asarray(tok.encode(text, allowed_special=False)))
        counts = np.bincount(ids, minlength=vocab)[:vocab]
    except (OSError, ValueError, KeyError):
        pass  # the colours then say "unknown frequency"; everything else still works
    return labels, counts


def run_panels(run_dir: str | os.PathLike, with_tsne: bool = False) -> dict[str, Any]:
    """The explorer data of one run: its label, tie, tokens, counts and one panel per matrix."""
    import minimodel as mm
    from minimodel.interop._files import resolve_checkpoint

    run_dir = Path(run_dir)
    weights, _ = resolve_checkpoint(run_dir)
    model = mm.load(weights)
    if model.config.vocab_size > MAX_POINTS:
        raise ValueError(f"{run_dir}: {model.config.vocab_size} tokens are more than the "
                         f"explorer draws ({MAX_POINTS}); use `minimodel export --format "
                         "projector` and the TensorFlow Embedding Projector instead")
    labels, counts = _labels_and_counts(run_dir if run_dir.is_dir() else weights.parent, model)
    matrices = {"E (tied: input and output)" if model.tied else "E (input)":
                model.get_input_embeddings().weight.data}
    if not model.tied:
        matrices["W (output)"] = model.lm_head.weight.data
    panels = []
    for name, matrix in matrices.items():
        matrix = np.asarray(matrix, dtype=np.float64)
        ids, sims = cosine_neighbours(matrix)
        projections = {"pca2": pca(matrix, 2).round(5).tolist(),
                       "pca3": pca(matrix, 3).round(5).tolist()}
        if with_tsne:
            projections["tsne2"] = tsne(matrix).round(4).tolist()
        panels.append({"name": name, "projections": projections,
                       "neighbours": ids.tolist(), "similarity": sims.round(4).tolist()})
    return {"run": run_dir.name, "model": type(model).__name__, "tied": bool(model.tied),
            "tokens": labels, "counts": counts.tolist(), "panels": panels}


def explorer_html(runs: list[dict[str, Any]], title: str = "minimodel embedding explorer") -> str:
    """The page: data as JSON inside a <script type="application/json">, then the code."""
    data = json.dumps({"runs": runs}, ensure_ascii=False, separators=(",", ":"))
    data = data.replace("</", "<\\/")  # a token "</script>" must not end the script element
    return (_PAGE.replace("__TITLE__", html.escape(title))
            .replace("__DATA__", data).replace("__SCRIPT__", _SCRIPT))


def write_explorer(run_dirs: list[str | os.PathLike], out: str | os.PathLike,
                   with_tsne: bool = False) -> Path:
    """Build the explorer for ``run_dirs`` into the HTML file ``out`` (atomically)."""
    if not run_dirs:
        raise ValueError("give at least one run folder, e.g. runs/gpt-tied")
    runs = [run_panels(d, with_tsne) for d in run_dirs]
    return atomic_write_text(out, explorer_html(runs))


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1rem; color: #222; }
header { display: flex; gap: 1rem; align-items: center; flex-wrap: wrap; }
#panels { display: flex; flex-wrap: wrap; gap: 1rem; margin-top: 1rem; }
.panel { border: 1px solid #ccc; border-radius: 6px; padding: .5rem; }
.panel h2 { font-size: 1rem; margin: .2rem 0 .5rem; }
canvas { display: block; background: #fafafa; cursor: crosshair; }
ol.neighbours { font-family: ui-monospace, monospace; font-size: .85rem; margin: .4rem 0; }
#tooltip { position: fixed; pointer-events: none; background: #222; color: #fff;
           padding: 2px 6px; border-radius: 3px; font-size: .8rem; display: none; }
.legend { font-size: .8rem; color: #555; }
</style></head>
<body>
<header>
  <h1 style="font-size:1.3rem;margin:0">Embedding explorer</h1>
  <label>token <input id="search" list="token-list" placeholder="e.g. king" autocomplete="off"></label>
  <datalist id="token-list"></datalist>
  <label>projection <select id="projection"></select></label>
  <label id="angle-label">rotate <input id="angle" type="range" min="0" max="360" value="30"></label>
  <span class="legend">colour: token frequency in the corpus (dark = rare, yellow = frequent);
  grey = unknown</span>
</header>
<p id="status" class="legend"></p>
<div id="panels"></div>
<div id="tooltip"></div>
<script type="application/json" id="data">__DATA__</script>
<script>__SCRIPT__</script>
</body></html>
"""

_SCRIPT = r"""
"use strict";
const DATA = JSON.parse(document.getElementById("data").textContent);
const SIZE = 420, PAD = 12;
const state = { projection: "pca2", angle: 30, selected: null };
const views = [];   // one per panel: {run, panel, canvas, list, xy}

function colour(t) {            // t in [0, 1] -> a viridis-like ramp
  const stops = [[68, 1, 84], [59, 82, 139], [33, 145, 140], [94, 201, 98], [253, 231, 37]];
  const x = Math.min(Math.max(t, 0), 1) * (stops.length - 1), i = Math.min(Math.floor(x), 3);
  const f = x - i, a = stops[i], b = stops[i + 1];
  return `rgb(${a.map((v, k) => Math.round(v + f * (b[k] - v))).join(",")})`;
}

function coordinates(panel) {   // 2-D screen coordinates of every point
  const pts = panel.projections[state.projection] || panel.projections.pca2;
  let xy = pts;
  if (state.projection === "pca3") {
    const c = Math.cos(state.angle * Math.PI / 180), s = Math.sin(state.angle * Math.PI / 180);
    xy = pts.map(p => [c * p[0] + s * p[2], p[1]]);
  }
  let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
  for (const [x, y] of xy) { minX = Math.min(minX, x); maxX = Math.max(maxX, x);
                             minY = Math.min(minY, y); maxY = Math.max(maxY, y); }
  const sx = (SIZE - 2 * PAD) / ((maxX - minX) || 1), sy = (SIZE - 2 * PAD) / ((maxY - minY) || 1);
  return xy.map(([x, y]) => [PAD + (x - minX) * sx, SIZE - PAD - (y - minY) * sy]);
}

function draw(view) {
  const ctx = view.canvas.getContext("2d"), run = view.run;
  view.xy = coordinates(view.panel);
  ctx.clearRect(0, 0, SIZE, SIZE);
  const logMax = Math.log1p(Math.max(...run.counts, 1));
  let drawn = 0;
  view.xy.forEach(([x, y], i) => {
    ctx.fillStyle = run.counts[i] > 0 ? colour(Math.log1p(run.counts[i]) / logMax) : "#bbb";
    ctx.fillRect(x - 1.5, y - 1.5, 3, 3);
    drawn += 1;
  });
  view.canvas.dataset.points = String(drawn);
  const sel = state.selected === null ? -1 : run.tokens.indexOf(state.selected);
  view.list.innerHTML = "";
  if (sel >= 0) {
    const ids = view.panel.neighbours[sel], sims = view.panel.similarity[sel];
    ctx.strokeStyle = "#e4572e"; ctx.lineWidth = 1;
    ids.forEach(j => { const [x, y] = view.xy[j]; ctx.strokeRect(x - 3, y - 3, 6, 6); });
    const [x, y] = view.xy[sel];
    ctx.fillStyle = "#e4572e"; ctx.beginPath(); ctx.arc(x, y, 6, 0, 2 * Math.PI); ctx.fill();
    ids.forEach((j, k) => {
      const li = document.createElement("li");
      li.textContent = `${JSON.stringify(run.tokens[j])}  ${sims[k].toFixed(3)}`;
      li.dataset.token = run.tokens[j];
      view.list.appendChild(li);
    });
  }
}

function redraw() { views.forEach(draw); }

function build() {
  const projections = new Set();
  DATA.runs.forEach(run => run.panels.forEach(p => Object.keys(p.projections)
                                                    .forEach(k => projections.add(k))));
  const names = { pca2: "PCA 2-D", pca3: "PCA 3-D", tsne2: "t-SNE 2-D" };
  const select = document.getElementById("projection");
  [...projections].forEach(k => { const o = document.createElement("option");
                                  o.value = k; o.textContent = names[k] || k; select.appendChild(o); });
  select.onchange = () => { state.projection = select.value; updateAngle(); redraw(); };
  const tokens = new Set();
  DATA.runs.forEach(run => run.tokens.forEach(t => tokens.add(t)));
  const list = document.getElementById("token-list");
  [...tokens].slice(0, 5000).forEach(t => { const o = document.createElement("option");
                                            o.value = t; list.appendChild(o); });
  const container = document.getElementById("panels");
  DATA.runs.forEach(run => run.panels.forEach(panel => {
    const div = document.createElement("div"); div.className = "panel";
    const h = document.createElement("h2");
    h.textContent = `${run.run} · ${run.model} · ${panel.name}`;
    const canvas = document.createElement("canvas"); canvas.width = SIZE; canvas.height = SIZE;
    const ol = document.createElement("ol"); ol.className = "neighbours";
    div.append(h, canvas, ol); container.appendChild(div);
    const view = { run, panel, canvas, list: ol, xy: [] };
    canvas.addEventListener("mousemove", e => hover(view, e));
    canvas.addEventListener("mouseleave", () => { tooltip.style.display = "none"; });
    canvas.addEventListener("click", e => { const i = nearest(view, e);
      if (i >= 0) { search.value = run.tokens[i]; select_(run.tokens[i]); } });
    views.push(view);
  }));
  document.getElementById("status").textContent =
    `${DATA.runs.length} run(s), ${views.length} matrices; search a token or click a point.`;
  updateAngle(); redraw();
}

function updateAngle() {
  document.getElementById("angle-label").style.display = state.projection === "pca3" ? "" : "none";
}

const tooltip = document.getElementById("tooltip");
function nearest(view, e) {
  const r = view.canvas.getBoundingClientRect(), mx = e.clientX - r.left, my = e.clientY - r.top;
  let best = -1, bestD = 64;
  view.xy.forEach(([x, y], i) => { const d = (x - mx) ** 2 + (y - my) ** 2;
                                   if (d < bestD) { bestD = d; best = i; } });
  return best;
}
function hover(view, e) {
  const i = nearest(view, e);
  if (i < 0) { tooltip.style.display = "none"; return; }
  tooltip.textContent = `${JSON.stringify(view.run.tokens[i])} · ${view.run.counts[i]}×`;
  tooltip.style.left = (e.clientX + 12) + "px"; tooltip.style.top = (e.clientY + 12) + "px";
  tooltip.style.display = "block";
}

function select_(token) { state.selected = token; redraw(); }
const search = document.getElementById("search");
search.addEventListener("input", () => {
  const t = search.value;
  if (DATA.runs.some(run => run.tokens.includes(t))) select_(t);
});
document.getElementById("angle").addEventListener("input", e => {
  state.angle = Number(e.target.value); redraw(); });
window.explorer = { views, select: select_, state };
build();
"""
