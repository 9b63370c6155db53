"""The documentation site: lessons, lab pages generated from the lab's content, API reference.

``minimodel docs build`` runs :func:`build`, ``minimodel docs serve`` :func:`serve`. The site is
built with MkDocs + Material + mkdocs-static-i18n (English default, Spanish) + mkdocstrings,
from a *staging* copy of ``docs/``:

1. ``docs/`` of the source checkout is copied to a temporary folder;
2. pages that must never be copied by hand are generated there from their sources: one page
   per break (story, predictions, observations and hint ladder — never the fix) and per
   exercise (statement, signature, rules, the public example) in each language, a lab index,
   and at the end of every lesson the links to its quiz questions, breaks and exercises;
3. MkDocs builds the staging folder with ``mkdocs.yml``.

Lessons (``lab/content/lessons/NN-name.md`` + ``.es.md``) declare their practice items in a front
matter block (``quiz: [...]``, ``breaks: [...]``, ``exercises: [...]``); each generated break
and exercise page links back to the lesson that lists it. Links to code use mkdocstrings'
cross-references by symbol, ``[text][minimodel.nn.embedding.Lookup]``, so they follow the code
when lines move; a strict build fails on any that does not resolve.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
LANGS = ("en", "es")
QUIZ_ID = "phase-13-embeddings"

# The API reference: one page per module, rendered by mkdocstrings from the docstrings.
REFERENCE = {
    "nn-embedding": ("minimodel.nn.embedding", "Embedding"),
    "nn-lm-head": ("minimodel.nn.lm_head", "Output heads"),
    "functional-losses": ("minimodel.functional.losses", "Losses"),
    "functional-activations": ("minimodel.functional.activations", "Activations"),
    "functional-attention": ("minimodel.functional.attention", "Attention"),
    "functional-normalization": ("minimodel.functional.normalization", "Layer normalisation"),
    "functional-tensors": ("minimodel.functional.tensors", "Tensor helpers (where, masked_fill)"),
    "nn-norm": ("minimodel.nn.norm", "LayerNorm"),
    "nn-attention": ("minimodel.nn.attention", "MultiHeadAttention"),
    "nn-block": ("minimodel.nn.block", "The pre-LN block"),
    "models-gpt": ("minimodel.models.gpt", "GPT"),
    "models-mlm": ("minimodel.models.mlm", "Masked LM"),
    "models-cbow": ("minimodel.models.cbow", "CBOW"),
    "diagnostics": ("minimodel.diagnostics", "Diagnostics"),
    "interop-word2vec": ("minimodel.interop.word2vec", "word2vec files"),
    "interop-hf": ("minimodel.interop.hf", "Hugging Face: to_hf / from_hf"),
    "interop-gpt2": ("minimodel.interop.gpt2", "Hugging Face GPT-2"),
    "interop-mlm-hf": ("minimodel.interop.mlm_hf", "Hugging Face MegatronBERT (masked LM)"),
    "data-corpus": ("minimodel.data.corpus", "Corpus and batches"),
    "data-tokenizers": ("minimodel.data.tokenizers", "Tokenizers"),
    "data-masking": ("minimodel.data.masking", "Masking for the MLM"),
    "evaluation": ("minimodel.evaluation", "Word similarity"),
}

WORDS = {
    "practice": {"en": "Practice", "es": "Práctica"},
    "quiz": {"en": "Quiz questions", "es": "Preguntas del cuestionario"},
    "breaks": {"en": "Breaks", "es": "Averías"},
    "exercises": {"en": "Exercises", "es": "Ejercicios"},
    "lesson": {"en": "Lesson", "es": "Lección"},
    "story": {"en": "The story", "es": "La historia"},
    "predict": {"en": "Predict", "es": "Predice"},
    "observe": {"en": "Observe", "es": "Observa"},
    "hints": {"en": "Hint ladder", "es": "Escalera de pistas"},
    "start": {"en": "Start it", "es": "Empieza"},
    "statement": {"en": "Statement", "es": "Enunciado"},
    "signature": {"en": "Signature", "es": "Firma"},
    "rules": {"en": "Rules", "es": "Reglas"},
    "forbidden": {"en": "Forbidden (the judge refuses them)",
                  "es": "Prohibido (el juez lo rechaza)"},
    "example": {"en": "Public example", "es": "Ejemplo público"},
    "tolerance": {"en": "Tolerance", "es": "Tolerancia"},
    "lab": {"en": "The lab", "es": "El laboratorio"},
    "lab_intro": {"en": "Breaks put a known bug into a scratch copy of minimodel; exercises ask "
                        "you to write a function from scratch for the judge. Every page here is "
                        "generated from the lab's own content when the site is built.",
                  "es": "Las averías meten un fallo conocido en una copia de trabajo de "
                        "minimodel; los ejercicios te piden escribir una función desde cero "
                        "para el juez. Cada página de esta sección se genera a partir del "
                        "contenido del laboratorio al construir el sitio."},
    "quiz_page": {"en": "The phase 13 quiz", "es": "El cuestionario de la fase 13"},
    # the Measured page
    "title": {"en": "Measured: tied against untied, and the benchmarks",
              "es": "Medido: atado frente a sin atar, y las pruebas de rendimiento"},
    "intro": {"en": "Generated when the site is built from `docs/measured.json`, which "
                    "`scripts/make_results_data.py` collects from a real `minimodel compare` "
                    "run and the benchmark scripts. Machine:",
              "es": "Generada al construir el sitio a partir de `docs/measured.json`, que "
                    "`scripts/make_results_data.py` reúne de una ejecución real de "
                    "`minimodel compare` y de los scripts de rendimiento. Máquina:"},
    "compare": {"en": "Tied against untied", "es": "Atado frente a sin atar"},
    "row": {"en": "| | tied | untied |", "es": "| | atado | sin atar |"},
    "params": {"en": "parameters", "es": "parámetros"},
    "val": {"en": "validation loss (nats/token)", "es": "pérdida de validación (nats/token)"},
    "ppl": {"en": "perplexity", "es": "perplejidad"},
    "erank": {"en": "effective rank of E", "es": "rango efectivo de E"},
    "erank_w": {"en": "effective rank of W (head)", "es": "rango efectivo de W (cabeza)"},
    "speed": {"en": "training tokens/s", "es": "tokens de entrenamiento/s"},
    "curves": {"en": "Validation loss and effective rank over training",
               "es": "Pérdida de validación y rango efectivo durante el entrenamiento"},
    "cbow": {"en": "CBOW against gensim", "es": "CBOW frente a gensim"},
    "bench": {"en": "Training step against PyTorch and transformers",
              "es": "Paso de entrenamiento frente a PyTorch y transformers"},
    "cores": {"en": "cores", "es": "núcleos"},
    "setup": {"en": "{model}, d={d}, {layers} blocks, {tok} V={V}, {steps} steps, seed {seed}",
              "es": "{model}, d={d}, {layers} bloques, {tok} V={V}, {steps} pasos, semilla "
                    "{seed}"},
    "cbow_head": {"en": "| objective | implementation | words/s | WordSim-353 ρ | SimLex-999 ρ |",
                  "es": "| objetivo | implementación | palabras/s | ρ WordSim-353 | "
                        "ρ SimLex-999 |"},
    "bench_head": {"en": "| metric | measured | target | met? |",
                   "es": "| métrica | medido | objetivo | ¿cumplido? |"},
    "steps": {"en": "Step time against the width d", "es": "Tiempo por paso frente a la anchura d"},
    "steps_head": {"en": "| d | V | minimodel ms | PyTorch eager ms | transformers ms | "
                         "minimodel / best |",
                   "es": "| d | V | minimodel ms | PyTorch eager ms | transformers ms | "
                         "minimodel / mejor |"},
    "threads": {"en": "threads", "es": "hilos"},
    "plain_import": {"en": "minimodel as a plain import, no malloc tuning",
                     "es": "minimodel tal como lo deja un simple import, sin ajustar malloc"},
    "yes": {"en": "yes", "es": "sí"},
    "no": {"en": "no", "es": "no"},
}


def w(key: str, lang: str) -> str:
    return WORDS[key][lang]


def page_name(stem: str, lang: str) -> str:
    """mkdocs-static-i18n's suffix layout: ``x.md`` (English) and ``x.es.md``."""
    return f"{stem}.md" if lang == "en" else f"{stem}.{lang}.md"


@dataclass
class Lesson:
    stem: str                      # "01-embedding-lookup"
    titles: dict[str, str]
    quiz: list[str] = field(default_factory=list)
    breaks: list[str] = field(default_factory=list)
    exercises: list[str] = field(default_factory=list)


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(front matter, body) of a Markdown page that starts with a ``---`` YAML block."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 4)
    if end < 0:
        raise ValueError("front matter opened with --- but never closed")
    return yaml.safe_load(text[4:end]) or {}, text[end + 5:]


LESSONS_DIR = Path(__file__).resolve().parent / "lab" / "content" / "lessons"


def load_lessons(lessons_dir: Path = LESSONS_DIR) -> list[Lesson]:
    """The lessons in ``lessons_dir``, in file-name order, with their practice items."""
    lessons = []
    for path in sorted(lessons_dir.glob("[0-9]*.md")):
        if path.name.count(".") > 1:  # a translation, x.es.md
            continue
        meta, _ = split_front_matter(path.read_text(encoding="utf-8"))
        titles = {"en": meta.get("title", path.stem)}
        for lang in LANGS[1:]:
            other = path.with_name(page_name(path.stem, lang))
            if other.is_file():
                titles[lang] = split_front_matter(other.read_text(encoding="utf-8"))[0].get(
                    "title", titles["en"])
        lessons.append(Lesson(path.stem, titles, list(meta.get("quiz") or []),
                              list(meta.get("breaks") or []), list(meta.get("exercises") or [])))
    return lessons


def practice_problems(lessons: list[Lesson]) -> list[str]:
    """Practice items a lesson names that do not exist (a test and the build check them)."""
    from minimodel.lab.breaks import list_breaks
    from minimodel.lab.exercises import list_exercises
    from minimodel.lab.quiz import load_all

    known = {"quiz": {qid for quiz in load_all() for qid in quiz.ids},
             "breaks": {b["id"] for b in list_breaks()},
             "exercises": {e["id"] for e in list_exercises()}}
    return [f"lesson {lesson.stem}: unknown {kind[:-1] if kind != 'quiz' else 'quiz question'} "
            f"{item!r}" for lesson in lessons for kind in known
            for item in getattr(lesson, kind) if item not in known[kind]]


def _lesson_of(lessons: list[Lesson], kind: str, item: str) -> Lesson | None:
    return next((lesson for lesson in lessons if item in getattr(lesson, kind)), None)


# ----------------------------------------------------------------------------- generated pages
def practice_section(lesson: Lesson, lang: str) -> str:
    """The links appended to a lesson: its quiz questions, breaks and exercises."""
    from minimodel.lab.quiz import load_all
    from minimodel.lab.i18n import pick

    # each question id -> the quiz file it lives in (the phase quiz or a lesson's own quiz)
    owner = {qid: quiz for quiz in load_all() for qid in quiz.ids}
    lines = ["", f"## {w('practice', lang)}", ""]
    for quiz_id in dict.fromkeys(owner[qid].id for qid in lesson.quiz):
        lines.append(f"**{w('quiz', lang)}** ([{w('quiz_page', lang)}]"
                     f"(../quizzes/{quiz_id}.md)):")
        lines.append("")
        lines += [f"- {qid}: {pick(owner[qid].question(qid).title, lang)}"
                  for qid in lesson.quiz if owner[qid].id == quiz_id]
        lines.append("")
    for kind in ("breaks", "exercises"):
        items = getattr(lesson, kind)
        if items:
            lines.append(f"**{w(kind, lang)}:** " + ", ".join(
                f"[`{item}`](../lab/{kind}/{item}.md)" for item in items))
            lines.append("")
    return "\n".join(lines)


def lesson_link(lesson: Lesson, lang: str, to_docs_root: str) -> str:
    """``Lesson: [title](<root>lessons/<stem>.md)`` in ``lang``."""
    return (f"{w('lesson', lang)}: [{lesson.titles.get(lang, lesson.titles['en'])}]"
            f"({to_docs_root}lessons/{lesson.stem}.md)")


def _lab_page_head(title: str, item_id: str, lesson: Lesson | None, lang: str) -> list[str]:
    """Title, id and the link back to the lesson, for a page under lab/<kind>/."""
    head = [f"# {title}", "", f"`{item_id}`", ""]
    return head + ([lesson_link(lesson, lang, "../../"), ""] if lesson is not None else [])


def break_page(break_id: str, lang: str, lesson: Lesson | None) -> str:
    """A break's page: story, predictions, observations and the hint ladder; never the fix."""
    from minimodel.lab.breaks import load_break

    brk = load_break(break_id)
    parts = _lab_page_head(brk.text("title", lang), break_id, lesson, lang)
    parts += [brk.text("summary", lang).strip(), "", f"## {w('story', lang)}", "",
              brk.text("intro", lang).strip(), ""]
    for key, heading in (("predict", "predict"), ("observe", "observe")):
        items = brk.texts(key, lang)
        if items:
            parts += [f"## {w(heading, lang)}", ""] + [f"{i}. {t.strip()}"
                                                       for i, t in enumerate(items, 1)] + [""]
    hints = brk.texts("hints", lang)
    parts += [f"## {w('hints', lang)}", ""]
    for i, hint in enumerate(hints, 1):
        parts += [f'??? note "{i}"', "", "    " + hint.strip().replace("\n", "\n    "), ""]
    parts += [f"## {w('start', lang)}", "", "```bash",
              f"minimodel break start {break_id} --workdir work/{break_id}"
              + (" --lang es" if lang == "es" else ""),
              f"minimodel break run --workdir work/{break_id}",
              f"minimodel break check --workdir work/{break_id}", "```", ""]
    return "\n".join(parts)


def exercise_page(exercise_id: str, lang: str, lesson: Lesson | None) -> str:
    """An exercise's page: statement, signature, rules and the public example."""
    from minimodel.lab.exercises import get_exercise
    from minimodel.lab.exercises.cases import make_cases

    ex = get_exercise(exercise_id)
    parts = _lab_page_head(ex.text("title", lang), exercise_id, lesson, lang)
    parts += [f"## {w('statement', lang)}", "", ex.text("statement", lang).strip(), "",
              f"## {w('signature', lang)}", "", "```python", f"def {ex.signature()}: ...",
              "```", ""]
    parts += [f"## {w('rules', lang)}", ""]
    if ex.forbidden or ex.forbidden_ops:
        parts += [f"{w('forbidden', lang)}: " + ", ".join(
            f"`{name}`" for name in [*ex.forbidden, *ex.forbidden_ops]), ""]
    tol = ex.full_tolerance()
    parts += [f"{w('tolerance', lang)}: float64 rtol={tol['rtol']:g} atol={tol['atol']:g}; "
              f"float32 rtol={tol['rtol_float32']:g} atol={tol['atol_float32']:g}", ""]
    example = make_cases(ex.cases["generator"], seed=0, examples=1,
                         params=ex.cases.get("params"))[0]
    parts += [f"## {w('example', lang)}", "", "| argument | value |", "|---|---|"]
    parts += [f"| `{name}` | {desc} |" for name, desc in example.describe_inputs().items()]
    parts += ["", "```bash", f"minimodel exercise start {exercise_id}"
              + (" --lang es" if lang == "es" else ""),
              f"minimodel exercise check {exercise_id}", "```", ""]
    return "\n".join(parts)


def _quiz_page(mirror: str, lessons: list[Lesson], lang: str) -> str:
    """The committed quiz mirror as a site page: its GitHub language links dropped (the site
    has a language switch) and, under each question, a link back to its lesson."""
    out = []
    for line in mirror.splitlines(keepends=True):
        if line.startswith("[English]("):
            continue
        out.append(line)
        found = re.match(r"## (q-[a-z0-9-]+) ", line)
        lesson = _lesson_of(lessons, "quiz", found.group(1)) if found else None
        if lesson is not None:
            out.append(f"\n{lesson_link(lesson, lang, '../')}\n")
    return "".join(out)


def lab_index(lang: str) -> str:
    from minimodel.lab.breaks import load_break
    from minimodel.lab.breaks import list_breaks
    from minimodel.lab.exercises import get_exercise, list_exercises

    parts = [f"# {w('lab', lang)}", "", w("lab_intro", lang), "",
             f"[{w('quiz_page', lang)}](../quizzes/{QUIZ_ID}.md)", "", f"## {w('breaks', lang)}",
             ""]
    parts += [f"- [{load_break(b['id']).text('title', lang)}](breaks/{b['id']}.md)"
              for b in list_breaks()]
    parts += ["", f"## {w('exercises', lang)}", ""]
    parts += [f"- [{get_exercise(e['id']).text('title', lang)}](exercises/{e['id']}.md)"
              for e in list_exercises()]
    return "\n".join(parts) + "\n"


def reference_page(module: str, title: str) -> str:
    return f"# {title}\n\n::: {module}\n"


# ----------------------------------------------------------------------------- figures
def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _svg(fig) -> str:
    import io

    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    return buffer.getvalue()


def figure_tied_gradient() -> str:
    """Which rows of a tied E get gradient, per path: computed by minimodel on a tiny model."""
    import numpy as np

    from minimodel import functional as F
    from minimodel.nn import Embedding, TiedHead

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
    panels = [("lookup: scatter-add", lookup_grad), ("head: dlogits.T @ h", head_grad),
              ("tied E: the sum", lookup_grad + head_grad)]
    for k, (title, grad) in enumerate(panels):
        ax = fig.add_subplot(1, 3, k + 1)
        ax.imshow(np.abs(grad) > 1e-12, cmap="Greys", vmin=0, vmax=1, aspect="auto",
                  interpolation="nearest")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("column (d = 8)", fontsize=8)
        if k == 0:
            ax.set_ylabel("row of E (token id, V = 16)", fontsize=8)
        ax.tick_params(labelsize=7)
    fig.suptitle("non-zero gradient entries (black) for ids [3, 7, 3, 12]", fontsize=9)
    return _svg(fig)


def figure_spectra() -> str:
    """Normalised singular values of a healthy and a collapsed matrix, with their erank."""
    import numpy as np

    from minimodel.diagnostics import effective_rank, singular_values

    rng = np.random.default_rng(0)
    healthy = rng.standard_normal((512, 128))
    collapsed = rng.standard_normal((512, 6)) @ rng.standard_normal((6, 128)) \
        + 0.05 * rng.standard_normal((512, 128))
    fig = _figure(6, 3.2)
    ax = fig.add_subplot(1, 1, 1)
    for name, matrix in (("random N(0, 1)", healthy), ("collapsed (rank 6 + noise)", collapsed)):
        s = singular_values(matrix)
        ax.plot(np.arange(1, len(s) + 1), s / s.sum(),
                label=f"{name}: erank {effective_rank(matrix):.1f}")
    ax.set_yscale("log")
    ax.set_xlabel("index i of the singular value (of min(V, d) = 128)")
    ax.set_ylabel("p_i = s_i / sum s")
    ax.legend(fontsize=8)
    return _svg(fig)


FIGURES = {"tied-gradient.svg": figure_tied_gradient, "spectra.svg": figure_spectra}


# ----------------------------------------------------------------------------- measured page


def measured_page(data: dict[str, Any], lang: str) -> str:
    """The "Measured" page in ``lang`` from the collected data (see make_results_data.py)."""
    m, cmp = data["machine"], data["compare"]
    tied, untied = cmp["tied"]["summary"], cmp["untied"]["summary"]
    c = cmp["config"]
    lines = [f"# {w('title', lang)}", "", w("intro", lang) + f" {m['cpu']}, {m['cores']} "
             f"{w('cores', lang)}, {m['memory_gib']} GiB, Python {m['python']}, NumPy {m['numpy']}"
             f" ({m['blas']}), {m['date']}.", "", f"## {w('compare', lang)}", "",
             f"`{cmp['command']}`: " + w("setup", lang).format(
                 model=c["model"], d=c["d_model"], layers=c["n_layer"], tok=c["tokenizer"],
                 V=tied["vocab_size"], steps=c["steps"], seed=c["seed"]) + ".",
             "", w("row", lang), "|---|---|---|"]

    def row(key: str, field_: str, fmt: str) -> None:
        values = [s.get(field_) for s in (tied, untied)]
        cells = [format(v, fmt) if v is not None else "—" for v in values]
        lines.append(f"| {w(key, lang)} | {cells[0]} | {cells[1]} |")

    row("params", "parameters", ",")
    row("val", "val_loss", ".4f")
    row("ppl", "val_ppl", ".2f")
    row("erank", "erank_embedding", ".1f")
    row("erank_w", "erank_head", ".1f")
    row("speed", "tokens_per_s", ",.0f")
    lines += ["", f"## {w('curves', lang)}", "",
              f"![{w('curves', lang)}](figures/measured-curves.svg)", ""]
    if data.get("cbow"):
        lines += [f"## {w('cbow', lang)}", "", "`python benchmarks/cbow_vs_gensim.py`", "",
                  w("cbow_head", lang), "|---|---|---|---|---|"]
        lines += [f"| {r['objective']} | {r['impl']} | {r['words_per_s']:,.0f} | "
                  f"{r['wordsim353']:.3f} ({r['wordsim353_coverage']}) | "
                  f"{r['simlex999']:.3f} ({r['simlex999_coverage']}) |" for r in data["cbow"]]
        lines.append("")
    if data.get("steps"):
        lines += [f"## {w('steps', lang)}", "", "`python benchmarks/step_vs_d.py` "
                  f"(B=16, T=128, L=4, H=4, AdamW, 2 {w('threads', lang)}; "
                  f"{w('plain_import', lang)})", "",
                  f"![{w('steps', lang)}](figures/measured-steps.svg)", "",
                  w("steps_head", lang), "|---|---|---|---|---|---|"]
        lines += [f"| {r['d']} | {r['V']} | {r['minimodel']:.1f} | {r['nanogpt']:.1f} | "
                  f"{r['hf-sdpa']:.1f} | {r['ratio_to_best_peer']:.2f} |" for r in data["steps"]]
        lines.append("")
    if data.get("bench"):
        meta = data["bench"].get("meta", {})
        lines += [f"## {w('bench', lang)}", "",
                  f"`minimodel bench --cases step`: {meta.get('cpu', '?')}, {meta.get('cores', '?')}"
                  f" {w('cores', lang)}, torch {meta.get('torch', '-')}, transformers "
                  f"{meta.get('transformers', '-')}, {str(meta.get('date', ''))[:10]}", "",
                  w("bench_head", lang), "|---|---|---|---|"]
        for r in data["bench"].get("targets", []):
            met = {True: w("yes", lang), False: w("no", lang), None: "—"}[r.get("met")]
            value = "—" if r.get("value") is None else f"{r['value']:.3g}"
            lines.append(f"| {r['metric']} | {value} | {r['op']} {r['bound']:.3g} | {met} |")
        lines.append("")
    return "\n".join(lines)


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
    ax.set_xlabel("d" + (" (model width)" if lang == "en" else " (anchura del modelo)"))
    ax.set_ylabel("ms / step" if lang == "en" else "ms / paso")
    ax.legend(fontsize=8)
    return _svg(fig)


FIGURE_WORDS = {"step": {"en": "step", "es": "paso"},
                "loss": {"en": "validation loss (nats/token)",
                         "es": "pérdida de validación (nats/token)"},
                "erank": {"en": "effective rank", "es": "rango efectivo"},
                "tied": {"en": "tied", "es": "atado"}, "untied": {"en": "untied", "es": "sin atar"}}


def figure_measured(data: dict[str, Any], lang: str = "en") -> str:
    """Validation loss and effective rank over training, tied against untied."""
    word = {key: value[lang] for key, value in FIGURE_WORDS.items()}
    fig = _figure(9, 3.4)
    loss_ax, rank_ax = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    for name in ("tied", "untied"):
        curve = data["compare"][name]["curve"]
        steps = [r["step"] for r in curve]
        loss_ax.plot(steps, [r["val_loss"] for r in curve], label=word[name])
        if all("erank_embedding" in r for r in curve):
            rank_ax.plot(steps, [r["erank_embedding"] for r in curve], label=f"{word[name]}: E")
        if name == "untied" and all("erank_head" in r for r in curve):
            rank_ax.plot(steps, [r["erank_head"] for r in curve], "--",
                         label=f"{word['untied']}: W")
    loss_ax.set_xlabel(word["step"])
    loss_ax.set_ylabel(word["loss"])
    rank_ax.set_xlabel(word["step"])
    rank_ax.set_ylabel(word["erank"])
    for ax in (loss_ax, rank_ax):
        ax.legend(fontsize=8)
    return _svg(fig)


# ----------------------------------------------------------------------------- staging, build
# The "graduation" chapter of the README is also the site's interop page: one text, two places.
INTEROP_SECTIONS = ("## Taking your model to PyTorch", "## Measured results")


def interop_page(readme: str) -> str:
    """The README from "Taking your model to PyTorch" up to "Measured results"."""
    start, end = (readme.find(heading) for heading in INTEROP_SECTIONS)
    if start < 0 or end < start:
        raise ValueError(f"README.md lacks the sections {INTEROP_SECTIONS} the interop page is "
                         "made from")
    return readme[start:end].rstrip("\n") + "\n"


def source_docs_dir() -> Path:
    """``docs/`` of the source checkout; ValueError when minimodel is installed elsewhere."""
    if (REPO_ROOT / "mkdocs.yml").is_file() and (REPO_ROOT / "docs").is_dir():
        return REPO_ROOT / "docs"
    raise ValueError(f"no source checkout with mkdocs.yml and docs/ around {REPO_ROOT}; the "
                     "site is built from a clone of the minimodel repository")


def stage(target: Path, docs_dir: Path | None = None,
          lessons_dir: Path = LESSONS_DIR) -> Path:
    """Copy ``docs/`` to ``target`` and write every generated page there. Returns ``target``."""
    from minimodel.lab.breaks import list_breaks
    from minimodel.lab.exercises import list_exercises

    docs_dir = docs_dir or source_docs_dir()
    lessons = load_lessons(lessons_dir)
    problems = practice_problems(lessons)
    if problems:
        raise ValueError("; ".join(problems))
    shutil.copytree(docs_dir, target, dirs_exist_ok=True)
    shutil.copytree(lessons_dir, target / "lessons", dirs_exist_ok=True)
    readme = docs_dir.parent / "README.md"
    if readme.is_file():
        (target / "interop.md").write_text(interop_page(readme.read_text(encoding="utf-8")),
                                           encoding="utf-8")
    for mirror in sorted((target / "quizzes").glob("*.md")):
        lang = mirror.name.rsplit(".", 2)[-2]
        if lang in LANGS:
            mirror.write_text(_quiz_page(mirror.read_text(encoding="utf-8"), lessons, lang),
                              encoding="utf-8")
    for lesson in lessons:
        for lang in LANGS:
            path = target / "lessons" / page_name(lesson.stem, lang)
            if path.is_file():
                path.write_text(path.read_text(encoding="utf-8").rstrip("\n") + "\n"
                                + practice_section(lesson, lang), encoding="utf-8")
    for lang in LANGS:
        pages = {Path("lab") / page_name("index", lang): lab_index(lang)}
        for b in list_breaks():
            pages[Path("lab/breaks") / page_name(b["id"], lang)] = break_page(
                b["id"], lang, _lesson_of(lessons, "breaks", b["id"]))
        for e in list_exercises():
            pages[Path("lab/exercises") / page_name(e["id"], lang)] = exercise_page(
                e["id"], lang, _lesson_of(lessons, "exercises", e["id"]))
        for rel, text in pages.items():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            (target / rel).write_text(text, encoding="utf-8")
    measured = docs_dir / "measured.json"
    if measured.is_file():
        data = json.loads(measured.read_text(encoding="utf-8"))
        (target / "figures").mkdir(exist_ok=True)
        for lang in LANGS:  # x.es.svg: static-i18n's localized asset for the Spanish pages
            (target / "figures" / page_name("measured-curves", lang).replace(".md", ".svg")
             ).write_text(figure_measured(data, lang), encoding="utf-8")
            if data.get("steps"):
                (target / "figures" / page_name("measured-steps", lang).replace(".md", ".svg")
                 ).write_text(figure_steps(data, lang), encoding="utf-8")
            (target / page_name("measured", lang)).write_text(measured_page(data, lang),
                                                              encoding="utf-8")
    (target / "lessons" / "figures").mkdir(parents=True, exist_ok=True)
    for name, make in FIGURES.items():
        (target / "lessons" / "figures" / name).write_text(make(), encoding="utf-8")
    for stem, (module, title) in REFERENCE.items():
        (target / "reference").mkdir(exist_ok=True)
        (target / "reference" / f"{stem}.md").write_text(reference_page(module, title),
                                                         encoding="utf-8")
    return target


def _nav(lessons: list[Lesson]) -> list[Any]:
    from minimodel.lab.breaks import list_breaks
    from minimodel.lab.exercises import list_exercises
    from minimodel.lab.quiz import list_quizzes

    return [
        {"Home": "index.md"},
        # Paths without titles: each language's page title (front matter / first heading).
        {"Lessons": [f"lessons/{lesson.stem}.md" for lesson in lessons]},
        # the phase quiz first, then each lesson's own quiz (lessons' order)
        {"Lab": ["lab/index.md", {"Quiz": [f"quizzes/{q}.md" for q in
                                           sorted(list_quizzes(), key=lambda q: q != QUIZ_ID)]},
                 {"Breaks": [f"lab/breaks/{b['id']}.md" for b in list_breaks()]},
                 {"Exercises": [f"lab/exercises/{e['id']}.md" for e in list_exercises()]}]},
        {"Results": ["measured.md", "results.md"]},
        {"Engine": ["architecture.md", "interop.md", "judge.md"]},
        {"Reference": [f"reference/{stem}.md" for stem in REFERENCE]},
    ]


def build(site_dir: str | os.PathLike, strict: bool = True,
          docs_dir: str | os.PathLike | None = None,
          lessons_dir: str | os.PathLike = LESSONS_DIR) -> Path:
    """Stage the docs and build the site into ``site_dir``; returns its path.

    ``strict``: any MkDocs warning (a broken page link, a code cross-reference that does not
    resolve) fails the build.
    """
    try:
        from mkdocs.commands.build import build as mkdocs_build
        from mkdocs.config import load_config
        from mkdocs.exceptions import Abort
    except ImportError:
        raise ValueError("building the site needs the docs extra: pip install -e \".[docs]\""
                         ) from None
    docs_dir = Path(docs_dir) if docs_dir is not None else source_docs_dir()
    site = Path(site_dir).resolve()
    with tempfile.TemporaryDirectory(prefix="minimodel-docs-") as tmp:
        staged = stage(Path(tmp) / "docs", docs_dir, Path(lessons_dir))
        config = load_config(str(REPO_ROOT / "mkdocs.yml"), docs_dir=str(staged),
                             site_dir=str(site), strict=strict,
                             nav=_nav(load_lessons(Path(lessons_dir))))
        warnings = _WarningList()
        logging.getLogger("mkdocs").addHandler(warnings)
        try:
            mkdocs_build(config)
        except Abort as exc:  # strict mode: name the warnings in the error
            raise ValueError(f"the site did not build ({exc}): "
                             + "; ".join(warnings.messages[:10])) from None
        finally:
            logging.getLogger("mkdocs").removeHandler(warnings)
    _drop_alternate_links(site)
    return site


_ALTERNATE = re.compile(r'<link rel="alternate" href="[^"]*" hreflang="[^"]*">\s*')


def _drop_alternate_links(site: Path) -> None:
    """Remove the ``<link rel="alternate" hreflang>`` head tags from every page.

    They are hints for search engines; Material's script also reads them to fetch a
    ``sitemap.xml`` beside each alternate page, which from ``file://`` is a failed request
    (a console error) on every page. The visible language switch is made of ordinary links
    (``<a hreflang>`` in the header) and keeps working.
    """
    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        cleaned = _ALTERNATE.sub("", text)
        if cleaned != text:
            page.write_text(cleaned, encoding="utf-8")


class _WarningList(logging.Handler):
    """Collects MkDocs warnings, so a failed strict build can say what failed."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(" ".join(record.getMessage().split()))


def serve(site_dir: str | os.PathLike, port: int = 8000) -> None:
    """Build into ``site_dir`` and serve it on http://127.0.0.1:PORT until Ctrl-C."""
    import functools
    import http.server

    site = build(site_dir)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        print(f"serving {site} at http://127.0.0.1:{port}/ (Ctrl-C to stop)", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            print("stopped")
