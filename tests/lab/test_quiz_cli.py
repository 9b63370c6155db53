"""The ``minimodel quiz`` command: export contract, take, review, render and the stdin session."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
import yaml

from minimodel.cli import main
from minimodel.lab import quiz
from minimodel.lab.freshness import without_stamps
from minimodel.lab.lessons import load_lessons
from minimodel.lab.quiz import render

QUIZ_ID = "phase-13-embeddings"


@pytest.fixture(autouse=True)
def learner(tmp_path, monkeypatch) -> Path:
    """Every test gets its own learner folder; nothing touches ~/.minimodel."""
    folder = tmp_path / "learner"
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(folder))
    return folder


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def correct_answers() -> dict:
    """A right answer for every question, as a learner writes it in an answers file (recall
    questions: marked as recalled)."""
    out = {}
    for q in quiz.load_quiz(QUIZ_ID).questions:
        out[q.id] = (q.answer["value"] if q.kind == "numeric" else q.answer["es"][0]
                     if q.kind == "short" else True if q.kind == "recall" else q.answer)
    return out


# Counted from the quiz file, never written: a question added to it changes them.
PHASE_QUIZ = quiz.load_quiz(QUIZ_ID)
N_QUESTIONS = len(PHASE_QUIZ.questions)
RECALL = [q.id for q in PHASE_QUIZ.questions if q.kind == "recall"]
N_GRADED = N_QUESTIONS - len(RECALL)


def write_answers(tmp_path: Path, answers: dict, name: str = "answers.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(answers), encoding="utf-8")
    return str(path)


def quiz_entry(learner: Path) -> dict:
    return json.loads((learner / "progress" / "quiz.json").read_text())[QUIZ_ID]


# --- export -------------------------------------------------------------------------------


def test_export_json_contract(capsys):
    code, out, _ = run(capsys, "quiz", "export", QUIZ_ID, "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"id", "questions"} and data["id"] == QUIZ_ID
    raw = yaml.safe_load(quiz.quiz_path(QUIZ_ID).read_text(encoding="utf-8"))["questions"]
    raw = without_stamps(raw)   # the translation stamps are the authors' business
    assert [q["id"] for q in data["questions"]] == [q["id"] for q in raw]
    for exported, source in zip(data["questions"], raw):
        expected_keys = {"id", "kind", "prompt", "choices", "answer", "explanation"}
        assert set(exported) == expected_keys | ({"rubric"} if source["kind"] == "recall" else set())
        assert exported["prompt"] == source["prompt"] and set(exported["prompt"]) == {"en", "es"}
        assert exported["explanation"] == source["explanation"]
        kind, answer = exported["kind"], exported["answer"]
        if kind == "numeric":   # what the grader applies: the prompt's decimals, stated
            source["answer"] = {**source["answer"], **{k: answer[k] for k in ("decimals",)
                                                       if k in answer}}
            assert answer["tolerance"] <= source["answer"]["tolerance"]
            source["answer"]["tolerance"] = answer["tolerance"]
        assert answer == source["answer"]
        if kind == "single":
            assert isinstance(answer, int) and 0 <= answer < len(exported["choices"])
        elif kind == "multi":
            assert answer and all(isinstance(i, int) for i in answer)
        elif kind == "order":
            assert sorted(answer) == list(range(len(exported["choices"])))
        elif kind == "short":
            assert exported["choices"] == [] and set(answer) == {"en", "es"}
        elif kind == "recall":
            assert set(answer) == {"en", "es"} and len(exported["rubric"]) >= 2
        else:
            assert exported["choices"] == [] and {"value", "tolerance"} <= set(answer)
        assert all(set(c) == {"en", "es"} for c in exported["choices"])
    first = data["questions"][0]
    assert first["answer"] == 3 and first["choices"][3]["en"] == "`x_i @ E`"


def test_export_markdown_in_spanish(capsys):
    code, out, _ = run(capsys, "quiz", "export", QUIZ_ID, "--lang", "es")
    assert code == 0 and "## q-13-01 — Una indexación es un producto de matrices" in out


def test_list_json(capsys):
    code, out, _ = run(capsys, "quiz", "list", "--json")
    assert code == 0
    rows = json.loads(out)   # each lesson's questions, in the path's order, then the files
    first = next(lesson for lesson in load_lessons() if lesson.quiz)
    assert rows[0] == {"id": first.slug, "title": first.titles["en"],
                       "questions": len(first.quiz)}
    assert rows[-1] == {"id": QUIZ_ID, "title": "Phase 13 quiz: embeddings and weight tying",
                        "questions": N_QUESTIONS}
    with_questions = [lesson.slug for lesson in load_lessons() if lesson.quiz]
    assert [r["id"] for r in rows[:len(with_questions)]] == with_questions


# --- take --answers -----------------------------------------------------------------------


def test_take_all_correct_then_one_wrong(capsys, tmp_path, learner):
    answers = correct_answers()
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID, "--answers",
                       write_answers(tmp_path, answers), "--json")
    report = json.loads(out)
    assert code == 0 and set(report) == {"score", "total", "results", "recall", "recorded"}
    assert report["score"] == report["total"] == N_GRADED
    assert all(r == {"id": r["id"], "correct": True, "status": "right"} for r in report["results"])
    assert report["recall"] == {"answered": len(RECALL), "recalled": len(RECALL),
                                "total": len(RECALL),
                                "results": [{"id": qid, "recalled": True} for qid in RECALL]}

    answers["q-13-01"] = 0
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID, "--answers",
                       write_answers(tmp_path, answers), "--json")
    report = json.loads(out)
    assert report["score"] == N_GRADED - 1
    assert [r["id"] for r in report["results"] if not r["correct"]] == ["q-13-01"]

    entry = quiz_entry(learner)
    assert (entry["score"], entry["best_score"], entry["attempts"]) == (N_GRADED - 1, N_GRADED, 2)
    assert entry["status"] == "passed" and entry["results"]["q-13-01"] is False
    assert entry["boxes"]["q-13-01"]["box"] == 1 and entry["boxes"]["q-13-02"]["box"] == 3


def test_take_accepts_the_exported_key_for_every_kind(capsys, tmp_path):
    code, out, _ = run(capsys, "quiz", "export", QUIZ_ID, "--json")
    key = {q["id"]: q["answer"] for q in json.loads(out)["questions"]}
    assert {q["kind"] for q in json.loads(out)["questions"]} == set(quiz.KINDS)
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID, "--answers",
                       write_answers(tmp_path, key), "--json")
    report = json.loads(out)
    assert code == 0 and report["score"] == report["total"] == N_GRADED
    assert report["recall"]["recalled"] == len(RECALL) >= 1


def test_take_summary_lists_missed_questions_and_recall_apart(capsys, tmp_path):
    answers = correct_answers()
    answers.update({"q-13-04": 1, "q-13-19": "rank", "q-13-28": False})
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID, "--answers",
                       write_answers(tmp_path, answers), "--lang", "es")
    assert code == 0
    assert f"Puntuación: {N_GRADED - 2}/{N_GRADED}" in out and "Falladas (2):" in out
    assert "q-13-04  ¿Por qué una suma por índices?" in out
    assert "q-13-19  Pon nombre al diagnóstico" in out
    assert "Se esperaba" in out and "rango efectivo" in out and "gana la última" in out
    assert "Sin responder" not in out
    assert f"1 de {len(RECALL)} recordadas" in out and "q-13-28  Tokens poco frecuentes en un modelo atado" in out
    assert f"minimodel quiz review {QUIZ_ID} --lang es" in out


def test_take_accepts_yaml_and_counts_missing_as_wrong(capsys, tmp_path, learner):
    path = tmp_path / "a.yaml"
    path.write_text("q-13-01: 3\nq-13-05: [0, 2, 3]\n", encoding="utf-8")
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID, "--answers", str(path), "--json")
    assert code == 0 and json.loads(out)["score"] == 2
    assert quiz_entry(learner)["status"] == "attempted"
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID, "--answers", str(path))
    assert f"Not answered ({N_GRADED - 2}): q-13-02, q-13-03" in " ".join(out.split())


def test_take_rejects_unknown_ids_and_malformed_answers(capsys, tmp_path, learner):
    bad = write_answers(tmp_path, {"q-13-77": 1, "q-13-15": [6.238]})
    code, out, err = run(capsys, "quiz", "take", QUIZ_ID, "--answers", bad, "--json")
    assert code == 2 and out == ""
    assert "unknown question ids q-13-77" in err and "q-13-15 is a numeric question" in err
    assert not (learner / "progress" / "quiz.json").exists()


def test_take_reports_an_unreadable_answer_with_its_reason_not_as_wrong(capsys, tmp_path,
                                                                        learner):
    answers = write_answers(tmp_path, {"q-13-08": "65536 each", "q-13-15": "about six or so",
                                       "q-13-03": "4 columns"})
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID, "--answers", answers, "--json")
    report = json.loads(out)
    by_id = {r["id"]: r for r in report["results"]}
    # Asked again, never graded: nothing is recorded while the file holds an unclear answer.
    assert code == 1 and report["recorded"] is False   # asked again: no usage error
    assert not (learner / "progress" / "quiz.json").exists()
    assert by_id["q-13-08"]["status"] == by_id["q-13-15"]["status"] == "unreadable"
    assert "the word 'each' changes what the number means" in by_id["q-13-08"]["reason"]
    assert by_id["q-13-03"]["status"] == "wrong"
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID, "--answers", answers)
    flat = " ".join(out.split())
    assert "unreadable: '65536 each': the word 'each'" in flat
    assert "Your answer: 4 columns" in flat and "The question asks for rows, not columns." in flat
    # the expected value under one label (not "Expected: Value: ...")
    assert "Expected: 65,536 parameters" in flat and "Expected: 6.238 ± 0.001" in flat
    assert "Value:" not in flat
    assert "could not be read one way, so this take was not recorded" in flat


@pytest.mark.parametrize("answer", ["6.24", "ln 512 = 5.545", "6.238 (negative)",
                                    "6.238 [= ln 256]", "6.238 ((nats))"])
def test_an_answers_file_asks_again_where_a_live_take_would(capsys, tmp_path, learner, answer):
    # "6.24" for "give 3 decimals" and working that disagrees with its result are asked again
    # live; from a file they stop the take the same way instead of being marked wrong.
    path = write_answers(tmp_path, {**correct_answers(), "q-13-15": answer})
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID, "--answers", path, "--json")
    assert code == 1 and json.loads(out)["recorded"] is False
    path = write_answers(tmp_path, {**correct_answers(), "q-13-15": "ln 512 ≈ 6.238"})
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID, "--answers", path, "--json")
    assert code == 0 and json.loads(out)["score"] == N_GRADED == quiz_entry(learner)["score"]


def test_spanish_decimal_comma_gets_one_grade_live_and_recorded(capsys, monkeypatch, learner):
    # Regression: "6,238" (ln 512, "da 3 decimales") was "¡Correcto!" on screen, then graded
    # again in English at the end, recorded as failed and the score dropped to 25/27.
    lines = [("6,238" if line == "6.238" else "5,545" if line == "5.545" else line)
             for line in typed_lines()]
    assert "6,238" in lines and "5,545" in lines
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID, "--lang", "es")
    assert code == 0 and f"Puntuación: {N_GRADED}/{N_GRADED}" in out and "unreadable" not in out
    entry = quiz_entry(learner)
    assert entry["score"] == N_GRADED and entry["results"]["q-13-15"] is True
    assert entry["results"]["q-13-18"] is True


def test_a_spanish_take_resumed_keeps_its_decimal_comma_answers(capsys, monkeypatch, learner):
    lines = [("6,238" if line == "6.238" else line) for line in typed_lines()]
    cut = lines.index("6,238") + 1
    monkeypatch.setattr("sys.stdin", Keyboard(lines[:cut]))
    assert run(capsys, "quiz", "take", QUIZ_ID, "--lang", "es")[0] == 130
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines[cut:]) + "\n"))
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID, "--lang", "es")
    assert code == 0 and f"Puntuación: {N_GRADED}/{N_GRADED}" in out


def test_export_states_the_tolerance_the_grader_applies(capsys):
    code, out, _ = run(capsys, "quiz", "export", QUIZ_ID, "--json")
    answers = {q["id"]: q["answer"] for q in json.loads(out)["questions"]}
    assert answers["q-13-15"] == {"value": 6.238, "tolerance": 0.001, "decimals": 3}
    assert answers["q-13-18"]["tolerance"] == 0.001 and answers["q-13-08"]["tolerance"] == 0


def test_review_reports_an_unreadable_answer_and_grades_the_rest(capsys, tmp_path):
    answers = write_answers(tmp_path, {"q-13-08": "65536 per matrix", "q-13-07": "2.1M"})
    code, out, _ = run(capsys, "quiz", "review", QUIZ_ID, "--answers", answers, "--json")
    report = json.loads(out)
    assert code == 0 and report["results"] == [{"id": "q-13-07", "correct": False}]
    assert report["unreadable"][0]["id"] == "q-13-08"
    assert "the word 'per' changes what the number means" in report["unreadable"][0]["reason"]


def test_take_answers_dev_null_says_the_file_is_empty(capsys):
    code, _, err = run(capsys, "quiz", "take", QUIZ_ID, "--answers", "/dev/null")
    assert code == 2 and "answers file /dev/null is empty" in err and "NoneType" not in err


def test_take_json_without_answers_is_an_error(capsys):
    code, _, err = run(capsys, "quiz", "take", QUIZ_ID, "--json")
    assert code == 2 and "--json needs --answers" in err


def test_unknown_quiz(capsys):
    code, _, err = run(capsys, "quiz", "export", "nope", "--json")
    assert code == 2 and "unknown quiz 'nope'" in err


@pytest.mark.parametrize("argv", [["--lesson", "99"], ["99"], ["--lesson", "no-such-lesson"]])
@pytest.mark.parametrize("lang, words", [("en", "no lesson"), ("es", "no hay ninguna lección")])
def test_an_unknown_lesson_is_answered_with_the_lessons(capsys, argv, lang, words):
    # `--lesson 99` once listed the quiz files' ids: the learner asked for a lesson, so the
    # answer names the lessons, by number and slug, in the learner's language
    code, out, err = run(capsys, "quiz", "take", *argv, "--lang", lang)
    lessons = load_lessons()
    wanted = argv[-1]
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert f"{words} '{wanted}'" in err
    assert all(f"{lesson.number:02d} {lesson.slug}" in err for lesson in lessons)
    assert QUIZ_ID not in err  # a quiz file's id is not a lesson


# --- interactive take through stdin ------------------------------------------------------


def typed_lines(wrong: str | None = None) -> list[str]:
    """What a learner types: 1-based choice numbers, comma lists, text, numbers."""
    lines = []
    for q in quiz.load_quiz(QUIZ_ID).questions:
        if q.kind == "single":
            lines.append(str(q.answer + 1 if q.id != wrong else (q.answer + 1) % 4 + 1))
        elif q.kind in ("multi", "order"):
            lines.append(",".join(str(i + 1) for i in q.answer))
        elif q.kind == "short":
            lines.append(q.answer["en"][0].upper())
        elif q.kind == "recall":
            lines += ["", "y"]        # Enter to see the model answer, then the own mark
        else:
            lines.append(str(q.answer["value"]))
    return lines


class Keyboard:
    """A stdin that yields ``lines`` and then raises KeyboardInterrupt (Ctrl-C)."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines)

    def readline(self) -> str:
        if not self.lines:
            raise KeyboardInterrupt
        return self.lines.pop(0) + "\n"


def test_interactive_take_through_stdin(capsys, monkeypatch, learner):
    lines = typed_lines(wrong="q-13-16")
    lines.insert(0, "seven")          # invalid input is asked again, not graded
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID)
    assert code == 0
    assert "Type one number between 1 and 4." in out
    assert out.count("Correct!") == N_GRADED - 1 and out.count("Not quite.") == 1
    assert f"Score: {N_GRADED - 1}/{N_GRADED}" in out
    assert "Model answer:" in out and "A full answer says:" in out
    assert out.count("Marked as recalled") == len(RECALL)
    assert f"{len(RECALL)} of {len(RECALL)} recalled" in out
    assert "Missed (1):" in out and "q-13-16  An embedding larger than the tokenizer" in out
    assert quiz_entry(learner)["results"]["q-13-16"] is False
    # a piped answer is not echoed: the feedback starts on its own line, not after the prompt
    assert "): Correct!" not in out and "): Not quite." not in out
    assert "\nNot quite." in out


def test_interactive_take_in_spanish(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(typed_lines()) + "\n"))
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID, "--lang", "es")
    assert code == 0 and "¡Correcto!" in out and f"Puntuación: {N_GRADED}/{N_GRADED}" in out
    assert "Respuesta modelo" in out and "Falladas" not in out


@pytest.mark.parametrize("typed, qid, lang", [
    ("65,536", "q-13-08", "en"), ("65 536", "q-13-08", "es"), ("2,097,152", "q-13-07", "en"),
    ("2.097.152", "q-13-07", "es"), ("2 097 152", "q-13-07", "en"), ("6,238", "q-13-15", "es"),
    ("6.238", "q-13-15", "en"), ("6.238", "q-13-15", "es"), ("8192 x 256", "q-13-07", "en")])
def test_numeric_input_with_thousands_separators_or_decimal_comma(typed, qid, lang):
    # Regression: "65,536" was read as 65.536 and "2,097,152" was refused.
    from minimodel.lab.quiz.session import parse_input

    question = quiz.load_quiz(QUIZ_ID).question(qid)
    assert quiz.is_correct(question, parse_input(question, typed, lang), lang)


@pytest.mark.parametrize("typed", ["inf", "nan", "1,2,3", "six or seven", "lots"])
def test_numeric_input_rejects_non_numbers_and_non_finite(typed):
    # Regression: "nan" reached the grader, which raised and ended the take with exit 2.
    from minimodel.lab.quiz.session import parse_input

    with pytest.raises(ValueError):
        parse_input(quiz.load_quiz(QUIZ_ID).question("q-13-15"), typed)


def test_ctrl_c_saves_answers_and_next_run_resumes(capsys, monkeypatch, learner):
    lines = typed_lines()
    monkeypatch.setattr("sys.stdin", Keyboard(lines[:3]))
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID)
    assert code == 130 and "3 answer(s) saved" in out
    entry = quiz_entry(learner)
    assert entry["partial"] == {"q-13-01": 3, "q-13-02": 2, "q-13-03": "4"}  # as typed
    assert "score" not in entry

    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines[3:]) + "\n"))
    code, out, _ = run(capsys, "quiz", "take", QUIZ_ID)
    assert code == 0 and "3 question(s) answered earlier" in out
    assert f"[4/{N_QUESTIONS}] q-13-04" in out
    entry = quiz_entry(learner)
    assert entry["score"] == N_GRADED and entry["partial"] is None and entry["attempts"] == 1


class Terminal(io.StringIO):
    """A stdin that says it is a terminal (what a learner types at, rather than a pipe)."""

    def isatty(self) -> bool:
        return True


def _take_with(capsys, monkeypatch, replace: dict[str, list[str]], lang: str = "en",
               stdin: type = io.StringIO):
    """An interactive take where the lines for some questions are replaced."""
    lines = []
    for q, typed in zip(quiz.load_quiz(QUIZ_ID).questions, _lines_per_question()):
        lines += replace.get(q.id, typed)
    monkeypatch.setattr("sys.stdin", stdin("\n".join(lines) + "\n"))
    return run(capsys, "quiz", "take", QUIZ_ID, "--lang", lang)


def _lines_per_question() -> list[list[str]]:
    out, lines = [], typed_lines()
    for q in quiz.load_quiz(QUIZ_ID).questions:
        take = 2 if q.kind == "recall" else 1
        out.append(lines[:take])
        lines = lines[take:]
    return out


def test_unreadable_input_is_asked_again_with_the_reason(capsys, monkeypatch):
    code, out, _ = _take_with(capsys, monkeypatch, {
        "q-13-08": ["65536 each", "65536 twice", "65536"],
        "q-13-15": ["6.24", "6.238"],
        "q-13-19": ["effective rank is big", "effective rank (stable rank)", "erank"]})
    flat = " ".join(out.split())
    assert code == 0 and "Not quite." not in out
    assert "the word 'each' changes what the number means" in flat
    assert "the word 'twice' changes" in flat
    assert "'6.24': the question asks for 3 decimals" in flat
    assert "has the term 'effective rank' and also 'is big'; type only the term" in flat
    assert "your answer holds '()': a symbol or a bracket may mean" in flat


def test_a_wrong_answer_shows_what_was_chosen_and_the_end_screen_what_was_typed(capsys,
                                                                                 monkeypatch):
    q01 = quiz.load_quiz(QUIZ_ID).question("q-13-01")
    wrong = (q01.answer + 1) % len(q01.choices)
    code, out, _ = _take_with(capsys, monkeypatch, {"q-13-01": [str(wrong + 1)],
                                                     "q-13-03": ["4 columns"]})
    flat = " ".join(out.split())
    chosen = " ".join(q01.choices[wrong]["en"].split())
    assert "`" in chosen                       # drawn as code on screen, not as raw backticks
    assert code == 0 and f"Your answer: {wrong + 1}. {chosen.replace('`', '')}" in flat
    assert f"Your answer: {wrong + 1}. {chosen}" not in flat
    summary = flat[flat.index("Missed (2):"):]
    assert "Your answer: 4 columns" in summary and "asks for rows, not columns" in summary


def test_multi_choice_accepts_spaces_as_well_as_commas():
    from minimodel.lab.quiz.session import parse_input

    question = quiz.load_quiz(QUIZ_ID).question("q-13-05")
    assert parse_input(question, "1 2 4") == parse_input(question, "1,2,4") == [0, 1, 3]


def test_recall_keeps_typed_text_and_a_pasted_answer_never_reaches_the_self_mark(capsys,
                                                                                   monkeypatch):
    # At a terminal, a two-line answer ending in "no" and "1": both belong to the answer (it
    # ends at the empty line), so the self-mark prompt reads the learner's own "y"
    code, out, _ = _take_with(capsys, monkeypatch, {
        "q-13-28": ["the head reuses E", "no", "1", "", "1", "y"]}, stdin=Terminal)
    flat = " ".join(out.split())
    assert code == 0 and "You wrote: the head reuses E no 1" in flat
    assert "Type y (yes) or n (no)." in flat       # "1" on the self-mark prompt is asked again
    assert out.count("Marked as recalled") == len(RECALL)


def test_piped_answers_are_one_per_line_at_a_recall_question(capsys, monkeypatch, learner):
    # Regression: from a pipe the recall question waited for an empty line, so the self-mark
    # "n" and every answer after it were read as more lines of the written answer.
    code, out, _ = _take_with(capsys, monkeypatch, {"q-13-28": ["the head reuses E", "n"],
                                                     "q-13-29": ["rows of E", "y"]})
    flat = " ".join(out.split())
    assert code == 0 and "You wrote: the head reuses E" in flat
    assert "You wrote: the head reuses E n" not in flat
    assert f"Score: {N_GRADED}/{N_GRADED}" in flat
    assert f"{len(RECALL) - 1} of {len(RECALL)} recalled" in flat
    recalled = quiz_entry(learner)["recalled"]
    assert recalled["q-13-28"] is False and recalled["q-13-29"] is True


@pytest.mark.parametrize("lang, saved", [("en", "2 answer(s) saved"),
                                         ("es", "2 respuesta(s) guardada(s)")])
def test_end_of_input_stops_a_take_like_ctrl_c(capsys, monkeypatch, learner, lang, saved):
    # Regression: the end of piped answers (or Ctrl-D) exited 1 where Ctrl-C exits 130.
    lines = typed_lines()[:2]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    code, out, err = run(capsys, "quiz", "take", QUIZ_ID, "--lang", lang)
    assert code == 130 and saved in out and "Traceback" not in out + err
    entry = quiz_entry(learner)
    assert entry["partial"] == {"q-13-01": 3, "q-13-02": 2}
    assert "attempts" not in entry and "score" not in entry    # not an attempt


# --- review -------------------------------------------------------------------------------


def test_review_brings_missed_questions_back_first(capsys, tmp_path):
    answers = correct_answers()
    answers["q-13-05"] = [0]
    answers["q-13-20"] = 5
    run(capsys, "quiz", "take", QUIZ_ID, "--answers", write_answers(tmp_path, answers), "--json")

    code, out, _ = run(capsys, "quiz", "review", QUIZ_ID, "--json")
    queue = json.loads(out)["queue"]
    assert code == 0 and [(i["id"], i["box"], i["reason"]) for i in queue] == [
        ("q-13-05", 1, "missed"), ("q-13-20", 1, "missed")]
    code, out, _ = run(capsys, "quiz", "review", QUIZ_ID, "--json", "--all")
    assert [i["id"] for i in json.loads(out)["queue"]][:2] == ["q-13-05", "q-13-20"]

    fix = write_answers(tmp_path, {"q-13-05": [0, 2, 3]}, "review.json")
    code, out, _ = run(capsys, "quiz", "review", QUIZ_ID, "--answers", fix, "--json")
    data = json.loads(out)
    assert (data["score"], data["total"]) == (1, 1)
    assert [i["id"] for i in data["queue"]] == ["q-13-20"]


def test_interactive_review(capsys, monkeypatch, tmp_path, learner):
    answers = correct_answers()
    answers["q-13-16"] = 0
    run(capsys, "quiz", "take", QUIZ_ID, "--answers", write_answers(tmp_path, answers), "--json")
    monkeypatch.setattr("sys.stdin", io.StringIO("4\n"))
    code, out, _ = run(capsys, "quiz", "review", QUIZ_ID)
    assert code == 0 and "1 question(s) to review" in out and "q-13-16" in out
    assert "Score: 1/1" in out
    assert quiz_entry(learner)["boxes"]["q-13-16"]["box"] == 2
    code, out, _ = run(capsys, "quiz", "review", QUIZ_ID)
    assert code == 0 and "Nothing to review today" in out


def test_ctrl_c_during_review_keeps_reviewed_answers(capsys, monkeypatch, tmp_path, learner):
    answers = correct_answers()
    answers["q-13-01"], answers["q-13-02"] = 0, 0
    run(capsys, "quiz", "take", QUIZ_ID, "--answers", write_answers(tmp_path, answers), "--json")
    monkeypatch.setattr("sys.stdin", Keyboard(["4"]))      # q-13-01 right, then Ctrl-C
    code, out, _ = run(capsys, "quiz", "review", QUIZ_ID, "--lang", "es")
    assert code == 130 and "1 respuesta(s) de repaso guardada(s)" in out
    boxes = quiz_entry(learner)["boxes"]
    assert (boxes["q-13-01"]["box"], boxes["q-13-02"]["box"]) == (2, 1)


@pytest.mark.parametrize("word, lang, said", [
    ("q", "en", "Saved: 1 reviewed answer(s); 1 question(s) left for next time."),
    ("QUIT", "en", "Saved: 1 reviewed answer(s); 1 question(s) left for next time."),
    ("salir", "es", "Guardado: 1 respuesta(s) de repaso; 1 pregunta(s) pendiente(s) para "
                    "la próxima vez."),
])
def test_a_quit_word_saves_the_review_and_leaves(capsys, monkeypatch, tmp_path, learner,
                                                   word, lang, said):
    answers = correct_answers()
    answers["q-13-01"], answers["q-13-02"] = 0, 0
    run(capsys, "quiz", "take", QUIZ_ID, "--answers", write_answers(tmp_path, answers), "--json")
    monkeypatch.setattr("sys.stdin", Keyboard(["4", f" {word} "]))   # right, then leave
    code, out, _ = run(capsys, "quiz", "review", QUIZ_ID, "--lang", lang)
    hint = "one number; q saves and leaves" if lang == "en" else "un número; q guarda y sale"
    assert code == 0 and out.count(hint) == 2       # the prompt says how to leave
    assert said in " ".join(out.split())
    boxes = quiz_entry(learner)["boxes"]
    assert (boxes["q-13-01"]["box"], boxes["q-13-02"]["box"]) == (2, 1)   # the rest stays due


def test_a_quit_word_is_no_answer_a_quiz_accepts():
    # a short answer "q" would be taken as leaving the review: no quiz may accept one
    from minimodel.lab.quiz.session import QUIT_WORDS

    shorts = [q for each in quiz.load_all() for q in each.questions if q.kind == "short"]
    assert shorts
    for q in shorts:
        accepted = {a.strip().lower() for lang in ("en", "es") for a in q.answer[lang]}
        assert not accepted & QUIT_WORDS, q.id


def test_review_limit_must_be_positive(capsys):
    with pytest.raises(SystemExit) as stop:   # refused while the words are parsed
        run(capsys, "quiz", "review", QUIZ_ID, "--json", "--limit", "0")
    err = capsys.readouterr().err
    assert stop.value.code == 2
    assert err == ("minimodel quiz review: --limit expects a whole number ≥ 1, got '0'\n"
                   "see minimodel quiz review --help\n")


# --- render -------------------------------------------------------------------------------


def test_committed_mirrors_match_the_yaml(capsys):
    """docs/quizzes must be regenerated (`minimodel quiz render`) whenever the YAML changes."""
    assert render.drift(render.docs_dir()) == []
    code, out, _ = run(capsys, "quiz", "render", "--check")
    assert code == 0 and "up to date" in out


def test_render_check_detects_drift(capsys, tmp_path):
    out_dir = tmp_path / "mirrors"
    code, out, _ = run(capsys, "quiz", "render", "--out", str(out_dir))
    assert code == 0 and sorted(p.name for p in out_dir.iterdir()) == sorted(
        f"{path.stem}.{lang}.md" for path in quiz.CONTENT_DIR.glob("*.yaml")   # quiz files
        for lang in ("en", "es"))
    text = (out_dir / f"{QUIZ_ID}.es.md").read_text(encoding="utf-8")
    assert "4. `x_i @ E` ✓" in text and "**Explicación.**" in text
    assert run(capsys, "quiz", "render", "--check", "--out", str(out_dir))[0] == 0

    (out_dir / f"{QUIZ_ID}.es.md").write_text(text.replace("✓", ""), encoding="utf-8")
    (out_dir / "old-quiz.en.md").write_text("stale", encoding="utf-8")
    code, _, err = run(capsys, "quiz", "render", "--check", "--out", str(out_dir))
    assert code == 1
    assert f"{QUIZ_ID}.es.md differs from the YAML" in err and "old-quiz.en.md has no quiz" in err


@pytest.mark.parametrize("argv", [["quiz"], ["quiz", "take"], ["quiz", "review"],
                                  ["quiz", "export"], ["quiz", "render"], ["quiz", "list"],
                                  ["quiz", "validate"]])
def test_help_has_examples(capsys, argv):
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    assert info.value.code == 0 and "examples:" in capsys.readouterr().out


ENGLISH_WORDS = ("box", "missed", "Score", "passed", "attempted", "Correct", "Missed", "yes",
                 "recalled", "question", "review them")


def test_spanish_screens_are_all_spanish(capsys, tmp_path):
    """--lang es: no English interface word on any quiz screen (content ids aside)."""
    answers = write_answers(tmp_path, {"q-13-01": 0, "q-13-02": 1, "q-13-28": "s"})
    screens = [run(capsys, "quiz", "take", QUIZ_ID, "--answers", answers, "--lang", "es")[1],
               run(capsys, "quiz", "review", QUIZ_ID, "--answers", answers, "--lang", "es")[1],
               run(capsys, "quiz", "list", "--lang", "es")[1],
               run(capsys, "lab", "status", "--lang", "es")[1]]
    for screen in screens:
        words = set(screen.replace("│", " ").split())
        assert not words & set(ENGLISH_WORDS), (words & set(ENGLISH_WORDS), screen[:400])
    assert "caja 1" in screens[1] and "fallada" in screens[1]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_wrong_numeric_feedback_shows_the_value_on_the_expected_line_without_a_tick(lang):
    from rich.console import Console

    from minimodel.lab.quiz.grading import expected_value
    from minimodel.lab.quiz.session import feedback

    question = next(q for qz in quiz.load_all() for q in qz.questions if q.kind == "numeric")
    console = Console(record=True, width=200)
    feedback(console, question, False, lang, question.answer["value"] + 1)
    lines = [line.rstrip() for line in console.export_text().splitlines()]
    heading = "Expected:" if lang == "en" else "Se esperaba:"
    at = next(i for i, line in enumerate(lines) if line.startswith(heading))
    # the value alone on the heading's own line: no "Se esperaba: Valor: 65 536" label twice
    assert lines[at] == f"{heading} {expected_value(question, lang)}"
    assert "✓" not in "\n".join(lines) and lines[at + 1].strip() != ""


@pytest.mark.parametrize("lang", ["en", "es"])
def test_wrong_short_feedback_lists_the_accepted_forms_under_one_label(lang):
    from rich.console import Console

    from minimodel.lab.quiz.session import feedback

    question = next(q for qz in quiz.load_all() for q in qz.questions if q.kind == "short")
    console = Console(record=True, width=400)
    feedback(console, question, False, lang, "zzz")
    lines = [line.rstrip() for line in console.export_text().splitlines()]
    heading = "Expected:" if lang == "en" else "Se esperaba:"
    [line] = [line for line in lines if line.startswith(heading)]
    assert line.startswith(f"{heading} {question.answer[lang][0]}")   # this language's first
    assert "Accepted answers" not in line and "Respuestas aceptadas" not in line
    assert "✓" not in line


@pytest.mark.parametrize("lang, words", [("en", "name one quiz"),
                                         ("es", "indica un cuestionario")])
def test_take_without_a_quiz_says_so_in_the_readers_language(capsys, lang, words):
    assert main(["quiz", "take", "--lang", lang]) == 2
    err = capsys.readouterr().err
    assert words in err and "--lesson NN" in err and "Traceback" not in err
