"""The lessons: one Markdown source per lesson and language, whose code runs where it is read.

A lesson is ``lab/content/lessons/<slug>.md`` (English) with ``<slug>.es.md`` beside it
(Spanish); its slug (``embedding-lookup``) is its stable id. The path's order lives in ONE file,
``lab/content/path.yaml``, a list of slugs: a lesson's number is its place there (computed, so
inserting a lesson is two new files and one line, and nothing is renamed). Its front matter
names the lab items it owns::

    ---
    title: "An embedding is a lookup"
    quiz: [q-13-01, q-13-05]
    breaks: [frequent-tokens-learn-slowly]
    exercises: [embedding-lookup]
    ---

Every fenced block whose info string is exactly ``python`` is executed, in order, in one
fresh Python process and one namespace per lesson file (like a notebook). What a block prints
must be written in the source as the ``output`` block that follows it, so every number the
text shows from code is checked each time the lessons are run::

    ```python
    print(1 + 1)
    ```

    ```output
    2
    ```

What does not depend on the order of floating-point sums is compared character for
character. A block whose numbers come out of training, sampling or float32 products (which
differ in their last bits from one CPU's BLAS kernels to another's) declares on its
``output`` fence how it is checked, ``output rtol=0.01 atol=0.002`` or ``output sample``
(:mod:`minimodel.lab.output_check`); its page and notebook then say in one line that the
reader's numbers will differ slightly, and why (:func:`with_output_notes`).

A lesson whose code imports an optional package lists it in its front matter,
``needs: [torch, transformers]``. Where one of them is not installed the lesson is not run: its
page shows the outputs as written, and the check says why in one line (a warning; a strict
check, as in CI, refuses it), instead of failing the whole build on an ``ImportError``.

:func:`run_lesson` runs one file and returns, block by block, what was printed, the error if
one was raised and the figures drawn, with the ``problems`` (an error, changed text, a shape
or count: every build refuses them) and the ``drifts`` (numbers beyond a block's declared
tolerance: a learner's build warns, a strict one refuses); :func:`lesson_problems` lists them.
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from minimodel.lab.output_check import OutputMark, compare, note, parse_mark
from minimodel.messages import say

LESSONS_DIR = Path(__file__).resolve().parent / "content" / "lessons"
MIN_CODE_BLOCKS = 2       # a lesson's worked example runs: at least this many python blocks
PATH_FILE = "path.yaml"                       # beside the lessons folder: the path's order
_SLUG = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")   # starts with a letter: never a number
LANGS = ("en", "es")

# A fence line: ``` or ~~~ with an info string; the closing fence is the same characters alone.
_FENCE = re.compile(r"^(?P<fence>```+|~~~+)(?P<info>[^\n`]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
                    re.M | re.S)


@dataclass
class Lesson:
    """One lesson of the path: its slug (``lm-head-and-logits``, also its file stem), its
    number (its place in ``path.yaml``, from 1) and what it links."""

    slug: str
    number: int
    titles: dict[str, str]
    quiz: list[str] = field(default_factory=list)
    breaks: list[str] = field(default_factory=list)
    exercises: list[str] = field(default_factory=list)

    @property
    def stem(self) -> str:
        """The file stem, which is the slug (``lessons/<slug>.md``)."""
        return self.slug

    def path(self, lang: str = "en", lessons_dir: Path = LESSONS_DIR) -> Path:
        return lessons_dir / (f"{self.slug}.md" if lang == "en" else f"{self.slug}.{lang}.md")


# The front-matter list that links a lesson to each kind of lab item (``quiz:`` lists questions).
FRONT_MATTER = {"question": "quiz", "break": "breaks", "exercise": "exercises"}


def linked_ids(lesson: Lesson, kind: str) -> list[str]:
    """The ids of ``kind`` that ``lesson``'s front matter lists, in its order."""
    return list(getattr(lesson, FRONT_MATTER[kind]))


def lesson_positions(kind: str, lessons_dir: Path = LESSONS_DIR) -> dict[str, tuple[int, int]]:
    """``{item id: (lesson number, place in the lesson's list)}``: the path's order, used by
    ``break list`` and ``exercise list`` (an id listed twice keeps its first place)."""
    positions: dict[str, tuple[int, int]] = {}
    for lesson in load_lessons(lessons_dir):
        for k, item_id in enumerate(linked_ids(lesson, kind)):
            positions.setdefault(item_id, (lesson.number, k))
    return positions


def path_order(item_id: str, fallback: int,
               positions: dict[str, tuple[int, int]]) -> tuple[int, int, int]:
    """Sort key: items in lesson order, then the lesson-less ones by their own ``order``."""
    lesson, place = positions.get(item_id, (10**6, 0))
    return lesson, place, fallback



@dataclass
class CodeBlock:
    """A ``python`` block, the ``output`` block written after it (None if there is none),
    the line of the source where the code starts (1-based), the character offset just
    after the block (after its ``output`` block when it has one), where a page puts the
    figures the block draws, and the words after ``output`` on that block's fence line: how
    it is compared (:mod:`minimodel.lab.output_check`: ``rtol=.. atol=..``, ``sample``)."""

    code: str
    expected: str | None
    line: int
    end: int = 0
    mark: str = ""


@dataclass
class BlockRun:
    """What one block did: its printed text, the error it raised (or None), its figures."""

    printed: str
    error: str | None
    figures: list[str]


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """``(front matter dict, body)``; an empty dict when the text has no front matter."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.find("\n---\n", 4)
    if end < 0:
        raise ValueError("the front matter opened by '---' on the first line is never closed")
    meta = yaml.safe_load(text[4:end]) or {}
    if not isinstance(meta, dict):
        raise ValueError("the front matter must be a YAML mapping (title:, quiz:, ...)")
    return meta, text[end + 5:]


def path_file(lessons_dir: Path = LESSONS_DIR) -> Path:
    """The path file that orders the lessons of ``lessons_dir``: ``path.yaml`` beside it."""
    return Path(lessons_dir).parent / PATH_FILE


def read_path(lessons_dir: Path = LESSONS_DIR) -> list[str]:
    """The lesson slugs of ``path.yaml`` in order; a ValueError naming the fix when the file
    is missing or is not a list of slugs."""
    where = path_file(lessons_dir)
    if not where.is_file():
        raise ValueError(f"{where} is missing; it lists the lesson slugs in the path's order, "
                         "one '- slug' line each")
    try:
        entries = yaml.safe_load(where.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ValueError(f"{where} is not valid YAML ({exc}); write one '- slug' line per "
                         "lesson") from None
    entries = [] if entries is None else entries
    bad = [repr(e) for e in entries if not isinstance(e, str) or not _SLUG.fullmatch(e)] \
        if isinstance(entries, list) else ["the file"]
    if bad:
        raise ValueError(f"{where}: {', '.join(bad)} is not a lesson slug; write one '- slug' "
                         "line per lesson (lowercase letters, digits and '-'; a letter first)")
    return entries


def lesson_files(lessons_dir: Path = LESSONS_DIR) -> list[Path]:
    """The English lesson files in ``lessons_dir`` (``<slug>.md``; ``<slug>.es.md`` is its
    Spanish twin, not a lesson), whether or not the path lists them."""
    return sorted(p for p in Path(lessons_dir).glob("*.md") if p.name.count(".") == 1)


def path_problems(lessons_dir: Path = LESSONS_DIR) -> list[str]:
    """What is wrong between ``path.yaml`` and the lesson files, each with the change that
    fixes it: a lesson file the path does not list, a path entry with no file, a repeat."""
    try:
        slugs = read_path(lessons_dir)
    except ValueError as exc:
        return [str(exc)]
    name = PATH_FILE
    problems = [f"{name} lists '{slug}' {slugs.count(slug)} times; keep one line '- {slug}'"
                for slug in sorted({s for s in slugs if slugs.count(s) > 1})]
    problems += [f"{name} lists '{slug}' but lessons/{slug}.md does not exist; write it "
                 f"(`minimodel lab new lesson {slug}`) or remove the line"
                 for slug in dict.fromkeys(slugs) if not (Path(lessons_dir) / f"{slug}.md").is_file()]
    problems += [f"lessons/{p.name} is not in {name}; add the line '- {p.stem}' where the "
                 "lesson belongs in the path, or delete the file"
                 for p in lesson_files(lessons_dir) if p.stem not in slugs]
    problems += [f"lessons/{p.name} has no English lesson lessons/{p.name[:-6]}.md; write it, "
                 "or rename the Spanish file to match its English twin"
                 for p in sorted(Path(lessons_dir).glob("*.es.md"))
                 if not p.with_name(p.name[:-6] + ".md").is_file()]
    return problems


def load_lessons(lessons_dir: Path = LESSONS_DIR) -> list[Lesson]:
    """The lessons ``path.yaml`` lists, in its order (the path's order), numbered from 1. An
    entry with no file is left out here; ``lab validate`` reports it (:func:`path_problems`)."""
    lessons: list[Lesson] = []
    for slug in dict.fromkeys(read_path(lessons_dir)):
        path = Path(lessons_dir) / f"{slug}.md"
        if not path.is_file():
            continue
        meta, _ = split_front_matter(path.read_text(encoding="utf-8"))
        titles = {"en": str(meta.get("title", slug))}
        twin = path.with_name(f"{slug}.es.md")
        if twin.is_file():
            titles["es"] = str(split_front_matter(twin.read_text(encoding="utf-8"))[0]
                               .get("title", titles["en"]))
        lessons.append(Lesson(slug, len(lessons) + 1, titles, list(meta.get("quiz") or []),
                              list(meta.get("breaks") or []), list(meta.get("exercises") or [])))
    return lessons


def find_lesson(key: str, lessons_dir: Path = LESSONS_DIR, lang: str = "en") -> Lesson:
    """A lesson by number (``5``, ``05``: its place in the path) or slug
    (``lm-head-and-logits``; the old numbered name ``05-lm-head-and-logits`` is read as its
    slug); an unknown key is a ValueError in ``lang`` that lists the lessons."""
    lessons = load_lessons(lessons_dir)
    key = str(key).strip()
    legacy = re.fullmatch(r"\d\d-(?P<slug>.+)", key)
    for lesson in lessons:
        if key == lesson.slug or (key.isdigit() and int(key) == lesson.number) \
                or (legacy is not None and legacy["slug"] == lesson.slug):
            return lesson
    names = ", ".join(f"{lesson.number:02d} {lesson.slug}" for lesson in lessons)
    raise ValueError(say("lab.no_lesson", lang, wanted=repr(key), names=names))


def code_blocks(text: str) -> list[CodeBlock]:
    """The ``python`` blocks of a lesson's text, each with the ``output`` block after it."""
    blocks: list[CodeBlock] = []
    fences = list(_FENCE.finditer(text))
    for i, fence in enumerate(fences):
        if fence.group("info").strip() != "python":
            continue
        expected, end, mark = None, fence.end(), ""
        if i + 1 < len(fences) and _output_info(fences[i + 1]) is not None \
                and text[fence.end():fences[i + 1].start()].strip() == "":
            expected, end = fences[i + 1].group("body"), fences[i + 1].end()
            mark = _output_info(fences[i + 1]) or ""
        line = text.count("\n", 0, fence.start()) + 2
        blocks.append(CodeBlock(fence.group("body"), expected, line, end, mark))
    return blocks


def _output_info(fence: re.Match) -> str | None:
    """The mark of an ``output`` fence (``""`` when it has none); None for other fences."""
    words = fence.group("info").split(maxsplit=1)
    if not words or words[0] != "output":
        return None
    return words[1].strip() if len(words) > 1 else ""


def without_output_blocks(text: str, lang: str = "en") -> str:
    """``text`` with every ``output`` block that follows a ``python`` block removed (a
    notebook's cell prints it when run); a block not compared exactly leaves its one-line
    note (:func:`with_output_notes`)."""
    return with_output_notes(text, lang, keep_output=False)


def run_blocks(codes: list[str], figure_dir: Path | None = None,
               timeout: float = 900.0) -> list[BlockRun]:
    """Run code blocks in order in one fresh Python process; one :class:`BlockRun` each.

    Running stops at the first block that raises (the later ones are not run). Figures left
    open at the end of a block are saved as SVG in ``figure_dir`` (when given) and closed.

    A lesson shows what the library prints as a reader first runs it, so blocks always run with
    the default settings: ``MINIMODEL_KERNELS`` from the caller's environment is not passed on
    (with the composites only, a lesson that trains a model drifts in its later digits).
    """
    with tempfile.TemporaryDirectory(prefix="minimodel-lesson-") as work:
        request = Path(work) / "request.json"
        result = Path(work) / "result.json"
        request.write_text(json.dumps({"codes": codes,
                                       "figure_dir": str(figure_dir) if figure_dir else None,
                                       "result": str(result)}), encoding="utf-8")
        env = dict(os.environ, MPLBACKEND="Agg", PYTHONHASHSEED="0")
        env.pop("MINIMODEL_KERNELS", None)
        done = subprocess.run([sys.executable, "-m", "minimodel.lab._lesson_runner",
                               str(request)], cwd=work, env=env, capture_output=True,
                              text=True, timeout=timeout)
        if not result.is_file():
            raise RuntimeError(f"the lesson runner ended without a result "
                               f"(exit {done.returncode}): {done.stderr[-2000:]}")
        runs = json.loads(result.read_text(encoding="utf-8"))
    return [BlockRun(r["printed"], r["error"], r["figures"]) for r in runs]


def _normalised(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).rstrip()


def _shown(path: Path) -> str:
    """``path`` relative to the working folder when it is inside it (shorter messages)."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _difference(expected: str, printed: str) -> str:
    """A unified diff, written (-) against printed (+), of the normalised texts."""
    lines = difflib.unified_diff(_normalised(expected).splitlines(),
                                 _normalised(printed).splitlines(),
                                 "written in the lesson", "printed now", lineterm="", n=1)
    return "\n".join(lines)


@dataclass
class LessonRun:
    """One lesson file run: its blocks, what each block did, what is wrong (``problems``: an
    error, changed text, a shape or count; they fail every build) and which blocks drifted
    (``drifts``: only numbers with a decimal point differ, beyond the tolerance the block
    declares; or the lesson was not run because a package it ``needs`` is missing; a
    learner's build warns, a strict one fails)."""

    blocks: list[CodeBlock]
    runs: list[BlockRun]
    problems: list[str]
    drifts: list[str] = field(default_factory=list)


# The optional packages a lesson may need, and the extra of minimodel that installs each.
EXTRA_OF = {"torch": "hf", "transformers": "hf", "accelerate": "hf", "scipy": "doctor"}


def missing_needs(text: str) -> list[str]:
    """The packages the front matter's ``needs:`` lists that cannot be imported here."""
    meta, _ = split_front_matter(text)
    return [name for name in meta.get("needs") or [] if importlib.util.find_spec(name) is None]


def _not_run(path: Path, missing: list[str]) -> str:
    extras = sorted({EXTRA_OF.get(name, "") for name in missing})
    install = (f'pip install "minimodel[{extras[0]}]"' if len(extras) == 1 and extras[0]
               else "pip install " + " ".join(missing))
    return (f"{_shown(path)}: not run: its code needs {', '.join(missing)}, not installed "
            f"here ({install}); its outputs are shown as written")


def run_lesson(path: Path, figure_dir: Path | None = None) -> LessonRun:
    """Run every ``python`` block of one lesson file and compare what it prints; a lesson
    whose ``needs:`` are not all installed is not run (one drift line says why)."""
    text = path.read_text(encoding="utf-8")
    blocks = code_blocks(text)
    missing = missing_needs(text)
    if missing:
        return LessonRun(blocks, [], [], [_not_run(path, missing)])
    try:
        runs = run_blocks([b.code for b in blocks], figure_dir) if blocks else []
    except subprocess.TimeoutExpired as exc:
        return LessonRun(blocks, [], [f"{_shown(path)}: the lesson's code did not finish "
                                      f"within {exc.timeout:.0f} s (is the machine very busy?)"])
    return LessonRun(blocks, runs, *_problems(path, blocks, runs))


def lesson_problems(path: Path, figure_dir: Path | None = None,
                    strict: bool = True) -> list[str]:
    """Everything wrong with running one lesson file: errors and printed-output mismatches
    (with ``strict``, drift beyond a block's declared tolerance too)."""
    result = run_lesson(path, figure_dir)
    return result.problems + (result.drifts if strict else [])


def _problems(path: Path, blocks: list[CodeBlock],
              runs: list[BlockRun]) -> tuple[list[str], list[str]]:
    """``(problems, drifts)`` of one file's blocks and what they did."""
    problems: list[str] = []
    drifts: list[str] = []
    for block, run in zip(blocks, runs):
        where = f"{_shown(path)}:{block.line}"
        if run.error is not None:
            problems.append(f"{where}: the block raised {run.error}")
            break
        if block.expected is None:
            if _normalised(run.printed):
                problems.append(f"{where}: the block prints but no ```output block follows it; "
                                f"it printed:\n{run.printed}")
            continue
        try:
            mark = parse_mark(block.mark)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
            continue
        verdict = compare(block.expected, run.printed, mark)
        if verdict.kind == "content":
            problems.append(f"{where}: the printed output differs from the ```output block "
                            f"({verdict.reason}):\n" + _difference(block.expected, run.printed))
        elif verdict.kind == "drift":
            drifts.append(f"{where}: numbers drifted beyond the tolerance: "
                          + verdict.summary(mark))
    return problems, drifts


def with_output_notes(text: str, lang: str, keep_output: bool = True) -> str:
    """``text`` with one line under every ``output`` block that is not compared exactly,
    saying that the reader's numbers (or sample) will differ and why, and its mark removed
    from the fence line (what a page shows). ``keep_output=False``: every ``output`` block is
    removed, the marked ones leave their line (what a notebook shows: its cell prints)."""
    for block in reversed(code_blocks(text)):
        if block.expected is None:
            continue
        start = text.rfind("```output", 0, block.end)
        try:
            mark = parse_mark(block.mark)
        except ValueError:       # reported by the lesson check; the page keeps the text as is
            mark = OutputMark()
        line = "" if mark.exact else f"\n\n*{note(mark, lang)}*"
        if keep_output:
            fence_end = text.index("\n", start)
            text = text[:start] + "```output" + text[fence_end:block.end] + line \
                + text[block.end:]
        else:
            text = text[:start].rstrip("\n") + line + text[block.end:]
    return text


def check_lessons(paths: list[Path], workers: int = 2) -> list[tuple[Path, LessonRun]]:
    """Run lesson files, ``workers`` at a time (each is its own Python process)."""
    with ThreadPoolExecutor(max_workers=max(1, min(workers, os.cpu_count() or 1))) as pool:
        return list(zip(paths, pool.map(run_lesson, paths)))


def report_lessons(keys: list[str], langs: list[str], strict: bool) -> int:
    """Run the lessons ``keys`` (numbers or slugs; all when empty) in ``langs`` and print what
    is wrong; ``minimodel lab check-lessons`` calls it. Exit 1 on a problem (an error, changed
    text, a shape or count); numeric drift beyond a block's declared tolerance is a warning,
    and fails too when ``strict``."""
    lessons = [find_lesson(k) for k in keys] if keys else load_lessons()
    paths = [lesson.path(lang) for lesson in lessons for lang in langs
             if lesson.path(lang).is_file()]
    failed = 0
    for path, result in check_lessons(paths):
        bad = result.problems + (result.drifts if strict else [])
        failed += bool(bad)
        status = "FAIL" if bad else ("warn" if result.drifts else "ok  ")
        print(f"{status} {path.name}", flush=True)
        for problem in result.problems + result.drifts:
            print("    " + problem.replace("\n", "\n    "))
    return 1 if failed else 0
