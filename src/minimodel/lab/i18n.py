"""Bilingual text: every learner-facing string in the lab exists in English and Spanish.

The lab's one message catalogue: the mechanism (``pick``, ``translate``) and the tables of
``minimodel exercise``, ``minimodel break`` and ``minimodel lab`` (the quiz session's table
lives with the quiz session, :mod:`minimodel.lab.quiz.ui`).
"""

from __future__ import annotations

import re

LANGS = ("en", "es")
DEFAULT_LANG = "en"


def check_lang(lang: str) -> str:
    """Return ``lang`` if supported, else raise a ValueError that lists the choices."""
    if lang not in LANGS:
        raise ValueError(f"unsupported language {lang!r}; choose one of {', '.join(LANGS)}")
    return lang


def pick(text: dict | str, lang: str) -> str:
    """Pick the ``lang`` version of a ``{"en": ..., "es": ...}`` mapping (plain strings pass)."""
    if isinstance(text, str):
        return text
    check_lang(lang)
    if lang in text and text[lang]:
        return text[lang]
    return text[DEFAULT_LANG]


# Progress statuses as stored in the learner folder (and in --json output, which keeps these
# English values) -> what a person reads in a table. "new" (exercises) and "not started"
# (breaks, quizzes) mean the same thing and read the same.
STATUS_LABELS: dict[str, dict[str, str]] = {
    "not started": {"en": "not started", "es": "sin empezar"},
    "new": {"en": "not started", "es": "sin empezar"},
    "started": {"en": "started", "es": "empezado"},
    "in-progress": {"en": "in progress", "es": "en curso"},
    "observed": {"en": "symptom seen", "es": "síntoma visto"},
    "attempted": {"en": "attempted", "es": "intentado"},
    "fixed": {"en": "fixed", "es": "arreglado"},
    "passed": {"en": "passed", "es": "superado"},
    "wrong": {"en": "wrong", "es": "incorrecto"},
    "opened": {"en": "opened", "es": "abierta"},
    "read": {"en": "read", "es": "leída"},
    "skipped": {"en": "skipped", "es": "saltado"},
}


def status_label(status: str, lang: str) -> str:
    """The ``lang`` label of a progress status; unknown statuses are shown as they are."""
    return pick(STATUS_LABELS[status], lang) if status in STATUS_LABELS else status


def translate(table: dict[str, dict[str, str]], key: str, lang: str, **values: object) -> str:
    """``table[key]`` in ``lang`` (English when missing), with ``{placeholders}`` filled in."""
    return pick(table[key], lang).format(**values)


# --- minimodel exercise ---------------------------------------------------------------------
EXERCISE_UI: dict[str, dict[str, str]] = {
    "id": {"en": "id", "es": "id"},
    "title": {"en": "title", "es": "título"},
    "status": {"en": "status", "es": "estado"},
    "case": {"en": "case", "es": "caso"},
    "kind": {"en": "kind", "es": "tipo"},
    "detail": {"en": "detail", "es": "detalle"},
    "hidden": {"en": "hidden", "es": "oculto"},
    "example": {"en": "example", "es": "ejemplo"},
    "new": {"en": "new", "es": "nuevo"},
    "wrote": {"en": "Wrote {path}. When ready: minimodel exercise check {id} --file {path}",
              "es": "Escrito {path}. Cuando estés listo: minimodel exercise check {id} --file "
                    "{path}"},
    "hint": {"en": "Hint {k} of {n}", "es": "Pista {k} de {n}"},
    "last_hint": {"en": "That was the last hint.", "es": "Era la última pista."},
    "isolation_full": {"en": "isolation: full ({reason})",
                       "es": "aislamiento: completo ({reason})"},
    "isolation_partial": {"en": "isolation: PARTIAL ({reason})",
                          "es": "aislamiento: PARCIAL ({reason})"},
    "seed": {"en": "seed {seed} (reproduce with --seed {seed}); tolerance rtol={rtol:g} "
                   "atol={atol:g} (float32: rtol={rtol32:g} atol={atol32:g})",
             "es": "semilla {seed} (repite con --seed {seed}); tolerancia rtol={rtol:g} "
                   "atol={atol:g} (float32: rtol={rtol32:g} atol={atol32:g})"},
    "passed": {"en": "PASSED", "es": "SUPERADO"},
    "failed": {"en": "NOT PASSED", "es": "NO SUPERADO"},
    "confirm": {"en": "You have not passed {id} yet. Show the reference solution? [y/N] ",
                "es": "Aún no has superado {id}. ¿Mostrar la solución de referencia? [s/N] "},
    "need_yes": {"en": "not shown; answer y, or pass --yes",
                 "es": "no se muestra; responde s o usa --yes"},
    "same": {"en": "(same as above)", "es": "(igual que arriba)"},
    "hung": {"en": "where it was running:", "es": "dónde se estaba ejecutando:"},
    "line": {"en": "line {line}: ", "es": "línea {line}: "},
    "judging": {"en": "judging {file}: {done}/{total} cases, {elapsed:.0f} s (limit {limit:g} s)",
                "es": "evaluando {file}: {done}/{total} casos, {elapsed:.0f} s "
                      "(límite {limit:g} s)"},
    "list_title": {"en": "minimodel exercises", "es": "ejercicios de minimodel"},
    # errors (printed as "error: ..." by the command)
    "unknown_exercise": {"en": "unknown exercise {id!r}; known exercises: {known}",
                         "es": "ejercicio desconocido {id!r}; ejercicios disponibles: {known}"},
    "stub_is_folder": {"en": "{path} is a folder; pass --file with a file name such as {example}",
                       "es": "{path} es una carpeta; pasa --file con un nombre de archivo como "
                             "{example}"},
    "stub_exists": {"en": "{path} already exists; pass --force to overwrite it or --file to "
                          "choose another name",
                    "es": "{path} ya existe; usa --force para sobrescribirlo o --file para "
                          "elegir otro nombre"},
}

# Why the judge's isolation is full or partial (see minimodel.lab.exercises.isolation). The
# JSON result keeps the English text (`isolation_reason`); the text output shows it in --lang
# through isolation_reason_label(), which reads the English back into these templates.
ISOLATION_REASONS: dict[str, dict[str, str]] = {
    "full": {"en": "bubblewrap namespaces, read-only file system, {limits} process and memory "
                   "limits",
             "es": "espacios de nombres de bubblewrap, sistema de archivos de solo lectura, "
                   "límites de procesos y de memoria por {limits}"},
    "root_without_cgroup": {
        "en": "bubblewrap namespaces, but no process-count limit: running as root without a "
              "writable cgroup (RLIMIT_NPROC does not bind root)",
        "es": "espacios de nombres de bubblewrap, pero sin límite del número de procesos: se "
              "ejecuta como root sin un cgroup escribible (RLIMIT_NPROC no limita a root)"},
    "partial": {"en": "{why}: the solution runs as a separate process under resource limits "
                      "only",
                "es": "{why}: la solución se ejecuta como un proceso aparte, solo con límites de "
                      "recursos"},
    "bwrap_missing": {"en": "bubblewrap is not installed", "es": "bubblewrap no está instalado"},
    "bwrap_broken": {"en": "bubblewrap does not work here", "es": "bubblewrap no funciona aquí"},
    "no_user_namespaces": {
        "en": "no user namespaces here (containers without them, or disabled by the system)",
        "es": "aquí no hay espacios de nombres de usuario (contenedores sin ellos, o "
              "desactivados por el sistema)"},
    "not_linux": {"en": "{platform} has no Linux namespaces",
                  "es": "{platform} no tiene espacios de nombres de Linux"},
}


def _template_pattern(template: str) -> "re.Pattern[str]":
    parts = re.split(r"\{(\w+)\}", template)  # text, name, text, name, ..., text
    return re.compile("".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)"
                              for i, part in enumerate(parts)) + r"\Z", re.DOTALL)


def isolation_reason_label(reason: str, lang: str) -> str:
    """The judge's English isolation reason in ``lang`` (read back into ISOLATION_REASONS;
    a reason that fits no template, and each filled-in value that does not, stay as they are)."""
    if lang == DEFAULT_LANG:
        return reason
    for key, texts in ISOLATION_REASONS.items():
        found = _template_pattern(texts["en"]).match(reason)
        if found:
            values = {name: isolation_reason_label(value, lang)
                      for name, value in found.groupdict().items()}
            return translate(ISOLATION_REASONS, key, lang, **values)
    return reason


# Per-case statuses of the judge as shown in a table (the JSON keeps the English values).
CASE_STATUS_LABELS: dict[str, dict[str, str]] = {
    status: {"en": status, "es": es} for status, es in (
        ("passed", "superado"), ("wrong", "incorrecto"), ("shape", "forma"),
        ("dtype", "dtype"), ("error", "error"), ("forbidden", "prohibido"),
        ("timeout", "tiempo agotado"), ("not run", "no ejecutado"))}

# The case kinds of the judge's generators ("float32, mask values") in Spanish.
CASE_LABEL_ES = {
    "repeats": "ids repetidos", "order": "orden de posiciones", "small ids": "ids pequeños",
    "V > d": "V > d", "V < d": "V < d", "large values": "valores grandes", "0-d": "0-d",
    "3-d": "3-d", "affine": "con afín", "weight only": "solo weight", "bias only": "solo bias",
    "tiny variance": "varianza diminuta", "eps": "eps distinto", "default eps": "eps por defecto",
    "ignored positions": "posiciones ignoradas", "ignore_index": "ignore_index propio",
    "default ignore_index": "ignore_index por defecto",
    "large logits": "logits grandes", "mixed scales": "escalas mezcladas",
    "heads": "varias cabezas", "large scores": "puntuaciones grandes", "T=1": "T=1",
    "mask values": "valores de máscara", "no masked rows": "sin filas enmascaradas",
    "several blocks": "varios bloques", "batch": "lote", "wide window": "ventana ancha",
    "low rank": "rango bajo", "exact zeros": "ceros exactos", "orthonormal": "ortonormal",
}


def case_status_label(status: str, lang: str) -> str:
    """A judge case status ("wrong", "not run"...) in ``lang``; unknown ones pass through."""
    return pick(CASE_STATUS_LABELS[status], lang) if status in CASE_STATUS_LABELS else status


def case_name(name: str, lang: str) -> str:
    """``example 2`` / ``hidden 3`` in ``lang``."""
    kind, _, number = name.partition(" ")
    if kind in ("example", "hidden"):
        return f"{translate(EXERCISE_UI, kind, lang)} {number}"
    return name


def case_label(label: str, lang: str) -> str:
    """A generated case label in ``lang``: each comma-separated part is translated."""
    if lang != "es":
        return label
    return ", ".join(CASE_LABEL_ES.get(part, part) for part in label.split(", "))


# --- minimodel lab status / next / done -----------------------------------------------------
# Counts name what "done" is for each kind, so the participle agrees in Spanish
# ("averías arregladas", "ejercicios superados").
LAB_UI: dict[str, dict[str, str]] = {
    "learner_dir": {"en": "learner folder: {path}", "es": "carpeta de progreso: {path}"},
    "lesson_head": {"en": "Lesson {number:02d} · {title}",
                    "es": "Lección {number:02d} · {title}"},
    "step.lesson": {"en": "read the lesson", "es": "leer la lección"},
    "step.quiz": {"en": "its questions ({n})", "es": "sus preguntas ({n})"},
    "step.break": {"en": "break {id}", "es": "avería {id}"},
    "step.exercise": {"en": "exercise {id}", "es": "ejercicio {id}"},
    "quiz_state": {"en": "attempts: {attempts}, best {right}/{total} right",
                   "es": "intentos: {attempts}, mejor resultado {right}/{total} bien"},
    "total.lesson": {"en": "lessons read: {done}/{total}",
                     "es": "lecciones leídas: {done}/{total}"},
    "total.quiz": {"en": "quizzes taken: {done}/{total} ({right}/{questions} questions right in "
                         "the best takes)",
                   "es": "cuestionarios hechos: {done}/{total} ({right}/{questions} preguntas "
                         "bien en los mejores intentos)"},
    "total.break": {"en": "breaks fixed: {done}/{total}",
                    "es": "averías arregladas: {done}/{total}"},
    "total.exercise": {"en": "exercises passed: {done}/{total}",
                       "es": "ejercicios superados: {done}/{total}"},
    "done_means": {"en": "Done means: a lesson read (lab done NN, or moving on with lab next), a "
                         "quiz taken to the end (whatever the score), a break fixed (break "
                         "check), an exercise passed (exercise check).",
                   "es": "Hecho significa: una lección leída (lab done NN, o seguir con lab "
                         "next), un cuestionario contestado hasta el final (sea cual sea la "
                         "nota), una avería arreglada (break check), un ejercicio superado "
                         "(exercise check)."},
    "other_quiz": {"en": "quiz {id}: attempts: {attempts}, best {right}/{total} right",
                   "es": "cuestionario {id}: intentos: {attempts}, mejor resultado "
                         "{right}/{total} bien"},
    "next_is": {"en": "next: {what}  (minimodel lab next)",
                "es": "siguiente: {what}  (minimodel lab next)"},
    "path_done": {"en": "You have walked the whole path. `minimodel quiz review` brings back "
                        "what you missed.",
                  "es": "Has recorrido todo el camino. `minimodel quiz review` te devuelve lo "
                        "que fallaste."},
    "read_lesson": {"en": "Lesson {number:02d}: {title}\n  read it:        {place}\n  as a "
                          "notebook:  minimodel lab notebook {number:02d}\nWhen you have "
                          "read it, `minimodel lab next` marks it read and starts its "
                          "questions (or `minimodel lab done {number:02d}`).",
                    "es": "Lección {number:02d}: {title}\n  léela:          {place}\n  como "
                          "cuaderno:  minimodel lab notebook {number:02d} --lang es\n"
                          "Cuando la hayas leído, `minimodel lab next --lang es` la marca como "
                          "leída y empieza sus preguntas (o `minimodel lab done "
                          "{number:02d}`)."},
    "moved_on": {"en": "Lesson {stem} marked read.", "es": "Lección {stem} marcada como leída."},
    "skipped": {"en": "Skipped: {what}. `minimodel lab status` still lists it as not done.",
                "es": "Saltado: {what}. `minimodel lab status` lo sigue mostrando como no "
                      "hecho."},
    "quiz_needs_answers": {
        "en": "Questions of lesson {stem}: take them with\n  minimodel quiz take {stem}\n"
              "(or pass --answers FILE to `lab next` to grade a file of answers).",
        "es": "Preguntas de la lección {stem}: contéstalas con\n  minimodel quiz take {stem} "
              "--lang es\n(o pasa --answers FICHERO a `lab next` para corregir un fichero de "
              "respuestas)."},
    "break_open": {"en": "Break {id} is already open in {root}: minimodel break run --workdir "
                         "{root}",
                   "es": "La avería {id} ya está abierta en {root}: minimodel break run "
                         "--workdir {root} --lang es"},
    "exercise_open": {"en": "Your file for {id} is {path}: minimodel exercise check {id} "
                            "--file {path}",
                      "es": "Tu fichero para {id} es {path}: minimodel exercise check {id} "
                            "--file {path} --lang es"},
}


# --- minimodel break ------------------------------------------------------------------------
BREAK_UI: dict[str, dict[str, str]] = {
    "started": {
        "en": "Started break {id}: {title}\nworkspace: {root}\n",
        "es": "Avería {id} preparada: {title}\nespacio de trabajo: {root}\n",
    },
    "restarted": {
        "en": "(rebuilt the minimodel copy; your NOTES.md was kept)",
        "es": "(se reconstruyó la copia de minimodel; tu NOTES.md se conservó)",
    },
    "next_steps": {
        "en": "Next:\n"
              "  1. write your predictions in {notes}\n"
              "  2. minimodel break run   --workdir {root}     (shows the symptom)\n"
              "  3. find and fix the bug in {root}/minimodel   (minimodel break hint --workdir "
              "{root} when stuck)\n"
              "  4. minimodel break check --workdir {root}",
        "es": "Siguientes pasos:\n"
              "  1. escribe tus predicciones en {notes}\n"
              "  2. minimodel break run   --workdir {root}     (muestra el síntoma)\n"
              "  3. encuentra y arregla el fallo en {root}/minimodel   (minimodel break hint "
              "--workdir {root} si te atascas)\n"
              "  4. minimodel break check --workdir {root}",
    },
    "predictions_missing": {
        "en": "Predict first: {notes} has no answer under {missing}.\n"
              "Write a sentence or two below each of these questions, then run again:",
        "es": "Primero predice: {notes} no tiene respuesta bajo {missing}.\n"
              "Escribe una o dos frases debajo de cada una de estas preguntas y vuelve a "
              "ejecutar:",
    },
    "predictions_skip": {
        "en": "(--skip-predictions runs anyway; meant for scripts, not for learning)",
        "es": "(--skip-predictions lo ejecuta igualmente; pensado para scripts, no para aprender)",
    },
    "prediction": {"en": "Prediction", "es": "Predicción"},
    "running": {
        "en": "Running {script}\n  against {root}/minimodel (PYTHONPATH={root})",
        "es": "Ejecutando {script}\n  contra {root}/minimodel (PYTHONPATH={root})",
    },
    "output": {"en": "--- experiment output ---", "es": "--- salida del experimento ---"},
    "observe": {"en": "--- what to look at ---", "es": "--- en qué fijarse ---"},
    "after_run": {
        "en": "Write what you observed in NOTES.md. Stuck? minimodel break hint --workdir {root}",
        "es": "Anota lo que observaste en NOTES.md. ¿Atascado? minimodel break hint --workdir "
              "{root}",
    },
    "experiment_failed": {
        "en": "The experiment stopped with exit code {code} (expected {expected}). If you are "
              "half-way through a fix, that may be your edit; `minimodel break reset` restores "
              "the start.",
        "es": "El experimento terminó con código {code} (se esperaba {expected}). Si estás a "
              "medio arreglo, puede ser tu cambio; `minimodel break reset` restaura el inicio.",
    },
    "timed_out": {
        "en": "Stopped after {seconds:.0f} s (time limit).",
        "es": "Detenido tras {seconds:.0f} s (límite de tiempo).",
    },
    "hint": {"en": "hint {n} of {total}", "es": "pista {n} de {total}"},
    "hint_last": {
        "en": "(that was the last hint; `minimodel break diff --workdir {root}` shows the fix)",
        "es": "(era la última pista; `minimodel break diff --workdir {root}` muestra el arreglo)",
    },
    "fixed": {
        "en": "Fixed! Every check passes: {passed} of {total}.",
        "es": "¡Arreglado! Todas las comprobaciones pasan: {passed} de {total}.",
    },
    "not_fixed": {
        "en": "Not fixed yet: {failed} of {total} checks fail.",
        "es": "Aún no está arreglado: comprobaciones que fallan: {failed} de {total}.",
    },
    "refused": {"en": "Not checked: the checks refuse this workspace.",
                "es": "Sin comprobar: las comprobaciones rechazan este espacio de trabajo."},
    "replay_seed": {
        "en": "The sizes were drawn with seed {seed}; `minimodel break check --workdir {root} "
              "--seed {seed}` replays them exactly.",
        "es": "Los tamaños se sortearon con la semilla {seed}; `minimodel break check --workdir "
              "{root} --seed {seed}` los repite tal cual.",
    },
    "not_fixed_next": {
        "en": "Stuck? minimodel break hint --workdir {root}",
        "es": "¿Atascado? minimodel break hint --workdir {root}",
    },
    "why": {"en": "--- why this break matters ---", "es": "--- por qué importa esta avería ---"},
    "references": {"en": "References:", "es": "Referencias:"},
    "no_symptom": {
        "en": "No symptom this time: the experiment behaves as a correct library should. If you "
              "have fixed the bug, confirm it with `minimodel break check --workdir {root}`.",
        "es": "Esta vez no hay síntoma: el experimento se comporta como con una biblioteca "
              "correcta. Si ya arreglaste el fallo, confírmalo con `minimodel break check "
              "--workdir {root}`.",
    },
    "symptom_label": {"en": "SYMPTOM:", "es": "SÍNTOMA:"},
    "cause_remains_label": {"en": "NOT FIXED YET:", "es": "AÚN SIN ARREGLAR:"},
    "partial_fix": {
        "en": "The story's symptom is gone, but the cause is not: the same mistake still shows "
              "up with other sizes or in another code path. `minimodel break check --workdir "
              "{root}` names the failing checks; `minimodel break hint --workdir {root}` helps.",
        "es": "El síntoma de la historia ha desaparecido, pero la causa no: el mismo error sigue "
              "apareciendo con otros tamaños o en otro camino del código. `minimodel break check "
              "--workdir {root}` nombra las comprobaciones que fallan; `minimodel break hint "
              "--workdir {root}` te ayuda."},
    "list_title": {"en": "minimodel breaks", "es": "averías de minimodel"},
    "col_id": {"en": "id", "es": "id"},
    "col_title": {"en": "title", "es": "título"},
    "col_status": {"en": "status", "es": "estado"},
    "check_timeout": {"en": "the checks finished in time",
                      "es": "las comprobaciones terminaron a tiempo"},
    "check_timeout_msg": {"en": "stopped after {seconds:.0f} s",
                          "es": "detenidas tras {seconds:.0f} s"},
    "check_crashed": {"en": "the check script ran to the end",
                      "es": "el script de comprobaciones llegó al final"},
    "checking": {"en": "running the checks against {root}/minimodel ...",
                 "es": "ejecutando las comprobaciones contra {root}/minimodel ..."},
    "diff_edited": {
        "en": "note: you edited {files} since the start; this diff is against the files as they "
              "were at start, so it may not apply on top of your edits "
              "(`minimodel break reset --workdir {root}` first).",
        "es": "nota: editaste {files} desde el inicio; este diff es contra los ficheros tal como "
              "estaban al empezar, así que puede no aplicarse sobre tus cambios "
              "(`minimodel break reset --workdir {root}` antes).",
    },
    "reset_done": {
        "en": "Workspace restored to its start state: {restored} file(s) rewritten, {removed} "
              "removed; every file matches the start manifest.",
        "es": "Espacio de trabajo restaurado al estado inicial: {restored} fichero(s) "
              "reescrito(s), {removed} eliminado(s); todos coinciden con el manifiesto inicial.",
    },
    "unknown_break": {
        "en": "unknown break {id!r}; known breaks: {known} (see `minimodel break list`)",
        "es": "avería desconocida {id!r}; averías disponibles: {known} (consulta `minimodel "
              "break list`)",
    },
    "reset_clean": {
        "en": "Nothing to do: the workspace already matches its start state.",
        "es": "Nada que hacer: el espacio de trabajo ya coincide con su estado inicial.",
    },
}


def break_text(key: str, lang: str, **values: object) -> str:
    """A ``minimodel break`` message in ``lang`` with ``values`` filled in."""
    return translate(BREAK_UI, key, lang, **values)
