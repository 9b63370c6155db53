"""The whole path walked by a newcomer, first lesson to last, in English and in Spanish.

A fresh learner folder per language; ``minimodel lab next --json`` is asked again and again,
exactly as a learner would, and each step is done through the command that records it:

* a lesson: the second ``lab next`` moves on (marks it read);
* its questions: ``lab next --answers FILE`` grades a file of the right answers, built from
  ``quiz export --json`` (the answers' own machine form);
* a break: ``lab next`` starts it in the learner folder (a real scratch copy); a real
  ``break check`` trains small models, so "fixed" is recorded the way the check records it;
* an exercise: ``lab next`` writes the starter file; one exercise per language goes through the
  real judge (``exercise check`` on a solution written here), the others are recorded as passed.

The test asserts the order (each lesson, then its questions, its breaks, its exercises; the
lessons in ``path.yaml``'s order; every break and exercise a lesson lists met once, in the
lessons' order) and that ``lab status`` ends with everything done and no next step. Every list
and count comes from the content itself, so a lesson, break or exercise added by a teacher is
walked here without editing this file.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from minimodel.cli import main
from minimodel.lab.items import load_items
from minimodel.lab.lessons import FRONT_MATTER, load_lessons
from minimodel.lab.progress import Progress

KIND_RANK = {"lesson": 0, "quiz": 1, "break": 2, "exercise": 3}

# A learner's own solution (not the reference): checked by the real judge on the walk.
MY_EMBED = "import numpy as np\n\n\ndef embed(ids, E):\n    return np.take(E, ids, axis=0)\n"


def _cli(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def _right_answers(capsys) -> dict:
    """Every question's right answer, from ``quiz export --json`` (the form ``quiz take
    --answers`` reads as it is; a recall question is self-marked: recalled)."""
    answers = {}
    for quiz in json.loads(_cli(capsys, "quiz", "list", "--json")[1]):
        code, out = _cli(capsys, "quiz", "export", quiz["id"], "--json")
        assert code == 0, out
        for question in json.loads(out)["questions"]:
            answers[question["id"]] = (True if question["kind"] == "recall"
                                       else question["answer"])
    return answers


@pytest.mark.slow
@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_newcomer_walks_the_whole_path(capsys, tmp_path, lang):
    right_answers = _right_answers(capsys)
    learner = tmp_path / "learner"
    common = ["--lang", lang, "--learner-dir", str(learner)]
    lessons = {lesson.stem: lesson for lesson in load_lessons()}
    met: list[tuple[str, str, str]] = []          # (kind, id, lesson) in the order met

    for _ in range(200):
        code, out = _cli(capsys, "lab", "next", "--json", *common)
        assert code == 0, out
        step = json.loads(out)["step"]
        if step is None:
            break
        kind, item, stem = step["kind"], step["id"], step["lesson"]
        if not met or met[-1][:2] != (kind, item):
            met.append((kind, item, stem))
        if kind == "quiz":
            # No terminal: the command to take them is named and nothing is recorded; then
            # the same step again with this lesson's answers.
            # (with this learner folder and language: pasted, it records here)
            assert step["command"] == shlex.join(
                ["minimodel", "quiz", "take", stem, "--learner-dir", str(learner)]
                + (["--lang", lang] if lang != "en" else []))
            answers = tmp_path / f"{stem}.json"
            answers.write_text(json.dumps({q: right_answers[q] for q in lessons[stem].quiz}),
                               encoding="utf-8")
            code, out = _cli(capsys, "lab", "next", "--json", "--answers", str(answers),
                             *common)
            assert code == 0, out
            step = json.loads(out)["step"]
            assert (step["kind"], step["id"]) == (kind, item)
        if kind == "lesson":
            read = Path(step["read"])
            assert read.is_file() and read.name == lessons[stem].path(lang).name
            assert step["notebook"] == (f"minimodel lab notebook {lessons[stem].number:02d}"
                                        + (" --lang es" if lang == "es" else ""))
        elif kind == "quiz":
            result = step["result"]      # graded from the file: every graded question right
            assert result["score"] == result["total"] > 0, result
        elif kind == "break":
            workdir = Path(step["workdir"])
            assert step["started"] and (workdir / "NOTES.md").is_file()
            assert workdir == learner / "work" / "breaks" / item
            Progress(learner).record("break", item, "fixed")
        else:
            starter = Path(step["file"])
            assert step["started"] and starter == learner / "work" / "exercises" / f"{item}.py"
            assert "NotImplementedError" in starter.read_text(encoding="utf-8")
            if item == "embedding-lookup":
                starter.write_text(MY_EMBED, encoding="utf-8")
                code, out = _cli(capsys, "exercise", "check", item, "--file", str(starter),
                                 "--json", *common)
                assert code == 0 and json.loads(out)["passed"] is True, out
            else:
                Progress(learner).record("exercise", item, "passed")
    else:
        pytest.fail("lab next never reached the end of the path")

    # The lessons in the path's order, each followed by its own items, questions first.
    assert [i for k, i, _ in met if k == "lesson"] == list(lessons)
    place = {stem: lesson.number for stem, lesson in lessons.items()}
    assert sorted(place.values()) == list(range(1, len(lessons) + 1))
    for (kind, item, stem), (next_kind, _, next_stem) in zip(met, met[1:]):
        if next_stem == stem:
            assert KIND_RANK[kind] <= KIND_RANK[next_kind], met
        else:
            assert next_kind == "lesson" and place[next_stem] == place[stem] + 1, met
    for stem, lesson in lessons.items():
        own = [(k, i) for k, i, s in met if s == stem and k in ("break", "exercise")]
        listed = [(k, i) for k in ("break", "exercise") for i in getattr(lesson, FRONT_MATTER[k])]
        assert own == listed
        assert (("quiz", stem) in [(k, i) for k, i, _ in met]) == bool(lesson.quiz)
    # Every break and exercise a lesson owns is met once; the lesson-less ones never.
    for kind in ("break", "exercise"):
        owned = {item.id for item in load_items() if item.kind == kind and item.lesson}
        walked = [i for k, i, _ in met if k == kind]
        assert sorted(walked) == sorted(owned) and len(set(walked)) == len(walked)
    assert met[-1][2] == list(lessons)[-1]

    code, out = _cli(capsys, "lab", "status", "--json", *common)
    status = json.loads(out)
    assert status["next"] is None
    assert all(t["done"] == t["total"] for t in status["totals"].values()), status["totals"]
    assert status["totals"]["lesson"]["total"] == len(lessons) > 0
    assert status["totals"]["quiz"]["right"] == sum(
        s["total"] for lesson in status["path"] for s in lesson["steps"] if s["kind"] == "quiz")
    code, out = _cli(capsys, "lab", "next", *common)
    assert code == 0 and ("whole path" in out if lang == "en" else "todo el camino" in out)
