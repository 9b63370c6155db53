"""Learner-facing interface strings of the quiz, in every language of :mod:`minimodel.lab.i18n`."""

from __future__ import annotations

from minimodel.lab.i18n import pick

MESSAGES: dict[str, dict[str, str]] = {
    "kind.single": {"en": "single choice", "es": "opción única"},
    "kind.multi": {"en": "multiple choice", "es": "opción múltiple"},
    "kind.free": {"en": "free answer", "es": "respuesta libre"},
    "kind.numeric": {"en": "numeric", "es": "numérica"},
    "ask.single": {"en": "Your answer (one number)", "es": "Tu respuesta (un número)"},
    "ask.multi": {"en": "Your answer (numbers separated by commas, e.g. 1,3)",
                  "es": "Tu respuesta (números separados por comas, p. ej. 1,3)"},
    "ask.free": {"en": "Your answer (a short sentence)", "es": "Tu respuesta (una frase corta)"},
    "ask.numeric": {"en": "Your answer (a number)", "es": "Tu respuesta (un número)"},
    "bad.single": {"en": "Type one number between 1 and {n}.",
                   "es": "Escribe un número entre 1 y {n}."},
    "bad.multi": {"en": "Type numbers between 1 and {n}, separated by commas.",
                  "es": "Escribe números entre 1 y {n}, separados por comas."},
    "bad.free": {"en": "Type at least a word.", "es": "Escribe al menos una palabra."},
    "bad.numeric": {"en": "Type a number, for example 6.24.",
                    "es": "Escribe un número, por ejemplo 6.24 o 6,24."},
    "right": {"en": "Correct!", "es": "¡Correcto!"},
    "wrong": {"en": "Not quite.", "es": "No del todo."},
    "expected": {"en": "Expected", "es": "Se esperaba"},
    "score": {"en": "Score: {score}/{total}", "es": "Puntuación: {score}/{total}"},
    "best": {"en": "best so far {best}/{total}", "es": "mejor hasta ahora {best}/{total}"},
    "resume": {"en": "Resuming: {n} question(s) answered earlier (use --restart to start over).",
               "es": "Retomando: {n} pregunta(s) respondida(s) antes (usa --restart para "
                     "empezar de cero)."},
    "saved": {"en": "Stopped. {n} answer(s) saved; run the same command to continue.",
              "es": "Detenido. {n} respuesta(s) guardada(s); ejecuta el mismo comando para "
                    "continuar."},
    "review.saved": {"en": "Stopped. {n} reviewed answer(s) saved.",
                     "es": "Detenido. {n} respuesta(s) de repaso guardada(s)."},
    "review.none": {"en": "Nothing to review today. Next question due on {due}.",
                    "es": "Hoy no hay nada que repasar. La próxima pregunta toca el {due}."},
    "review.none_at_all": {"en": "Nothing to review today.",
                           "es": "Hoy no hay nada que repasar."},
    "review.head": {"en": "{n} question(s) to review, missed ones first.",
                    "es": "{n} pregunta(s) para repasar; primero las falladas."},
    "reason.missed": {"en": "missed", "es": "fallada"},
    "reason.new": {"en": "new", "es": "nueva"},
    "reason.due": {"en": "due", "es": "toca repasar"},
    "reason.later": {"en": "later", "es": "más tarde"},
    "keywords": {"en": "Keywords (all groups, any word of each)",
                 "es": "Palabras clave (todos los grupos, cualquier palabra de cada uno)"},
    "value": {"en": "Value", "es": "Valor"},
    "explanation": {"en": "Explanation", "es": "Explicación"},
    "answer": {"en": "Answer", "es": "Respuesta"},
    "question": {"en": "question", "es": "pregunta"},
    "correct": {"en": "correct", "es": "correcta"},
    "yes": {"en": "yes", "es": "sí"},
    "list.heading": {"en": "minimodel quizzes", "es": "cuestionarios de minimodel"},
    "list.id": {"en": "id", "es": "id"},
    "list.title": {"en": "title", "es": "título"},
    "list.questions": {"en": "questions", "es": "preguntas"},
    "no": {"en": "no", "es": "no"},
}


def t(key: str, lang: str, **values: object) -> str:
    """The ``lang`` version of interface string ``key``, formatted with ``values``."""
    return pick(MESSAGES[key], lang).format(**values)
