"""One translation-freshness format for quiz questions and breaks: every bilingual text keeps
``es_source_hash``; editing an English text flags exactly that Spanish text; rehash clears it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

import pytest
import yaml

from minimodel.cli import main
from minimodel.lab.breaks import load_break
from minimodel.lab.breaks.catalog import structure_problems
from minimodel.lab.freshness import english_hash, stamp, translation_problems
from minimodel.lab.items import load_items, read_items
from minimodel.lab.quiz import CONTENT_DIR, load_quiz

QUIZ = CONTENT_DIR / "phase-13-embeddings.yaml"


def _copy_quiz(tmp_path: Path) -> tuple[Path, Callable[[], list[str]]]:
    """A copy of the canonical quiz, and the translation check of its questions."""
    (tmp_path / "quizzes").mkdir()
    path = tmp_path / "quizzes" / QUIZ.name
    shutil.copy(QUIZ, path)
    return path, lambda: translation_problems(read_items("question", path.parent))


def _copy_break(tmp_path: Path, break_id: str) -> tuple[Path, Callable[[], list[str]]]:
    shutil.copytree(load_break(break_id).folder, tmp_path / "breaks" / break_id)
    path = tmp_path / "breaks" / break_id / "break.yaml"
    return path, lambda: translation_problems(read_items("break", path.parent.parent))


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_the_shipped_questions_and_breaks_are_fresh():
    assert translation_problems(load_items()) == []


def test_english_edit_flags_exactly_that_spanish_text_of_a_question(tmp_path):
    path, problems_now = _copy_quiz(tmp_path)
    before = path.read_text(encoding="utf-8")
    _edit(path, '"Counting touched rows"', '"Counting the touched rows"')
    problems = problems_now()
    assert len(problems) == 1
    assert problems[0].startswith("question q-13-03 title: the Spanish was translated from "
                                  "another English")
    assert "`minimodel lab rehash q-13-03 --key title`" in problems[0]

    assert stamp(path, "q-13-03") == []               # a stale text is never stamped blindly
    assert stamp(path, "q-13-03", ["title"]) == ["title"]
    assert problems_now() == []
    after = path.read_text(encoding="utf-8")          # only that stamp line changed
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert len(changed) == 2 and len(before.splitlines()) == len(after.splitlines())
    assert changed[1][1].strip() == f'es_source_hash: "{english_hash("Counting the touched rows")}"'


def test_english_edit_of_a_flow_style_choice_and_a_break_hint(tmp_path):
    path, problems_now = _copy_quiz(tmp_path)
    text = path.read_text(encoding="utf-8")
    choice = next(line for line in text.splitlines() if line.strip().startswith("- {en:"))
    _edit(path, choice, choice.replace("{en: ", "{en: X", 1))
    problems = problems_now()
    assert len(problems) == 1 and "choices[" in problems[0]
    qid, key = problems[0].split()[1], problems[0].split()[2].rstrip(":")
    assert stamp(path, qid, [key]) == [key] and problems_now() == []

    brk_path, break_problems = _copy_break(tmp_path, "tied-model-too-large")
    _edit(brk_path, "byte for byte: none of the 131,072 parameters",
          "none of the 131,072 parameters")
    problems = break_problems()
    assert len(problems) == 1 and problems[0].startswith("break tied-model-too-large observe: ")
    assert stamp(brk_path, "tied-model-too-large", ["observe"]) == ["observe"]
    assert break_problems() == []


def test_spanish_and_answer_edits_do_not_stale(tmp_path):
    path, problems_now = _copy_quiz(tmp_path)
    _edit(path, '"Contar las filas tocadas"', '"Contar filas tocadas"')
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    next(q for q in data["questions"] if q["id"] == "q-13-15")["answer"]["tolerance"] = 0.02
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    assert problems_now() == []


def test_missing_spanish_and_missing_stamp_are_flagged(tmp_path):
    path, break_problems = _copy_break(tmp_path, "fresh-model-loss-44")
    text = path.read_text(encoding="utf-8")
    start = text.index('  es: "Un GPT atado recién creado que empieza')
    path.write_text(text[:start] + text[text.index("\n", start) + 1:], encoding="utf-8")
    assert break_problems() == []            # the break's own validation says it:
    assert structure_problems(load_break("fresh-model-loss-44", tmp_path / "breaks")) == [
        "break fresh-model-loss-44 title: the 'es' text is missing or blank; write it"]

    quiz_path, problems_now = _copy_quiz(tmp_path)
    original = quiz_path.read_text(encoding="utf-8")
    title = yaml.safe_load(original)["questions"][0]["title"]
    _edit(quiz_path, f'      es_source_hash: "{english_hash(title["en"])}"\n', "")
    problems = problems_now()
    assert len(problems) == 1 and problems[0].startswith(
        "question q-13-01 title: the Spanish has no es_source_hash")
    assert stamp(quiz_path, "q-13-01") == ["title"]   # a new text is stamped without --key
    assert quiz_path.read_text(encoding="utf-8") == original


def test_the_loaders_leave_the_stamps_out():
    question = load_quiz("phase-13-embeddings").questions[0]
    assert set(question.title) == {"en", "es"}
    assert all(set(choice) == {"en", "es"} for choice in question.choices)


def test_stamp_names_the_texts_when_a_key_is_unknown(tmp_path):
    path, _ = _copy_quiz(tmp_path)
    with pytest.raises(ValueError, match=r"q-13-01 has no text prompt\[2\]; its texts are "
                                         r"title, prompt, choices\[1\]"):
        stamp(path, "q-13-01", ["prompt[2]"])


def test_lab_rehash_cli(capsys):
    with pytest.raises(SystemExit) as info:
        main(["lab", "rehash", "--help"])
    assert info.value.code == 0 and "minimodel lab rehash q-layer-norm-2 --key prompt" in \
        capsys.readouterr().out
    assert main(["lab", "rehash", "q-13-01", "--json"]) == 0      # all stamped: nothing to do
    assert json.loads(capsys.readouterr().out) == {"item": "q-13-01", "stamped": []}
    assert main(["lab", "rehash", "q-13-99"]) == 2
    assert "no question or break has the id 'q-13-99'" in capsys.readouterr().err


def test_lab_validate_catches_planted_errors(tmp_path, monkeypatch, capsys):
    from minimodel.lab import items
    from minimodel.lab.quiz import loader

    shutil.copytree(CONTENT_DIR, tmp_path / "quizzes")
    monkeypatch.setitem(items.FOLDERS, "question", (tmp_path / "quizzes", "*.yaml"))
    monkeypatch.setattr(loader, "CONTENT_DIR", tmp_path / "quizzes")
    _edit(tmp_path / "quizzes" / QUIZ.name, '"Counting touched rows"', '"Counting rows"')
    _edit(tmp_path / "quizzes" / "layer-norm.yaml", '      es: "Qué calcula la LayerNorm"\n',
          '      es: " "\n')
    _edit(tmp_path / "quizzes" / "gelu.yaml", "  - id: q-gelu-2\n", "  - id: q-gelu-1\n")
    argv = ["lab", "validate", "--json"] + [f"--section={s}" for s in
                                            ("quiz", "links", "translations")]
    assert main(argv) == 1
    sections = json.loads(capsys.readouterr().out)["sections"]
    assert "layer-norm.yaml: question q-layer-norm-1 title: the 'es' text is missing or " \
           "blank; write it" in sections["quiz"]
    assert "question id 'q-gelu-1' is used 2 times (gelu.yaml, gelu.yaml); give each " \
           "question its own id" in sections["links"]
    assert any(p.startswith("question q-13-03 title: the Spanish was translated from another")
               for p in sections["translations"])
    assert len(sections["translations"]) == 1


def test_lab_rehash_speaks_spanish(capsys):
    assert main(["lab", "rehash", "q-13-01", "--lang", "es"]) == 0    # all stamped already
    assert capsys.readouterr().out.strip() == (
        "marcados 0 textos en español de q-13-01 como traducidos del inglés actual: -")
    assert main(["lab", "rehash", "q-13-99", "--lang", "es"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: ninguna pregunta ni avería tiene el id 'q-13-99'; `minimodel quiz list --lang "
        "es` o `minimodel break list --lang es` dan los ids")
    assert main(["lab", "rehash", "q-13-01", "--key", "nope", "--lang", "es"]) == 2
    assert capsys.readouterr().err.startswith("error: q-13-01 no tiene el texto nope; sus "
                                              "textos son title")
