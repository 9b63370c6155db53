"""``NOTES.md``: the predictions a learner writes before running a break's experiment.

Predicting first is the point of a break: a wrong prediction that meets a real symptom is what
sticks. ``minimodel break run`` therefore looks for text under every "Prediction N" heading
(blockquoted questions, HTML comments and blank lines do not count) and refuses to run until
each one has some.
"""

from __future__ import annotations

import re
import textwrap

from minimodel.lab.breaks.catalog import Break
from minimodel.lab.i18n import break_text

_PREDICTION = re.compile(r"^##\s+(?:Prediction|Predicci[oó]n)\s+(\d+)\b", re.IGNORECASE)
_ANY_HEADING = re.compile(r"^#{1,2}\s")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)

_TEXT = {
    "en": {
        "how": "Write a prediction under each question **before** you run the experiment "
               "(`minimodel break run --workdir {workdir}`). A sentence or two is enough; being "
               "wrong is useful. `run` refuses to start while a prediction is empty.",
        "placeholder": "<!-- your prediction here -->",
        "observed": "What I observed",
        "observed_hint": "<!-- after `minimodel break run`: what matched your predictions, what "
                         "did not, and why -->",
        "fix": "My fix",
        "fix_hint": "<!-- where the bug was and how you fixed it; then `minimodel break check` -->",
    },
    "es": {
        "how": "Escribe una predicción bajo cada pregunta **antes** de ejecutar el experimento "
               "(`minimodel break run --workdir {workdir}`). Basta con una o dos frases; "
               "equivocarse también enseña. `run` no arranca mientras haya una predicción vacía.",
        "placeholder": "<!-- tu predicción aquí -->",
        "observed": "Lo que observé",
        "observed_hint": "<!-- después de `minimodel break run`: qué coincidió con tus "
                         "predicciones, qué no y por qué -->",
        "fix": "Mi arreglo",
        "fix_hint": "<!-- dónde estaba el fallo y cómo lo arreglaste; después "
                    "`minimodel break check` -->",
    },
}


WIDTH = 92


def _wrap(text: str) -> str:
    return textwrap.fill(" ".join(text.split()), width=WIDTH)


def _quote(text: str) -> str:
    lines = textwrap.wrap(" ".join(text.split()), width=WIDTH - 2)
    return "\n".join(f"> {line}".rstrip() for line in lines)


def render_notes(brk: Break, lang: str, workdir: str) -> str:
    """The initial NOTES.md of a workspace, in ``lang``."""
    t, heading = _TEXT[lang], break_text("prediction", lang)
    parts = [f"# {brk.text('title', lang)} (`{brk.id}`)", "", _wrap(brk.text("intro", lang)), "",
             _wrap(t["how"].format(workdir=workdir)), ""]
    for i, question in enumerate(brk.texts("predict", lang), 1):
        parts += [f"## {heading} {i}", "", _quote(question), "", t["placeholder"], ""]
    parts += [f"## {t['observed']}", "", t["observed_hint"], "",
              f"## {t['fix']}", "", t["fix_hint"], ""]
    return "\n".join(parts)


def prediction_answers(notes: str) -> dict[int, str]:
    """Prediction number -> what the learner wrote under it (questions and comments removed)."""
    answers: dict[int, list[str]] = {}
    current: int | None = None
    for line in _COMMENT.sub("", notes).splitlines():
        match = _PREDICTION.match(line)
        if match:
            current = int(match.group(1))
            answers.setdefault(current, [])
            continue
        if _ANY_HEADING.match(line):
            current = None
            continue
        if current is not None and line.strip() and not line.lstrip().startswith(">"):
            answers[current].append(line.strip())
    return {n: "\n".join(lines) for n, lines in answers.items()}


def missing_predictions(notes: str, count: int) -> list[int]:
    """Numbers (1-based) of the predictions that are absent or still empty."""
    answers = prediction_answers(notes)
    return [n for n in range(1, count + 1) if not answers.get(n, "").strip()]
