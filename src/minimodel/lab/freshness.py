"""Each Spanish text translated from the current English, each lesson in both languages.

Every bilingual text of a quiz question or a break carries, beside its two languages, the
hash of the English it was translated from::

    prompt:
      en: Which rows of E receive a gradient?
      es: ¿Qué filas de E reciben gradiente?
      es_source_hash: "3f2a9c0d41be"    # english_hash(en) when the Spanish was written

So editing an English text flags exactly the Spanish text next to it until someone updates
the Spanish and runs ``minimodel lab rehash ITEM --key NAME`` (a text is named as in
:func:`minimodel.lab.items.texts`: ``title``, ``choices[2]``, ``answer.unit``...). A new text
starts without a stamp (or ``TODO``); ``lab rehash ITEM`` stamps those. Lessons are files:
``NN-slug.es.md`` beside ``NN-slug.md``, with the same front-matter lists.
:func:`translation_problems` is the one check (``lab validate --section translations``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from minimodel._fileio import atomic_write_text
from minimodel.lab.i18n import LANGS
from minimodel.lab.items import Item
from minimodel.lab.items import texts as item_texts
from minimodel.lab.lessons import (FRONT_MATTER, LESSONS_DIR, MIN_CODE_BLOCKS, code_blocks,
                                   load_lessons, split_front_matter)
from minimodel.lab.suggest import Suggest
from minimodel.messages import say

HASH_LEN = 12
STAMP = "es_source_hash"
TRANSLATED = ("question", "break")   # the item kinds whose texts carry stamps


def english_hash(text: str) -> str:
    """First 12 hex digits of the sha256 of an English text (whitespace at the ends ignored)."""
    return hashlib.sha256(text.strip().encode("utf-8")).hexdigest()[:HASH_LEN]


def without_stamps(value: Any) -> Any:
    """``value`` (parsed YAML) with every ``es_source_hash`` removed: what a loader keeps."""
    if isinstance(value, dict):
        return {k: without_stamps(v) for k, v in value.items() if k != STAMP}
    if isinstance(value, list):
        return [without_stamps(v) for v in value]
    return value


def _get(mapping: yaml.MappingNode, key: str) -> yaml.Node | None:
    return next((v for k, v in mapping.value if k.value == key), None)


def _scalar(mapping: yaml.MappingNode, key: str) -> str | None:
    node = _get(mapping, key)
    return node.value if isinstance(node, yaml.ScalarNode) else None


def _item_node(root: yaml.Node, item_id: str) -> yaml.MappingNode | None:
    """The mapping whose ``id`` is ``item_id``: the file itself (a break) or an entry of one
    of its lists (a quiz file's ``questions``)."""
    candidates = [root] if isinstance(root, yaml.MappingNode) else []
    for _, value in candidates[0].value if candidates else []:
        if isinstance(value, yaml.SequenceNode):
            candidates += [n for n in value.value if isinstance(n, yaml.MappingNode)]
    return next((n for n in candidates if _scalar(n, "id") == item_id), None)


def _text_nodes(node: yaml.Node, name: str = "") -> Iterator[tuple[str, yaml.MappingNode]]:
    """``(name, mapping)`` for every bilingual text under ``node``, named as by
    :func:`minimodel.lab.items.texts`."""
    if isinstance(node, yaml.MappingNode):
        if any(_scalar(node, lang) is not None for lang in LANGS):
            yield name, node
            return
        for key, value in node.value:
            yield from _text_nodes(value, f"{name}.{key.value}" if name else key.value)
    elif isinstance(node, yaml.SequenceNode):
        for i, value in enumerate(node.value, 1):
            yield from _text_nodes(value, f"{name}[{i}]")


def stale_texts(item: Item) -> list[str]:
    """Each text of one item whose Spanish was never stamped or was stamped from older English
    (a missing or blank language is :func:`minimodel.lab.items.text_problems`'s)."""
    problems = []
    for name, text in item_texts(item.data):
        if not all(isinstance(text.get(lang), str) and text[lang].strip() for lang in LANGS):
            continue
        where, stamp = f"{item.kind} {item.id} {name}", text.get(STAMP)
        now = english_hash(text["en"])
        if stamp in (None, "", "TODO"):
            problems.append(f"{where}: the Spanish has no {STAMP}; once it is reviewed, run "
                            f"`minimodel lab rehash {item.id}`")
        elif stamp != now:
            problems.append(f"{where}: the Spanish was translated from another English (stamp "
                            f"{stamp!r}, English now {now!r}); update 'es', then run "
                            f"`minimodel lab rehash {item.id} --key {name}`")
    return problems


def stamp(path: Path, item_id: str, keys: list[str] | None = None,
          lang: str = "en") -> list[str]:
    """Write ``es_source_hash`` (the hash of the current English) into the texts of one item.

    Only the texts named in ``keys`` or, with ``keys=None``, only those without a stamp (or
    ``TODO``): stamping a stale translation blindly would hide it. The file is edited in place,
    so comments and layout are kept. Returns the stamped names; errors are said in ``lang``.
    """
    source = path.read_text(encoding="utf-8").rstrip("\n") + "\n"
    node = _item_node(yaml.compose(source), item_id)
    if node is None:
        raise ValueError(say("lab.rehash.not_in_file", lang, file=path.name, id=item_id))
    found = dict(_text_nodes(node))
    unknown = sorted(set(keys or []) - set(found))
    if unknown:
        raise ValueError(say("lab.rehash.unknown_text", lang, id=item_id,
                             unknown=", ".join(unknown), known=", ".join(found)))
    edits: list[tuple[int, int, str]] = []   # (start, end, replacement) in the file's text
    stamped = []
    for name, text in found.items():
        skip = name not in keys if keys else _scalar(text, STAMP) not in (None, "", "TODO")
        if skip or _scalar(text, "en") is None:    # no English: nothing to stamp it with
            continue
        stamped.append(name)
        value = f'"{english_hash(_scalar(text, "en"))}"'
        old = _get(text, STAMP)
        if old is not None:
            edits.append((old.start_mark.index, old.end_mark.index, value))
        elif text.flow_style:                       # {en: ..., es: ...}: before the brace
            end = text.end_mark.index - 1
            edits.append((end, end, f", {STAMP}: {value}"))
        else:                                       # a new line under the last one
            last = text.value[-1][1].end_mark
            column = text.value[0][0].start_mark.column
            at = last.index if last.column == 0 else source.find("\n", last.index) + 1
            edits.append((at, at, f"{' ' * column}{STAMP}: {value}\n"))
    for start, end, value in sorted(edits, reverse=True):
        source = source[:start] + value + source[end:]
    if edits:
        atomic_write_text(path, source)
    return stamped


def rehash(items: list[Item], item_id: str, keys: list[str] | None = None,
           lang: str = "en") -> list[str]:
    """Stamp the texts of the question or break called ``item_id`` among ``items``
    (:func:`minimodel.lab.items.load_items`; see :func:`stamp`)."""
    item = next((i for i in items if i.id == item_id and i.kind in TRANSLATED), None)
    if item is None:
        suggest = Suggest(lang)
        raise ValueError(say("lab.rehash.unknown_item", lang, id=item_id,
                             quizzes=suggest("quiz", "list"), breaks=suggest("break", "list")))
    return stamp(item.path, item_id, keys, lang)


def lesson_problems(lessons_dir: Path = LESSONS_DIR) -> list[str]:
    """Lessons without a Spanish twin, whose twin links other items, needs other packages or
    runs a different number of ``python`` blocks, or with fewer than :data:`MIN_CODE_BLOCKS`
    (a lesson's worked example runs, in each language)."""
    problems = []
    for lesson in load_lessons(lessons_dir):
        twin = lesson.path("es", lessons_dir)
        english = len(code_blocks(lesson.path("en", lessons_dir).read_text(encoding="utf-8")))
        if english < MIN_CODE_BLOCKS:
            problems.append(f"lesson {lesson.stem}: {lesson.stem}.md has {english} python "
                            f"block(s); a lesson runs its worked example in at least "
                            f"{MIN_CODE_BLOCKS} (```python blocks, each with its ```output)")
        if not twin.is_file():
            problems.append(f"lesson {lesson.stem}: {twin.name} is missing; write the Spanish")
            continue
        spanish = len(code_blocks(twin.read_text(encoding="utf-8")))
        if spanish != english:
            problems.append(f"lesson {lesson.stem}: {twin.name} has {spanish} python block(s), "
                            f"the English has {english}; the twins run the same code")
        meta, _ = split_front_matter(twin.read_text(encoding="utf-8"))
        for key in FRONT_MATTER.values():
            if list(meta.get(key) or []) != getattr(lesson, key):
                problems.append(f"lesson {lesson.stem}: {twin.name} lists {key}: "
                                f"{meta.get(key)}, the English lists {getattr(lesson, key)}; "
                                "copy the English front matter's list")
        needs, _ = split_front_matter(lesson.path("en", lessons_dir).read_text(encoding="utf-8"))
        if list(meta.get("needs") or []) != list(needs.get("needs") or []):
            problems.append(f"lesson {lesson.stem}: {twin.name} lists needs: {meta.get('needs')}, "
                            f"the English lists {needs.get('needs')}; the twins run the same "
                            "code, so copy the English front matter's list")
    return problems


def translation_problems(items: list[Item]) -> list[str]:
    """Every missing or stale translation of the questions and breaks among ``items``
    (:func:`minimodel.lab.items.load_items`) and of the lessons."""
    return [p for item in items if item.kind in TRANSLATED for p in stale_texts(item)] + \
        lesson_problems()
