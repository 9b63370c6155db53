"""A break's visible surface: everything a learner can read before a given hint rung.

Before rung 1 a learner has seen the bug report (title, summary, intro, predictions, "what to
look at"), ``NOTES.md``, the output of ``break start`` and ``break run``, the break's site page,
every lesson and quiz question (answers and explanations included) on the path up to and
including the break's lesson, the files of the workspace (comments and docstrings included;
the files ``bug.patch`` touches are the ones that matter), and the README and ``docs/*.md``.
After rung k the hints 1..k join it. The secret (the planted line and why it is wrong) must
not be nameable from the surface before rung 2, so the check reads hint 1 too.

The ``*_pieces`` functions gather the surface as :class:`Piece` texts
(``scripts/break_surface.py`` writes them as files); :func:`check_pieces` is what ``lab
validate`` searches, and :func:`findings` looks there for the break's ``secret_words`` and
``cause_words`` (:func:`~minimodel.lab.breaks.catalog.term_pattern`: case-insensitive, at word
boundaries); :func:`split` says which findings fail and which only warn.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from minimodel.lab.breaks.catalog import Break, term_pattern
from minimodel.lab.i18n import LANGS
from minimodel.lab.lessons import (LESSONS_DIR, Lesson, load_lessons, split_front_matter,
                                   with_output_notes)
from minimodel.lab.pages import break_page, practice_section
from minimodel.lab.patching import parse_patch
from minimodel.lab.pyparse import parse_python

# src/minimodel/lab/breaks/surface.py -> parents[4] is the repository root in a checkout.
REPO_ROOT = Path(__file__).resolve().parents[4]


@dataclass(frozen=True)
class Piece:
    """One text of the surface: its ``kind`` (report, hint, run, page, lesson, quiz, workspace,
    docs), a ``name`` that says where it is (a file, a field) and the
    ``text``; ``first_line`` is the line of the source file where ``text`` starts."""

    kind: str
    name: str
    text: str
    first_line: int = 1


@dataclass(frozen=True)
class Finding:
    """A term found in one piece of the surface: the break, the piece, the lines there (the
    first one is quoted) and the term."""

    break_id: str
    piece: Piece
    lines: tuple[int, ...]
    term: str
    secret: bool        # a ``secret_words`` term, or a ``cause_words`` one

    def __str__(self) -> str:
        which = "secret word" if self.secret else "cause word"
        first = self.lines[0]
        text = " ".join(self.piece.text.splitlines()[first - self.piece.first_line].split())
        more = f" (and {len(self.lines) - 1} more line(s))" if len(self.lines) > 1 else ""
        return (f"break {self.break_id}: {which} {self.term!r} on the surface before rung 2: "
                f"{self.piece.kind} {self.piece.name}:{first}{more}: {text[:100]}")


def search(piece: Piece, terms: list[str]) -> list[tuple[int, str]]:
    """``(line, term)`` of every term found in ``piece`` (one per term and line)."""
    found = []
    for term in terms:
        pattern = term_pattern(term)
        for match in pattern.finditer(piece.text):
            line = piece.first_line + piece.text.count("\n", 0, match.start())
            if (line, term) not in found:
                found.append((line, term))
    return sorted(found)


# --- the pieces ------------------------------------------------------------------------------


def report_pieces(brk: Break, lang: str, rung: int = 0) -> list[Piece]:
    """The break's own texts before ``rung``: title, summary, intro, predictions, observe; and
    hints 1..rung."""
    out = [Piece("report", f"break.yaml {key} ({lang})", text)
           for key, text in brk.first_read_texts(lang).items()]
    out += [Piece("hint", f"break.yaml hints[{i}] ({lang})", text)
            for i, text in enumerate(brk.texts("hints", lang)[:rung], 1)]
    return out


def path_lessons(brk: Break, lessons_dir: Path = LESSONS_DIR) -> list[Lesson]:
    """The lessons a learner has met when reaching the break: up to and including its own
    (none for a break no lesson lists)."""
    lessons = load_lessons(lessons_dir)
    own = next((lesson for lesson in lessons if brk.id in lesson.breaks), None)
    return [] if own is None else lessons[:own.number]


def lesson_page(lesson: Lesson, lang: str, lessons_dir: Path = LESSONS_DIR,
                practice: bool = True) -> str:
    """A lesson as its page shows it: the text with its code and ``output`` blocks (and the note
    under a block not compared exactly), then the practice links; figures left out."""
    path = lesson.path(lang, lessons_dir)
    _, body = split_front_matter(path.read_text(encoding="utf-8"))
    text = with_output_notes(body, lang)
    if practice:
        text = text.rstrip("\n") + "\n" + practice_section(lesson, lang)
    return text


def lesson_pieces(brk: Break, lang: str, lessons_dir: Path = LESSONS_DIR) -> list[Piece]:
    """Each lesson on the path up to the break's, as its page shows it (line numbers are the
    source file's: the front matter is counted)."""
    out = []
    for lesson in path_lessons(brk, lessons_dir):
        path = lesson.path(lang, lessons_dir)
        if not path.is_file():
            continue
        source = path.read_text(encoding="utf-8")
        meta_lines = source.count("\n") - split_front_matter(source)[1].count("\n")
        out.append(Piece("lesson", path.name,
                         lesson_page(lesson, lang, lessons_dir, practice=False),
                         first_line=meta_lines + 1))
    return out


def quiz_pieces(brk: Break, lang: str, lessons_dir: Path = LESSONS_DIR,
                questions: dict | None = None) -> list[Piece]:
    """Every quiz question of the lessons up to the break's, with its answer and explanation
    (what the learner sees once the question is graded)."""
    from minimodel.lab.quiz.loader import all_questions
    from minimodel.lab.quiz.render import question_markdown

    questions = all_questions() if questions is None else questions
    return [Piece("quiz", f"{qid} ({lesson.slug}, {lang})",
                  question_markdown(questions[qid], lang))
            for lesson in path_lessons(brk, lessons_dir) for qid in lesson.quiz
            if qid in questions]


def patched_files(brk: Break) -> list[str]:
    """The workspace files ``bug.patch`` touches, ``minimodel/...``."""
    return sorted({fp.target(1) for fp in parse_patch(brk.patch_text)})


def comments_and_docstrings(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every comment and docstring of a Python source (what reads as
    prose next to the code); a file that does not parse gives its comments only."""
    out: list[tuple[int, str]] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out.append((tok.start[0], tok.string))
    except (tokenize.TokenError, SyntaxError):
        pass
    try:
        tree = parse_python(source)
    except SyntaxError:
        return sorted(out)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and node.body and isinstance(node.body[0], ast.Expr) \
                and isinstance(node.body[0].value, ast.Constant) \
                and isinstance(node.body[0].value.value, str):
            out.append((node.body[0].lineno, node.body[0].value.value))
    return sorted(out)


def workspace_pieces(files: dict[str, str], prose_only: bool = True) -> list[Piece]:
    """The files (``minimodel/...`` -> text) as pieces: with ``prose_only``, one piece per
    comment or docstring (what the check reads), else the whole file (what the dump writes)."""
    if not prose_only:
        return [Piece("workspace", rel, text) for rel, text in sorted(files.items())]
    return [Piece("workspace", rel, text, first_line=line)
            for rel, source in sorted(files.items())
            for line, text in comments_and_docstrings(source)]


def docs_files(lang: str, root: Path = REPO_ROOT) -> list[Path]:
    """The README (``README.<lang>.md`` when there is one, else ``README.md``) and
    ``docs/*.md`` of ``lang`` (``x.md`` English, ``x.es.md`` Spanish); none outside a source
    checkout."""
    docs = sorted((root / "docs").glob("*.md")) if (root / "docs").is_dir() else []
    mine = [p for p in docs if (p.name.endswith(".es.md")) == (lang == "es")]
    readme = next((p for p in (root / f"README.{lang}.md", root / "README.md") if p.is_file()),
                  None)
    return ([readme] if readme else []) + mine


def docs_pieces(lang: str, root: Path = REPO_ROOT) -> list[Piece]:
    return [Piece("docs", path.relative_to(root).as_posix(), path.read_text(encoding="utf-8"))
            for path in docs_files(lang, root)]


def page_text(brk: Break, lang: str, rung: int = 0, lessons_dir: Path = LESSONS_DIR,
              lesson_link: bool = True) -> str:
    """The break's site page as the site generates it, with only hints 1..``rung`` in its
    ladder (the page folds every hint; unfolding hint k is climbing to rung k).
    ``lesson_link=False`` leaves out the link to its lesson (whose title the lesson shows)."""
    lesson = next((lesson for lesson in load_lessons(lessons_dir) if brk.id in lesson.breaks),
                  None)
    return break_page(brk, lang, lesson if lesson_link else None, hints=rung)


def surface_terms(brk: Break) -> tuple[list[str], list[str]]:
    """``(secret, context)``: the break's ``secret_words`` and the ``cause_words`` that are
    not among them."""
    secret = [str(w) for w in brk.data.get("secret_words") or []]
    lowered = {w.lower() for w in secret}
    return secret, [w for w in brk.cause_words if w.lower() not in lowered]


def findings(brk: Break, pieces: list[Piece]) -> list[Finding]:
    """Every secret or cause term of ``brk`` found in ``pieces``, one finding per piece and
    term (with every line it is on); a cause word on a line where a secret phrase was found
    is not repeated."""
    secret, context = surface_terms(brk)
    out = []
    for piece in pieces:
        said: set[int] = set()
        for terms, is_secret in ((secret, True), (context, False)):
            lines: dict[str, list[int]] = {}
            for line, term in search(piece, terms):
                if line not in said:
                    lines.setdefault(term, []).append(line)
            said |= {line for at in lines.values() for line in at}
            out += [Finding(brk.id, piece, tuple(at), term, is_secret)
                    for term, at in lines.items()]
    return out


def check_pieces(brk: Break, workspace: dict[str, str], run_output: str,
                 lessons_dir: Path = LESSONS_DIR, docs_root: Path = REPO_ROOT,
                 questions: dict | None = None) -> list[Piece]:
    """The surface before rung 2 that ``lab validate`` searches, both languages: the
    break's texts and hint 1, its page, the lessons and quiz questions up to its lesson, the
    comments and docstrings of the files its patch touches (``workspace``: their broken text),
    the output of its experiment on the broken workspace, and the README and docs."""
    out = [Piece("run", "experiment output (en)", run_output)]
    pages: list[Piece] = []
    out += workspace_pieces(workspace)
    for lang in LANGS:
        out += report_pieces(brk, lang, rung=1)
        # the page's link to its lesson is the lesson's title, searched with the lesson
        pages.append(Piece("page", f"lab/breaks/{brk.id} ({lang})",
                           page_text(brk, lang, 0, lessons_dir, lesson_link=False)))
        pages += lesson_pieces(brk, lang, lessons_dir)
        out += quiz_pieces(brk, lang, lessons_dir, questions)
        out += [p for p in docs_pieces(lang, docs_root)
                if p.name not in {q.name for q in out if q.kind == "docs"}]
    # a link's target is not read: a page linking lessons/initialising.md does not say it
    return out + [Piece(p.kind, p.name, _LINK_TARGET.sub("]()", p.text), p.first_line)
                  for p in pages]


_LINK_TARGET = re.compile(r"\]\([^)\s]*\)")


# Where a cause word (a context word, not a secret) fails validation: what is written for this
# break alone (its texts, hint 1, its page, its run) and the comments and docstrings of the
# files its patch touches (a few lines each, next to the planted line). In the lessons, quizzes
# and docs a generic cause word ("mask", "copy", "std", "causal") is the concept's ordinary
# vocabulary, found dozens of times per break: a warning there; a ``secret_words`` phrase
# fails everywhere.
CAUSE_FAILS_IN = ("report", "hint", "page", "run", "workspace")


def split(found: list[Finding]) -> tuple[list[str], list[str]]:
    """``(problems, warnings)``: a secret word anywhere, or a cause word in
    :data:`CAUSE_FAILS_IN`, is a problem; any other cause word is a warning."""
    fails = [f.secret or f.piece.kind in CAUSE_FAILS_IN for f in found]
    return ([str(f) for f, bad in zip(found, fails) if bad],
            [str(f) for f, bad in zip(found, fails) if not bad])


def surface_problems(brk: Break, workspace_root: Path, run_output: str,
                     lessons_dir: Path = LESSONS_DIR, docs_root: Path = REPO_ROOT,
                     questions: dict | None = None) -> tuple[list[str], list[str]]:
    """``(problems, warnings)`` of the surface of ``brk`` before rung 2 (:func:`check_pieces`);
    ``workspace_root`` holds its broken ``minimodel/`` copy and ``run_output`` is what its
    experiment printed there."""
    files = {rel: (Path(workspace_root) / rel).read_text(encoding="utf-8")
             for rel in patched_files(brk) if (Path(workspace_root) / rel).is_file()}
    return split(findings(brk, check_pieces(brk, files, run_output, lessons_dir, docs_root,
                                                questions)))
