"""The explorer page: one HTML file with the data, two plotting libraries and the drawing code.

Everything is inside the file, so it opens from ``file://`` with no network: the runs' data
as JSON in a ``<script type="application/json">``, regl-scatterplot (WebGL points: the ~50,000
tokens of GPT-2's vocabulary per panel, moved in place from frame to frame) and plotly.js (the
small metric plots), both MIT and bundled from the npm registry into ``explorer/assets/``
(how: ``scripts/explorer_bundle/``), then the page's own code, ``assets/explorer.js``.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

ASSETS = Path(__file__).resolve().parent / "assets"
LIBRARIES = ("regl-scatterplot.min.js", "plotly-basic.min.js")   # the points, the metric plots

WORDS = {
    "en": {"title": "Embedding explorer", "token": "token", "play": "play", "pause": "pause",
           "step": "step", "final": "final", "projection": "projection",
           "pca": "PCA (aligned over training)", "tsne": "t-SNE (last snapshot)",
           "search_hint": "search a token, click a point, or move the slider",
           "colour": "colour: token frequency in the corpus (dark = rare, yellow = frequent; "
                     "grey = never seen)",
           "neighbours": "nearest neighbours (cosine, in the snapshot shown)",
           "near_at": "neighbours at {step}", "near_nearest": "neighbours at {step}, the nearest snapshot whose vectors the page carries",
           "no_vectors": "neighbours: matrix too large to ship to the page",
           "probe_loss": "probe loss (nats)", "erank": "effective rank",
           "lookup_share": "share of E's gradient from the lookup",
           "churn": "neighbour churn (fraction of top-10 changed)",
           "norm": "mean row norm by frequency", "buckets": ["unseen", "rare", "middle",
                                                             "frequent"],
           "tied_E": "E (tied: input and output)", "E": "E (input)", "W": "W (output)",
           "live": "live: new snapshots appear as the run trains",
           "runs": "run(s)", "frames": "snapshot(s)", "trail": "trail", "overall": "overall"},
    "es": {"title": "Explorador de embeddings", "token": "token", "play": "reproducir",
           "pause": "pausa", "step": "paso", "final": "final", "projection": "proyección",
           "pca": "PCA (alineada a lo largo del entrenamiento)",
           "tsne": "t-SNE (última instantánea)",
           "search_hint": "busca un token, pulsa un punto o mueve el control deslizante",
           "colour": "color: frecuencia del token en el corpus (oscuro = poco frecuente, "
                     "amarillo = frecuente; gris = nunca visto)",
           "neighbours": "vecinos más cercanos (coseno, en la instantánea mostrada)",
           "near_at": "vecinos en {step}", "near_nearest": "vecinos en {step}, la instantánea más cercana cuyos vectores lleva la página",
           "no_vectors": "vecinos: matriz demasiado grande para incluirla en la página",
           "probe_loss": "pérdida de sondeo (nats)", "erank": "rango efectivo",
           "lookup_share": "fracción del gradiente de E que viene de la indexación",
           "churn": "rotación de vecinos (fracción del top-10 que cambia)",
           "norm": "norma media de las filas por frecuencia",
           "buckets": ["nunca vistos", "poco frecuentes", "intermedios", "frecuentes"],
           "tied_E": "E (atada: entrada y salida)", "E": "E (entrada)", "W": "W (salida)",
           "live": "en directo: las instantáneas nuevas aparecen mientras el modelo entrena",
           "runs": "ejecución(es)", "frames": "instantánea(s)", "trail": "trayectoria",
           "overall": "total"},
}


def page_data(runs: list[dict[str, Any]], lang: str = "en", live: bool = False) -> str:
    """The JSON the page reads, safe inside a <script> element."""
    data = json.dumps({"lang": lang, "live": live, "runs": runs}, ensure_ascii=False,
                      separators=(",", ":"))
    return data.replace("</", "<\\/")  # a token "</script>" must not end the script element


def explorer_html(runs: list[dict[str, Any]], lang: str = "en", live: bool = False) -> str:
    """The whole page for ``runs`` (from :func:`minimodel.explorer.frames.run_data`)."""
    if lang not in WORDS:
        raise ValueError(f"--lang must be one of {', '.join(WORDS)}, got {lang!r}")
    libraries = "\n;\n".join((ASSETS / name).read_text(encoding="utf-8") for name in LIBRARIES)
    words = WORDS[lang]
    return (_PAGE.replace("__LANG__", lang).replace("__TITLE__", html.escape(words["title"]))
            .replace("__WORDS__", json.dumps(words, ensure_ascii=False))
            .replace("__DATA__", page_data(runs, lang, live))
            .replace("__LIBRARIES__", libraries.replace("</script", "<\\/script"))
            .replace("__SCRIPT__", (ASSETS / "explorer.js").read_text(encoding="utf-8")))


_PAGE = """<!doctype html>
<html lang="__LANG__"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>__TITLE__</title>
<style>
/* a scrollbar from the start: the plots are sized to the page's width once, at load */
html { overflow-y: scroll; }
body { font-family: system-ui, sans-serif; margin: 1rem; color: #222; }
header { display: flex; gap: .8rem; align-items: center; flex-wrap: wrap; }
#timeline { display: flex; gap: .6rem; align-items: center; margin: .6rem 0; }
#slider { flex: 1; max-width: 48rem; }
#panels, #metrics { display: flex; flex-wrap: wrap; gap: .8rem; }
/* --plot-width/--plot-height: 420 x 400, narrowed by explorer.js to fit a narrow window */
.panel { border: 1px solid #ccc; border-radius: 6px; padding: .4rem; box-sizing: border-box;
         width: calc(var(--plot-width, 420px) + 12px + .8rem); max-width: 100%; }
.panel h2 { font-size: .95rem; margin: .2rem 0 .3rem; }
.plot { width: var(--plot-width, 420px); height: var(--plot-height, 400px); position: relative;
        border: 1px solid #eee; }
.plot canvas { width: 100%; height: 100%; display: block; }
.plot .tip { position: absolute; left: 6px; top: 4px; font: .8rem ui-monospace, monospace;
             background: #fffe; padding: 0 .3rem; border-radius: 3px; pointer-events: none; }
.metric { width: 420px; max-width: 100%; height: 290px; border: 1px solid #eee;
          border-radius: 6px; }
ol.neighbours { font-family: ui-monospace, monospace; font-size: .8rem; margin: .3rem 0;
                columns: 2; }
.near-caption { font-size: .75rem; color: #555; margin: .3rem 0 0; }
.legend, #status { font-size: .8rem; color: #555; }
</style></head>
<body>
<header>
  <h1 style="font-size:1.3rem;margin:0">__TITLE__</h1>
  <label><span data-w="token"></span> <input id="search" list="token-list" autocomplete="off"></label>
  <datalist id="token-list"></datalist>
  <label><span data-w="projection"></span> <select id="projection"></select></label>
  <span class="legend" data-w="colour"></span>
</header>
<div id="timeline">
  <button id="play" type="button"></button>
  <input id="slider" type="range" min="0" value="0">
  <span id="step-label"></span>
</div>
<p id="status"></p>
<div id="panels"></div>
<div id="metrics"></div>
<script>const WORDS = __WORDS__;</script>
<script type="application/json" id="data">__DATA__</script>
<script>__LIBRARIES__</script>
<script>__SCRIPT__</script>
</body></html>
"""
