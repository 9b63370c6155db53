"""The English <-> Spanish glossary shared by the lab and the documentation site.

    from minimodel.lab.glossary import load_glossary
    terms = load_glossary()          # [{"en": "tied weights", "es": "pesos atados", ...}, ...]
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

GLOSSARY_PATH = Path(__file__).resolve().parent / "content" / "glossary.yaml"


def load_glossary(path: Path | None = None) -> list[dict[str, Any]]:
    """Every term, each with ``en`` and ``es`` and optional ``avoid`` (list) and ``note``."""
    path = path or GLOSSARY_PATH
    with open(path, encoding="utf-8") as handle:
        data = yaml.safe_load(handle) or {}
    terms = data.get("terms")
    if not isinstance(terms, list) or not terms:
        raise ValueError(f"{path}: expected a non-empty list under 'terms'")
    for i, term in enumerate(terms):
        if not isinstance(term, dict) or not term.get("en") or not term.get("es"):
            raise ValueError(f"{path}: term {i} needs non-empty 'en' and 'es', got {term!r}")
        if not isinstance(term.get("avoid", []), list):
            raise ValueError(f"{path}: term {term['en']!r}: 'avoid' must be a list")
    return terms
