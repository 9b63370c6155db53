"""A take whose every answer was saved (stopped after its last one, in the terminal) is graded
and recorded when the tutor picks it up, as `quiz take` does when it resumes."""

from __future__ import annotations

from minimodel.lab.lessons import load_lessons
from minimodel.lab.quiz import load_quiz
from minimodel.lab.quiz.session import parse_input, save_partial
from minimodel.tutor.learner import Learner
from minimodel.tutor.quiz_tools import QuizDesk

from walks import typed


def test_a_take_with_every_answer_saved_is_graded_when_picked_up(tmp_path):
    learner = Learner(str(tmp_path), "en")
    quiz = load_quiz(next(lesson.stem for lesson in load_lessons() if lesson.quiz))
    answers = {q.id: parse_input(q, typed(q, "en", right=q is not quiz.questions[0]), "en")
               for q in quiz.questions if q.kind != "recall"}
    answers.update({q.id: True for q in quiz.questions if q.kind == "recall"})
    save_partial(learner.progress(), quiz, answers)
    desk = QuizDesk(learner)
    done = desk.question(quiz.id)
    graded = sum(q.kind != "recall" for q in quiz.questions)
    assert done["finished"] is True and done["total"] == graded
    assert done["missed"] == [quiz.questions[0].id] and done["score"] == graded - 1
    entry = learner.progress().get("quiz", quiz.id)
    assert entry["attempts"] == 1 and entry["partial"] is None
    assert desk.question(quiz.id)["number"] == 1   # a new take begins


def test_a_bag_of_words_is_asked_again_without_naming_the_accepted_term(tmp_path):
    """A short answer holding the accepted term among a few other words is asked again, naming
    the term; typed as the whole glossary it came back "has the term 'effective rank'", not
    recorded, the question still current: a free oracle. With many other words it is still
    asked again (an honest sentence around the right term is never marked wrong), but without
    naming the term."""
    from minimodel.lab.terminology import load_glossary

    quiz = load_quiz("effective-rank")
    question = next(q for q in quiz.questions if q.kind == "short")
    answers = {q.id: (True if q.kind == "recall" else
                      parse_input(q, typed(q, "en", right=True), "en"))
               for q in quiz.questions[:quiz.ids.index(question.id)]}
    learner = Learner(str(tmp_path), "en")
    if answers:
        save_partial(learner.progress(), quiz, answers)
    desk = QuizDesk(learner)
    assert desk.question(quiz.id)["question"]["id"] == question.id
    blob = " ".join(str(term.get("en", "")) for term in load_glossary())
    answer = desk.answer(quiz.id, question.id, blob)
    forms = [f for lang_forms in question.answer.values() for f in lang_forms]
    assert answer["status"] != "wrong" and "only the term" in str(answer), answer
    assert not any(f"'{form}'" in str(answer) for form in forms), answer
    assert desk.question(quiz.id)["question"]["id"] == question.id     # asked again
