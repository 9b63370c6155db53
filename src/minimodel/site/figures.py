"""Figures drawn when the site is built, in each language: two lesson figures computed by
minimodel itself and the results page's curves. (Lessons draw their other figures in their own
code blocks; see :mod:`minimodel.site.lesson_pages`.)

Every function returns the SVG text; ``x.svg`` is the English file and ``x.es.svg`` the Spanish
one (mkdocs-static-i18n serves the second to Spanish pages under the first's name).
"""

from __future__ import annotations

import io
from typing import Any, Callable

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from minimodel import functional as F
from minimodel.diagnostics import effective_rank, singular_values
from minimodel.nn import Embedding, TiedHead
from minimodel.messages import say

def _figure(width: float, height: float) -> Figure:
    """A figure drawn without pyplot (no global state, no window)."""
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _svg(fig: Figure) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buffer.getvalue()


def figure_tied_gradient(lang: str = "en") -> str:
    """Which rows of a tied E get gradient, per path: computed by minimodel on a tiny model."""
    rng = np.random.default_rng(0)
    emb = Embedding(16, 8, rng=rng)
    head = TiedHead(emb)
    ids = np.array([[3, 7, 3, 12]])
    targets = np.array([[7, 3, 12, 5]])
    x = emb(ids)                              # (1, 4, 8)
    h = x.detach()                            # the head path alone
    F.cross_entropy(head(h), targets).backward()
    head_grad = emb.weight.grad.copy()
    emb.weight.grad = None
    x.backward(np.ones_like(x.data) * 0.1)    # the lookup path alone
    lookup_grad = emb.weight.grad.copy()
    fig = _figure(8, 3.2)
    panels = [("lookup", lookup_grad), ("head", head_grad), ("sum", lookup_grad + head_grad)]
    for k, (title, grad) in enumerate(panels):
        ax = fig.add_subplot(1, 3, k + 1)
        ax.imshow(np.abs(grad) > 1e-12, cmap="Greys", vmin=0, vmax=1, aspect="auto",
                  interpolation="nearest")
        ax.set_title(say(f"figure.{title}", lang), fontsize=9)
        ax.set_xlabel(say("figure.column", lang), fontsize=8)
        if k == 0:
            ax.set_ylabel(say("figure.row", lang), fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle(say("figure.nonzero", lang), fontsize=9)
    return _svg(fig)


def figure_spectra(lang: str = "en") -> str:
    """Normalised singular values of a healthy and a collapsed matrix, with their erank."""
    rng = np.random.default_rng(0)
    healthy = rng.standard_normal((512, 128))
    collapsed = rng.standard_normal((512, 6)) @ rng.standard_normal((6, 128)) \
        + 0.05 * rng.standard_normal((512, 128))
    fig = _figure(6, 3.2)
    ax = fig.add_subplot(1, 1, 1)
    for name, matrix in (("random", healthy), ("collapsed", collapsed)):
        s = singular_values(matrix)
        erank = f"{effective_rank(matrix):.1f}"
        ax.plot(np.arange(1, len(s) + 1), s / s.sum(),
                label=f"{say(f'figure.{name}', lang)}: erank "
                      f"{erank.replace('.', ',') if lang == 'es' else erank}")
    ax.set_yscale("log")
    ax.set_xlabel(say("figure.index", lang))
    ax.set_ylabel("p_i = s_i / sum s")
    ax.legend(fontsize=8)
    return _svg(fig)


# The lessons' static figures, by file name (lessons/figures/<name>, .es.svg for Spanish).
LESSON_FIGURES: dict[str, Callable[[str], str]] = {
    "tied-gradient": figure_tied_gradient, "spectra": figure_spectra}


def figure_steps(data: dict[str, Any], lang: str = "en") -> str:
    """Training-step time against d for minimodel and its peers (log-log)."""
    fig = _figure(6, 3.4)
    ax = fig.add_subplot(1, 1, 1)
    rows = data["steps"]
    for key, label in (("minimodel", "minimodel"), ("nanogpt", "PyTorch eager"),
                       ("hf-sdpa", "transformers GPT-2")):
        ax.plot([r["d"] for r in rows], [r[key] for r in rows], "o-", label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(say("figure.width", lang))
    ax.set_ylabel(say("figure.ms_step", lang))
    ax.legend(fontsize=8)
    return _svg(fig)


def figure_measured(data: dict[str, Any], lang: str = "en") -> str:
    """Validation loss and effective rank over training, tied against untied."""
    fig = _figure(9, 3.4)
    loss_ax, rank_ax = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    for name in ("tied", "untied"):
        curve = data["compare"][name]["curve"]
        steps = [r["step"] for r in curve]
        loss_ax.plot(steps, [r["val_loss"] for r in curve], label=say(f"figure.{name}", lang))
        if all("erank_embedding" in r for r in curve):
            rank_ax.plot(steps, [r["erank_embedding"] for r in curve],
                         label=f"{say(f'figure.{name}', lang)}: E")
        if name == "untied" and all("erank_head" in r for r in curve):
            rank_ax.plot(steps, [r["erank_head"] for r in curve], "--",
                         label=f"{say('figure.untied', lang)}: W")
    loss_ax.set_xlabel(say("figure.step", lang))
    loss_ax.set_ylabel(say("figure.loss", lang))
    rank_ax.set_xlabel(say("figure.step", lang))
    rank_ax.set_ylabel(say("figure.erank", lang))
    for ax in (loss_ax, rank_ax):
        ax.legend(fontsize=8)
    return _svg(fig)
