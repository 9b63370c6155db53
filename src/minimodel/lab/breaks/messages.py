"""Learner-facing strings of ``minimodel break``, in English and Spanish."""

from __future__ import annotations

from minimodel.lab.i18n import pick

MESSAGES: dict[str, dict[str, str]] = {
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


def t(key: str, lang: str, **values: object) -> str:
    """The message ``key`` in ``lang`` with ``values`` filled in."""
    return pick(MESSAGES[key], lang).format(**values)
