"""Generate every lesson's notebook (both languages), execute it in a real Jupyter kernel and
compare what its cells print with the lesson's ``output`` blocks.

    python scripts/run_lesson_notebooks.py [--strict] [--out DIR] [--lang en] [NN|slug ...]

Exits 1 naming the notebooks whose cells raised or printed other text, shapes or counts than
the lesson says; numbers beyond a block's declared tolerance (the same check as the lesson
check's, :mod:`minimodel.lab.output_check`) are a warning, and fail too with ``--strict``. The
exercise cells run too: the stub's check reports "not passed" (it raises NotImplementedError
inside the judge, not in the notebook), and progress goes to a temporary learner folder, never
to yours. Two notebooks run at a time. Needs the notebook extra.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbclient
import nbformat

from minimodel.lab.lessons import LANGS, find_lesson, load_lessons
from minimodel.site.notebooks import notebook_output_problems, write_notebook


def run_one(stem: str, lang: str, out: str) -> tuple[str, str, list[str], list[str], float]:
    """Write, execute and check one notebook: ``(name, status, problems, drifts, seconds)``."""
    lesson = find_lesson(stem)
    path, _ = write_notebook(lesson, lang, Path(out), force=True)
    notebook = nbformat.read(path, as_version=4)
    began = time.perf_counter()
    try:
        nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                resources={"metadata": {"path": out}}).execute()
        problems, drifts = notebook_output_problems(notebook, lesson.path(lang))
    except nbclient.exceptions.CellExecutionError as exc:
        problems, drifts = [f"{path.name}: {str(exc).splitlines()[-1]}"], []
    nbformat.write(notebook, path)
    return path.name, "ok", problems, drifts, time.perf_counter() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lessons to run (default: all)")
    parser.add_argument("--out", default=None, help="keep the executed notebooks here")
    parser.add_argument("--lang", choices=LANGS, action="append", help="default: both")
    parser.add_argument("--strict", action="store_true",
                        help="numbers beyond a block's declared tolerance fail too (CI)")
    args = parser.parse_args()
    lessons = [find_lesson(k) for k in args.lessons] if args.lessons else load_lessons()
    failed = []
    with tempfile.TemporaryDirectory(prefix="minimodel-notebooks-") as tmp:
        out = str(Path(args.out or tmp).resolve())
        Path(out).mkdir(parents=True, exist_ok=True)
        os.environ["MINIMODEL_LEARNER_DIR"] = str(Path(tmp) / "learner")
        os.environ.pop("MPLBACKEND", None)
        start = time.perf_counter()
        jobs = [(lesson.stem, lang) for lesson in lessons for lang in (args.lang or LANGS)
                if lesson.path(lang).is_file()]
        with ProcessPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
            results = pool.map(run_one, *zip(*jobs), [out] * len(jobs))
            for name, _, problems, drifts, seconds in results:
                bad = problems + (drifts if args.strict else [])
                status = "FAIL" if bad else ("warn" if drifts else "ok  ")
                print(f"{status} {name} ({seconds:.1f} s)", flush=True)
                for line in problems + drifts:
                    print("    " + line.replace("\n", "\n    "), flush=True)
                failed += [name] if bad else []
        print(f"{len(failed)} failed; total {time.perf_counter() - start:.1f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
