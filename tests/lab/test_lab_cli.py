"""``minimodel lab next|done|status|validate``: the path walked by a learner in a temp folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

import minimodel.lab.lessons as lessons_module
from minimodel.cli import main
from minimodel.lab import quiz
from minimodel.lab.progress import Progress

ONE_LESSON = """---
title: "{title}"
quiz: [q-13-02, q-13-03]
breaks: [frequent-tokens-learn-slowly]
exercises: [embedding-lookup]
---

# {title}

```python
x = 1
```

```python
print(x)
```

```output
1
```
"""


@pytest.fixture
def one_lesson(tmp_path, monkeypatch) -> Path:
    """A curriculum of one lesson that owns two questions, a break and an exercise."""
    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "gather.md").write_text(ONE_LESSON.format(title="Gather"), encoding="utf-8")
    (folder / "gather.es.md").write_text(ONE_LESSON.format(title="Consulta"),
                                            encoding="utf-8")
    (tmp_path / "path.yaml").write_text("- gather\n", encoding="utf-8")
    real = lessons_module.load_lessons

    def load(lessons_dir: Path = folder) -> list:
        return real(folder)

    # The modules that imported load_lessons by name first, the defining module last: patching
    # it first would let a module imported now record the stand-in as its "original".
    for module in ("minimodel.lab.path", "minimodel.lab.quiz.loader", "minimodel.lab.items",
                   "minimodel.lab.lessons"):
        monkeypatch.setattr(f"{module}.load_lessons", load)
    return folder


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def next_json(capsys, learner: Path, *extra: str) -> dict:
    code, out = run(capsys, "lab", "next", "--json", "--learner-dir", str(learner), *extra)
    assert code == 0, out
    return json.loads(out)


def test_next_walks_lesson_questions_break_exercise(capsys, tmp_path, one_lesson):
    learner = tmp_path / "learner"
    step = next_json(capsys, learner)["step"]
    assert (step["kind"], step["id"]) == ("lesson", "gather")
    assert Path(step["read"]).name == "gather.md"     # no site built: the source
    assert step["notebook"] == "minimodel lab notebook 01"

    # Asking again = moving on: the lesson is read and its questions come next. Without an
    # answers file (no terminal here) the command to take them is named, nothing is recorded.
    report = next_json(capsys, learner)
    assert report["moved_on"] == "gather"
    assert report["step"] == {"kind": "quiz", "id": "gather", "lesson": "gather",
                              "command": f"minimodel quiz take gather --learner-dir {learner}"}
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"q-13-02": 2, "q-13-03": 99}), encoding="utf-8")
    report = next_json(capsys, learner, "--answers", str(answers))
    assert report["step"]["result"]["score"] == 1 and report["step"]["result"]["total"] == 2

    # One right of two is still a quiz taken: the break starts in the default folder.
    report = next_json(capsys, learner)
    workdir = learner / "work" / "breaks" / "frequent-tokens-learn-slowly"
    assert report["step"] == {"kind": "break", "id": "frequent-tokens-learn-slowly",
                              "lesson": "gather", "workdir": str(workdir), "started": True,
                              "already_open": False}
    assert (workdir / "minimodel" / "nn" / "embedding.py").is_file()
    # Not fixed yet: the next call names the open workspace instead of restarting it, and
    # the JSON says so as the text does ("already open"), not "started": false.
    again = next_json(capsys, learner)["step"]
    assert again["started"] is True and again["already_open"] is True
    code, out = run(capsys, "lab", "next", "--learner-dir", str(learner))
    assert code == 0 and "already open" in out
    Progress(learner).record("break", "frequent-tokens-learn-slowly", "fixed")

    report = next_json(capsys, learner)
    stub = learner / "work" / "exercises" / "embedding-lookup.py"
    assert report["step"] == {"kind": "exercise", "id": "embedding-lookup",
                              "lesson": "gather", "file": str(stub), "started": True,
                              "already_open": False}
    assert "def embed(" in stub.read_text(encoding="utf-8")
    Progress(learner).record("exercise", "embedding-lookup", "passed")
    assert next_json(capsys, learner)["step"] is None

    status = json.loads(run(capsys, "lab", "status", "--json", "--learner-dir",
                            str(learner))[1])
    assert status["next"] is None
    assert status["totals"] == {"lesson": {"done": 1, "total": 1},
                                "quiz": {"done": 1, "total": 1, "right": 1, "questions": 2},
                                "break": {"done": 1, "total": 1, "revealed": 0},
                                "exercise": {"done": 1, "total": 1, "revealed": 0}}
    steps = status["path"][0]["steps"]
    assert [(s["kind"], s["done"]) for s in steps] == [
        ("lesson", True), ("quiz", True), ("break", True), ("exercise", True)]
    assert steps[1]["right"] == 1 and steps[1]["attempts"] == 1


def test_skip_and_done_keep_the_path_moving(capsys, tmp_path, one_lesson):
    learner = tmp_path / "learner"
    code, out = run(capsys, "lab", "done", "1", "--learner-dir", str(learner))
    assert code == 0 and "gather" in out
    report = next_json(capsys, learner, "--skip")     # skips the questions
    assert report["skipped"] == "quiz:gather" and report["step"]["kind"] == "break"
    status = json.loads(run(capsys, "lab", "status", "--json", "--learner-dir",
                            str(learner))[1])
    quiz_step = status["path"][0]["steps"][1]
    assert quiz_step["skipped"] is True and quiz_step["done"] is False


def test_the_end_of_the_path_offers_the_skipped_steps_again(capsys, tmp_path, one_lesson):
    learner = tmp_path / "learner"
    progress = Progress(learner)
    brk = "frequent-tokens-learn-slowly"
    progress.record("path", "lesson:gather", "read")
    for key in ("quiz:gather", f"break:{brk}"):
        progress.record("path", key, "skipped", skips=1)
    progress.record("exercise", "embedding-lookup", "passed")
    # Every step never skipped is done: the end of the path, but not its completion.
    for lang, end, done in (("en", "end of the path", "whole path"),
                            ("es", "final del camino", "todo el camino")):
        code, out = run(capsys, "lab", "next", "--lang", lang, "--learner-dir", str(learner))
        assert code == 0 and end in out and done not in out, out
        assert "01 gather · " in out and brk in out and "quiz take gather" in out
    report = next_json(capsys, learner)
    assert report["open"] == ["quiz:gather", f"break:{brk}"]
    assert (report["step"]["kind"], report["step"]["id"]) == ("quiz", "gather")
    status = json.loads(run(capsys, "lab", "status", "--json", "--learner-dir",
                            str(learner))[1])
    assert status["next"] == {"kind": "quiz", "id": "gather"}
    # Skipping it again brings up the other skipped step (skipped fewer times).
    report = next_json(capsys, learner, "--skip")
    assert report["skipped"] == "quiz:gather" and report["step"]["id"] == brk
    assert report["open"] == [f"break:{brk}", "quiz:gather"]
    # Only when every step is done is the path complete.
    progress.record("break", brk, "fixed")
    progress.record("quiz", "gather", "attempted", attempts=1, best_score=1, total=2)
    assert next_json(capsys, learner)["step"] is None
    code, out = run(capsys, "lab", "next", "--learner-dir", str(learner))
    assert "whole path" in out


def test_status_text_says_what_done_means_in_both_languages(capsys, tmp_path, one_lesson):
    learner = tmp_path / "learner"
    progress = Progress(learner)
    progress.record("quiz", "gather", "attempted", attempts=1, best_score=1, total=2)
    progress.record("break", "frequent-tokens-learn-slowly", "fixed")
    code, out = run(capsys, "lab", "status", "--learner-dir", str(learner))
    assert code == 0
    # Regression: a quiz with 25/27 right read "quizzes: 0/1 done".
    assert "quizzes taken: 1/1 (1/2 questions right in the best takes)" in out
    assert "attempts: 1, best 1/2 right" in out and "Done means:" in out
    assert "breaks fixed: 1/1" in out
    code, out = run(capsys, "lab", "status", "--lang", "es", "--learner-dir", str(learner))
    # Regression: "averías: 2/7 completados" (the participle must agree with "averías").
    assert "averías arregladas: 1/1" in out and "ejercicios superados: 0/1" in out
    assert "Lección 01 · Consulta" in out and "Hecho significa:" in out
    assert "completados" not in out and "not started" not in out


def test_quiz_take_by_lesson(capsys, tmp_path, one_lesson):
    answers = tmp_path / "a.json"
    answers.write_text(json.dumps({"q-13-02": 1}), encoding="utf-8")
    for argv in (["--lesson", "1"], ["--lesson", "gather"], ["gather"], ["01-gather"]):
        code, out = run(capsys, "quiz", "take", *argv, "--answers", str(answers), "--json",
                        "--learner-dir", str(tmp_path))
        assert code == 0 and json.loads(out)["total"] == 2
    code, out = run(capsys, "quiz", "export", "gather", "--json")
    assert [q["id"] for q in json.loads(out)["questions"]] == ["q-13-02", "q-13-03"]
    # The file's id still works and holds every question.
    code, out = run(capsys, "quiz", "export", "phase-13-embeddings", "--json")
    assert len(json.loads(out)["questions"]) == len(quiz.load_quiz("phase-13-embeddings").ids)


def test_validate_sections_and_a_broken_link(capsys, tmp_path, one_lesson):
    (one_lesson / "gather.md").write_text(
        ONE_LESSON.format(title="Gather").replace("q-13-03]", "q-13-99]"), encoding="utf-8")
    code, out = run(capsys, "lab", "validate", "--section", "links", "--json")
    problems = json.loads(out)["sections"]["links"]
    assert code == 1 and list(json.loads(out)["sections"]) == ["links"]
    assert "lesson gather lists quiz: 'q-13-99', but no question has that id" in problems[0]
    # q-13-01 is listed by no lesson of this one-lesson curriculum, and not in lessonless.yaml.
    assert any(p.startswith("question q-13-01 belongs to no lesson") for p in problems)


def test_the_shipped_links_and_translations_are_sound(capsys):
    code, out = run(capsys, "lab", "validate", "--section", "links", "--section",
                    "translations", "--json")
    assert json.loads(out) == {"ok": True, "sections": {"links": [], "translations": []},
                               "warnings": {}}
    assert code == 0


@pytest.mark.parametrize("argv", [["lab"], ["lab", "status"], ["lab", "validate"],
                                  ["lab", "next"], ["lab", "done"], ["lab", "rehash"]])
def test_lab_help_has_examples(capsys, argv):
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    assert info.value.code == 0 and "examples:" in capsys.readouterr().out


def test_a_new_lesson_quiz_file_in_the_current_schema_loads_unchanged(tmp_path, monkeypatch,
                                                                        one_lesson):
    # The lesson writers' files: quizzes/<slug>.yaml, quiz id = the lesson slug, question ids
    # q-<slug>-<k>, listed in the lesson's front matter.
    from minimodel.lab.quiz import loader

    quizzes = tmp_path / "quizzes"
    shutil.copytree(loader.CONTENT_DIR, quizzes)
    question = {"id": "q-gather-1", "kind": "single", "title": {"en": "Rows", "es": "Filas"},
                "prompt": {"en": "E[[2, 0]] has how many rows?",
                           "es": "¿Cuántas filas tiene E[[2, 0]]?"},
                "choices": [{"en": "1", "es": "1"}, {"en": "2", "es": "2"}], "answer": 1,
                "explanation": {"en": "One per id.", "es": "Una por id."}}
    (quizzes / "gather.yaml").write_text(yaml.safe_dump(
        {"id": "gather", "title": {"en": "Gather", "es": "Consulta"},
         "questions": [question]}, allow_unicode=True), encoding="utf-8")
    monkeypatch.setattr(loader, "CONTENT_DIR", quizzes)
    (one_lesson / "gather.md").write_text(
        ONE_LESSON.format(title="Gather").replace("q-13-03]", "q-13-03, q-gather-1]"),
        encoding="utf-8")
    assert loader.read_checked(quizzes / "gather.yaml")[1] == []
    quiz = loader.load_quiz("gather")
    assert quiz.ids == ["q-13-02", "q-13-03", "q-gather-1"]
    assert "gather" in loader.list_quizzes() and "phase-13-embeddings" in loader.list_quizzes()


def test_break_and_exercise_lists_follow_the_lessons_order():
    from minimodel.lab.breaks import load_all
    from minimodel.lab.exercises.registry import all_exercises
    from minimodel.lab.lessons import lesson_positions

    for kind, ids in (("break", [b.id for b in load_all()]),
                      ("exercise", [e.id for e in all_exercises()])):
        positions = lesson_positions(kind)
        linked = [i for i in ids if i in positions]
        assert linked == sorted(linked, key=positions.__getitem__)
        assert ids[:len(linked)] == linked        # the lesson-less ones come last


def test_the_glossary_check_reads_lessons_and_flags_calques(tmp_path):
    from minimodel.lab.terminology import glossary_problems, spanish_texts

    lessons = tmp_path / "lessons"
    lessons.mkdir()
    (lessons / "x.es.md").write_text(
        "---\ntitle: x\n---\n\nEl atado comparte E.\n\n```python\nel_atado = 1  # código\n```\n"
        "Una `búsqueda` en código no cuenta; la suma dispersa sí.\n", encoding="utf-8")
    problems = glossary_problems(spanish_texts(tmp_path / "none", (), page_dirs=(lessons,)))
    assert problems == [
        "x.es.md:5: Spanish text uses 'el atado'; the glossary's Spanish for 'the tie (E "
        "shared by lookup and head)' is 'la atadura'",
        "x.es.md:10: Spanish text uses 'suma dispersa'; the glossary's Spanish for "
        "'scatter-add' is 'suma por índices'"]


def test_a_missing_lesson_translation_is_flagged(tmp_path, monkeypatch, one_lesson):
    from minimodel.lab.freshness import lesson_problems

    assert lesson_problems(one_lesson) == []
    (one_lesson / "gather.es.md").write_text(
        ONE_LESSON.format(title="Consulta").replace("breaks: [frequent-tokens-learn-slowly]",
                                                    "breaks: []"), encoding="utf-8")
    assert lesson_problems(one_lesson) == [
        "lesson gather: gather.es.md lists breaks: [], the English lists "
        "['frequent-tokens-learn-slowly']; copy the English front matter's list"]
    (one_lesson / "gather.es.md").unlink()
    assert lesson_problems(one_lesson) == [
        "lesson gather: gather.es.md is missing; write the Spanish"]


def test_a_built_site_page_is_where_to_read(tmp_path, one_lesson):
    from minimodel.lab.lessons import load_lessons
    from minimodel.lab.path import reading_place

    lesson = load_lessons()[0]
    site = tmp_path / "site"
    assert reading_place(lesson, "es", site).suffix == ".md"     # not built: the source
    for page in (site / "lessons" / "gather.html", site / "es" / "lessons" / "gather.html"):
        page.parent.mkdir(parents=True)
        page.write_text("<html></html>", encoding="utf-8")
    assert reading_place(lesson, "en", site) == (site / "lessons" / "gather.html").resolve()
    assert reading_place(lesson, "es", site) == \
        (site / "es" / "lessons" / "gather.html").resolve()


def test_the_end_of_the_path_lists_the_open_steps_in_path_order(capsys, tmp_path, one_lesson):
    # Regression: the list came in the order `lab next` offers the steps (least-skipped
    # first), so the break was listed above the questions that come before it on the path.
    learner = tmp_path / "learner"
    progress = Progress(learner)
    brk = "frequent-tokens-learn-slowly"
    progress.record("path", "lesson:gather", "read")
    progress.record("path", "quiz:gather", "skipped", skips=2)
    progress.record("path", f"break:{brk}", "skipped", skips=1)
    progress.record("exercise", "embedding-lookup", "passed")
    code, out = run(capsys, "lab", "next", "--learner-dir", str(learner))
    listed = [line.strip() for line in out.splitlines() if line.startswith("  01 gather · ")]
    assert code == 0 and listed == ["01 gather · its questions (2)", f"01 gather · break {brk}"]
    assert f"Here is 01 gather · break {brk} again" in out       # the least-skipped, offered
    assert f"`minimodel lab next --skip --learner-dir {learner}`" in out
    assert next_json(capsys, learner)["open"] == [f"break:{brk}", "quiz:gather"]  # offer order


def test_status_keeps_a_long_lesson_title_on_one_line_in_80_columns(capsys, tmp_path,
                                                                     monkeypatch):
    """Titles wrapped at ~50 columns, in the steps' column, with the whole line to spare."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out = run(capsys, "lab", "status", "--learner-dir", str(tmp_path / "learner"))
    assert code == 0
    heads = [line.rstrip() for line in out.splitlines() if line.startswith("Lesson ")]
    longest = max((lesson.titles["en"] for lesson in lessons_module.load_lessons()), key=len)
    assert len(f"Lesson 01 · {longest}") <= 80    # the title fits: it must not wrap
    assert any(line.endswith(longest) for line in heads)
    states = {line.rstrip().rsplit("  ", 1)[-1].strip() for line in out.splitlines()
              if line.startswith("  read the lesson")}
    assert states == {"not started"}
