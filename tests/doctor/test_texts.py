"""The doctor's sentences: both languages for every finding, the same blanks, the glossary's terms."""

from __future__ import annotations

import re
import string
from pathlib import Path

from minimodel.doctor.texts import CHECK_TITLES, LANGS, PHRASES, STATUS_WORDS, TEXTS

SOURCES = Path(__file__).resolve().parents[2] / "src" / "minimodel" / "doctor"


def blanks(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_text_has_both_languages_with_the_same_blanks():
    for key, langs in TEXTS.items():
        assert set(langs) == set(LANGS), key
        for part in range(3):
            assert blanks(langs["en"][part]) == blanks(langs["es"][part]), (key, part)


def test_every_key_the_checks_use_has_a_text():
    used = set()
    for path in SOURCES.glob("check_*.py"):
        used |= set(re.findall(r'"((?:tie|sizes|rows|reach|optimizer|ledger)\.[a-z_]+)"',
                               path.read_text(encoding="utf-8")))
    used |= {f"sizes.padding_{state}" for state in ("zero", "equal", "small", "like_used")}
    assert len(used) > 20 and used <= set(TEXTS), used - set(TEXTS)


def test_spanish_texts_use_the_glossary():
    from minimodel.lab.terminology import glossary_problems

    texts = [(key, " ".join(langs["es"])) for key, langs in TEXTS.items()]
    texts += [("titles", " ".join(t["es"] for t in CHECK_TITLES.values())),
              ("statuses", " ".join(t["es"] for t in STATUS_WORDS.values())),
              ("phrases", " ".join(t["es"] for t in PHRASES.values()))]
    assert glossary_problems(iter(texts)) == []
