"""The glossary check: Spanish lab texts use the glossary's terms, not the ones it avoids."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from minimodel.cli import main
from minimodel.lab.terminology import CONTENT_DIR, glossary_problems, spanish_texts

GLOSSARY = [{"en": "learning rate", "es": "tasa de aprendizaje",
             "avoid": ["learning rate", "ratio de aprendizaje"]},
            {"en": "loss", "es": "pérdida", "avoid": ["la loss"]}]


def test_the_shipped_spanish_texts_follow_the_glossary():
    texts = list(spanish_texts(page_dirs=()))    # the lab's own texts; pages: see below
    wheres = {re.split(r"(?<=\.yaml)|:", where)[0] for where, _ in texts}
    # Quizzes, breaks, exercises and the message catalogue are all read.
    assert "quizzes/phase-13-embeddings.yaml" in wheres
    assert any(w.startswith("breaks/") for w in wheres)
    assert any(w.startswith("exercises/") for w in wheres)
    assert "messages.yaml" in wheres
    assert ("messages.yaml.quiz.kind.single.es", "opción única") in texts
    assert len(texts) > 500
    assert glossary_problems(iter(texts)) == []


def test_avoided_terms_are_reported_with_the_word_to_use():
    texts = [("q.es", "Sube el Learning Rate si la loss no baja."),
             ("ok.es", "Usa `--learning-rate` o `learning_rate`; la pérdida baja."),
             ("word.es", "La ratio de aprendizajes no es un término del glosario.")]
    problems = glossary_problems(iter(texts), GLOSSARY)
    assert problems == [
        "q.es: Spanish text uses 'learning rate'; the glossary's Spanish for 'learning rate' "
        "is 'tasa de aprendizaje'",
        "q.es: Spanish text uses 'la loss'; the glossary's Spanish for 'loss' is 'pérdida'"]


def test_catalogue_message_tables_in_code_and_nested_yaml_are_read(tmp_path: Path):
    content, code = tmp_path / "content", tmp_path / "code"
    catalogue = tmp_path / "messages.yaml"
    catalogue.write_text("quiz:\n  k: {en: the loss falls, es: la loss baja}\n",
                         encoding="utf-8")
    (content / "breaks" / "b").mkdir(parents=True)
    code.mkdir()
    (content / "breaks" / "b" / "break.yaml").write_text(
        "hints:\n  - {en: raise the learning rate, es: sube el learning rate}\n",
        encoding="utf-8")
    (code / "messages.py").write_text(
        'M = {"k": {"en": "loss", "es": "mira " "la loss"}, "f": {"es": f"la loss {1}"}}\n',
        encoding="utf-8")
    texts = list(spanish_texts(content, (code,), page_dirs=(), catalogue=catalogue))
    assert texts == [("messages.yaml.quiz.k.es", "la loss baja"),
                     ("breaks/b/break.yaml.hints[0].es", "sube el learning rate"),
                     ("messages.py:1", "mira la loss"), ("messages.py:1", "la loss ")]
    assert len(glossary_problems(iter(texts), GLOSSARY)) == 4


def test_lab_validate_reports_the_glossary_section(capsys, monkeypatch):
    import minimodel.lab.terminology as terminology

    monkeypatch.setattr(terminology, "glossary_problems",
                        lambda: ["x.es: Spanish text uses 'la loss'"])
    monkeypatch.setattr("minimodel.lab.overview.SECTIONS", {
        "quiz": lambda: [], "glossary": lambda: terminology.glossary_problems()})
    assert main(["lab", "validate"]) == 1
    out = capsys.readouterr().out
    assert "glossary: 1 problem(s)" in out and "x.es: Spanish text uses 'la loss'" in out


def test_spanish_printed_by_break_scripts_is_checked(tmp_path: Path):
    """The Spanish arguments of tr/say/CheckFailed/checks.case/conclude in a break's scripts
    are read (what `break run --lang es` prints); English arguments and other calls are not."""
    content = tmp_path / "content"
    shutil.copytree(CONTENT_DIR / "breaks" / "tied-model-too-large", content / "breaks" / "tied-model-too-large")
    catalogue = tmp_path / "messages.yaml"
    catalogue.write_text("{}\n", encoding="utf-8")
    script = content / "breaks" / "tied-model-too-large" / "invariants.py"
    clean = glossary_problems(spanish_texts(content, (), page_dirs=(), catalogue=catalogue))
    assert clean == []
    script.write_text("\n".join([
        script.read_text(encoding="utf-8"),
        'checks.case("x", "the lookup", "el gradiente de la búsqueda")(print)',
        'say(f"lookup {1}", f"el atado {1} sobrevive")',
        'conclude(checks, True, "a", "b", ok_en="lookup", ok_es="la búsqueda va bien")',
        'raise CheckFailed("el atado in English is not checked", "la consulta")',
        'print("búsqueda")']) + "\n", encoding="utf-8")
    planted = script.read_text(encoding="utf-8").splitlines().index(
        'checks.case("x", "the lookup", "el gradiente de la búsqueda")(print)') + 1
    problems = glossary_problems(spanish_texts(content, (), page_dirs=(), catalogue=catalogue))
    where = "breaks/tied-model-too-large/invariants.py"
    assert [p.split(" uses ")[0] for p in problems] == [
        f"{where}:{planted}: Spanish text", f"{where}:{planted + 1}: Spanish text",
        f"{where}:{planted + 2}: Spanish text"]
    assert "'búsqueda'; the glossary's Spanish for 'lookup' is 'consulta'" in problems[0]
    assert "'el atado'" in problems[1] and "'la atadura'" in problems[1]


def test_spanish_numbers_in_quizzes_and_breaks_use_a_decimal_comma():
    texts = [("quizzes/q.yaml.questions[0].prompt.es", "La pérdida ronda 6.238 nats."),
             ("breaks/b/experiment.py:3", "cociente 1,74; `lr=0.01` es código; v2.0.1"),
             ("quizzes/q.yaml.questions[1].prompt.es", "std 0.02."),
             ("messages.yaml.x.es", "6.238")]          # outside quizzes and breaks: not checked
    assert glossary_problems(iter(texts), GLOSSARY) == [
        "quizzes/q.yaml.questions[0].prompt.es: Spanish text writes '6.238' with a decimal "
        "point; Spanish uses a decimal comma ('6,238'), or mark it as code with backticks",
        "quizzes/q.yaml.questions[1].prompt.es: Spanish text writes '0.02' with a decimal "
        "point; Spanish uses a decimal comma ('0,02'), or mark it as code with backticks"]


def test_es_num_writes_numbers_as_spanish_prose_does():
    from minimodel.lab.breaks.harness import es_num

    assert es_num(6.23832, ".3f") == "6,238"
    assert es_num(44.181, "7.3f") == " 44,181"
    assert es_num(2097152.0, ",.1f") == "2 097 152,0"
    assert es_num(0.125, ".1%") == "12,5%"
    assert es_num(1.5e-5, ".2g") == "1,5e-05"
