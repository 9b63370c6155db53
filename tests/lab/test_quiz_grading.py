"""Grading of every question kind, answer checking, and the Leitner review order."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml

from minimodel.lab import quiz
from minimodel.lab.quiz import grading, review
from minimodel.lab.quiz.loader import Question, Quiz


def _text(s: str) -> dict[str, str]:
    return {"en": s, "es": s}


def make(kind: str, answer, n_choices: int = 4, qid: str = "q-99-01") -> Question:
    with_choices = kind in ("single", "multi", "order")
    choices = [_text(f"c{i}") for i in range(n_choices)] if with_choices else []
    rubric = [_text("point one"), _text("point two")] if kind == "recall" else []
    return Question(id=qid, kind=kind, title=_text("t"), prompt=_text("p"), choices=choices,
                    answer=answer, explanation=_text("e"), rubric=rubric)


def test_single():
    q = make("single", 2)
    assert quiz.is_correct(q, 2, "en") is True
    assert quiz.is_correct(q, 1, "en") is False
    with pytest.raises(TypeError, match="q-99-01 is a single-choice question"):
        quiz.is_correct(q, True, "en")          # a bool is not an index
    with pytest.raises(ValueError, match="choice index 4 is out of range; use 0..3"):
        quiz.is_correct(q, 4, "en")


def test_multi_ignores_order_but_not_repeats_or_missing_choices():
    q = make("multi", [0, 1, 3])
    assert quiz.is_correct(q, [3, 0, 1], "en") is True
    with pytest.raises(quiz.Unreadable, match="names choice 0 more than once"):
        quiz.is_correct(q, [0, 0, 1, 3], "en")     # a slip or a guess: asked again
    assert quiz.is_correct(q, [0, 1], "en") is False
    assert quiz.is_correct(q, [0, 1, 2, 3], "en") is False
    with pytest.raises(TypeError, match="list of 0-based indices"):
        quiz.is_correct(q, 1, "en")


def test_order_must_be_the_exact_sequence():
    q = make("order", [2, 0, 3, 1])
    assert quiz.is_correct(q, [2, 0, 3, 1], "en") is True
    assert quiz.is_correct(q, [2, 0, 1, 3], "en") is False          # two swapped
    assert quiz.is_correct(q, [1, 3, 0, 2], "en") is False          # reversed
    for bad in ([2, 0, 3], [2, 0, 3, 3], [2, 0, 3, 4], 2, [True, 0, 3, 1]):
        with pytest.raises(ValueError, match="q-99-01 is an ordering question"):
            quiz.is_correct(q, bad, "en")


SHORT = {"en": ["effective rank", "erank", "r_eff"], "es": ["rango efectivo"]}


# A short answer is the term alone (case, accents, hyphens, a leading article and a final full
# stop ignored); words without the term are wrong; anything else is asked again. (The fifth
# attack passed "effective rank (stable rank)", "(incorrect)", "✗", "≠", "!effective rank" and
# strike-through marks; the old rule's allowed detail, "of E", "(Roy & Vetterli)", "i.e. ...",
# "a / b", is asked again now, never graded right.)
@pytest.mark.parametrize("typed", ["effective rank", "The Effective-Rank.", "  EFFECTIVE\nrank ",
                                   "el rango efectivo", "rángo efectivo", "R_eff", "erank",
                                   "e-rank", "Effective\u2010rank"])
def test_short_accepts_every_form_in_either_language(typed):
    assert quiz.is_correct(make("short", SHORT), typed, "en") is True


@pytest.mark.parametrize("typed", ["rank", "ineffective rank", "effective", "stable rank",
                                   "the rank is effective", "rango", "stable rank."])
def test_short_near_misses_are_wrong(typed):
    assert quiz.is_correct(make("short", SHORT), typed, "en") is False


@pytest.mark.parametrize("typed", [
    "effective rank (stable rank)", "effective rank (incorrect)", "effective rank (false)",
    "effective rank ✗", "effective rank ✓", "!effective rank", "effective rank?", "rank?",
    "stable rank (Roy)", "Effective rank (Roy & Vetterli)", "erank(E)", "(not) effective rank",
    "effective rank, i.e. exp of the spectral entropy", "rango efectivo / effective rank",
    "effective rank...", "effective rank? no", "effective rank (un)", "*effective rank*"])
def test_short_with_a_symbol_is_asked_again_never_graded(typed):
    with pytest.raises(quiz.Unreadable, match="type only the term, in words"):
        quiz.is_correct(make("short", SHORT), typed, "en")


@pytest.mark.parametrize("typed", ["e\u0336f\u0336f\u0336e\u0336c\u0336t\u0336i\u0336v\u0336e\u0336 rank",
                                   "effective\u0338 rank", "≠ effective rank",
                                   "effective ra\u0332nk"])
def test_short_with_a_mark_that_is_no_accent_is_asked_again(typed):
    with pytest.raises(quiz.Unreadable, match="mark over a character"):
        quiz.is_correct(make("short", SHORT), typed, "en")


@pytest.mark.parametrize("typed", ["not effective rank", "effective rank of E",
                                   "the effective rank of the embedding", "rango efectivo de E",
                                   "it is called the effective rank", "no es el rango efectivo",
                                   "effective rank or stable rank", "effective rank is big"])
def test_short_term_with_other_words_is_asked_again_never_graded(typed):
    with pytest.raises(quiz.Unreadable, match="type only the term"):
        quiz.is_correct(make("short", SHORT), typed, "en")


@pytest.mark.parametrize("typed", ["un-effective rank", "un effective rank", "non-effective rank",
                                   "in-effective rank"])
def test_a_negating_prefix_before_the_term_is_asked_again(typed):
    with pytest.raises(quiz.Unreadable, match="type only the term"):
        quiz.is_correct(make("short", SHORT), typed, "en")


def test_un_is_the_spanish_article_in_a_spanish_answer():
    assert quiz.is_correct(make("short", SHORT), "un rango efectivo", "es") is True
    with pytest.raises(quiz.Unreadable):
        quiz.is_correct(make("short", SHORT), "un-rango efectivo", "es")


def test_short_needs_a_word():
    with pytest.raises(TypeError, match="short-answer question"):
        quiz.is_correct(make("short", SHORT), " ?! ", "en")
    assert quiz.normalise("  Ñandú  ÉXITO ") == "nandu exito"
    assert quiz.canonical_phrase("  The  Ñandú-ÉXITO! ") == "nandu exito"


def test_recall_is_the_learners_own_mark():
    q = make("recall", _text("model answer"))
    for yes in (True, "y", "yes", "s", "sí", "SI", {"recalled": True}, _text("model answer")):
        assert quiz.is_correct(q, yes, "en") is True
    for no in (False, "n", "no", {"recalled": False}):
        assert quiz.is_correct(q, no, "en") is False
    for not_a_mark in ("maybe", "1", "0", {}):  # "1" may be a pasted line; {} is no answer
        with pytest.raises(TypeError, match="recall question"):
            quiz.is_correct(q, not_a_mark, "en")


@pytest.mark.parametrize("given_value, expected", [
    (6.238, True), (6.248, True), (6.228, True),   # the edges are inside
    (6.2481, False), (6.2279, False), (6, False), (7, False),
])
def test_numeric_tolerance_edges(given_value, expected):
    assert quiz.is_correct(make("numeric", {"value": 6.238, "tolerance": 0.01}),
                           given_value, "en") is expected


def test_numeric_zero_tolerance_and_types():
    q = make("numeric", {"value": 2097152, "tolerance": 0})
    assert quiz.is_correct(q, 2097152, "en") and quiz.is_correct(q, 2097152.0, "en")
    assert not quiz.is_correct(q, 2097153, "en")
    assert quiz.is_correct(q, {"value": 2097152, "tolerance": 0}, "en")   # the exported form
    with pytest.raises(ValueError, match="finite"):
        quiz.is_correct(q, float("nan"), "en")
    with pytest.raises(TypeError, match="numeric question"):
        quiz.is_correct(q, [2097152], "en")


@pytest.mark.parametrize("typed, value, lang", [
    ("2,097,152", 2097152, "en"), ("2.097.152", 2097152, "es"), ("2 097 152", 2097152, "en"),
    ("2\u202f097\u202f152", 2097152, "es"), ("6,238", 6.238, "es"), ("6.238", 6.238, "en"),
    ("6,24", 6.24, "en"), ("Four", 4, "en"),
    ("veinte", 20, "es"), ("8192 * 256", 2097152, "en"), ("8192 x 256", 2097152, "en"),
    ("8192 × 256", 2097152, "es"), ("2^21", 2097152, "en"), ("2^21 parameters", 2097152, "en"),
    ("ln 512", 6.238, "en"), ("ln512", 6.238, "es"), ("9 ln 2", 6.238, "en"),
    ("-ln(1/512)", 6.238, "en"), ("≈ 6,24", 6.24, "es"), ("about 6.238", 6.238, "en"),
    ("exactly 4", 4, "en"), ("2.", 2, "en"), ("4e3", 4000, "en"),
    ("2.097152 million", 2097152, "en"), ("2,097152 millones", 2097152, "es"),
    ("2.1M", 2.1e6, "en"), ("64K", 64000, "en"), ("4 thousand", 4000, "en"),
    ("cuatro mil", 4000, "es"), ("four hundred", 400, "en"), ("4,000", 4000, "en"),
    ("4,000", 4, "es"), ("0.004", 0.004, "en"), ("0,004", 0.004, "es"),
])
def test_numbers_are_read_with_their_locale_scale_and_notation(typed, value, lang):
    q = make("numeric", {"value": value, "tolerance": 0.001,
                         "unit": {"en": "parameters", "es": "parámetros"}})
    assert quiz.is_correct(q, typed, lang) is True


@pytest.mark.parametrize("typed", ["4 or 5", "not 4", "four or five", "1, 3, 7, 9", "no 4",
                                   "4 and 8", "", "inf", "nan", "9^9^9", "__import__('os')",
                                   "(1)(2)", "exp(1000)", "ln(0)", "1/0", "x + 1", "1 2 4",
                                   "4 each", "4 twice", "4 per matrix", "4 not"])
def test_text_that_is_not_one_number_is_asked_again(typed):
    with pytest.raises(quiz.Unreadable, match="not one number|changes what the number means"):
        quiz.check_answer(make("numeric", {"value": 4, "tolerance": 0}), typed, "en")


def test_a_note_listing_ids_the_question_never_names_is_asked_again():
    """"4 (rows 1, 2, 3, 4)" counts four ids, but not the ones the prompt gives."""
    question = quiz.load_quiz("phase-13-embeddings").question("q-13-03")
    assert quiz.check_answer(question, "4 (rows 1, 3, 7 and 9)", "en") is not None
    for typed in ("4 (rows 1, 2, 3, 4)", "4 (ids 1, 3, 7, 8)"):
        with pytest.raises(quiz.Unreadable):
            quiz.check_answer(question, typed, "en")


@pytest.mark.parametrize("typed", ["4!", "\u2074", "2\u00b2\u00b9", "\u00bd", "\u2463",
                                   "4\u00b9"])
def test_a_digit_that_means_more_than_a_digit_is_asked_again(typed):
    """A superscript is a power, "!" a factorial, "½" a fraction: normalised away they would
    read as plain digits ("2²¹" as 221), so they are asked again, never graded."""
    for value in (4, 221, 1, 2097152):
        with pytest.raises(quiz.Unreadable, match="not one number"):
            quiz.check_answer(make("numeric", {"value": value, "tolerance": 0}), typed, "en")


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("typed", ["0x200000", "0X200000", "0xff", "0x1F", "0x200000 parameters",
                                   "2097152 (0x200000)"])
def test_a_hexadecimal_literal_is_asked_again_not_read_as_a_product(typed, lang):
    """"0x200000" is 2097152 in base 16; read as "0 x 200000" it would be the product 0 and
    graded wrong. The grader reads no base 16, so it asks again."""
    with pytest.raises(quiz.Unreadable):
        quiz.check_answer(make("numeric", {"value": 2097152, "tolerance": 0}), typed, lang)


@pytest.mark.parametrize("typed, right", [
    ("0 x 200000", False), ("10x200", False), ("8192x256", True), ("2**21", True),
    ("2.097152e6", True), ("2e6", False)])
def test_products_powers_and_exponents_are_read_as_written(typed, right):
    """Spaced or after other digits, x is a product; an exponent is read exactly as typed."""
    assert quiz.is_correct(make("numeric", {"value": 2097152, "tolerance": 0}), typed,
                           "en") is right


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("typed", [
    "0o10000000", "0O10000000", "0b1000000000000000000000", "0B1000000000000000000000",
    "0o10_000_000", "0b_1000000000000000000000", "0o10000000 parameters", "2^0b10101",
    "2097152 (0o10000000)", "8192 * 0b100000000", "2_097_152", "+2_097_152", "2_097_152 * 1",
    "2097_152", "8_192 x 256"])
def test_a_base_prefix_or_an_underscore_between_digits_is_asked_again(typed, lang):
    """Octal and binary are asked again as hexadecimal is: each is 2,097,152 only to a Python
    prompt, and a learner who types one is not writing the number the quiz asks for. Python's
    underscores group digits in no quiz language; "+2_097_152" and "2_097_152 * 1" used to
    slip through as calculations while "2_097_152" was asked again."""
    with pytest.raises(quiz.Unreadable, match="not one number|no es un solo número"):
        quiz.check_answer(make("numeric", {"value": 2097152, "tolerance": 0}), typed, lang)


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("typed", [
    "2097 152", "2097'152", "2097\u2019152", "2097\u202f152", "20 97 152", "209 7152",
    "0 097 152", "02 097 152", "1 2 097 152", "2 097 15", "2097 152 parameters",
    "2097152 = 2097 152", "2,097 152", "2.097 152"])
def test_a_space_that_groups_no_thousands_is_asked_again(typed, lang):
    """A space or an apostrophe groups thousands only from a first group of 1-3 digits (no
    leading 0) through groups of exactly 3. "2097 152" used to be read from its tail ("097
    152"), the "2" kept, as 2,097,152; it may as well be two numbers or a digit lost."""
    with pytest.raises(quiz.Unreadable, match="not one number|no es un solo número"):
        quiz.check_answer(make("numeric", {"value": 2097152, "tolerance": 0}), typed, lang)


@pytest.mark.parametrize("typed, lang", [
    ("2 097 152", "en"), ("2 097 152", "es"), ("2'097'152", "en"), ("2\u00a0097\u00a0152", "es"),
    ("2,097,152", "en"), ("2.097.152", "es"), ("2097152", "en"), ("2097152", "es"),
    ("2 097 152.0", "en"), ("2 097 152,0", "es"),
    ("2 097 152 parameters", "en"), ("2097152 = 2 097 152", "en"), ("8192 × 256", "es")])
def test_honest_groupings_of_2097152_are_still_right(typed, lang):
    q = make("numeric", {"value": 2097152, "tolerance": 0,
                         "unit": {"en": "parameters", "es": "parámetros"}})
    assert quiz.is_correct(q, typed, lang) is True


@pytest.mark.parametrize("typed, lang", [("02,097,152", "en"), ("02.097.152", "es"),
                                         ("20.97.152", "es"), ("02,097,152.5", "en")])
def test_grouping_marks_after_a_leading_zero_are_asked_again(typed, lang):
    """The thousands rule is one for every mark: "02.097.152" has a first group with a leading
    0, so its points group nothing, and two of them cannot both be decimal marks."""
    with pytest.raises(quiz.Unreadable):
        quiz.check_answer(make("numeric", {"value": 2097152, "tolerance": 0}), typed, lang)


@pytest.mark.parametrize("typed, right", [
    ("3.9999999999999999", False), ("4.0000000000000001", False), ("4.000", True),
    ("\U0001d7d2", True), ("4", True), ("four", True), ("2^2", True)])
def test_a_count_is_read_exactly_not_through_a_float(typed, right):
    """A count (tolerance 0, an integer) is right only for the integer: the nearest float of
    3.9999999999999999 is 4.0, its digits are not. A mathematical bold 𝟒 is a decimal digit."""
    assert quiz.is_correct(make("numeric", {"value": 4, "tolerance": 0}), typed, "en") is right


def test_the_answers_file_help_shows_numbers_each_language_accepts():
    """`quiz take --help` shows "6.238", and "6,238" with --lang es: each is right in its
    language; English reads 6,238 as six thousand two hundred and thirty-eight."""
    from minimodel.commands.quiz import ANSWER_FORMAT

    line = next(text for text in ANSWER_FORMAT.splitlines() if "numeric" in text)
    assert '"6.238"' in line and '"6,238" with --lang es' in line
    question = make("numeric", {"value": 6.238, "tolerance": 0.001})
    assert quiz.is_correct(question, "6.238", "en") and quiz.is_correct(question, "6,238", "es")
    assert not quiz.is_correct(question, "6,238", "en")


ROWS = {"value": 4, "tolerance": 0, "unit": {"en": "rows", "es": "filas"}}


@pytest.mark.parametrize("typed, lang, right", [
    ("4 rows", "en", True), ("4 filas", "es", True), ("4 distinct rows", "en", True),
    ("4", "en", True), ("4 columns", "en", False), ("4 columnas", "es", False),
    ("4 bytes", "en", False), ("4 bits", "es", False)])
def test_the_unit_must_be_one_the_question_declares(typed, lang, right):
    question = make("numeric", ROWS)
    assert quiz.is_correct(question, typed, lang) is right


# Attack 13: "6.238 in total" was graded right for the expected loss per token at step 0. A
# word that makes the number a total (or a count of distinct things) says what a count is,
# but changes a mean, a loss or a ratio; only a question whose unit counts things takes it.
LOSS = {"value": 6.238, "tolerance": 0.001}
LOSS_PROMPT = {"en": "What cross-entropy loss (natural log) at step 0? Give 3 decimals.",
               "es": "¿Qué pérdida de entropía cruzada (logaritmo natural)? Da 3 decimales."}


@pytest.mark.parametrize("typed, lang, word", [
    ("6.238 in total", "en", "in total"), ("6.238 nats total", "en", "total"),
    ("6.238 nats altogether", "en", "altogether"), ("total 6.238", "en", None),
    ("6.238 overall", "en", "overall"), ("6.238 (in total)", "en", "in total"),
    ("ln 512 = 6.238 nats in all", "en", "in all"), ("6.238 distinct", "en", "distinct"),
    ("6.238 in", "en", "in"), ("6,238 en total", "es", "en total"),
    ("6,238 nats en conjunto", "es", "en conjunto"), ("unos 6,238 nats totales", "es", "totales"),
    ("6,238 (en total)", "es", "en total")])
def test_a_word_that_makes_a_loss_a_total_is_asked_again_naming_it(typed, lang, word):
    q = Question(id="q-99-01", kind="numeric", title=_text("t"), prompt=LOSS_PROMPT, choices=[],
                 answer=LOSS, explanation=_text("e"))
    with pytest.raises(quiz.Unreadable) as asked:
        quiz.is_correct(q, typed, lang)
    if word:
        assert f"{word!r}" in asked.value.reason and "(nats)" in asked.value.reason
    # the same loss typed plainly, or with its unit after a preposition, is right
    assert quiz.is_correct(q, "6.238 in nats" if lang == "en" else "6,238 en nats", lang)


@pytest.mark.parametrize("typed, lang", [
    ("1 in total", "en"), ("1 altogether", "en"), ("1 en total", "es"), ("1 distinto", "es")])
def test_a_total_beside_a_number_that_declares_no_count_is_asked_again(typed, lang):
    with pytest.raises(quiz.Unreadable):
        quiz.is_correct(make("numeric", {"value": 1, "tolerance": 0}), typed, lang)


PARAMS = {"value": 2097152, "tolerance": 0, "unit": {"en": "parameters", "es": "parámetros"}}


@pytest.mark.parametrize("answer, typed, lang, right", [
    (ROWS, "4 rows in total", "en", True), (ROWS, "4 in total", "en", True),
    (ROWS, "four rows altogether", "en", True), (ROWS, "4 (in total)", "en", True),
    (ROWS, "4 distinct rows in all", "en", True), (ROWS, "5 rows in total", "en", False),
    (ROWS, "4 columns in total", "en", False), (ROWS, "4 filas en total", "es", True),
    (ROWS, "cuatro filas en conjunto", "es", True), (ROWS, "4 filas distintas en total", "es", True),
    (PARAMS, "2,097,152 parameters in total", "en", True),
    (PARAMS, "2 097 152 parámetros en total", "es", True),
    (PARAMS, "2 millones de parámetros en total", "es", False)])
def test_a_count_keeps_its_total(answer, typed, lang, right):
    assert quiz.is_correct(make("numeric", answer), typed, lang) is right


def test_natural_log_declares_nats_and_bits_are_wrong():
    q = Question(id="q-99-01", kind="numeric", title=_text("t"),
                 prompt={"en": "What loss (natural log)? Give 3 decimals.",
                         "es": "¿Qué pérdida (logaritmo natural)? Da 3 decimales."},
                 choices=[], answer={"value": 6.238, "tolerance": 0.01}, explanation=_text("e"))
    assert quiz.is_correct(q, "6.238 nats", "en") and quiz.is_correct(q, "6,238 nats", "es")
    assert not quiz.is_correct(q, "6.238 bits", "en")
    # "Give 3 decimals": the tolerance is one unit in the third decimal, whatever the YAML says
    assert quiz.is_correct(q, "6.239", "en") and quiz.is_correct(q, "6.237", "en")
    assert not quiz.is_correct(q, "6.245", "en") and not quiz.is_correct(q, "6.240", "en")
    assert grading.expected_value(q, "en") == "6.238 ± 0.001"
    assert grading.expected_value(q, "es") == "6,238 ± 0,001"
    with pytest.raises(quiz.Unreadable, match="asks for 3 decimals"):
        quiz.is_correct(q, "6.24", "en")
    # in Spanish "6.238" has a thousands reading; only its decimal one has 3 decimals
    assert quiz.is_correct(q, "6.238", "es")


def test_a_spanish_point_read_two_ways_is_asked_again_when_the_grades_differ():
    q = make("numeric", {"value": 65536, "tolerance": 0})
    with pytest.raises(quiz.Unreadable, match="65\u00a0536 o como 65,536"):
        quiz.is_correct(q, "65.536", "es")
    assert quiz.is_correct(q, "65,536", "en")             # English: a comma groups thousands
    assert not quiz.is_correct(q, "65,536", "es")         # Spanish: a decimal comma
    assert not quiz.is_correct(q, "2.097", "es")          # both readings wrong: graded wrong
    assert grading.expected_value(make("numeric", {"value": 2097152, "tolerance": 0}),
                                  "es") == "2\u00a0097\u00a0152"


def test_grade_reports_unreadable_answers_with_the_reason_not_as_wrong():
    q = quiz.load_quiz("phase-13-embeddings")
    report = quiz.grade(q, {"q-13-08": "65536 each", "q-13-03": "4 columns"}, "en")
    by_id = {r["id"]: r for r in report["results"]}
    assert by_id["q-13-08"]["status"] == "unreadable"
    assert "'each' changes what the number means" in by_id["q-13-08"]["reason"]
    assert by_id["q-13-03"] == {"id": "q-13-03", "correct": False, "status": "wrong"}
    assert by_id["q-13-07"]["status"] == "unanswered"


def test_grade_counts_missing_as_wrong_and_keeps_recall_apart():
    q = quiz.load_quiz("phase-13-embeddings")
    answers = {x.id: x.export()["answer"] for x in q.questions}   # the exported key
    report = quiz.grade(q, answers, "en")
    graded = [x for x in q.questions if x.kind in quiz.AUTO_GRADED]
    assert report["score"] == report["total"] == len(graded) < len(q.questions)
    assert report["recall"]["answered"] == report["recall"]["recalled"] == \
        len(q.questions) - len(graded)
    del answers["q-13-02"]
    answers["q-13-28"] = False
    report = quiz.grade(q, answers, "en")
    assert report["score"] == len(graded) - 1
    assert [r["id"] for r in report["results"] if not r["correct"]] == ["q-13-02"]
    assert {"id": "q-13-28", "recalled": False} in report["recall"]["results"]
    assert grading.outcomes(report)["q-13-28"] is False


def test_labelled_answers_all_grade_as_labelled():
    """Every answer a person labelled right is right, every one labelled wrong is not."""
    q = quiz.load_quiz("phase-13-embeddings")
    path = quiz.CONTENT_DIR / "labelled" / "phase-13-embeddings.yaml"
    labelled = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert grading.labelled_problems(q, labelled) == []
    counted = sum(len(sets.get(label) or []) for by_lang in labelled["answers"].values()
                  for sets in by_lang.values() for label in grading.LABELS)
    assert counted >= 7 * 2 * 2 * 8
    # every case of the report is in the set, in both languages
    for qid, lang, label, typed in [
            ("q-13-03", "en", "wrong", "4 columns"),
            ("q-13-03", "es", "wrong", "4 columnas"),
            ("q-13-07", "en", "wrong", "2,097,152 bytes"),
            ("q-13-08", "en", "wrong", "65,536 bytes"),
            ("q-13-15", "en", "wrong", "6.238 bits"),
            ("q-13-18", "en", "wrong", "5.545 bits"),
            ("q-13-08", "en", "reask", "65536 each"),
            ("q-13-08", "en", "reask", "65536 twice"),
            ("q-13-08", "en", "reask", "65536 per matrix"),
            ("q-13-07", "en", "reask", "2097152 not"),
            ("q-13-07", "en", "correct", "2.097152 million"),
            ("q-13-07", "es", "correct", "2,097152 millones"),
            ("q-13-07", "en", "wrong", "2.1M"),
            ("q-13-08", "en", "wrong", "64K"),
            ("q-13-03", "en", "wrong", "4 thousand"),
            ("q-13-03", "es", "wrong", "cuatro mil"),
            ("q-13-03", "en", "wrong", "4,000"),
            ("q-13-03", "en", "wrong", "four hundred"),
            ("q-13-03", "en", "wrong", "0.004"),
            ("q-13-15", "en", "wrong", "6.245"),
            ("q-13-18", "en", "wrong", "5.536"),
            ("q-13-07", "en", "correct", "8192 x 256"),
            ("q-13-07", "en", "correct", "2^21 parameters"),
            ("q-13-15", "en", "correct", "ln512"),
            ("q-13-15", "en", "correct", "9 ln 2"),
            ("q-13-15", "en", "correct", "about 6.238"),
            ("q-13-03", "en", "correct", "exactly 4"),
            ("q-13-03", "en", "correct", "4."),
            ("q-13-19", "en", "wrong", "stable rank"),
            ("q-13-19", "es", "wrong", "rango")]:
        assert typed in labelled["answers"][qid][lang][label], (qid, lang, label, typed)
    # the term alone is right; with a detail or a symbol it is asked again (the sticky reading
    # of the fifth attack's H8: the old rule graded these right)
    for lang in ("en", "es"):
        assert "e-rank" in labelled["answers"]["q-13-19"][lang]["correct"]
    for typed in ("effective rank of E", "erank(E)", "effective rank (stable rank)",
                  "effective rank ✗", "≠ effective rank", "effective rank?"):
        assert typed in labelled["answers"]["q-13-19"]["en"]["reask"], typed


def test_labelled_problems_catch_a_mislabelled_answer():
    q = quiz.load_quiz("phase-13-embeddings")
    labelled = {"answers": {"q-13-19": {"en": {"correct": ["rank"] * 8,
                                               "wrong": ["effective rank"] + ["x"] * 7}}}}
    problems = grading.labelled_problems(q, labelled)
    assert "q-13-19 (en): 'rank' is labelled correct but grades as wrong" in problems
    assert "q-13-19 (en): 'effective rank' is labelled wrong but grades as correct" in problems
    assert any(p.startswith("q-13-03: no labelled answers") for p in problems)


def test_check_answers_names_every_problem():
    q = quiz.load_quiz("phase-13-embeddings")
    with pytest.raises(ValueError) as info:
        quiz.check_answers(q, {"q-13-99": 1, "nope": 2, "q-13-01": "x", "q-13-05": [9]}, "en")
    message = str(info.value)
    for part in ("unknown question ids q-13-99, nope", "q-13-01 is a single-choice",
                 "q-13-05: choice index 9 is out of range"):
        assert part in message


def test_read_answers_json_yaml_and_errors(tmp_path: Path):
    (tmp_path / "a.json").write_text(json.dumps({"q-13-01": 1}))
    (tmp_path / "a.yaml").write_text("q-13-01: 1\nq-13-05: [0, 1, 3]\n")
    (tmp_path / "list.json").write_text("[1, 2]")
    assert quiz.read_answers(tmp_path / "a.json") == {"q-13-01": 1}
    assert quiz.read_answers(tmp_path / "a.yaml") == {"q-13-01": 1, "q-13-05": [0, 1, 3]}
    with pytest.raises(ValueError, match="must hold a mapping"):
        quiz.read_answers(tmp_path / "list.json")
    with pytest.raises(ValueError, match="cannot read answers file"):
        quiz.read_answers(tmp_path / "missing.json")
    (tmp_path / "empty.json").write_text("")
    with pytest.raises(ValueError, match="is empty"):
        quiz.read_answers(tmp_path / "empty.json")
    with pytest.raises(ValueError, match="/dev/null is empty"):
        quiz.read_answers("/dev/null")


# --- Leitner review ---------------------------------------------------------------------


def _quiz(n: int) -> Quiz:
    return Quiz(id="t", title=_text("t"), path=Path("t.yaml"),
                questions=[make("single", 0, qid=f"q-99-{i:02d}") for i in range(1, n + 1)])


def test_review_queue_puts_missed_first():
    today = dt.date(2025, 3, 10)
    boxes = {"q-99-01": {"box": 3, "due": "2025-03-09"},   # interval over
             "q-99-02": {"box": 2, "due": "2025-03-12"},   # not due yet
             "q-99-04": {"box": 1, "due": "2025-03-10"},   # missed
             "q-99-05": {"box": 1, "due": "2025-03-08"}}   # missed earlier
    queue = review.review_queue(_quiz(5), boxes, on=today)
    assert [(i["id"], i["reason"]) for i in queue] == [
        ("q-99-05", "missed"), ("q-99-04", "missed"), ("q-99-03", "new"), ("q-99-01", "due")]
    everything = review.review_queue(_quiz(5), boxes, on=today, include_all=True)
    assert [i["id"] for i in everything][-1] == "q-99-02"


def test_leitner_moves():
    day = dt.date(2025, 3, 10)
    assert review.move(None, True, day) == {"box": 2, "due": "2025-03-11"}
    assert review.move({"box": 4, "due": "x"}, True, day) == {"box": 5, "due": "2025-03-24"}
    assert review.move({"box": 5, "due": "x"}, True, day)["box"] == 5
    assert review.move({"box": 4, "due": "x"}, False, day) == {"box": 1, "due": "2025-03-10"}
    boxes = review.update_boxes({"a": {"box": 3, "due": "x"}}, {"b": False}, day)
    assert boxes == {"a": {"box": 3, "due": "x"}, "b": {"box": 1, "due": "2025-03-10"}}


def test_the_optional_decimals_and_units_fields_validate_and_grade():
    """Backward compatible: absent, they are derived from the prompt and ``unit``."""
    from minimodel.lab.items import schema_problems
    from minimodel.lab.quiz import schema

    data = yaml.safe_load((quiz.CONTENT_DIR / "phase-13-embeddings.yaml").read_text("utf-8"))
    q20 = next(q for q in data["questions"] if q["id"] == "q-13-20")
    q20["answer"].update(decimals=2, units=["directions", "direcciones"])
    assert schema_problems(data, schema.QUIZ_SCHEMA) == []
    question = make("numeric", q20["answer"])
    assert quiz.is_correct(question, "4.00 directions", "en") and quiz.is_correct(question, "4.00", "en")
    assert quiz.is_correct(question, "4,00 direcciones", "es")
    with pytest.raises(quiz.Unreadable, match="asks for 2 decimals"):
        quiz.is_correct(question, "4.0", "en")


def test_a_wrong_unit_names_the_unit_asked_for_once():
    # Regression: "asks for nat, nats, not bits".
    from minimodel.lab.quiz.session import wrong_unit

    question = quiz.load_quiz("phase-13-embeddings").question("q-13-15")
    assert wrong_unit(question, "6.238 bits", "en") == "The question asks for nats, not bits."


# The fifth attack's H8 on numbers: a strike-through or a slash over the number says it is
# not meant, so it is asked again; "4?" was already asked again, like "effective rank?" now.
@pytest.mark.parametrize("typed", ["4\u0336", "4\u0338", "\u03364", "4\u0336 rows", "4?"])
def test_a_number_with_a_mark_or_a_question_mark_is_asked_again(typed):
    q = quiz.load_quiz("phase-13-embeddings").question("q-13-03")
    with pytest.raises(quiz.Unreadable):
        quiz.is_correct(q, typed, "en")


def test_an_apostrophe_groups_thousands_and_accents_stay_accents():
    q = quiz.load_quiz("phase-13-embeddings").question("q-13-07")
    assert q.answer["value"] == 2097152
    for lang in ("en", "es"):
        assert quiz.is_correct(q, "2'097'152", lang) is True
        assert quiz.is_correct(q, "2\u2019097\u2019152", lang) is True
        assert quiz.is_correct(q, "2'097'153", lang) is False
    with pytest.raises(quiz.Unreadable):           # a product inside a note: still asked again
        quiz.is_correct(quiz.load_quiz("phase-13-embeddings").question("q-13-03"), "4 (V·d)",
                        "en")
    assert quiz.is_correct(make("short", SHORT), "rángo efectívo", "es") is True


# --- the eighth attack: exact counts read exactly however typed; approximations in words ---

def _question(question_id: str) -> Question:
    return quiz.load_quiz("phase-13-embeddings").question(question_id)


def _right(question: Question, answer, lang: str = "en") -> bool:
    return quiz.is_correct(question, quiz.check_answer(question, answer, lang), lang)


@pytest.mark.parametrize("answer, expected", [
    (2097152.002, False), (2097152.0000001, False), (2097152, True), (2097152.0, True),
    ("2^21 + 1/1000", False), ("2^21 + 10^-12", False), ("2^21 - 1/3 + 1/3", True),
    ("8192 * 256", True), ("2^21 parameters", True), ("(2^22) / 2", True)])
def test_an_exact_count_is_compared_exactly_as_a_number_or_a_calculation(answer, expected):
    assert _right(_question("q-13-07"), answer) is expected


@pytest.mark.parametrize("answer, lang", [
    ("about 4", "en"), ("roughly 4 rows", "en"), ("approximately 4", "en"),
    ("around 4 distinct rows", "en"), ("nearly 4", "en"), ("4...", "en"), ("4\u2026", "en"),
    ("unos 4", "es"), ("más o menos 4", "es"), ("casi 4", "es"), ("aprox. 4", "es")])
def test_an_approximation_in_words_before_an_exact_count_is_asked_again(answer, lang):
    with pytest.raises(quiz.Unreadable) as caught:
        quiz.check_answer(_question("q-13-03"), answer, lang)
    assert ("exact count" if lang == "en" else "recuento exacto") in caught.value.reason


@pytest.mark.parametrize("answer", ["about 6.238", "6.238...", "≈ 6.238", "roughly 6.238"])
def test_an_approximation_before_a_value_with_a_tolerance_is_read(answer):
    assert _right(_question("q-13-15"), answer) is True


@pytest.mark.parametrize("answer, outcome", [
    ("sqrt(2^42)", True), ("sqrt(2^42 + 1)", "reask"), ("exp(9 ln 2) * 2^12", "reask")])
def test_an_exact_count_takes_a_root_only_when_it_is_exact(answer, outcome):
    """The tenth attack: sqrt(2^42 + 1) is 2097152.000000238..., within a float's hair of the
    count; a root of a perfect square is exact, anything else with no exact value is asked
    again for an exact count."""
    question = _question("q-13-07")
    if outcome == "reask":
        with pytest.raises(quiz.Unreadable) as caught:
            quiz.check_answer(question, answer, "en")
        assert "no exact value" in caught.value.reason
    else:
        assert _right(question, answer) is outcome


# --- the eleventh attack: a number is read from its digits, never through a float ---------

def _graded(tmp_path: Path, text: str, suffix: str = "json") -> dict[str, str]:
    """Grade an answers file of phase 13: question id -> status (right, wrong, unreadable)."""
    path = tmp_path / f"answers.{suffix}"
    path.write_text(text, encoding="utf-8")
    found = quiz.load_quiz("phase-13-embeddings")
    report = quiz.grade(found, quiz.read_answers(path), "en")
    return {r["id"]: r["status"] for r in report["results"] if r["status"] != "unanswered"}


def test_a_json_number_is_read_from_its_digits_not_its_nearest_float(tmp_path: Path):
    """json.loads reads 65535.99999999999999 as the float 65536.0; its digits are not the count
    65536. Honest spellings of the count (65536.0, 6.5536E4) stay right."""
    assert _graded(tmp_path, '{"q-13-08": 65535.99999999999999, "q-13-03": 4.00000000000000001,'
                             ' "q-13-07": 2.0971519999999999e6}') == {
        "q-13-08": "wrong", "q-13-03": "wrong", "q-13-07": "wrong"}
    assert _graded(tmp_path, '{"q-13-08": 65536.0, "q-13-03": 4, "q-13-07": 2.097152E6}') == {
        "q-13-08": "right", "q-13-03": "right", "q-13-07": "right"}
    assert quiz.read_answers(tmp_path / "answers.json")["q-13-03"] == 4  # ints stay ints


def test_a_json_number_with_an_exponent_beyond_any_float_is_asked_again(tmp_path: Path):
    """1e-999999999 would be read exactly as a fraction over 10^999999999: asked again."""
    assert _graded(tmp_path, '{"q-13-03": 4e-999999999}') == {"q-13-03": "unreadable"}


@pytest.mark.parametrize("typed, right", [
    ("(65535.99999999999999)", False), ("65535.99999999999999 * 1", False),
    ("1 * 65536.00000000000001", False), ("2^15 * 1.99999999999999999", False),
    ("(65536.0)", True), ("0.5 * 131072", True), ("6.5536e4 * 1", True), ("2^15 * 2.000", True)])
def test_a_calculation_reads_each_number_from_its_digits(typed, right):
    """Python parses 65535.99999999999999 to the float 65536.0 before any Fraction sees it;
    each literal of a calculation is read from the text typed instead."""
    assert _right(_question("q-13-08"), typed) is right


def test_a_literal_with_an_exponent_beyond_any_float_in_a_calculation_is_asked_again():
    with pytest.raises(quiz.Unreadable):
        quiz.check_answer(_question("q-13-03"), "4 + 1e-999999999", "en")


# --- YAML answers are read as typed, not as YAML 1.1 numbers and booleans ----------------

@pytest.mark.parametrize("typed, status", [
    ("18:12:16", "unreadable"),    # YAML 1.1 base 60: 65536
    ("0x10000", "unreadable"),     # hexadecimal 65536: base 16 is not read
    ("65_536", "unreadable"),      # YAML 1.1 drops the underscore
    ("0o200000", "unreadable"),    # octal 65536: only decimal is read
    ("0b10000000000000000", "unreadable"), ("0o200_000", "unreadable"),
    ("65 536", "right"), ("65'536", "right"), ("6 5536", "unreadable"), ("655 36", "unreadable"),
    ("0200000", "wrong"),          # YAML 1.1 octal 65536; typed, two hundred thousand
    (".inf", "unreadable"), ("~", "unreadable"), ("on", "unreadable"),
    ("65536", "right"), ("65,536", "right"), ("2^16", "right"), ("+65536", "right"),
    ('"65536"', "right"), ("65536.", "right")])
def test_a_yaml_answer_is_graded_from_its_text(tmp_path: Path, typed, status):
    assert _graded(tmp_path, f"q-13-08: {typed}\n", "yaml") == {"q-13-08": status}


def test_yaml_answers_keep_choices_and_self_marks(tmp_path: Path):
    """Whole numbers in plain digits stay ints (choice indices, lists of them); yes/no and
    true/false are self-marks; a YAML 1.1 boolean that is no such word (on) is refused."""
    path = tmp_path / "answers.yaml"
    path.write_text("q-13-01: 1\nq-13-05: [0, 1, 3]\nq-13-28: yes\nq-13-29: false\n"
                    "q-13-03: 04\n", encoding="utf-8")
    answers = quiz.read_answers(path)
    assert answers == {"q-13-01": 1, "q-13-05": [0, 1, 3], "q-13-28": "yes",
                       "q-13-29": "false", "q-13-03": "04"}
    found = quiz.load_quiz("phase-13-embeddings")
    checked = quiz.check_answers(found, answers, "en")
    assert checked["q-13-28"] is True and checked["q-13-29"] is False
    assert checked["q-13-05"] == [0, 1, 3]
    path.write_text("q-13-28: on\n", encoding="utf-8")
    with pytest.raises(ValueError, match="recall question"):
        quiz.check_answers(found, quiz.read_answers(path), "en")


# --- an approximation anywhere in an answer to an exact count is asked again --------------

@pytest.mark.parametrize("typed, lang", [
    ("precisely about 65536", "en"), ("exactly ≃ 65536", "en"), ("= roughly 65,536", "en"),
    ("65536 = approx. 65536", "en"), ("65536 = ≈65536", "en"), ("512 × 128 ≈ 65536", "en"),
    ("512 × 128 = ~65536", "en"), ("65536 (~ 2^16)", "en"), ("65536 (≈ 512 × 128)", "en"),
    ("exactly 65536 or so, more or less", "en"), ("65536ish", "en"), ("65536... exactly", "en"),
    ("exactamente unos 65 536", "es"), ("65 536 (más o menos)", "es"),
    ("exactamente ～65 536", "es"), ("65 536 = casi 65 536", "es")])
def test_an_approximation_anywhere_in_an_exact_count_is_asked_again(typed, lang):
    """The check is not anchored at the start: after a qualifier, on any side of a chain, in
    a note, a sign or a word of approximation says the number may not be the count."""
    with pytest.raises(quiz.Unreadable) as caught:
        quiz.check_answer(_question("q-13-08"), typed, lang)
    assert ("approximate" if lang == "en" else "aproximado") in caught.value.reason


@pytest.mark.parametrize("typed, lang", [
    ("exactly 65536", "en"), ("precisely 65,536", "en"), ("512 × 128 = 65536", "en"),
    ("65536 (= 2^16)", "en"), ("2^16 = 65,536", "en"), ("exactamente 65 536", "es"),
    ("65 536 (= 512 × 128)", "es")])
def test_an_exact_count_with_honest_working_or_qualifier_is_still_right(typed, lang):
    assert _right(_question("q-13-08"), typed, lang) is True


@pytest.mark.parametrize("typed", ["ln 512 ≈ 6.238", "≈ 6.238", "about 6.238",
                                   "6.238 (≈ ln 512)", "approximately 6.238"])
def test_an_approximation_beside_a_value_with_a_tolerance_is_still_read(typed):
    assert _right(_question("q-13-15"), typed) is True


# --- one full stop may end an answer; anything else trailing is asked again --------------

@pytest.mark.parametrize("typed, lang", [
    ("65536..", "en"), ("65,536 ..", "en"), ("2^16..", "en"), ("65536 (2^16)..", "en"),
    ("65 536\u2025", "es"), ("65536.,", "en"), ("65536;", "en"), ("65536:", "es")])
def test_anything_but_one_full_stop_trailing_a_number_is_asked_again(typed, lang):
    with pytest.raises(quiz.Unreadable, match="not one number|no es un solo número"):
        quiz.check_answer(_question("q-13-08"), typed, lang)


@pytest.mark.parametrize("typed, lang", [
    ("65536.", "en"), ("65,536 .", "en"), ("2^16.", "en"), ("65536 (2^16).", "en"),
    ("65 536.", "es"), ("65536,", "es")])
def test_one_full_stop_ending_the_answer_is_read_past(typed, lang):
    """A Spanish decimal comma with no digits after it is the number, as "65536." is."""
    assert _right(_question("q-13-08"), typed, lang) is True


@pytest.mark.parametrize("typed, outcome", [
    ("6.238.", True), ("6.238...", True), ("6.238..", "reask"), ("6.238,", "reask")])
def test_a_value_with_a_tolerance_keeps_its_trailing_off_but_not_two_stops(typed, outcome):
    question = _question("q-13-15")
    if outcome == "reask":
        with pytest.raises(quiz.Unreadable):
            quiz.check_answer(question, typed, "en")
    else:
        assert _right(question, typed) is outcome


@pytest.mark.parametrize("typed, outcome", [
    ("65535.99999999999999 = 65536", "reask"), ("2^16 + 1/10^12 = 65536", "reask"),
    ("65536 (= 2^16 - 10^-10)", "reask"), ("512 × 128 = 65536", True),
    ("65536.000 = 65536", True), ("6.5536e4 = 2^16", True), ("exp(ln 65536) = 65536", True)])
def test_the_working_of_an_exact_count_is_compared_exactly(typed, outcome):
    """A side of working must agree with an exact count exactly when it has an exact value;
    a float's hair of slack stays for a side with none (ln, exp)."""
    question = _question("q-13-08")
    if outcome == "reask":
        with pytest.raises(quiz.Unreadable, match="does not agree"):
            quiz.check_answer(question, typed, "en")
    else:
        assert _right(question, typed) is outcome
