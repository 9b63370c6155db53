"""The glossary check: Spanish lab texts use the glossary's terms, not the ones it avoids."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from minimodel.cli import main
from minimodel.lab.terminology import (CONTENT_DIR, glossary_problems, printed_count_problems,
                                       spanish_texts)

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


def test_a_code_span_is_not_read_as_a_gap_between_words():
    glossary = [{"en": "untied", "es": "sin atar", "avoid": ["la sin atar"]}]
    texts = [("span.es", "la `W` sin atar y la `E` atada"),
             ("ellipsis.es", "la matriz atada y la sin atar")]
    assert glossary_problems(iter(texts), glossary) == [
        "ellipsis.es: Spanish text uses 'la sin atar'; the glossary's Spanish for 'untied' "
        "is 'sin atar'"]


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
    assert "'búsqueda'; the glossary's Spanish for 'lookup' is 'indexación'" in problems[0]
    assert "'el atado'" in problems[1] and "'la atadura'" in problems[1]


def test_spanish_numbers_use_a_decimal_comma_in_every_text():
    texts = [("quizzes/q.yaml.questions[0].prompt.es", "La pérdida ronda 6.238 nats."),
             ("breaks/b/experiment.py:3", "cociente 1,74; `lr=0.01` es código; v2.0.1"),
             ("results.es.md:12", "| 4.2177 (67.88) |"),
             ("messages.yaml.x.es", "6.238")]          # messages and pages are prose too
    assert glossary_problems(iter(texts), GLOSSARY) == [
        f"{where}: Spanish text writes {number!r} with a decimal point; Spanish uses a decimal "
        f"comma ({number.replace('.', ',')!r}; in maths 0{{,}}5), or mark it as code with "
        "backticks" for where, number in [
            ("quizzes/q.yaml.questions[0].prompt.es", "6.238"), ("results.es.md:12", "4.2177"),
            ("results.es.md:12", "67.88"), ("messages.yaml.x.es", "6.238")]]


def test_a_spanish_lesson_printing_english_thousands_is_reported(tmp_path: Path):
    (tmp_path / "x.es.md").write_text(
        "Cuenta 124 439 808 parámetros.\n\n```python\nprint(n)\n```\n\n"
        "```output\natado    544,256\npérdida 0,014 y 6.238; lista [1,234]\n"
        "sin atar 675\u00a0328\n```\n", encoding="utf-8")
    (tmp_path / "x.md").write_text("```output\ntied    544,256\n```\n", encoding="utf-8")
    problems = printed_count_problems(tmp_path)
    assert len(problems) == 2 and problems[0].startswith("x.es.md:8: the Spanish lesson prints '544,256'")
    assert problems[1].startswith("x.es.md:9: the Spanish lesson prints '1,234'") and "grouped(n, ',', 'es')" in problems[0]
    assert printed_count_problems(CONTENT_DIR / "lessons") == []      # the shipped lessons


def test_es_num_writes_numbers_as_spanish_prose_does():
    from minimodel.lab.breaks.harness import es_num

    assert es_num(6.23832, ".3f") == "6,238"
    assert es_num(44.181, "7.3f") == " 44,181"
    assert es_num(2097152.0, ",.1f") == "2 097 152,0"
    assert es_num(0.125, ".1%") == "12,5 %"
    assert es_num(1.5e-5, ".2g") == "1,5e-05"


def test_the_glossary_names_one_spanish_word_per_concept():
    """Lookup is 'indexación' (attention queries keep 'consultas'), and each concept that drifted
    between names has an entry whose other names are refused."""
    from minimodel.lab.terminology import load_glossary

    by_en = {term["en"]: term for term in load_glossary()}
    assert by_en["lookup"]["es"] == "indexación"
    assert by_en["query (attention)"]["es"] == "consulta"
    for en, es in [("untie (verb)", "desatar"), ("gather (pick rows by index)", "selección de filas"),
                   ("file", "archivo"), ("MLP", "el MLP"), ("softmax", "la softmax"),
                   ("probe", "sonda"), ("running mean (Adam's m)", "media móvil")]:
        assert by_en[en]["es"] == es
    assert any(t["en"].startswith("feature") for t in by_en.values())
    assert any(t["en"].startswith("kernel") for t in by_en.values())
    texts = [("a.es", "El modelo no atado tiene su propia cabeza."),
             ("b.es", "Un LM enmascarado recoge primero las filas consultadas."),
             ("c.es", "Guarda el fichero; el softmax es estable y la MLP ensancha."),
             ("d.es", "Las consultas y las claves de la atención; el modelo sin atar.")]
    found = glossary_problems(iter(texts))
    assert [p.split(":")[0] for p in found] == ["a.es", "b.es", "b.es", "b.es", "c.es", "c.es",
                                                "c.es"]
    assert "'no atado'; the glossary's Spanish for 'untied' is 'sin atar'" in found[0]


def test_spanish_typography_is_checked_in_prose_only():
    from minimodel.lab.spanish_style import style_problems

    texts = [("prose.es", "La pérdida baja a 4.2177 con el 15% de las posiciones."),
             ("maths.es", r"$$x + 0.044715\,x^3$$ y $0{,}5$"),
             ("quotes.es", 'El «atado» está bien; el "atado" no, ni Press & Wolf.'),
             ("code.es", "Usa `lr=0.5`, np.exp(1000.0), x[mask > 0.5] y [[-0.1562, 0.1562]]."),
             ("formula.es", "GELU = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."),
             ("version.es", "Python 3.11.7, NumPy 2.4 y CC0 1.0; el 15 % y 6,238."),
             ("indented.es", "Ejemplo:\n\n    >>> f(2.0)\n    4.0"),
             ("json.es", 'Con --json: muestra {"fixed": bool, "break", "seed"} y {"id", "ok"}.'),
             ("exercise.yaml.stub_doc.es", "Devuelve 0.5 * x."),
             ("front.es.md:2", 'title: "Un embedding es una indexación"'),
             ("admonition.es.md:9", '!!! note "Idea equivocada frecuente"')]
    found = style_problems(texts)
    assert len(found) == 5, found
    assert found[0].startswith("prose.es: Spanish text writes '4.2177' with a decimal point")
    assert "'4,2177'" in found[0]
    assert found[1] == "prose.es: Spanish text writes '15%' without a space; write '15 %'"
    assert found[2].startswith("maths.es: Spanish text writes '0.044715'")
    assert "write «atado»" in found[3]
    assert found[4] == ("quotes.es: Spanish text writes 'Press & Wolf'; Spanish joins two "
                        "authors with 'y': 'Press y Wolf'")
