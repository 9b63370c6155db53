"""Both languages present, and each translation made from the current English.

The content keeps, next to every translated text, the hash of the English it was translated
from, so editing the English flags exactly the Spanish that needs a look:

* quiz questions: ``source_hash`` (the English now) and ``translated_from: {es: ...}``
  (``minimodel quiz rehash``, :func:`minimodel.lab.quiz.schema.hash_problems`);
* breaks: ``es_source_hash`` on each text (``minimodel break rehash``);
* lessons: ``NN-slug.es.md`` beside ``NN-slug.md``, whose front matter lists the same items.

:func:`translation_problems` is the one check over all of them (``minimodel lab validate``).
"""

from __future__ import annotations

from pathlib import Path

from minimodel.lab.i18n import LANGS
from minimodel.lab.lessons import FRONT_MATTER
from minimodel.lab.lessons import LESSONS_DIR, load_lessons, split_front_matter


def break_problems(breaks: list | None = None) -> list[str]:
    """Texts of the breaks (all, or ``breaks``) missing a language, or whose Spanish predates
    the English."""
    from minimodel.lab.breaks.catalog import english_hash, load_all

    problems = []
    for brk in load_all() if breaks is None else breaks:
        for name, node in brk.text_nodes():
            where = f"break {brk.id} {name}"
            if node is None:      # a missing field: the breaks section says so
                continue
            if not isinstance(node, dict):
                problems.append(f"{where}: expected {{en, es, es_source_hash}}")
                continue
            problems += [f"{where}: the {lang!r} text is missing or blank" for lang in LANGS
                         if not isinstance(node.get(lang), str) or not node[lang].strip()]
            if isinstance(node.get("en"), str) and \
                    node.get("es_source_hash") != english_hash(node["en"]):
                problems.append(f"{where}: the Spanish was translated from another English "
                                f"(stamp {node.get('es_source_hash')!r}, English now "
                                f"{english_hash(node['en'])!r}); update 'es', then run "
                                f"`minimodel break rehash {brk.id} --key {name}`")
    return problems


def quiz_problems(content_dir=None) -> list[str]:
    """Questions whose English changed without a rehash, or whose Spanish is stale."""
    from minimodel.lab.quiz.loader import quiz_files, read_checked
    from minimodel.lab.quiz.schema import hash_problems

    problems = []
    for path in quiz_files(content_dir):
        data, invalid = read_checked(path)
        if not invalid:   # invalid files are the quiz section's problem
            problems += [f"{path.name}: {p}" for p in hash_problems(data)]
    return problems


def lesson_problems(lessons_dir: Path = LESSONS_DIR) -> list[str]:
    """Lessons without a Spanish twin, or whose twin links other items."""
    problems = []
    for lesson in load_lessons(lessons_dir):
        twin = lesson.path("es", lessons_dir)
        if not twin.is_file():
            problems.append(f"lesson {lesson.stem}: {twin.name} is missing; write the Spanish")
            continue
        meta, _ = split_front_matter(twin.read_text(encoding="utf-8"))
        for key in FRONT_MATTER.values():
            if list(meta.get(key) or []) != getattr(lesson, key):
                problems.append(f"lesson {lesson.stem}: {twin.name} lists {key}: "
                                f"{meta.get(key)}, the English lists {getattr(lesson, key)}; "
                                "copy the English front matter's list")
    return problems


def translation_problems() -> list[str]:
    """Every missing or stale translation of the lab's content."""
    return quiz_problems() + break_problems() + lesson_problems()
