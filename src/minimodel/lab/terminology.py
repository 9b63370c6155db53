"""One Spanish vocabulary: the glossary's ``avoid`` terms must not appear in Spanish lab text.

The glossary (``content/glossary.yaml``) fixes the Spanish for each term and lists the calques
and anglicisms to avoid (``learning rate`` for *tasa de aprendizaje*, ``weight decay`` for
*decaimiento de pesos*...). This module gathers every Spanish text a learner reads in the lab —
the ``es`` fields of the quizzes, breaks and exercises, the message catalogue
(``minimodel/messages.yaml``: the lab's, the site's and the doctor's sentences), any message
table left in code, the Spanish lines the breaks' scripts print (the Spanish arguments of the
:mod:`~minimodel.lab.breaks.harness` helpers: ``tr``, ``say``, ``CheckFailed``, ``checks.case``,
``conclude``), the Spanish lessons (``NN-slug.es.md``) and, in a clone, the Spanish pages of
``docs/`` — and reports each avoided term with the word to use instead.

Code (fenced blocks and spans between backticks) is skipped: option names such as
``--weight-decay`` and identifiers are code, not prose.
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from minimodel.lab.breaks import harness
from minimodel.lab.items import load_yaml, read_yaml
from minimodel.lab.pyparse import parse_python
from minimodel.lab.spanish_style import english_grouped_counts, style_problems
from minimodel.lab.quiz.text import normalise
from minimodel.messages import CATALOGUE_PATH

LAB_DIR = Path(__file__).resolve().parent
CONTENT_DIR = LAB_DIR / "content"
GLOSSARY_PATH = CONTENT_DIR / "glossary.yaml"
CODE_DIRS = tuple(LAB_DIR.parent / name for name in ("lab", "commands", "site", "doctor"))
# The site's own Spanish pages, present in a clone (not in an installed package).
DOCS_DIR = LAB_DIR.parents[2] / "docs"
SPANISH = "es"
_FENCED = re.compile(r"^(```+|~~~+).*?^\1[ \t]*$", re.M | re.S)


def load_glossary(path: Path = GLOSSARY_PATH) -> list[dict[str, Any]]:
    """Every term, each with ``en`` and ``es`` and optional ``avoid`` (list) and ``note``."""
    terms = (read_yaml(path) or {}).get("terms")
    if not isinstance(terms, list) or not terms:
        raise ValueError(f"{path}: expected a non-empty list under 'terms'")
    for i, term in enumerate(terms):
        if not isinstance(term, dict) or not term.get("en") or not term.get("es"):
            raise ValueError(f"{path}: term {i} needs non-empty 'en' and 'es', got {term!r}")
        if not isinstance(term.get("avoid", []), list):
            raise ValueError(f"{path}: term {term['en']!r}: 'avoid' must be a list")
    return terms


def _markdown_texts(folder: Path) -> Iterator[tuple[str, str]]:
    """(file:line, line) for each prose line of the ``*.es.md`` files in ``folder``."""
    for path in sorted(folder.glob("*.es.md")) if folder.is_dir() else []:
        text = path.read_text(encoding="utf-8")
        prose = _FENCED.sub(lambda m: "\n" * m.group(0).count("\n"), text)
        for number, line in enumerate(prose.splitlines(), 1):
            if line.strip():
                yield f"{path.name}:{number}", line


def _yaml_texts(data: Any, where: str, in_spanish: bool = False) -> Iterator[tuple[str, str]]:
    """Strings under an ``es`` key, at any depth (lists of accepted forms included)."""
    if isinstance(data, str) and in_spanish:
        yield where, data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from _yaml_texts(value, f"{where}.{key}", in_spanish or key == SPANISH)
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield from _yaml_texts(value, f"{where}[{i}]", in_spanish)


def _literal_text(node: ast.AST) -> str:
    """The literal text of a string or f-string node (the ``{...}`` parts left out)."""
    parts = ([node] if isinstance(node, ast.Constant)
             else node.values if isinstance(node, ast.JoinedStr) else [])
    return "".join(p.value for p in parts
                   if isinstance(p, ast.Constant) and isinstance(p.value, str))


def _parsed(path: Path) -> ast.AST | None:
    try:
        return parse_python(path.read_text(encoding="utf-8"), str(path))
    except (SyntaxError, ValueError):
        return None


def _code_texts(path: Path) -> Iterator[tuple[str, str]]:
    """String values of ``{"es": "..."}`` entries in a Python file (message tables)."""
    for node in ast.walk(_parsed(path) or ast.Module(body=[], type_ignores=[])):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values):
            if isinstance(key, ast.Constant) and key.value == SPANISH:
                if text := _literal_text(value):
                    yield f"{path.name}:{value.lineno}", text


def _spanish_parameters() -> dict[str, tuple[set[int], set[str]]]:
    """Helper name -> (positions, keywords) of its Spanish parameters (``es``, ``*_es``), read
    from the harness's own signatures so a new helper or argument is covered without a list."""
    helpers = {"tr": harness.tr, "say": harness.say, "CheckFailed": harness.CheckFailed,
               "case": harness.Checks.case, "conclude": harness.conclude}
    spanish = {}
    for name, helper in helpers.items():
        params = [p for p in inspect.signature(helper).parameters if p != "self"]
        keywords = {p for p in params if p == SPANISH or p.endswith("_" + SPANISH)}
        spanish[name] = ({params.index(p) for p in keywords}, keywords)
    return spanish


def _break_script_texts(path: Path, where: str) -> Iterator[tuple[str, str]]:
    """The Spanish arguments of the harness helpers called in a break's script: what
    ``break run`` and ``break check`` print with ``--lang es``."""
    spanish = _spanish_parameters()
    found = []
    for node in ast.walk(_parsed(path) or ast.Module(body=[], type_ignores=[])):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(
            func, ast.Attribute) else None
        if name not in spanish:
            continue
        positions, keywords = spanish[name]
        args = [a for i, a in enumerate(node.args) if i in positions]
        args += [k.value for k in node.keywords if k.arg in keywords]
        found += [(arg.lineno, text) for arg in args if (text := _literal_text(arg))]
    for line, text in sorted(found):   # in file order (ast.walk goes breadth-first)
        yield f"{where}:{line}", text


def spanish_texts(content_dir: Path = CONTENT_DIR, code_dirs: tuple[Path, ...] = CODE_DIRS,
                  page_dirs: tuple[Path, ...] | None = None,
                  catalogue: Path = CATALOGUE_PATH) -> Iterator[tuple[str, str]]:
    """(where, text) for every Spanish text of the lab content, the message catalogue, the
    lessons and the site's pages."""
    yield from _yaml_texts(load_yaml(catalogue.read_text(encoding="utf-8")), catalogue.name)
    for path in sorted(content_dir.rglob("*.yaml")):
        if path.name == "glossary.yaml" or "labelled" in path.parts:
            continue  # the glossary itself; labelled answers are what learners type, not prose
        data = load_yaml(path.read_text(encoding="utf-8"))
        yield from _yaml_texts(data, path.relative_to(content_dir).as_posix())
    for path in sorted((content_dir / "breaks").rglob("*.py")):
        yield from _break_script_texts(path, path.relative_to(content_dir).as_posix())
    for folder in code_dirs:
        for path in sorted(folder.rglob("*.py")):
            if content_dir not in path.parents:   # the breaks' scripts: read above
                yield from _code_texts(path)
    for folder in (content_dir / "lessons", DOCS_DIR) if page_dirs is None else page_dirs:
        yield from _markdown_texts(folder)


_OUTPUT_BLOCK = re.compile(r"^```output[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)


def printed_count_problems(folder: Path = CONTENT_DIR / "lessons") -> list[str]:
    """One line per count a Spanish lesson prints grouped the English way (``544,256``, read
    as a decimal in Spanish): its code should print it with ``grouped(n, ",", "es")``."""
    problems = []
    for path in sorted(folder.glob("*.es.md")):
        text = path.read_text(encoding="utf-8")
        for block in _OUTPUT_BLOCK.finditer(text):
            first = text.count("\n", 0, block.start(1)) + 1
            for line, printed in enumerate(block.group(1).splitlines(), first):
                problems += [f"{path.name}:{line}: the Spanish lesson prints {count!r}, "
                             "which a Spanish reader takes for a decimal; print it with "
                             "minimodel.messages.grouped(n, ',', 'es') "
                             f"({count.replace(',', ' ')!r})"
                             for count in english_grouped_counts(printed)]
    return problems


def _pattern(term: str) -> re.Pattern[str]:
    return re.compile(r"(?<!\w)" + re.escape(normalise(term)) + r"(?!\w)")


def glossary_problems(texts: Iterator[tuple[str, str]] | None = None,
                      glossary: list[dict[str, Any]] | None = None) -> list[str]:
    """One line per avoided term found (a calque, or a second name for a glossary concept):
    where, the term, and the glossary's Spanish; then one per break of the typography of
    :mod:`~minimodel.lab.spanish_style` (decimal point, ``15%``, straight quotes, ``&``)."""
    glossary = glossary if glossary is not None else load_glossary()
    rules = [(_pattern(avoid), avoid, term) for term in glossary for avoid in term.get("avoid", [])]
    texts = list(texts if texts is not None else spanish_texts())
    problems = []
    for where, text in texts:
        prose = normalise(re.sub(r"`[^`]*`", " ", text))
        for pattern, avoid, term in rules:
            if pattern.search(prose):
                problems.append(f"{where}: Spanish text uses {avoid!r}; the glossary's Spanish "
                                f"for {term['en']!r} is {term['es']!r}")
    return problems + style_problems(texts)
