"""Error and status messages of the lab commands follow --lang (English and Spanish)."""

from __future__ import annotations

import json
import re

import pytest

from minimodel.cli import main
from minimodel.lab import i18n
from minimodel.lab.breaks.catalog import load_break
from minimodel.lab.patching import apply_patch_to_texts

QUIZ_ID = "phase-13-embeddings"


@pytest.fixture
def learner(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(tmp_path / "learner"))
    monkeypatch.setenv("COLUMNS", "400")  # Rich: one line per message
    monkeypatch.chdir(tmp_path)
    return tmp_path


def error_of(capsys, *argv: str) -> str:
    """Run the command; it must stop with exit code 2 and one `error:` line."""
    assert main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: "), err
    return err


# --- quiz ------------------------------------------------------------------------------------


def test_quiz_unknown_question_ids(learner, capsys):
    (learner / "a.json").write_text(json.dumps({"q-13-99": 1}))
    args = ("quiz", "take", QUIZ_ID, "--answers", "a.json")
    assert error_of(capsys, *args, "--lang", "es") == (
        f"error: ids de pregunta desconocidos: q-13-99 (el cuestionario {QUIZ_ID} tiene "
        "q-13-01..q-13-29)")
    assert error_of(capsys, *args) == (
        f"error: unknown question ids q-13-99 (quiz {QUIZ_ID} has q-13-01..q-13-29)")
    review = ("quiz", "review", QUIZ_ID, "--answers", "a.json", "--json", "--lang", "es")
    assert "ids de pregunta desconocidos: q-13-99" in error_of(capsys, *review)


def test_quiz_unknown_question_id_of_a_one_question_quiz_names_the_one(learner, capsys):
    # embedding-lookup's quiz is the one question q-13-01: no "q-13-01..q-13-01" range
    (learner / "a.json").write_text(json.dumps({"q-13-99": 1}))
    args = ("quiz", "take", "embedding-lookup", "--answers", "a.json")
    assert error_of(capsys, *args) == (
        "error: unknown question ids q-13-99 (quiz embedding-lookup has one question, q-13-01)")
    assert error_of(capsys, *args, "--lang", "es") == (
        "error: ids de pregunta desconocidos: q-13-99 (el cuestionario embedding-lookup tiene "
        "una sola pregunta, q-13-01)")


def test_quiz_malformed_answer_and_unknown_quiz(learner, capsys):
    (learner / "a.json").write_text(json.dumps({"q-13-01": "x"}))
    err = error_of(capsys, "quiz", "take", QUIZ_ID, "--answers", "a.json", "--lang", "es")
    assert err.startswith("error: respuesta mal formada: q-13-01")
    err = error_of(capsys, "quiz", "take", QUIZ_ID, "--answers", "a.json")
    assert err.startswith("error: malformed answer: q-13-01")
    err = error_of(capsys, "quiz", "take", "nope", "--answers", "a.json", "--lang", "es")
    assert err.startswith("error: cuestionario desconocido 'nope'; cuestionarios disponibles: ")
    assert err.endswith("(míralos con `minimodel quiz list --lang es`)")
    err = error_of(capsys, "quiz", "take", "nope", "--answers", "a.json")
    assert err.startswith("error: unknown quiz 'nope'; available quizzes: ")


def test_quiz_answers_file_errors(learner, capsys):
    (learner / "bin.json").write_bytes(b"\xff\xfe\x00garbage")
    (learner / "list.json").write_text("[1, 2]")
    take = ("quiz", "take", QUIZ_ID, "--answers")
    assert error_of(capsys, *take, "bin.json", "--lang", "es") == (
        "error: el archivo de respuestas bin.json no es texto UTF-8")
    assert error_of(capsys, *take, "bin.json") == "error: answers file bin.json is not UTF-8 text"
    assert error_of(capsys, *take, "list.json", "--lang", "es").startswith(
        "error: el archivo de respuestas list.json debe contener una asociación id de pregunta "
        '-> respuesta, p. ej. {"q-13-01": 1}; se obtuvo list')
    assert error_of(capsys, *take, ".", "--lang", "es") == (
        "error: el archivo de respuestas . es una carpeta; pasa un archivo JSON o YAML")



def _question(kind: str, answer, n_choices: int = 4):
    from minimodel.lab.quiz.loader import Question

    text = {"en": "t", "es": "t"}
    choices = [text] * n_choices if kind in ("single", "multi", "order") else []
    rubric = [text] if kind == "recall" else []
    return Question(id="q-99-01", kind=kind, title=text, prompt=text, choices=choices,
                    answer=answer, explanation=text, rubric=rubric)


# (kind, question's answer, learner's answer, error type, English text, Spanish text)
ANSWER_FORMAT_MESSAGES = {
    "out_of_range": (
        "single", 2, 4, ValueError,
        "q-99-01: choice index 4 is out of range; use 0..3 (indices are 0-based)",
        "q-99-01: el índice de opción 4 está fuera de rango; usa 0..3 (los índices empiezan "
        "en 0)"),
    "single": (
        "single", 2, [1], TypeError,
        "q-99-01 is a single-choice question: answer with one 0-based index such as 1, not [1]",
        "q-99-01 es una pregunta de opción única: responde con un solo índice (empezando en 0), "
        "como 1, no [1]"),
    "multi": (
        "multi", [0, 1], 1, TypeError,
        "q-99-01 is a multiple-choice question: answer with a list of 0-based indices such as "
        "[0, 2], not 1",
        "q-99-01 es una pregunta de opción múltiple: responde con una lista de índices "
        "(empezando en 0), como [0, 2], no 1"),
    "order": (
        "order", [2, 0, 1], [0, 1], ValueError,
        "q-99-01 is an ordering question: answer with all 3 choice indices (0-based) in the "
        "right order, each once, such as [2, 1, 0]; got [0, 1]",
        "q-99-01 es una pregunta de ordenar: responde con los 3 índices de las opciones "
        "(empezando en 0) en el orden correcto, cada uno una vez, como [2, 1, 0]; se obtuvo "
        "[0, 1]"),
    "unreadable": (
        "numeric", {"value": 4, "tolerance": 0}, "4 or 5", ValueError,
        "q-99-01: '4 or 5' is not one number; write it like 4, 2,097,152, 6.238 or 8192 * 256",
        "q-99-01: '4 or 5' no es un solo número; escríbelo como 4; 2\u00a0097\u00a0152; 6,238 u "
        "8192 * 256"),
    "not_finite": (
        "numeric", {"value": 4, "tolerance": 0}, float("inf"), ValueError,
        "q-99-01: numeric answer must be finite, got inf",
        "q-99-01: la respuesta numérica debe ser finita; se obtuvo inf"),
    "numeric": (
        "numeric", {"value": 4, "tolerance": 0}, [4], TypeError,
        "q-99-01 is a numeric question: answer with a number such as 6.238, not [4]",
        "q-99-01 es una pregunta numérica: responde con un número, como 6,238, no [4]"),
    "short": (
        "short", {"en": ["effective rank"], "es": ["rango efectivo"]}, 3, TypeError,
        'q-99-01 is a short-answer question: answer with a word or a few words, such as '
        '"effective rank", not 3',
        'q-99-01 es una pregunta de respuesta corta: responde con una palabra o unas pocas, '
        'como «rango efectivo», no 3'),
    "recall": (
        "recall", {"en": "m", "es": "m"}, "maybe", TypeError,
        "q-99-01 is a recall question, marked by you against its rubric: answer true if your "
        "answer covered every point, false if not; not 'maybe'",
        "q-99-01 es una pregunta de memoria, autoevaluada con su lista de puntos: responde true "
        "si tu respuesta recogía todos los puntos, false si no; no 'maybe'"),
}


@pytest.mark.parametrize("key", sorted(ANSWER_FORMAT_MESSAGES))
@pytest.mark.parametrize("lang", ["en", "es"])
def test_answer_format_explanations_follow_the_language(key, lang):
    from minimodel.lab.quiz import check_answer, is_correct
    from minimodel.messages import catalogue

    kind, right, given, error, english, spanish = ANSWER_FORMAT_MESSAGES[key]
    n_choices = len(right) if kind == "order" else 4
    question = _question(kind, right, n_choices)
    expected = {"en": english, "es": spanish}[lang]
    with pytest.raises(error) as raised:
        check_answer(question, given, lang)
    assert str(raised.value) == expected
    with pytest.raises(error) as raised:
        is_correct(question, given, lang)
    assert str(raised.value) == expected
    assert set(catalogue()[f"quiz.answer.{key}"]) == set(i18n.LANGS)


def test_every_answer_format_message_is_tested():
    from minimodel.messages import catalogue

    keys = {key.removeprefix("quiz.answer.") for key in catalogue()
            if key.startswith("quiz.answer.")}
    assert keys == set(ANSWER_FORMAT_MESSAGES)


@pytest.mark.parametrize("lang, expected", [
    ("es", "error: respuesta mal formada: q-13-01 es una pregunta de opción única: responde con "
           "un solo índice (empezando en 0), como 1, no [1]; respuesta mal formada: q-13-02: el "
           "índice de opción 9 está fuera de rango; usa 0..3 (los índices empiezan en 0)"),
    ("en", "error: malformed answer: q-13-01 is a single-choice question: answer with one "
           "0-based index such as 1, not [1]; malformed answer: q-13-02: choice index 9 is out "
           "of range; use 0..3 (indices are 0-based)"),
])
def test_quiz_take_malformed_answer_explained_in_the_language(learner, capsys, lang, expected):
    (learner / "a.json").write_text(json.dumps({"q-13-01": [1], "q-13-02": 9}))
    take = ("quiz", "take", QUIZ_ID, "--answers", "a.json", "--lang", lang)
    assert error_of(capsys, *take) == expected
    review = ("quiz", "review", QUIZ_ID, "--answers", "a.json", "--json", "--lang", lang)
    assert error_of(capsys, *review) == expected


@pytest.mark.parametrize("lang, reason, english_reason", [
    ("es", "Escribe un número entre 1 y 4.", "Type one number"),
    ("en", "Type one number between 1 and 4.", "Escribe"),
])
def test_interactive_take_reprompts_with_the_reason_in_the_language(learner, capsys,
                                                                     monkeypatch, lang, reason,
                                                                     english_reason):
    import io

    # q-13-01 (single choice): junk, a list, an out-of-range number, then an answer; then EOF
    monkeypatch.setattr("sys.stdin", io.StringIO("siete\n1,2\n9\n2\n"))
    main(["quiz", "take", QUIZ_ID, "--lang", lang])
    out = capsys.readouterr().out
    assert out.count(reason) == 3, out
    assert english_reason not in out

# --- break -----------------------------------------------------------------------------------


def test_break_unknown_id(learner, capsys):
    args = ("break", "start", "no-such-break", "--workdir", str(learner / "b"))
    err = error_of(capsys, *args, "--lang", "es")
    assert err.startswith("error: avería desconocida 'no-such-break'; averías disponibles: ")
    assert "tied-model-too-large" in err and err.endswith("(míralas con `minimodel break list --lang es`)")
    err = error_of(capsys, *args)
    assert err.startswith("error: unknown break 'no-such-break'; known breaks: ")
    assert err.endswith("(see `minimodel break list`)")


def test_harness_crash_message_follows_the_language(monkeypatch):
    from minimodel.lab.breaks import harness

    def crash() -> None:
        raise KeyError("x")

    def silent() -> None:
        raise AssertionError()

    monkeypatch.setenv(harness.LANG_ENV, "es")
    assert re.fullmatch(r"KeyError en test_lab_messages_lang\.py:\d+: 'x'",
                        harness.Checks._run_one(crash))
    assert harness.Checks._run_one(silent) == "la aserción falló"
    monkeypatch.setenv(harness.LANG_ENV, "en")
    assert re.fullmatch(r"KeyError at test_lab_messages_lang\.py:\d+: 'x'",
                        harness.Checks._run_one(crash))
    assert harness.Checks._run_one(silent) == "assertion failed"


@pytest.mark.parametrize("lang", ["es", "en"])
def test_break_check_labels_in_the_workspace_language(learner, capsys, lang):
    """tied-model-too-large's labels ("GPT after 3 AdamW step(s)", "GPT after save/load") in --lang.

    The labels name what was done to a model whose head is not the embedding's Parameter, so the
    workspace gets the fake fix copy-listed-as-embedding (the head keeps a copy of E) on top of
    the bug."""
    workdir = str(learner / "tb")
    assert main(["break", "start", "tied-model-too-large", "--workdir", workdir, "--lang", lang]) == 0
    capsys.readouterr()
    fake = load_break("tied-model-too-large").fake_path("copy-listed-as-embedding")
    head = learner / "tb" / "minimodel" / "nn" / "lm_head.py"
    head.write_text(apply_patch_to_texts(fake.read_text(encoding="utf-8"), {
        "minimodel/nn/lm_head.py": head.read_text(encoding="utf-8")})["minimodel/nn/lm_head.py"],
        encoding="utf-8")
    assert main(["break", "check", "--workdir", workdir, "--seed", "5"]) == 1
    out = capsys.readouterr().out
    if lang == "es":
        assert re.search(r"(GPT|MaskedLM|CBOW) tras \d paso\(s\) de (AdamW|SGD): lm_head\.weight "
                         r"no es el Parameter del embedding", out), out
        assert "GPT tras save/load: lm_head.weight no es el Parameter del embedding" in out
        assert " after " not in out and " step(s)" not in out
    else:
        assert re.search(r"(GPT|MaskedLM|CBOW) after \d (AdamW|SGD) step\(s\): lm_head\.weight "
                         r"is not the embedding's Parameter", out), out
        assert "GPT after save/load: lm_head.weight is not the embedding's Parameter" in out


# --- exercise --------------------------------------------------------------------------------


def test_exercise_unknown_id(learner, capsys):
    err = error_of(capsys, "exercise", "start", "nope", "--lang", "es")
    assert err.startswith("error: ejercicio desconocido 'nope'; ejercicios disponibles: ")
    assert "gelu-tanh" in err
    err = error_of(capsys, "exercise", "show", "nope")
    assert err.startswith("error: unknown exercise 'nope'; known exercises: ")


def test_exercise_start_over_an_existing_file(learner, capsys):
    (learner / "g.py").write_text("# mine\n")
    assert error_of(capsys, "exercise", "start", "gelu-tanh", "--file", "g.py", "--lang",
                    "es") == ("error: g.py ya existe; usa --force para sobrescribirlo o --file "
                              "para elegir otro nombre")
    assert error_of(capsys, "exercise", "start", "gelu-tanh", "--file", "g.py") == (
        "error: g.py already exists; pass --force to overwrite it or --file to choose another "
        "name")


def test_exercise_check_missing_file(learner, capsys):
    args = ("exercise", "check", "gelu-tanh", "--file", "nothere.py")
    assert error_of(capsys, *args, "--lang", "es") == (
        "error: el archivo de solución nothere.py no existe; créalo con "
        "`minimodel exercise start gelu-tanh --file nothere.py --lang es`")
    assert error_of(capsys, *args) == (
        "error: solution file nothere.py does not exist; create it with "
        "`minimodel exercise start gelu-tanh --file nothere.py`")
    learner.joinpath("folder").mkdir()
    assert error_of(capsys, "exercise", "check", "gelu-tanh", "--file", "folder", "--lang",
                    "es") == ("error: el archivo de solución folder es una carpeta; pasa con "
                              "--file el archivo .py que contiene")


def test_exercise_check_binary_file(learner, capsys):
    (learner / "x.py").write_bytes(b"def gelu(x):\n    return x\n\xf2\x28\xa1\x00")
    args = ("exercise", "check", "gelu-tanh", "--file", "x.py")
    assert error_of(capsys, *args, "--lang", "es") == (
        "error: el archivo de solución x.py no se puede leer como código fuente de Python (el "
        "byte 0xf2 en la posición 26 no es utf-8); pasa el archivo .py con tu función, guardado "
        "como texto UTF-8 (o con una línea de codificación como '# -*- coding: latin-1 -*-' que "
        "nombre la suya)")
    assert error_of(capsys, *args) == (
        "error: solution file x.py cannot be read as Python source (byte 0xf2 at position 26 "
        "is not utf-8); pass the .py file with your function, saved as UTF-8 text (or with a "
        "coding line such as '# -*- coding: latin-1 -*-' naming its encoding)")


def _result(status: str, reason: str) -> dict:
    return {"exercise": "gelu-tanh", "file": "g.py", "seed": 1, "passed": status == "passed",
            "status": status, "message": "m", "cases": [], "forbidden": [], "hung_at": [],
            "tolerance": {"rtol": 1e-9, "atol": 1e-12, "rtol_float32": 1e-5,
                          "atol_float32": 1e-6},
            "isolation": "full", "isolation_reason": reason}


def test_verdict_and_isolation_lines_in_spanish(learner, capsys):
    from minimodel.lab.exercises.display import print_result

    full = "bubblewrap namespaces, read-only file system, cgroup process and memory limits"
    print_result(_result("wrong", full), "es")
    out = capsys.readouterr().out
    assert ("aislamiento: completo (espacios de nombres de bubblewrap, sistema de archivos de "
            "solo lectura, límites de procesos y de memoria por cgroup)") in out
    assert "NO SUPERADO (incorrecto): m" in out
    print_result(_result("wrong", full), "en")
    out = capsys.readouterr().out
    assert f"isolation: full ({full})" in out and "NOT PASSED (wrong): m" in out


def test_every_isolation_reason_reads_back_into_spanish():
    from minimodel.lab.exercises import isolation

    reasons = [isolation._reason("full", limits="rlimit"),
               isolation._reason("root_without_cgroup"),
               isolation._reason("partial", why=isolation._reason("bwrap_missing")),
               isolation._reason("partial", why=isolation._reason("bwrap_broken")),
               isolation._reason("partial", why=isolation._reason("no_user_namespaces")),
               isolation._reason("partial", why=isolation._reason("not_linux",
                                                                  platform="darwin"))]
    spanish = [i18n.isolation_reason_label(r, "es") for r in reasons]
    assert spanish[0].endswith("límites de procesos y de memoria por rlimit")
    assert spanish[2].startswith("bubblewrap no está instalado: la solución se ejecuta como un "
                                 "proceso aparte")
    assert spanish[3].startswith("bubblewrap no funciona aquí: ")
    assert spanish[5].startswith("darwin no tiene espacios de nombres de Linux: ")
    for en, es in zip(reasons, spanish):
        assert es != en and "namespaces" not in es and "guard" not in es, es
        assert i18n.isolation_reason_label(en, "en") == en
    assert i18n.isolation_reason_label("test: no namespaces", "es") == "test: no namespaces"
    assert isolation.probe().reason in (reasons + [isolation._reason("full", limits="cgroup")])


def test_child_load_errors_in_spanish(learner):
    from minimodel.lab.exercises import check_solution

    (learner / "w.py").write_text("def not_gelu(x):\n    return x\n")
    result = check_solution("gelu-tanh", learner / "w.py", seed=1, lang="es")
    assert result["status"] == "error"
    assert result["message"] == ("no se pudo cargar el archivo: AttributeError: el archivo no "
                                 "define ninguna función llamada 'gelu'")
    result = check_solution("gelu-tanh", learner / "w.py", seed=1)
    assert result["message"] == ("could not load the file: AttributeError: the file defines no "
                                 "function named 'gelu'")


# --- the learner folder and the path's suggested commands -------------------------------------


@pytest.mark.parametrize("lang, start", [
    ("es", "error: problema con la carpeta de progreso: "),
    ("en", "error: learner folder problem: ")])
def test_a_file_in_place_of_the_learner_folder_is_said_in_the_commands_language(
        tmp_path, capsys, lang, start):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    err = error_of(capsys, "lab", "status", "--learner-dir", str(blocker), "--lang", lang)
    assert err.startswith(start + str(blocker)), err
    assert "--learner-dir" in err


def test_spanish_path_messages_suggest_spanish_commands(learner, capsys):
    """Every command the Spanish lesson and next messages suggest keeps --lang es."""
    assert main(["lab", "next", "--lang", "es"]) == 0
    out = capsys.readouterr().out
    assert "minimodel lab next --lang es" in out and "minimodel lab done 01 --lang es" in out
    assert main(["lab", "status", "--lang", "es"]) == 0
    out = capsys.readouterr().out
    assert "(minimodel lab next --lang es)" in out
    assert main(["lab", "next", "--skip", "--lang", "es"]) == 0
    out = capsys.readouterr().out
    assert "`minimodel lab status --lang es`" in out
    suggested = re.findall(r"minimodel (?:lab|quiz|exercise|break) [^`\n)]*", out)
    assert suggested and all("--lang es" in cmd for cmd in suggested), suggested


def test_break_run_says_an_import_hook_loads_the_copy_not_pythonpath():
    """The child finds the workspace copy through an import hook (``sys.meta_path``), not
    through PYTHONPATH; the message and the docs say so, and no page names the old
    ``break validate`` command."""
    from pathlib import Path

    from minimodel.messages import say

    texts = {lang: say("break.running", lang, script="experiment.py", root="/w")
             for lang in ("en", "es")}
    assert "import hook" in texts["en"] and "gancho de importación" in texts["es"]
    for text in texts.values():
        assert "PYTHONPATH" not in text and "/w/minimodel" in text
    root = Path(__file__).resolve().parents[2]
    pages = list((root / "docs").glob("*.md")) + [root / "README.md",
                                                  root / "src/minimodel/commands/break_.py"]
    assert not [p.name for p in pages if "break validate" in p.read_text(encoding="utf-8")]
