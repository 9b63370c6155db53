"""A number is graded from the whole answer: a note in brackets after it is working the grader
checks, a unit, a list of ids, or a reason to ask again, never set aside unread; a choice typed
twice is asked again.

The classes, each with spellings beyond the ones first reported ("4 (not)", "2097152 (in
millions)", "0.408 (in bits)", ...): a word that changes the meaning, a scale word, a unit the
question declares or does not, working that agrees or not, a list of ids, nested or unbalanced
brackets, the three bracket kinds, words before the number, Spanish decimal commas. Outcomes:
"right", "wrong" (read and graded wrong, e.g. a unit of another quantity), "reask".
"""

from __future__ import annotations

import io
import json

import pytest

from minimodel.cli import main
from minimodel.lab import quiz
from minimodel.lab.quiz.session import parse_input

QUIZ_ID = "phase-13-embeddings"
ROWS, PARAMS, LOSS = "q-13-03", "q-13-07", "q-13-15"  # 4 rows; 2,097,152 parameters; ln 512


@pytest.fixture(autouse=True)
def learner(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(tmp_path / "learner"))
    return tmp_path / "learner"


def outcome(qid: str, typed: str, lang: str, quiz_id: str = QUIZ_ID) -> str:
    question = quiz.load_quiz(quiz_id).question(qid)
    try:
        return "right" if quiz.is_correct(question, typed, lang) else "wrong"
    except quiz.Unreadable:
        return "reask"


@pytest.mark.parametrize("qid, typed, lang, expected", [
    # the reported spellings
    (ROWS, "4 (not)", "en", "reask"), (PARAMS, "2097152 (in millions)", "en", "reask"),
    (PARAMS, "2097152 (in KB)", "en", "wrong"), (LOSS, "6.238 (negative)", "en", "reask"),
    # a word that changes the meaning, in each bracket kind, and nested
    (ROWS, "4 [approx]", "en", "reask"), (ROWS, "4 {or more}", "en", "reask"),
    (ROWS, "4 (minus one)", "en", "reask"), (ROWS, "4 ((ids 1, 3, 7, 9))", "en", "reask"),
    (ROWS, "4 (rows (distinct))", "en", "reask"), (ROWS, "4 (I think)", "en", "reask"),
    (LOSS, "6.238 [per token, summed]", "en", "reask"), (ROWS, "4 (no)", "es", "reask"),
    (LOSS, "6,238 (negativo)", "es", "reask"), (ROWS, "4 (o 8)", "es", "reask"),
    # a scale word in a note: the number's scale, or a remark? asked again
    (PARAMS, "2,097,152 (thousand)", "en", "reask"), (PARAMS, "2097.152 [K]", "en", "reask"),
    (PARAMS, "2.097.152 (en miles)", "es", "reask"), (ROWS, "4 (mil)", "es", "reask"),
    # a unit: the question's (right), another quantity's (read, wrong)
    (ROWS, "4 (rows)", "en", "right"), (ROWS, "4 [distinct rows]", "en", "right"),
    (ROWS, "4 {filas}", "es", "right"), (PARAMS, "2 097 152 (parámetros)", "es", "right"),
    (ROWS, "4 (columns)", "en", "wrong"), (PARAMS, "2,097,152 [bytes]", "en", "wrong"),
    (PARAMS, "2 097 152 (en MB)", "es", "wrong"), (LOSS, "6.238 (bits)", "en", "wrong"),
    (LOSS, "6.238 (natural log)", "en", "right"),
    (LOSS, "6,238 (logaritmo natural)", "es", "right"),
    (LOSS, "6,238 (en nats)", "es", "right"),
    # working: checked like a chain's side
    (PARAMS, "2,097,152 (8192 × 256)", "en", "right"),
    (PARAMS, "2^21 [= 8192 x 256]", "en", "right"),
    (PARAMS, "2,097,152 (8192 × 255)", "en", "reask"), (LOSS, "6.238 (= 9 ln 2)", "en", "right"),
    (LOSS, "6,238 (ln 512)", "es", "right"), (LOSS, "6,238 (ln 256)", "es", "reask"),
    (ROWS, "4 (2 + 2)", "en", "right"), (ROWS, "4 (2 * 3)", "en", "reask"),
    (PARAMS, "2 097 152 (= 2^21)", "es", "right"),
    # a list of ids: as many distinct ids as the answer
    (ROWS, "4 (ids 1, 3, 7, 9)", "en", "right"), (ROWS, "4 [rows 1, 3, 7 and 9]", "en", "right"),
    (ROWS, "4 (filas 1, 3, 7 y 9)", "es", "right"), (ROWS, "4 (1, 3, 3, 7, 9)", "en", "right"),
    (ROWS, "4 (rows: 1 3 7 9)", "en", "right"),
    (ROWS, "5 (ids 1, 3, 7, 9)", "en", "reask"), (ROWS, "4 (ids 1, 3, 7)", "en", "reask"),
    (ROWS, "4 (columns 1, 3, 7, 9)", "en", "reask"),
    # unbalanced, mismatched or trailing text after the note
    (ROWS, "4 (ids 1, 3, 7, 9", "en", "reask"), (ROWS, "4 (rows]", "en", "reask"),
    (ROWS, "4 (rows) not", "en", "reask"), (ROWS, "4 ) rows (", "en", "reask"),
    # words before the number
    (ROWS, "not 4 (rows)", "en", "reask"), (ROWS, "(not) 4", "en", "reask"),
    (ROWS, "maybe 4", "en", "reask"), (ROWS, "about 4 (rows)", "en", "reask"), (ROWS, "exactly 4 (rows)", "en", "right"),
    (ROWS, "exactamente 4 (filas)", "es", "right"),
    # a calculation's own brackets are not notes
    (LOSS, "ln (512)", "en", "right"), (ROWS, "exp (ln 4)", "en", "reask"), (ROWS, "sqrt (16)", "en", "right"),
    (ROWS, "(4)", "en", "right"),
])
def test_a_note_after_a_number_is_read_never_ignored(qid, typed, lang, expected):
    assert outcome(qid, typed, lang) == expected


@pytest.mark.parametrize("typed, lang, expected", [
    ("0.408 (in bits)", "en", "wrong"), ("0.408 (natural log)", "en", "right"),
    ("0.408 [nats]", "en", "right"), ("0.408 (rounded)", "en", "reask"),
    ("0,408 (en bits)", "es", "wrong"), ("0,408 (redondeado)", "es", "reask"),
])
def test_a_note_on_a_loss_in_nats(typed, lang, expected):
    assert outcome("q-softmax-cross-entropy-1", typed, lang, "softmax-cross-entropy") == expected


def test_the_reason_names_what_was_not_read():
    question = quiz.load_quiz(QUIZ_ID).question(ROWS)
    with pytest.raises(quiz.Unreadable) as word:
        quiz.check_answer(question, "4 (not)", "en")
    assert "the word 'not' changes what the number means" in word.value.reason
    with pytest.raises(quiz.Unreadable) as note:
        quiz.check_answer(question, "4 (see 3.2)", "en")
    assert "the note (see 3.2) is neither working" in note.value.reason
    with pytest.raises(quiz.Unreadable) as listed:
        quiz.check_answer(question, "5 (ids 1, 3, 7, 9)", "en")
    assert "names 4 distinct ids" in listed.value.reason
    with pytest.raises(quiz.Unreadable) as es:
        quiz.check_answer(question, "4 (ver 3.2)", "es")
    assert "la nota (ver 3.2) no es un cálculo" in es.value.reason


# --- repeated choices -----------------------------------------------------------------------


@pytest.mark.parametrize("qid, typed", [("q-13-05", "2,4,2,4"), ("q-13-05", "1 1"),
                                        ("q-13-05", "3;3"), ("q-13-27", "2,4,2,4")])
def test_a_choice_typed_twice_is_asked_again(qid, typed):
    question = quiz.load_quiz(QUIZ_ID).question(qid)
    with pytest.raises(ValueError):   # Unreadable for a multiple choice, a reask for an order
        parse_input(question, typed, "en")


def test_a_repeat_in_a_multiple_choice_names_the_choice_in_both_languages():
    question = quiz.load_quiz(QUIZ_ID).question("q-13-05")
    with pytest.raises(quiz.Unreadable, match="names choice 2 more than once"):
        parse_input(question, "2,4,2,4", "en")
    with pytest.raises(quiz.Unreadable, match="nombra la opción 4 más de una vez"):
        parse_input(question, "1, 4 4", "es")
    assert parse_input(question, "1,2,4", "en") == [0, 1, 3]   # each once: read as before


def test_an_answers_file_with_a_repeated_choice_is_not_graded(capsys, tmp_path, learner):
    questions = quiz.load_quiz(QUIZ_ID).questions
    answers = {q.id: (q.answer["value"] if q.kind == "numeric" else q.answer["en"][0]
                      if q.kind == "short" else True if q.kind == "recall" else q.answer)
               for q in questions}
    right = answers["q-13-05"]
    answers["q-13-05"] = right + right[:1]
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(answers), encoding="utf-8")
    code = main(["quiz", "take", QUIZ_ID, "--answers", str(path), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["recorded"] is False
    assert not (learner / "progress" / "quiz.json").exists()


# --- through `minimodel quiz take` ----------------------------------------------------------


def test_quiz_take_asks_again_for_a_note_it_cannot_check(capsys, monkeypatch):
    questions = quiz.load_quiz(QUIZ_ID).questions
    typed = {ROWS: ["4 (not)", "4 [in thousands]", "4 (ids 1, 3, 7, 9)"],
             PARAMS: ["2097152 (in millions)", "2,097,152 (8192 x 255)", "2,097,152 (8192 x 256)"],
             LOSS: ["6.238 (negative)", "6.238 (= ln 512)"],
             "q-13-05": ["2,4,2,4"]}
    lines = []
    for q in questions:
        if q.id in typed:
            lines += typed[q.id]
        if q.kind in ("single", "multi", "order"):
            answer = q.answer if isinstance(q.answer, list) else [q.answer]
            lines.append(",".join(str(i + 1) for i in answer))
        elif q.kind == "numeric" and q.id not in typed:
            lines.append(repr(float(q.answer["value"])) if q.answer["value"] % 1
                         else str(int(q.answer["value"])))
        elif q.kind == "short":
            lines.append(q.answer["en"][0])
        elif q.kind == "recall":
            lines += ["my attempt", "", "y"]
    monkeypatch.setattr("sys.stdin", io.StringIO("\n".join(lines) + "\n"))
    code = main(["quiz", "take", QUIZ_ID, "--lang", "en"])
    flat = " ".join(capsys.readouterr().out.split())
    assert code == 0 and "Not quite." not in flat
    for reason in ("the word 'not' changes", "the word 'thousands' changes",
                   "the word 'millions' changes", "the working '8192 x 255' does not agree",
                   "the word 'negative' changes", "names choice 2 more than once"):
        assert reason in flat, reason
    assert "27/27" in flat


# --- choice numbers as people type them ---------------------------------------------------


@pytest.mark.parametrize("qid, typed, lang, read", [
    ("q-13-01", "4.", "en", 3), ("q-13-01", "(4)", "en", 3), ("q-13-01", "four", "en", 3),
    ("q-13-01", "Cuatro", "es", 3), ("q-13-01", "cuatro.", "es", 3), ("q-13-01", " (2) ", "en", 1),
    ("q-13-05", "1. 2. 4.", "en", [0, 1, 3]), ("q-13-05", "(1), (2), (4)", "es", [0, 1, 3]),
    ("q-13-05", "one, two, four", "en", [0, 1, 3]), ("q-13-05", "uno dos cuatro", "es", [0, 1, 3]),
])
def test_a_choice_number_with_a_dot_in_parentheses_or_in_words_is_read(qid, typed, lang, read):
    assert parse_input(quiz.load_quiz(QUIZ_ID).question(qid), typed, lang) == read


@pytest.mark.parametrize("qid, typed", [
    ("q-13-01", "(4"), ("q-13-01", "4)"), ("q-13-01", "4.)"), ("q-13-01", "(4)."),
    ("q-13-01", "4.0"), ("q-13-01", "1.5"), ("q-13-01", "(+4)"), ("q-13-01", "five"),
    ("q-13-01", "eleven"), ("q-13-01", "(four"), ("q-13-01", "()"), ("q-13-01", "."),
    ("q-13-05", "(1) 1."), ("q-13-05", "two, 2"), ("q-13-05", "dos (2)"),   # repeats
])
def test_other_forms_and_repeats_are_still_asked_again(qid, typed):
    with pytest.raises(ValueError):
        parse_input(quiz.load_quiz(QUIZ_ID).question(qid), typed, "en")


def test_a_numeric_answer_is_still_the_numeric_readers():
    # choice_number is for choice indices only: a numeric answer stays the typed text, graded
    # by the numeric reader (which reads "four" itself), never turned into a choice index
    numeric = quiz.load_quiz(QUIZ_ID).question("q-13-03")
    assert numeric.kind == "numeric" and numeric.answer["value"] == 4
    for typed in ("4", "four", "(4)", "4."):
        assert parse_input(numeric, typed, "en") == typed
    for typed in ("four or five", "1,2,3"):
        with pytest.raises(ValueError):
            parse_input(numeric, typed, "en")


# --- approximation signs and unit abbreviations (the sixth attack) -------------------------

DIRECTIONS = "q-13-20"  # 4 directions; its units list holds "dimensions"


@pytest.mark.parametrize("qid, typed, lang, expected", [
    # an exact count with an approximation sign was graded right: asked again now
    (ROWS, "≈4", "en", "reask"), (ROWS, "~4", "en", "reask"), (ROWS, "~ 4 rows", "en", "reask"),
    (ROWS, "≃4", "en", "reask"), (ROWS, "~=4", "en", "reask"), (ROWS, "≈4", "es", "reask"),
    (PARAMS, "~2,097,152", "en", "reask"),
    # a value with a tolerance may carry one; working in a chain is still checked
    (LOSS, "≈ 6.238", "en", "right"), (LOSS, "~6.238", "en", "right"),
    (LOSS, "ln 512 ≈ 6.238", "en", "right"), (ROWS, "2 + 2 = 4", "en", "right"),
    # working the grader can check stays an answer (documented rule)
    (ROWS, "3 + 1", "en", "right"), (PARAMS, "8192*256", "en", "right"),
    (ROWS, "exactly 4", "en", "right"),
    # the usual abbreviation of a unit the question accepts is that unit
    (DIRECTIONS, "4 dims", "en", "right"), (DIRECTIONS, "4 dim", "en", "right"),
    (DIRECTIONS, "4 dimensions", "en", "right"), (DIRECTIONS, "3 dims", "en", "wrong"),
    # ... and of a unit of another quantity, a wrong unit (as "4 columns" is)
    (ROWS, "4 cols", "en", "wrong"), (ROWS, "4 columns", "en", "wrong"),
])
def test_approximation_signs_and_unit_abbreviations(qid, typed, lang, expected):
    assert outcome(qid, typed, lang) == expected


def test_an_approximate_count_names_the_sign():
    question = quiz.load_quiz(QUIZ_ID).question(ROWS)
    with pytest.raises(quiz.Unreadable) as en:
        quiz.check_answer(question, "~4", "en")
    assert "the sign ~ says the number is approximate" in en.value.reason
    with pytest.raises(quiz.Unreadable) as es:
        quiz.check_answer(question, "≈4", "es")
    assert "el signo ≈ dice que el número es aproximado" in es.value.reason


@pytest.mark.parametrize("typed", ["≈4", "4 or 5", "4 dims!"])
def test_an_answer_asked_again_in_a_file_is_no_usage_error(typed, tmp_path, capsys, learner):
    """Exit 2 is for a malformed file (unknown ids, a list for a number); an answer the grader
    asks again about is reported with its reason, not recorded, and exits 1."""
    path = tmp_path / "answers.json"
    path.write_text(json.dumps({ROWS: typed}, ensure_ascii=False), encoding="utf-8")
    capsys.readouterr()
    code = main(["quiz", "take", QUIZ_ID, "--answers", str(path), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["recorded"] is False
    assert next(r for r in report["results"] if r["id"] == ROWS)["status"] == "unreadable"
    assert not (learner / "progress" / "quiz.json").exists()
