"""Learner-facing interface strings of the quiz, in every language of :mod:`minimodel.lab.i18n`."""

from __future__ import annotations

from minimodel.lab.i18n import pick

MESSAGES: dict[str, dict[str, str]] = {
    "kind.single": {"en": "single choice", "es": "opción única"},
    "kind.multi": {"en": "multiple choice", "es": "opción múltiple"},
    "kind.order": {"en": "put in order", "es": "ordenar"},
    "kind.numeric": {"en": "numeric", "es": "numérica"},
    "kind.short": {"en": "short answer", "es": "respuesta corta"},
    "kind.recall": {"en": "recall, self-marked", "es": "de memoria, autoevaluada"},
    "ask.single": {"en": "Your answer (one number)", "es": "Tu respuesta (un número)"},
    "ask.multi": {"en": "Your answer (numbers separated by commas or spaces, e.g. 1,3)",
                  "es": "Tu respuesta (números separados por comas o espacios, p. ej. 1,3)"},
    "ask.order": {"en": "Your order (all choice numbers, first to last, e.g. 3,1,2,4)",
                  "es": "Tu orden (todos los números de las opciones, del primero al último; "
                        "p. ej. 3,1,2,4)"},
    "ask.numeric": {"en": "Your answer (a number)", "es": "Tu respuesta (un número)"},
    "ask.short": {"en": "Your answer (a word or a term)",
                  "es": "Tu respuesta (una palabra o un término)"},
    "ask.recall.think": {"en": "Answer in your head, on paper or here (end with an empty line), "
                               "then press Enter to see the model answer.",
                         "es": "Responde mentalmente, en papel o aquí (termina con una línea "
                               "vacía) y pulsa Intro para ver la respuesta modelo."},
    "recall.typed": {"en": "You wrote", "es": "Escribiste"},
    "ask.recall": {"en": "Did your answer make every point of the list? (y/n)",
                   "es": "¿Tu respuesta recogía todos los puntos de la lista? (s/n)"},
    "bad.single": {"en": "Type one number between 1 and {n}.",
                   "es": "Escribe un número entre 1 y {n}."},
    "bad.multi": {"en": "Type numbers between 1 and {n}, separated by commas.",
                  "es": "Escribe números entre 1 y {n}, separados por comas."},
    "bad.order": {"en": "Type each number from 1 to {n} once, in the order you choose.",
                  "es": "Escribe cada número del 1 al {n} una vez, en el orden que elijas."},
    "bad.numeric": {"en": "Type one number, for example 6.238 or 2,097,152.",
                    "es": "Escribe un solo número, por ejemplo 6,238 o 2 097 152."},
    "bad.short": {"en": "Type at least a word.", "es": "Escribe al menos una palabra."},
    "bad.recall": {"en": "Type y (yes) or n (no).", "es": "Escribe s (sí) o n (no)."},
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
    "value": {"en": "Value", "es": "Valor"},
    "box": {"en": "box", "es": "caja"},
    "accepted": {"en": "Accepted answers", "es": "Respuestas aceptadas"},
    "right_order": {"en": "Right order", "es": "Orden correcto"},
    "model_answer": {"en": "Model answer", "es": "Respuesta modelo"},
    "rubric": {"en": "A full answer says", "es": "Una respuesta completa dice"},
    "recalled": {"en": "Marked as recalled (not part of the score).",
                 "es": "Marcada como recordada (no cuenta en la puntuación)."},
    "not_recalled": {"en": "Marked for another go: it comes back in `quiz review`.",
                     "es": "Marcada para otro intento: volverá en `quiz review`."},
    "summary.missed": {"en": "Missed ({n}):", "es": "Falladas ({n}):"},
    "summary.skipped": {"en": "Not answered ({n}):", "es": "Sin responder ({n}):"},
    "summary.recall": {"en": "Recall questions, self-marked and not in the score: "
                             "{recalled} of {answered} recalled.",
                       "es": "Preguntas de memoria, autoevaluadas y fuera de la puntuación: "
                             "{recalled} de {answered} recordadas."},
    "summary.review": {"en": "Go over them again with: minimodel quiz review {quiz}",
                       "es": "Repásalas con: minimodel quiz review {quiz} --lang es"},
    "recall.mark": {"en": "recalled", "es": "recordada"},
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
    # errors (printed as "error: ..." by the command)
    "error.unknown_quiz": {"en": "unknown quiz {id!r}; available quizzes: {known} "
                                 "(see `minimodel quiz list`)",
                           "es": "cuestionario desconocido {id!r}; cuestionarios disponibles: "
                                 "{known} (consulta `minimodel quiz list`)"},
    "error.unknown_ids": {"en": "unknown question ids {ids} (quiz {quiz} has {first}..{last})",
                          "es": "ids de pregunta desconocidos: {ids} (el cuestionario {quiz} "
                                "tiene {first}..{last})"},
    "error.not_mapping": {"en": "answers must map question ids to answers (a JSON object), "
                                "got {type}",
                          "es": "las respuestas deben asociar ids de pregunta a respuestas (un "
                                "objeto JSON); se obtuvo {type}"},
    "error.malformed": {"en": "malformed answer: {problem}",
                        "es": "respuesta mal formada: {problem}"},
    "error.answers_dir": {"en": "answers file {path} is a directory; pass a JSON or YAML file",
                          "es": "el archivo de respuestas {path} es una carpeta; pasa un "
                                "archivo JSON o YAML"},
    "error.answers_not_utf8": {"en": "answers file {path} is not UTF-8 text",
                               "es": "el archivo de respuestas {path} no es texto UTF-8"},
    "error.answers_unreadable": {"en": "cannot read answers file {path}: {reason}",
                                 "es": "no se puede leer el archivo de respuestas {path}: "
                                       "{reason}"},
    "error.answers_not_json_yaml": {"en": "answers file {path} is neither JSON nor YAML: "
                                          "{reason}",
                                    "es": "el archivo de respuestas {path} no es ni JSON ni "
                                          "YAML: {reason}"},
    "error.answers_empty": {"en": "answers file {path} is empty; write question id -> answer, "
                                  "e.g. {{\"q-13-01\": 1}}",
                            "es": "el archivo de respuestas {path} está vacío; escribe id de "
                                  "pregunta -> respuesta, p. ej. {{\"q-13-01\": 1}}"},
    "error.answers_not_mapping": {"en": "answers file {path} must hold a mapping of question "
                                        "id -> answer, e.g. {{\"q-13-01\": 1}}; got {type}",
                                  "es": "el archivo de respuestas {path} debe contener una "
                                        "asociación id de pregunta -> respuesta, p. ej. "
                                        "{{\"q-13-01\": 1}}; se obtuvo {type}"},
    # why one answer does not fit its question (grading.check_answer; after "malformed answer: ")
    "answer.out_of_range": {"en": "{qid}: choice index {index} is out of range; use 0..{last} "
                                  "(indices are 0-based)",
                            "es": "{qid}: el índice de opción {index} está fuera de rango; usa "
                                  "0..{last} (los índices empiezan en 0)"},
    "answer.single": {"en": "{qid} is a single-choice question: answer with one 0-based index "
                            "such as 1, not {answer!r}",
                      "es": "{qid} es una pregunta de opción única: responde con un solo índice "
                            "(empezando en 0), como 1, no {answer!r}"},
    "answer.multi": {"en": "{qid} is a multiple-choice question: answer with a list of 0-based "
                           "indices such as [0, 2], not {answer!r}",
                     "es": "{qid} es una pregunta de opción múltiple: responde con una lista de "
                           "índices (empezando en 0), como [0, 2], no {answer!r}"},
    "answer.order": {"en": "{qid} is an ordering question: answer with all {n} choice indices "
                           "(0-based) in the right order, each once, such as {example}; got "
                           "{answer!r}",
                     "es": "{qid} es una pregunta de ordenar: responde con los {n} índices de "
                           "las opciones (empezando en 0) en el orden correcto, cada uno una "
                           "vez, como {example}; se obtuvo {answer!r}"},
    "answer.unreadable": {"en": "{qid}: {reason}", "es": "{qid}: {reason}"},
    # why a typed answer is asked again instead of graded (numbers.py, terms.py)
    "reask.not_number": {"en": "{answer!r} is not one number; write it like 4, 2,097,152, "
                               "6.238 or 8192 * 256",
                         "es": "{answer!r} no es un solo número; escríbelo como 4, "
                               "2\u202f097\u202f152, 6,238 u 8192 * 256"},
    "reask.words": {"en": "{answer!r}: the word {word!r} changes what the number means; type "
                          "the number alone, with its unit if you like ({units})",
                    "es": "{answer!r}: la palabra {word!r} cambia lo que significa el número; "
                          "escribe solo el número, con su unidad si quieres ({units})"},
    "reask.decimals": {"en": "{answer!r}: the question asks for {n} decimals",
                       "es": "{answer!r}: la pregunta pide {n} decimales"},
    "reask.no_unit": {"en": "this question has no unit", "es": "esta pregunta no tiene unidad"},
    "reask.ambiguous": {"en": "{answer!r} can be read as {first} or as {second}; write it "
                              "without the point (with a space between thousands) or with a "
                              "decimal comma",
                        "es": "{answer!r} puede leerse como {first} o como {second}; escríbelo "
                              "sin el punto (con un espacio entre los millares) o con coma "
                              "decimal"},
    "reask.term_and_words": {"en": "{answer!r} has the term {term!r} and also {words!r}; type "
                                   "only the term",
                             "es": "{answer!r} contiene el término {term!r} y además {words!r}; "
                                   "escribe solo el término"},
    "wrong_unit": {"en": "The question asks for {units}, not {unit}.",
                   "es": "La pregunta pide {units}, no {unit}."},
    "your_answer": {"en": "Your answer", "es": "Tu respuesta"},
    "unreadable": {"en": "unreadable", "es": "ilegible"},
    "answer.not_finite": {"en": "{qid}: numeric answer must be finite, got {answer!r}",
                          "es": "{qid}: la respuesta numérica debe ser finita; se obtuvo "
                                "{answer!r}"},
    "answer.numeric": {"en": "{qid} is a numeric question: answer with a number such as 6.238, "
                             "not {answer!r}",
                       "es": "{qid} es una pregunta numérica: responde con un número, como "
                             "6,238, no {answer!r}"},
    "answer.short": {"en": "{qid} is a short-answer question: answer with a word or a few "
                           "words, such as \"effective rank\", not {answer!r}",
                     "es": "{qid} es una pregunta de respuesta corta: responde con una palabra "
                           "o unas pocas, como \"rango efectivo\", no {answer!r}"},
    "answer.recall": {"en": "{qid} is a recall question, marked by you against its rubric: "
                            "answer true if your answer covered every point, false if not; "
                            "not {answer!r}",
                      "es": "{qid} es una pregunta de memoria, autoevaluada con su lista de "
                            "puntos: responde true si tu respuesta recogía todos los puntos, "
                            "false si no; no {answer!r}"},
}


def t(key: str, lang: str, **values: object) -> str:
    """The ``lang`` version of interface string ``key``, formatted with ``values``."""
    return pick(MESSAGES[key], lang).format(**values)
