"""The same learner walk done twice: through ``minimodel tutor`` (the SDK's stdio client) and
through the terminal commands. A break (predictions -> run -> two hints -> wrong fix -> check
fails -> real fix -> check passes), a quiz (one wrong, one unclear then right, the rest right)
and an exercise (wrong, then right). Items are picked by the lab's listing functions."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path
from typing import Any

from minimodel.cli import main
from own_work import retyped
from minimodel.lab.breaks import Workspace, list_breaks, load_break
from minimodel.lab.breaks.notes import with_predictions
from minimodel.lab.exercises import all_exercises, get_exercise
from minimodel.lab.lessons import load_lessons
from minimodel.lab.patching import apply_patch_to_texts
from minimodel.lab.quiz import load_quiz
from minimodel.lab.quiz.loader import Question, Quiz

from tutor_client import SRC, Tutor

CHOICE_KINDS = ("single", "multi", "order")
CHECK_SEED = 20260427       # the checks of the walk replay these random sizes (a stable transcript)
UNCLEAR = {"en": "the second one", "es": "la segunda"}
PREDICTIONS = {   # what a learner might write, for whichever break the lab lists first
    "en": ["My guess: nothing crashes and the numbers look plausible.",
           "My guess: it only goes wrong in some cases, not all.",
           "My guess: the loss alone would not make it obvious."],
    "es": ["Mi apuesta: nada falla y los números parecen razonables.",
           "Mi apuesta: solo sale mal en algunos casos, no en todos.",
           "Mi apuesta: la pérdida por sí sola no lo dejaría ver."],
}

# --- picking items -----------------------------------------------------------------------------

def pick_break() -> str:
    return list_breaks()[0]["id"]


def pick_quiz() -> Quiz:
    """The first lesson's questions with at least three questions, two of them choices."""
    for lesson in load_lessons():
        if not lesson.quiz:
            continue
        quiz = load_quiz(lesson.stem)
        if len(quiz.questions) >= 3 and \
                sum(q.kind in CHOICE_KINDS for q in quiz.questions) >= 2:
            return quiz
    raise AssertionError("no lesson has a quiz with two choice questions")


def pick_exercise() -> str:
    return next(ex.id for ex in all_exercises() if not ex.parent_reference)


def predictions(break_id: str, lang: str) -> list[str]:
    count = len(load_break(break_id).texts("predict", lang))
    return (PREDICTIONS[lang] * count)[:count]


# --- answers as a learner types them -----------------------------------------------------------

def typed(question: Question, lang: str, right: bool) -> str:
    """A right or a wrong answer to ``question`` as typed at the prompt (choices from 1)."""
    answer, n = question.answer, len(question.choices)
    if question.kind == "single":
        return str((answer if right else (answer + 1) % n) + 1)
    if question.kind == "multi":
        if right:
            return ",".join(str(i + 1) for i in sorted(set(answer)))
        return next(str(i + 1) for i in range(n) if [i] != sorted(set(answer)))
    if question.kind == "order":
        order = list(answer) if right else list(answer)[::-1]
        return " ".join(str(i + 1) for i in order)
    if question.kind == "numeric":
        value = float(answer["value"])
        value = value if right else value * 3 + 7
        return str(int(value)) if value == int(value) else repr(value)
    if question.kind == "short":
        forms = answer.get(lang) or answer["en"]
        assert right, "the walk answers short questions right"
        return forms[0]
    raise AssertionError(question.kind)


def quiz_plan(quiz: Quiz, lang: str) -> list[tuple[Question, list[str]]]:
    """Per question, what the learner types, in order: the first choice question wrong, the
    second one unclear and then right, every other one right; a recall question: an attempt,
    then the self-mark "yes" ("sí")."""
    choice = [q.id for q in quiz.questions if q.kind in CHOICE_KINDS]
    plan = []
    for q in quiz.questions:
        if q.kind == "recall":
            plan.append((q, ["my attempt", "yes" if lang == "en" else "sí"]))
        elif q.id == choice[0]:
            plan.append((q, [typed(q, lang, right=False)]))
        elif q.id == choice[1]:
            plan.append((q, [UNCLEAR[lang], typed(q, lang, right=True)]))
        else:
            plan.append((q, [typed(q, lang, right=True)]))
    return plan


# --- editing a workspace as the learner would ----------------------------------------------

def apply_patch(root: Path, patch: str) -> None:
    """Apply a unified diff (``a/minimodel/...``) to the files of a break workspace."""
    package = root / "minimodel"
    texts = {str(p.relative_to(root)): p.read_text(encoding="utf-8")
             for p in package.rglob("*.py")}
    for rel, text in apply_patch_to_texts(patch, texts, strip=1).items():
        (root / rel).write_text(text, encoding="utf-8")


def wrong_fix(break_id: str) -> str:
    brk = load_break(break_id)
    return brk.fake_path(brk.fakes[0]["name"]).read_text(encoding="utf-8")


def exercise_sources(exercise_id: str) -> tuple[str, str]:
    """(a known-wrong solution, a right one of the learner's own) of the exercise: the
    reference typed again (a verbatim copy would be practice, never a recorded pass)."""
    ex = get_exercise(exercise_id)
    wrong = next(e for e in ex.wrong if e["expect"] == "wrong")
    return ex.wrong_source(wrong), retyped(ex.reference_path.read_text(encoding="utf-8"))


# --- the walk through the tutor --------------------------------------------------------------

async def tutor_break(tutor: Tutor, break_id: str, lang: str) -> list[dict[str, Any]]:
    started = await tutor.call("break_start", break_id=break_id)
    root = Path(started["workdir"])
    results = [started]
    results.append(await tutor.call("break_predict", break_id=break_id,
                                    predictions=predictions(break_id, lang)))
    results.append(await tutor.call("break_run", break_id=break_id))
    results.append(await tutor.call("break_hint", break_id=break_id))
    results.append(await tutor.call("break_hint", break_id=break_id))
    apply_patch(root, wrong_fix(break_id))
    results.append(await tutor.call("break_check", break_id=break_id, seed=CHECK_SEED))
    workspace = Workspace.open(root)
    workspace.reset()   # the learner undoes the wrong fix ...
    apply_patch(root, workspace.fix_diff())   # ... and writes the real one
    results.append(await tutor.call("break_check", break_id=break_id, seed=CHECK_SEED))
    return results


async def tutor_quiz(tutor: Tutor, quiz: Quiz, lang: str) -> list[dict[str, Any]]:
    results = []
    for question, inputs in quiz_plan(quiz, lang):
        asked = await tutor.call("quiz_question", quiz=quiz.id)
        assert asked["question"]["id"] == question.id
        for text in inputs:
            results.append(await tutor.call("quiz_answer", quiz=quiz.id,
                                            question_id=question.id, answer=text))
    return results


async def tutor_exercise(tutor: Tutor, exercise_id: str) -> list[dict[str, Any]]:
    shown = await tutor.call("exercise_show", exercise_id=exercise_id)
    wrong, right = exercise_sources(exercise_id)
    Path(shown["file"]).write_text(wrong, encoding="utf-8")
    first = await tutor.call("exercise_check", exercise_id=exercise_id)
    Path(shown["file"]).write_text(right, encoding="utf-8")
    second = await tutor.call("exercise_check", exercise_id=exercise_id)
    return [shown, first, second]


# --- the same walk in the terminal -----------------------------------------------------------

def cli(*argv: str) -> int:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return main(list(argv))


def cli_walk(learner: Path, lang: str, break_id: str, quiz: Quiz, exercise_id: str) -> None:
    who = ["--lang", lang, "--learner-dir", str(learner)]
    root = learner / "work" / "breaks" / break_id
    assert cli("break", "start", break_id, "--workdir", str(root), *who) == 0
    notes = root / "NOTES.md"
    notes.write_text(with_predictions(notes.read_text(encoding="utf-8"), dict(
        enumerate(predictions(break_id, lang), 1))), encoding="utf-8")
    assert cli("break", "run", "--workdir", str(root), *who) == 0
    assert cli("break", "hint", "--workdir", str(root), *who) == 0
    assert cli("break", "hint", "--workdir", str(root), *who) == 0
    apply_patch(root, wrong_fix(break_id))
    seed = ["--seed", str(CHECK_SEED)]
    assert cli("break", "check", "--workdir", str(root), *seed, *who) == 1
    workspace = Workspace.open(root)
    workspace.reset()
    apply_patch(root, workspace.fix_diff())
    assert cli("break", "check", "--workdir", str(root), *seed, *who) == 0

    typed_lines = [line for _, inputs in quiz_plan(quiz, lang) for line in inputs]
    # a recall question reads its attempt up to an empty line, then the self-mark
    stdin = "\n".join(line + ("\n" if line == "my attempt" else "") for line in typed_lines)
    take = subprocess.run([sys.executable, "-m", "minimodel", "quiz", "take", quiz.id, *who],
                          input=stdin + "\n", capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin",
                               "HOME": str(learner)})
    assert take.returncode == 0, take.stdout[-2000:] + take.stderr[-2000:]

    place = learner / "work" / "exercises" / f"{exercise_id}.py"
    place.parent.mkdir(parents=True, exist_ok=True)
    wrong, right = exercise_sources(exercise_id)
    assert cli("exercise", "start", exercise_id, "--file", str(place), *who) == 0
    place.write_text(wrong, encoding="utf-8")
    assert cli("exercise", "check", exercise_id, "--file", str(place), *who) == 1
    place.write_text(right, encoding="utf-8")
    assert cli("exercise", "check", exercise_id, "--file", str(place), *who) == 0
