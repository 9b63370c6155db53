"""Generate every lesson's notebook (both languages) and execute it in a real Jupyter kernel.

    python scripts/run_lesson_notebooks.py [--out DIR] [NN|slug ...]

Exits 1 naming the notebooks whose cells raised. The exercise cells run too: the stub's check
reports "not passed" (it raises NotImplementedError inside the judge, not in the notebook), and
progress goes to a temporary learner folder, never to yours. Needs the notebook extra.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import nbclient
import nbformat

from minimodel.lab.lessons import LANGS, find_lesson, load_lessons
from minimodel.site.notebooks import write_notebook


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("lessons", nargs="*", help="lessons to run (default: all)")
    parser.add_argument("--out", default=None, help="keep the executed notebooks here")
    args = parser.parse_args()
    lessons = [find_lesson(k) for k in args.lessons] if args.lessons else load_lessons()
    failed = []
    with tempfile.TemporaryDirectory(prefix="minimodel-notebooks-") as tmp:
        out = Path(args.out or tmp)
        os.environ["MINIMODEL_LEARNER_DIR"] = str(Path(tmp) / "learner")
        os.environ.pop("MPLBACKEND", None)
        start = time.perf_counter()
        for lesson in lessons:
            for lang in LANGS:
                if not lesson.path(lang).is_file():
                    continue
                path, _ = write_notebook(lesson, lang, out, force=True)
                notebook = nbformat.read(path, as_version=4)
                began = time.perf_counter()
                try:
                    nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                            resources={"metadata": {"path": str(out)}}).execute()
                    status = "ok  "
                except nbclient.exceptions.CellExecutionError as exc:
                    status = "FAIL"
                    failed.append(f"{path.name}: {str(exc).splitlines()[-1]}")
                nbformat.write(notebook, path)
                print(f"{status} {path.name} ({time.perf_counter() - began:.1f} s)", flush=True)
        print(f"{len(failed)} failed; total {time.perf_counter() - start:.1f} s")
    for line in failed:
        print("  " + line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
