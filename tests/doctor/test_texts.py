"""The doctor's sentences (doctor.* of the message catalogue): every finding the checks use has
its three parts, every finding in the catalogue is used, the Spanish follows the glossary."""

from __future__ import annotations

import re
from pathlib import Path

from minimodel.doctor.texts import words
from minimodel.messages import catalogue

SOURCES = Path(__file__).resolve().parents[2] / "src" / "minimodel" / "doctor"
PARTS = ("found", "why", "fix")


CHECKS = ("tie", "sizes", "rows", "reach", "optimizer", "ledger")


def findings_in_catalogue() -> set[str]:
    return {key.removeprefix("doctor.").rpartition(".")[0] for key in catalogue()
            if key.startswith(tuple(f"doctor.{check}." for check in CHECKS))}


def findings_the_checks_use() -> set[str]:
    used = set()
    for path in SOURCES.glob("check_*.py"):
        used |= set(re.findall(rf'"((?:{"|".join(CHECKS)})\.[a-z_]+)"',
                               path.read_text(encoding="utf-8")))
    return used | {f"sizes.padding_{state}" for state in ("zero", "equal", "small", "like_used")}


def test_every_finding_has_its_three_parts():
    for finding in findings_in_catalogue():
        assert all(f"doctor.{finding}.{part}" in catalogue() for part in PARTS), finding


def test_the_findings_the_checks_use_are_the_catalogues():
    used = findings_the_checks_use()
    assert len(used) > 20
    assert used == findings_in_catalogue(), used ^ findings_in_catalogue()


def test_words_fills_a_finding_in_both_languages():
    values = {"flags": "tie_word_embeddings=true, text_config.tie_word_embeddings=false"}
    en, es = words("tie.flags_disagree", values, "en"), words("tie.flags_disagree", values, "es")
    assert en[0] == f"The tie flags disagree: {values['flags']}."
    assert es[0] == f"Las marcas de atadura no coinciden: {values['flags']}."
    assert en[2] != es[2] and all(es)
