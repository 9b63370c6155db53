"""Pages generated from the lab's content: one per break and per exercise in each language,
the lab index, the quiz page (answers folded away) and the practice links of every lesson.

Each generated page says where it comes from; none of them is ever edited by hand.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from minimodel.lab.breaks import Break, list_breaks, load_break
from minimodel.lab.exercises import get_exercise, list_exercises
from minimodel.lab.exercises.cases import make_cases
from minimodel.lab.i18n import pick
from minimodel.lab.lessons import LESSONS_DIR, Lesson
from minimodel.lab.next_links import next_markdown
from minimodel.lab.quiz import load_all
from minimodel.lab.suggest import Suggest
from minimodel.messages import say

QUIZ_ID = "phase-13-embeddings"


def practice_problems(lessons: list[Lesson]) -> list[str]:
    """Practice items a lesson names that do not exist (a test and the build check them)."""
    known = {"quiz": {qid for quiz in load_all() for qid in quiz.ids},
             "breaks": {b["id"] for b in list_breaks()},
             "exercises": {e["id"] for e in list_exercises()}}
    return [f"lesson {lesson.stem}: unknown {kind[:-1] if kind != 'quiz' else 'quiz question'} "
            f"{item!r}" for lesson in lessons for kind in known
            for item in getattr(lesson, kind) if item not in known[kind]]


def lesson_of(lessons: list[Lesson], kind: str, item: str) -> Lesson | None:
    """The lesson whose front matter lists ``item`` under ``kind`` (quiz/breaks/exercises)."""
    return next((lesson for lesson in lessons if item in getattr(lesson, kind)), None)


def practice_section(lesson: Lesson, lang: str, lessons_dir: Path = LESSONS_DIR) -> str:
    """The links appended to a lesson: its quiz questions, breaks and exercises, and last the
    lesson that follows it in ``path.yaml`` (generated: lessons never write their "Next:").

    Every lesson ends with its own practice section ("Practice", "Your turn"), so the links
    join that section instead of opening a second one.
    """
    # each question id -> the quiz file it lives in (the phase quiz or a lesson's own quiz)
    owner = {qid: quiz for quiz in load_all() for qid in quiz.ids}
    lines = [""]
    # the link is named after its own quiz: a lesson's quiz is not "the phase 13 quiz"
    for quiz in {owner[qid].id: owner[qid] for qid in lesson.quiz}.values():
        quiz_id = quiz.id
        lines.append(f"**{say('site.quiz', lang)}** ([{pick(quiz.title, lang)}]"
                     f"(../quizzes/{quiz_id}.md)):")
        lines.append("")
        lines += [f"- {qid}: {pick(owner[qid].question(qid).title, lang)}"
                  for qid in lesson.quiz if owner[qid].id == quiz_id]
        lines.append("")
    for kind in ("breaks", "exercises"):
        items = getattr(lesson, kind)
        if items:
            lines.append(f"**{say(f'site.{kind}', lang)}:** " + ", ".join(
                f"[`{item}`](../lab/{kind}/{item}.md)" for item in items))
            lines.append("")
    lines += [say("site.notebook", lang, lesson=f"{lesson.number:02d}"), ""]
    following = next_markdown(lesson, lang, lessons_dir)   # from path.yaml, never stale
    lines += [following, ""] if following else []
    return "\n".join(lines)


def lesson_link(lesson: Lesson, lang: str, to_docs_root: str) -> str:
    """``Lesson: [title](<root>lessons/<stem>.md)`` in ``lang``."""
    return (f"{say('site.lesson', lang)}: [{lesson.titles.get(lang, lesson.titles['en'])}]"
            f"({to_docs_root}lessons/{lesson.stem}.md)")


def _lab_page_head(title: str, item_id: str, lesson: Lesson | None, lang: str) -> list[str]:
    """Title, id and the link back to the lesson, for a page under lab/<kind>/."""
    head = [f"# {title}", "", f"`{item_id}`", ""]
    return head + ([lesson_link(lesson, lang, "../../"), ""] if lesson is not None else [])


def _texts(data: dict[str, Any], key: str, lang: str) -> list[str]:
    """The texts under ``key`` in ``lang``: a list of two-language entries, or one entry.

    One entry is ``{"en": ..., "es": ...}``; iterating over it would give its language keys
    (the bug that showed "1. en 2. es" on the break pages), so it is wrapped in a list.
    """
    value = data.get(key) or []
    items = [value] if isinstance(value, (dict, str)) else list(value)
    return [pick(item, lang).strip() for item in items if pick(item, lang).strip()]


def unsearched(lines: list[str]) -> list[str]:
    """Markdown kept out of the site search (``data-search-exclude``, read by mkdocs-material's
    search plugin): a collapsed hint or answer must not show in a search preview. A
    ``<section>``, not a ``<div>``: the plugin tells elements apart by tag name only, so the
    first ``</div>`` inside (a highlighted code block's) would end the exclusion early."""
    return ["<section data-search-exclude markdown>", "", *lines, "</section>", ""]


def break_page(break_id: str | Break, lang: str, lesson: Lesson | None,
               hints: int | None = None) -> str:
    """A break's page: story, predictions, observations and the hint ladder; never the fix.

    ``break_id`` may be a loaded :class:`Break`; ``hints`` keeps only the first ones in the
    ladder (the page as a learner at that rung has unfolded it; default: every hint).
    """
    brk = break_id if isinstance(break_id, Break) else load_break(break_id)
    break_id = brk.id
    parts = _lab_page_head(brk.text("title", lang), break_id, lesson, lang)
    parts += [brk.text("summary", lang).strip(), "", f"## {say('site.story', lang)}", "",
              brk.text("intro", lang).strip(), ""]
    for key in ("predict", "observe"):
        items = _texts(brk.data, key, lang)
        if len(items) == 1:
            parts += [f"## {say(f'site.{key}', lang)}", "", items[0], ""]
        elif items:
            parts += [f"## {say(f'site.{key}', lang)}", ""]
            parts += [f"{i}. {t}" for i, t in enumerate(items, 1)] + [""]
    parts += [f"## {say('site.hints', lang)}", ""]
    ladder: list[str] = []
    for i, hint in enumerate(_texts(brk.data, "hints", lang)[:hints], 1):
        ladder += [f'??? note "{i}"', "", "    " + hint.replace("\n", "\n    "), ""]
    parts += unsearched(ladder)
    suggest, workdir = Suggest(lang), f"work/{break_id}"
    parts += [f"## {say('site.start', lang)}", "", "```bash",
              suggest("break", "start", break_id, "--workdir", workdir),
              suggest("break", "run", "--workdir", workdir),
              suggest("break", "check", "--workdir", workdir), "```", ""]
    return "\n".join(parts)


def exercise_page(exercise_id: str, lang: str, lesson: Lesson | None) -> str:
    """An exercise's page: statement, signature, rules, the public example, the commands."""
    ex = get_exercise(exercise_id)
    parts = _lab_page_head(ex.text("title", lang), exercise_id, lesson, lang)
    parts += [f"## {say('site.statement', lang)}", "", ex.text("statement", lang).strip(), "",
              f"## {say('site.signature', lang)}", "", "```python", f"def {ex.signature()}: ...",
              "```", ""]
    parts += [f"## {say('site.rules', lang)}", ""]
    if ex.forbidden or ex.forbidden_ops:
        parts += [f"{say('site.forbidden', lang)}: " + ", ".join(
            f"`{name}`" for name in [*ex.forbidden, *ex.forbidden_ops]), ""]
    tol = ex.full_tolerance()
    parts += [f"{say('site.tolerance', lang)}: float64 rtol={tol['rtol']:g} atol={tol['atol']:g}; "
              f"float32 rtol={tol['rtol_float32']:g} atol={tol['atol_float32']:g} "
              f"({say('site.tolerance_float32', lang)})", ""]
    example = make_cases(ex.cases["generator"], seed=0, examples=1,
                         params=ex.cases.get("params"))[0]
    parts += [f"## {say('site.example', lang)}", "",
              f"| {say('site.argument', lang)} | {say('site.value', lang)} |", "|---|---|"]
    parts += [f"| `{name}` | {desc} |" for name, desc in example.describe_inputs().items()]
    file = exercise_id.replace("-", "_") + ".py"
    suggest = Suggest(lang)
    parts += ["", say("site.try_it", lang), "", "```bash",
              suggest("exercise", "start", exercise_id, "--file", file),
              suggest("exercise", "check", exercise_id, "--file", file), "```", ""]
    return "\n".join(parts)


_MARK = " ✓"
# Lines that give the answer away: everything from one of them to the next question is folded.
_ANSWER_START = re.compile(r"^(\*\*(Explanation|Explicación)\.\*\*|(Value|Valor|Accepted "
                           r"answers|Respuestas aceptadas|Right order|Orden correcto|Model "
                           r"answer|Respuesta modelo):)")


def quiz_page(mirror: str, lessons: list[Lesson], lang: str, quiz_id: str = QUIZ_ID) -> str:
    """The committed quiz mirror as a site page.

    Its "generated from" notes (an HTML comment and a quote) become one line, its GitHub
    language links are dropped (the site has a language switch), each question links back to
    its lesson, and the answer (the marked options, the value, the model answer and the
    explanation) goes into a closed "show the answer" fold, so a reader can try a question
    before seeing its answer.
    """
    note = say("site.generated", lang, source=f"src/minimodel/lab/content/quizzes/{quiz_id}.yaml",
             command=Suggest(lang)("quiz", "take", quiz_id))
    out: list[str] = []
    marked: list[str] = []       # the right options of the current question
    folded: list[str] | None = None

    def close_fold() -> None:
        nonlocal folded, marked
        if folded is not None or marked:
            fold = [f'??? success "{say("site.show_answer", lang)}"', ""]
            if marked:
                fold.extend([f"    **{say('site.answer', lang)}:** " + "; ".join(marked), ""])
            fold.extend(("    " + line).rstrip() for line in folded or [])
            fold.append("")
            out.extend(unsearched(fold))
        folded, marked = None, []

    for line in mirror.splitlines():
        if line.startswith(("<!-- Generated", "> Generated", "> Generad", "[English](")):
            continue
        if line.startswith("# ") and note:      # the note goes under the page's title
            out += [line, "", note, ""]
            note = ""
            continue
        found = re.match(r"## (q-[a-z0-9-]+) ", line)
        if found or line.startswith("## "):
            close_fold()
            lesson = lesson_of(lessons, "quiz", found.group(1)) if found else None
            out += [line, ""] + ([lesson_link(lesson, lang, "../"), ""] if lesson else [])
            continue
        option = re.match(r"^\d+\. ", line)
        if line.endswith(_MARK):
            line = line[:-len(_MARK)]
            if option and folded is None:
                marked.append(line[option.end():])
        if folded is None and _ANSWER_START.match(line):
            folded = []
        if folded is not None:
            folded.append(line)
        else:
            out.append(line)
    close_fold()
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)) + "\n"


def lab_index(lang: str) -> str:
    """The lab's landing page: the quiz, then every break and exercise by title."""
    parts = [f"# {say('site.lab', lang)}", "", say("site.lab_intro", lang), "",
             f"[{say('site.quiz_page', lang)}](../quizzes/{QUIZ_ID}.md)", "",
             f"## {say('site.breaks', lang)}", ""]
    parts += [f"- [{load_break(b['id']).text('title', lang)}](breaks/{b['id']}.md)"
              for b in list_breaks()]
    parts += ["", f"## {say('site.exercises', lang)}", ""]
    parts += [f"- [{get_exercise(e['id']).text('title', lang)}](exercises/{e['id']}.md)"
              for e in list_exercises()]
    return "\n".join(parts) + "\n"
