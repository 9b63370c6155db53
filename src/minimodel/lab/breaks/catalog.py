"""The break catalogue: one folder per break under ``minimodel/lab/content/breaks/``.

A break folder holds::

    break.yaml      id (a neutral name for the symptom, never the cause), order, bilingual texts
                    (title, summary, intro, predict, observe, hints, explanation), references,
                    timeout_seconds, cause_words, secret_words, former_ids
    bug.patch       the bug, a unified diff against the library (``a/minimodel/...``)
    invariants.py   the invariants behind the bug, checked on fresh random sizes in every code
                    path (``break check`` runs it; exit 0 only when the cause is gone)
    experiment.py   the "run" script: the story's example, then the same invariants; prints a
                    ``SYMPTOM: ...`` line while the cause is present
    fakes/NAME.patch  symptom-hiding "fixes" (diffs against the broken library) that the
                    invariants must reject; break.yaml lists them as ``fakes: [{name, idea}]``

``cause_words`` lists words that give the cause away (in English and Spanish); ``secret_words``
(optional) the exact phrases that state it. A learner reads the title, summary, intro, predict
questions and "what to look at" before any hint, so those texts describe only what is seen, as
a bug report would; ``lab validate`` refuses a cause or secret word there (:func:`term_pattern`:
whole words, case-insensitive) and requires the hint ladder to reach a cause word. The rest of
what a learner sees before the second hint is :mod:`.surface`'s. ``former_ids`` are older names of the break, still accepted
by the commands (and in old progress files) but never printed.

``fails_under_bug`` in break.yaml names the invariants the bug breaks; ``lab validate`` checks
that exactly those fail in a fresh broken workspace, so a check that silently stopped working is
noticed even while another check of the same break fails.

Every bilingual text is ``{en: ..., es: ..., es_source_hash: ...}``, as in the quizzes: the
stamp is the hash of the English the Spanish was translated from (:mod:`minimodel.lab.freshness`,
``minimodel lab rehash``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from minimodel.lab.i18n import DEFAULT_LANG, LANGS, pick
from minimodel.lab.items import FOLDERS, item_files, read_yaml, text_problems
from minimodel.lab.lessons import lesson_positions, path_order
from minimodel.lab.pyparse import parse_python
from minimodel.lab.suggest import Suggest
from minimodel.messages import say

CONTENT_DIR = FOLDERS["break"][0]
TEXT_FIELDS = ("title", "summary", "intro", "observe", "explanation")
LIST_FIELDS = ("predict", "hints")
FIRST_READ = ("title", "summary", "intro", "predict", "observe")  # shown before any hint
MIN_FAKES = 3
MIN_PREDICT = 2
MIN_CAUSE_WORDS = 2
FILES = {"patch": "bug.patch", "experiment": "experiment.py", "check": "invariants.py"}
ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
STEM_MIN = 4    # a cause term this long ending in a letter also matches longer words


@dataclass
class Break:
    """One break, loaded from its folder."""

    id: str
    folder: Path
    data: dict[str, Any]
    order: int = 100

    def text(self, key: str, lang: str) -> str:
        return pick(self.data.get(key) or "", lang).strip()

    def texts(self, key: str, lang: str) -> list[str]:
        return [pick(item, lang).strip() for item in self.data.get(key) or []]

    def path(self, role: str) -> Path:
        """The file of ``role``: ``patch``, ``experiment`` or ``check``."""
        return self.folder / FILES[role]

    @property
    def patch_text(self) -> str:
        return self.path("patch").read_text(encoding="utf-8")

    @property
    def timeout(self) -> float:
        return float(self.data.get("timeout_seconds", 120))

    @property
    def fails_under_bug(self) -> list[str]:
        return [str(c) for c in self.data.get("fails_under_bug") or []]

    @property
    def fakes(self) -> list[dict[str, str]]:
        """``[{"name", "idea"}]``; the diff of each is ``fakes/NAME.patch``."""
        return [{"name": str(f.get("name", "")), "idea": str(f.get("idea", ""))}
                for f in self.data.get("fakes") or [] if isinstance(f, dict)]

    def fake_path(self, name: str) -> Path:
        return self.folder / "fakes" / f"{name}.patch"

    @property
    def cause_words(self) -> list[str]:
        return [str(w) for w in self.data.get("cause_words") or []]

    @property
    def secret_words(self) -> list[str]:
        """The exact phrases that name the cause: never on the surface before rung 2."""
        return [str(w) for w in self.data.get("secret_words") or []]

    @property
    def former_ids(self) -> list[str]:
        return [str(w) for w in self.data.get("former_ids") or []]

    def first_read_texts(self, lang: str) -> dict[str, str]:
        """What a learner reads before asking for a hint, by field (predict questions joined)."""
        return {key: " ".join(self.texts(key, lang)) if key in LIST_FIELDS else self.text(key, lang)
                for key in FIRST_READ}

    @property
    def references(self) -> list[str]:
        return [str(r) for r in self.data.get("references", [])]

    def summary(self, lang: str = "en") -> dict[str, Any]:
        return {"id": self.id, "title": self.text("title", lang),
                "summary": self.text("summary", lang), "hints": len(self.data.get("hints") or []),
                "predictions": len(self.data.get("predict") or [])}


def _load(folder: Path) -> Break:
    path = folder / "break.yaml"
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping at the top level")
    return Break(id=str(data.get("id", folder.name)), folder=folder, data=data,
                 order=int(data.get("order", 100)))


def load_all(content_dir: Path | None = None) -> list[Break]:
    """Every break, in the lessons' order (then ``order`` for the lesson-less ones)."""
    breaks = [_load(path.parent) for path in item_files("break", content_dir)]
    positions = lesson_positions("break")
    return sorted(breaks, key=lambda b: (path_order(b.id, b.order, positions), b.id))


def load_break(break_id: str, content_dir: Path | None = None, *,
               lang: str = DEFAULT_LANG) -> Break:
    """The break called ``break_id``; a ValueError (in ``lang``) lists the known ids otherwise."""
    breaks = load_all(content_dir)
    for brk in breaks:
        if break_id == brk.id or break_id in brk.former_ids:
            return brk
    known = ", ".join(b.id for b in breaks) or "(none)"
    raise ValueError(say("break.unknown_break", lang, id=break_id, known=known,
                         command=Suggest(lang)("break", "list")))


def list_breaks() -> list[dict[str, Any]]:
    """``[{"id", "title", "titles", "summary", "hints", "predictions"}]``, curriculum order.

    ``title`` and ``summary`` are English; ``titles`` maps every language to the title (what
    ``minimodel lab status --lang es`` shows, as for exercises).
    """
    return [{**brk.summary("en"), "titles": {lang: brk.text("title", lang) for lang in LANGS}}
            for brk in load_all()]


def structure_problems(brk: Break) -> list[str]:
    """Missing fields, texts and files of one break (no running; the translations' freshness
    is :mod:`minimodel.lab.freshness`'s)."""
    p: list[str] = []
    where = f"break {brk.id}"
    if brk.id != brk.folder.name:
        p.append(f"{where}: id differs from its folder name {brk.folder.name!r}; rename one")
    if not ID_PATTERN.match(brk.id):
        p.append(f"{where}: id must be lowercase words joined by '-'")
    for role, name in FILES.items():
        if not brk.path(role).is_file():
            p.append(f"{where}: {role} file {name} is missing from {brk.folder}")
    for key in TEXT_FIELDS + LIST_FIELDS:
        if key not in brk.data:
            p.append(f"{where}: field {key!r} is missing")
        nodes = brk.data.get(key) if key in LIST_FIELDS else [brk.data.get(key)]
        if any(not isinstance(node, dict) for node in nodes or []):
            p.append(f"{where}: field {key!r} must hold {{en, es, es_source_hash}} texts")
    p += text_problems({key: brk.data.get(key) for key in TEXT_FIELDS + LIST_FIELDS}, where)
    hints, predict = brk.data.get("hints") or [], brk.data.get("predict") or []
    if not 3 <= len(hints) <= 4:
        p.append(f"{where}: has {len(hints)} hints; the ladder needs 3 or 4")
    if len(predict) < MIN_PREDICT:
        p.append(f"{where}: has {len(predict)} predict question(s); ask at least {MIN_PREDICT} "
                 "(what the learner expects to see before running the experiment)")
    title = brk.data.get("title") if isinstance(brk.data.get("title"), dict) else {}
    if title.get("en") and title.get("en") == title.get("es"):
        p.append(f"{where}: the Spanish title is the English one; translate it")
    p += _assert_problems(brk)
    if not brk.references:
        p.append(f"{where}: lists no references")
    p += secrecy_problems(brk)
    if not brk.fails_under_bug:
        p.append(f"{where}: fails_under_bug is empty; name the invariants the bug breaks")
    listed = [f["name"] for f in brk.fakes]
    if len(listed) < MIN_FAKES:
        p.append(f"{where}: has {len(listed)} fake fixes; ship at least {MIN_FAKES}: write each "
                 f"with `python scripts/make_break_patch.py {brk.id} --fake NAME FILE OLD NEW` "
                 "and list it under 'fakes:' as {name: NAME, idea: what it tries}")
    for fake in brk.fakes:
        if not fake["idea"].strip():
            p.append(f"{where}: fake {fake['name']!r} has no 'idea' (what it tries)")
        if not brk.fake_path(fake["name"]).is_file():
            p.append(f"{where}: fake {fake['name']!r} is listed but {brk.fake_path(fake['name'])} "
                     "is missing")
    on_disk = sorted(f.stem for f in (brk.folder / "fakes").glob("*.patch"))
    for name in sorted(set(on_disk) - set(listed)):
        p.append(f"{where}: fakes/{name}.patch is not listed under 'fakes' in break.yaml")
    return p


def _assert_problems(brk: Break) -> list[str]:
    """A bare ``assert`` in ``invariants.py`` gives an English-only message (and vanishes under
    ``python -O``); the checks raise ``CheckFailed(en, es)``."""
    import ast

    script = brk.path("check")
    try:
        tree = parse_python(script.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return []               # a missing file or a syntax error is reported when it runs
    lines = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assert)]
    return [f"break {brk.id}: {script.name} uses assert at line(s) {lines}; raise "
            "CheckFailed(en, es) instead (bilingual, and kept under python -O)"] if lines else []


def term_pattern(term: str) -> re.Pattern[str]:
    """The regular expression of one cause or secret term: case-insensitive, at word
    boundaries.

    A term that starts with a letter or digit must start a word (``std`` is found in
    ``x.std()`` but not in ``bstd``). A term of :data:`STEM_MIN` characters or more that ends
    in a letter also matches the longer words that begin with it (``mask`` -> masked, masking;
    ``initialis`` -> initialisation); a shorter term, or one that ends in a digit or symbol,
    matches only whole (``std`` is not in ``stdout``, ``0.02`` is not in ``0.025``). A space
    in a term matches any run of white space (texts are wrapped).
    """
    term = term.strip()
    body = r"\s+".join(re.escape(part) for part in term.split())
    start = r"(?<!\w)" if re.match(r"\w", term) else ""
    stem = term[-1:].isalpha() and len(term) >= STEM_MIN
    end = "" if stem or not re.match(r"\w", term[-1:]) else r"(?!\w)"
    return re.compile(start + body + end, re.IGNORECASE)


def named_terms(text: str, terms: list[str]) -> list[str]:
    """The ``terms`` found in ``text`` (:func:`term_pattern`)."""
    return [t for t in terms if term_pattern(t).search(text)]


def secrecy_problems(brk: Break) -> list[str]:
    """The break's cause and secret words must stay out of what is read first and be reached
    by the hints. (The rest of the surface is :mod:`.surface`'s, checked by ``lab validate``
    with the experiment's output.)"""
    where = f"break {brk.id}"
    words = brk.cause_words + [w for w in brk.secret_words if w not in brk.cause_words]
    if not brk.cause_words:
        return [f"{where}: cause_words is empty; list the words that would give the cause away"]
    p: list[str] = []
    if len(brk.cause_words) < MIN_CAUSE_WORDS:
        p.append(f"{where}: cause_words lists {len(brk.cause_words)} word; list at least "
                 f"{MIN_CAUSE_WORDS}, in English and Spanish, so a Spanish text that names the "
                 "cause is caught too")
    if "secret_words" in brk.data and (not isinstance(brk.data["secret_words"], list) or any(
            not isinstance(w, str) or not w.strip() for w in brk.data["secret_words"])):
        p.append(f"{where}: secret_words must be a list of non-empty phrases")
    for lang in LANGS:
        for key, text in brk.first_read_texts(lang).items():
            named = named_terms(text, words)
            if named:
                p.append(f"{where}: {key} ({lang}) names the cause ({', '.join(named)}); describe "
                         "only what the learner sees and move the cause into the hints")
    named = [w for w in words if w.lower() in brk.id]
    if named:
        p.append(f"{where}: the id names the cause ({', '.join(named)}); name the symptom")
    hints = " ".join(brk.texts("hints", "en"))
    if not named_terms(hints, brk.cause_words):
        p.append(f"{where}: no hint reaches a cause word ({', '.join(brk.cause_words)}); the "
                 "ladder must end at the cause")
    return p
