"""``lab next --answers FILE`` takes one answers file for the whole path: the step's own
questions are graded, answers to other lessons' questions are left for their steps (and
counted), and an id that no quiz has is still refused (exit 2)."""

from __future__ import annotations

import json

from minimodel.cli import main
from minimodel.lab.lessons import load_lessons


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _right_answers(capsys) -> dict:
    answers = {}
    for quiz in json.loads(_run(capsys, "quiz", "list", "--json")[1]):
        for question in json.loads(_run(capsys, "quiz", "export", quiz["id"], "--json")[1])[
                "questions"]:
            answers[question["id"]] = (True if question["kind"] == "recall"
                                       else question["answer"])
    return answers


def _at_first_questions(capsys, common) -> str:
    """Walk a fresh learner to the first questions step; returns its lesson stem."""
    for _ in range(3):
        step = json.loads(_run(capsys, "lab", "next", "--json", *common)[1])["step"]
        if step["kind"] == "quiz":
            return step["id"]
    raise AssertionError("no questions step among the first steps")


def test_one_answers_file_for_every_lesson_grades_this_steps_questions(capsys, tmp_path):
    everything = _right_answers(capsys)
    common = ["--learner-dir", str(tmp_path / "learner")]
    stem = _at_first_questions(capsys, common)
    own = {lesson.stem: lesson.quiz for lesson in load_lessons()}[stem]
    assert 0 < len(own) < len(everything)
    path = tmp_path / "all.json"
    path.write_text(json.dumps(everything), encoding="utf-8")

    code, out, err = _run(capsys, "lab", "next", "--json", "--answers", str(path), *common)
    assert code == 0, err
    step = json.loads(out)["step"]
    assert step["ignored"] == len(everything) - len(own)
    assert step["result"]["score"] == step["result"]["total"] > 0
    assert {r["id"] for r in step["result"]["results"]} <= set(own)

    other = ["--learner-dir", str(tmp_path / "other"), "--lang", "es"]
    assert _at_first_questions(capsys, other) == stem
    code, out, err = _run(capsys, "lab", "next", "--answers", str(path), *other)
    assert code == 0, err
    assert (f"{len(own)} respuestas para la lección {stem}; "
            f"{len(everything) - len(own)} respuestas a preguntas de otras lecciones") in out


def test_an_id_that_no_quiz_has_is_still_refused(capsys, tmp_path):
    common = ["--learner-dir", str(tmp_path / "learner")]
    _at_first_questions(capsys, common)
    path = tmp_path / "typo.json"
    path.write_text(json.dumps({"q-99-99": 0}), encoding="utf-8")
    code, out, err = _run(capsys, "lab", "next", "--answers", str(path), *common)
    assert code == 2
    assert "no quiz has the question ids q-99-99" in err


def test_a_missing_answers_file_is_an_error_whatever_the_step(tmp_path, capsys):
    # Regression: on a lesson step, `lab next --answers /missing.json` said nothing and exited 0.
    from minimodel.cli import main as cli_main

    code = cli_main(["lab", "next", "--learner-dir", str(tmp_path / "learner"),
                     "--answers", str(tmp_path / "nofile.json")])
    err = capsys.readouterr().err
    assert code == 2 and "nofile.json" in err and "Traceback" not in err
