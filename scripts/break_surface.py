"""Write what a learner can see of a break before a hint rung, as files a person or a blind
solver can read.

    python scripts/break_surface.py ID --out DIR [--rung K] [--lang en|es] [--no-run] [--force]

The surface before rung 1 (docs/authoring.md, "What a learner sees before the hints"): the
bug report, predictions and NOTES.md as `break start` writes them, the output of the real
`break start` and `break run` (run in a temporary learner folder), the break's page as the site
generates it, every lesson (text, code and printed outputs, as its page shows them) and every
quiz question with its answer and explanation on the path up to and including the break's
lesson, the workspace files the bug patch touches (as the learner has them), README.md and
docs/*.md. With --rung K, hints 1..K too (and the page's ladder shows them). Nothing of the fix,
the later hints, the explanation, the invariants, the fakes or the patch. DIR/INDEX.md lists
the files. Seconds, but for the run (--no-run leaves it out).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from minimodel.lab.breaks import load_break
from minimodel.lab.breaks import surface
from minimodel.lab.i18n import LANGS


def _command(argv: list[str], learner: Path) -> str:
    """Run ``minimodel ARGV`` as a learner would (100 columns, no colour); what it printed."""
    env = dict(os.environ, COLUMNS="100", NO_COLOR="1", MINIMODEL_LEARNER_DIR=str(learner))
    done = subprocess.run([sys.executable, "-m", "minimodel", *argv], capture_output=True,
                          text=True, env=env, timeout=600)
    shown = f"$ minimodel {' '.join(argv)}\n{done.stdout}"
    if done.stderr.strip():
        shown += f"\n[stderr]\n{done.stderr}"
    return shown + f"\n[exit code {done.returncode}]\n"


def _write(out: Path, rel: str, text: str, index: list[str], what: str) -> None:
    path = out / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    index.append(f"- `{rel}`: {what}")


def dump(break_id: str, out: Path, rung: int, lang: str, run: bool) -> list[str]:
    """Write the surface of ``break_id`` before rung ``rung`` + 1 into ``out``; the index lines."""
    brk = load_break(break_id)
    hints = brk.texts("hints", lang)
    if not 0 <= rung <= len(hints):
        raise ValueError(f"--rung {rung}: the break {brk.id} has {len(hints)} hints; give 0 "
                         f"(before any hint) to {len(hints)}")
    index: list[str] = []
    with tempfile.TemporaryDirectory(prefix="break-surface-") as tmp:
        learner, ws = Path(tmp) / "learner", Path(tmp) / "ws"
        flags = ["--workdir", str(ws), "--lang", lang]
        _write(out, "start-output.txt", _command(["break", "start", brk.id, *flags], learner),
               index, "what `break start` printed")
        _write(out, "NOTES.md", (ws / "NOTES.md").read_text(encoding="utf-8"), index,
               "the predictions file `break start` wrote")
        if run:
            _write(out, "run-output.txt",
                   _command(["break", "run", "--skip-predictions", *flags], learner), index,
                   "what `break run` printed (predictions skipped)")
        for rel in surface.patched_files(brk):
            _write(out, f"workspace/{rel}", (ws / rel).read_text(encoding="utf-8"), index,
                   "a workspace file the bug patch touches, as the learner has it")
    report = [f"# {brk.text('title', lang)}", "", brk.text("summary", lang), "",
              brk.text("intro", lang), "", "## predict", ""]
    report += [f"{i}. {q}" for i, q in enumerate(brk.texts("predict", lang), 1)]
    report += ["", "## observe", "", brk.text("observe", lang)]
    _write(out, "report.md", "\n".join(report), index,
           "title, summary, intro, predictions, what to look at (break.yaml)")
    if rung:
        _write(out, "hints.md", "\n\n".join(f"## hint {i}\n\n{h}"
                                            for i, h in enumerate(hints[:rung], 1)),
               index, f"hints 1..{rung}")
    _write(out, "page.md", surface.page_text(brk, lang, rung), index,
           "the break's site page (hint ladder up to this rung)")
    for lesson in surface.path_lessons(brk):
        name = f"{lesson.number:02d}-{lesson.slug}.md"
        if lesson.path(lang).is_file():
            _write(out, f"lessons/{name}", surface.lesson_page(lesson, lang), index,
                   "lesson page (text, code, outputs; figures left out)")
        questions = [p.text for p in surface.quiz_pieces(brk, lang)
                     if p.name.split(" ")[0] in lesson.quiz]
        if questions:
            _write(out, f"quizzes/{name}", "\n".join(questions), index,
                   "its quiz questions with answers and explanations")
    for piece in surface.docs_pieces(lang):
        _write(out, piece.name, piece.text, index, "README / docs page")
    return index


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="example:\n  python scripts/break_surface.py "
                                            "val-loss-too-good --rung 0 --out /tmp/surface")
    parser.add_argument("break_id", metavar="ID")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder to write (new or "
                        "empty, unless --force)")
    parser.add_argument("--rung", type=int, default=0, metavar="K",
                        help="hints already shown (default 0: before any hint)")
    parser.add_argument("--lang", choices=LANGS, default="en")
    parser.add_argument("--no-run", action="store_true", help="leave out `break run` (fast)")
    parser.add_argument("--force", action="store_true", help="write into a non-empty DIR")
    args = parser.parse_args(argv)
    out = Path(args.out).expanduser().resolve()
    if out.is_dir() and any(out.iterdir()) and not args.force:
        print(f"error: {out} is not empty; choose a new folder or pass --force", file=sys.stderr)
        return 2
    try:
        index = dump(args.break_id, out, args.rung, args.lang, not args.no_run)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    head = [f"# The surface of `{args.break_id}` before hint rung {args.rung + 1} ({args.lang})",
            "", "What a learner can read at this point (docs/authoring.md, breaks). Not here: "
            "the fix, the later hints, the explanation, the invariants, the fakes, the patch.",
            ""]
    (out / "INDEX.md").write_text("\n".join(head + index) + "\n", encoding="utf-8")
    print(f"wrote {len(index)} files and INDEX.md to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
