"""One translation-freshness format for quiz questions and breaks: every bilingual text keeps
``es_source_hash``; editing an English text flags exactly that Spanish text; rehash clears it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from minimodel.cli import main
from minimodel.lab.breaks import load_break
from minimodel.lab.freshness import english_hash, stamp, translation_problems
from minimodel.lab.items import Item, load_items
from minimodel.lab.quiz import CONTENT_DIR, load_quiz

QUIZ = CONTENT_DIR / "phase-13-embeddings.yaml"


def _copy_quiz(tmp_path: Path) -> tuple[Path, list[Item]]:
    path = tmp_path / QUIZ.name
    shutil.copy(QUIZ, path)
    ids = [q["id"] for q in yaml.safe_load(path.read_text(encoding="utf-8"))["questions"]]
    return path, [Item(qid, "question", {}, path=path) for qid in ids]


def _copy_break(tmp_path: Path, break_id: str) -> tuple[Path, list[Item]]:
    shutil.copytree(load_break(break_id).folder, tmp_path / break_id)
    path = tmp_path / break_id / "break.yaml"
    return path, [Item(break_id, "break", {}, path=path)]


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_the_shipped_questions_and_breaks_are_fresh():
    assert translation_problems(load_items()) == []


def test_english_edit_flags_exactly_that_spanish_text_of_a_question(tmp_path):
    path, items = _copy_quiz(tmp_path)
    before = path.read_text(encoding="utf-8")
    _edit(path, '"Counting touched rows"', '"Counting the touched rows"')
    problems = translation_problems(items)
    assert len(problems) == 1
    assert problems[0].startswith("question q-13-03 title: the Spanish was translated from "
                                  "another English")
    assert "`minimodel lab rehash q-13-03 --key title`" in problems[0]

    assert stamp(path, "q-13-03") == []               # a stale text is never stamped blindly
    assert stamp(path, "q-13-03", ["title"]) == ["title"]
    assert translation_problems(items) == []
    after = path.read_text(encoding="utf-8")          # only that stamp line changed
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert len(changed) == 2 and len(before.splitlines()) == len(after.splitlines())
    assert changed[1][1].strip() == f'es_source_hash: "{english_hash("Counting the touched rows")}"'


def test_english_edit_of_a_flow_style_choice_and_a_break_hint(tmp_path):
    path, items = _copy_quiz(tmp_path)
    text = path.read_text(encoding="utf-8")
    choice = next(line for line in text.splitlines() if line.strip().startswith("- {en:"))
    _edit(path, choice, choice.replace("{en: ", "{en: X", 1))
    problems = translation_problems(items)
    assert len(problems) == 1 and "choices[" in problems[0]
    qid, key = problems[0].split()[1], problems[0].split()[2].rstrip(":")
    assert stamp(path, qid, [key]) == [key] and translation_problems(items) == []

    brk_path, brk = _copy_break(tmp_path, "tie-by-copy")
    _edit(brk_path, "Equal values before training, yet `is` answers False.",
          "Equal values, but not `is`.")
    problems = translation_problems(brk)
    assert len(problems) == 1 and problems[0].startswith("break tie-by-copy observe: ")
    assert stamp(brk_path, "tie-by-copy", ["observe"]) == ["observe"]
    assert translation_problems(brk) == []


def test_spanish_and_answer_edits_do_not_stale(tmp_path):
    path, items = _copy_quiz(tmp_path)
    _edit(path, '"Contar las filas tocadas"', '"Contar filas tocadas"')
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    next(q for q in data["questions"] if q["id"] == "q-13-15")["answer"]["tolerance"] = 0.02
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    assert translation_problems(items) == []


def test_missing_spanish_and_missing_stamp_are_flagged(tmp_path):
    path, brk = _copy_break(tmp_path, "tied-init-std-1")
    text = path.read_text(encoding="utf-8")
    start = text.index('  es: "Una matriz atada')
    path.write_text(text[:start] + text[text.index("\n", start) + 1:], encoding="utf-8")
    assert translation_problems(brk) == [
        "break tied-init-std-1 title: the 'es' text is missing or blank; write it"]

    quiz_path, items = _copy_quiz(tmp_path)
    original = quiz_path.read_text(encoding="utf-8")
    title = yaml.safe_load(original)["questions"][0]["title"]
    _edit(quiz_path, f'      es_source_hash: "{english_hash(title["en"])}"\n', "")
    problems = translation_problems(items)
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
