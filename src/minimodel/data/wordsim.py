"""Word-similarity benchmarks: word pairs with human similarity scores.

Bundled (see DATA_SOURCES.md for citations and licences):

* ``"simlex999"``: SimLex-999 (Hill, Reichart & Korhonen 2015), 999 pairs scored 0-10 for
  *similarity* ("cup"/"coffee" score low: related but not alike).
* ``"wordsim353"``: WordSim-353 (Finkelstein et al. 2002), 353 pairs scored 0-10 for
  *relatedness*.

Embeddings are judged by the Spearman correlation between their cosine similarities and
these human scores.
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

__all__ = ["WORD_SIMILARITY_SETS", "load_word_similarity"]

WORD_SIMILARITY_SETS: dict[str, str] = {
    "simlex999": "simlex999.txt",
    "wordsim353": "wordsim353.tsv",
}


def _parse(text: str, source: str) -> list[tuple[str, str, float]]:
    pairs: list[tuple[str, str, float]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        fields = stripped.split("\t")
        if len(fields) != 3:
            raise ValueError(
                f"{source} line {lineno}: expected 3 tab-separated fields "
                f"(word1, word2, score), got {len(fields)}: {line!r}"
            )
        try:
            score = float(fields[2])
        except ValueError:
            raise ValueError(
                f"{source} line {lineno}: score {fields[2]!r} is not a number"
            ) from None
        pairs.append((fields[0].strip().lower(), fields[1].strip().lower(), score))
    if not pairs:
        raise ValueError(f"{source} has no word pairs")
    return pairs


def load_word_similarity(name: str | os.PathLike) -> list[tuple[str, str, float]]:
    """Load a word-similarity set as ``[(word1, word2, human_score), ...]``.

    Args:
        name: ``"simlex999"`` or ``"wordsim353"`` for a bundled set, or the path of a file
            in the same format (tab-separated ``word1 word2 score``; ``#`` starts a
            comment line).

    Words are lower-cased (WordSim-353 capitalises names such as "Jerusalem") so they can
    be looked up in a lower-cased vocabulary; pairs keep the file's order.
    """
    key = os.fspath(name)
    if key in WORD_SIMILARITY_SETS:
        res = resources.files("minimodel.data") / "benchmarks" / WORD_SIMILARITY_SETS[key]
        return _parse(res.read_text(encoding="utf-8"), f"<bundled {WORD_SIMILARITY_SETS[key]}>")
    path = Path(key)
    if not path.is_file():
        raise ValueError(
            f"unknown word-similarity set {key!r}: use one of {sorted(WORD_SIMILARITY_SETS)} "
            "or the path of an existing tab-separated file"
        )
    return _parse(path.read_text(encoding="utf-8"), str(path))
