"""``minimodel lab status`` and ``minimodel lab validate`` with stand-in break/exercise modules."""

from __future__ import annotations

import json
import sys
import types

import pytest

from minimodel.cli import main
from minimodel.lab.progress import Progress

BREAKS = "minimodel.lab.breaks"
EXERCISES = "minimodel.lab.exercises"


def fake_module(name: str, listing: str, items: list[dict], problems: list[str]):
    module = types.ModuleType(name)
    setattr(module, listing, lambda: items)
    module.validate_all = lambda: problems
    return module


@pytest.fixture
def sections(monkeypatch):
    """Stand-ins for the break and exercise modules (written by other people)."""
    def install(breaks_problems=(), exercise_problems=()):
        monkeypatch.setitem(sys.modules, BREAKS, fake_module(
            BREAKS, "list_breaks",
            [{"id": "b00", "title": {"en": "Tied vocab sizes", "es": "Vocabularios atados"}},
             {"id": "b01", "title": "Second break"}], list(breaks_problems)))
        monkeypatch.setitem(sys.modules, EXERCISES, fake_module(
            EXERCISES, "list_exercises", [{"id": "mlm-tied", "title": "MLM tied head"}],
            list(exercise_problems)))
    return install


def status_json(capsys, learner) -> dict:
    code = main(["lab", "status", "--json", "--learner-dir", str(learner)])
    assert code == 0
    return json.loads(capsys.readouterr().out)


def test_status_json_counts_progress(capsys, tmp_path, sections):
    sections()
    learner = tmp_path / "learner"
    answers = tmp_path / "a.json"
    answers.write_text(json.dumps({"q-13-01": 1, "q-13-02": 1}), encoding="utf-8")
    main(["quiz", "take", "phase-13-embeddings", "--answers", str(answers), "--json",
          "--learner-dir", str(learner)])
    capsys.readouterr()
    progress = Progress(learner)
    progress.record("break", "b00", "fixed")
    progress.record("exercise", "mlm-tied", "wrong")

    data = status_json(capsys, learner)
    assert data["learner_dir"] == str(learner)
    assert data["quizzes"]["items"] == [{
        "id": "phase-13-embeddings", "title": "Phase 13 quiz: embeddings and weight tying",
        "status": "attempted", "best_score": 2, "total": 27}]
    assert (data["quizzes"]["done"], data["quizzes"]["total"]) == (0, 1)
    assert data["breaks"]["available"] is True
    assert [(i["id"], i["title"], i["status"]) for i in data["breaks"]["items"]] == [
        ("b00", "Tied vocab sizes", "fixed"), ("b01", "Second break", "not started")]
    assert (data["breaks"]["done"], data["breaks"]["total"]) == (1, 2)
    assert (data["exercises"]["done"], data["exercises"]["total"]) == (0, 1)
    assert data["exercises"]["items"][0]["status"] == "wrong"


def test_status_spanish_titles_and_table(capsys, tmp_path, sections):
    sections()
    code = main(["lab", "status", "--lang", "es", "--learner-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "Vocabularios atados" in out and "-/27" in out
    # Regression: headings and statuses were English under --lang es.
    assert "averías: 0/2 completados" in out and "sin empezar" in out and "estado" in out
    assert "done" not in out and "not started" not in out


def test_status_spanish_titles_of_the_real_breaks(capsys, tmp_path):
    # Regression: list_breaks() gave English titles only, so `lab status --lang es` showed
    # English break titles next to Spanish exercise titles.
    from minimodel.lab.breaks import load_break

    data = json.loads(_run_status(capsys, tmp_path, "--json", "--lang", "es"))
    titles = {i["id"]: i["title"] for i in data["breaks"]["items"]}
    assert titles["tied-vocab-mismatch"] == load_break("tied-vocab-mismatch").text("title", "es")
    assert titles["tied-vocab-mismatch"] != load_break("tied-vocab-mismatch").text("title", "en")


def _run_status(capsys, learner, *extra: str) -> str:
    assert main(["lab", "status", "--learner-dir", str(learner), *extra]) == 0
    return capsys.readouterr().out


def test_status_shows_unavailable_section(capsys, tmp_path, sections, monkeypatch):
    sections()
    monkeypatch.setitem(sys.modules, BREAKS, None)   # makes `import minimodel.lab.breaks` fail
    data = status_json(capsys, tmp_path)
    assert data["breaks"]["available"] is False
    assert data["breaks"]["error"].startswith(f"cannot import {BREAKS}: ModuleNotFoundError")
    assert data["exercises"]["available"] is True
    code = main(["lab", "status", "--learner-dir", str(tmp_path)])
    assert code == 0 and "breaks: unavailable" in capsys.readouterr().out


def test_validate_ok_and_problems(capsys, sections):
    sections()
    assert main(["lab", "validate", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "ok": True, "sections": {"quiz": [], "exercises": [], "breaks": [], "glossary": []}}

    sections(breaks_problems=["b01: fix diff does not apply"])
    assert main(["lab", "validate"]) == 1
    out = capsys.readouterr().out
    assert "quiz: ok" in out and "breaks: 1 problem(s)" in out and "b01: fix diff" in out


def test_validate_reports_import_failure(capsys, sections, monkeypatch):
    sections()
    monkeypatch.setitem(sys.modules, EXERCISES, None)
    assert main(["lab", "validate", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["sections"]["breaks"] == []
    assert data["sections"]["exercises"][0].startswith(f"cannot import {EXERCISES}")


@pytest.mark.parametrize("argv", [["lab"], ["lab", "status"], ["lab", "validate"]])
def test_lab_help_has_examples(capsys, argv):
    with pytest.raises(SystemExit) as info:
        main([*argv, "--help"])
    assert info.value.code == 0 and "examples:" in capsys.readouterr().out
