"""How long the lessons take to build: the site (every lesson's code executed) and the notebooks.

    python benchmarks/lab_build_times.py                      # both, every lesson of the path, en + es
    python benchmarks/lab_build_times.py --skip-site --json times.json

* **site**: ``minimodel docs build`` into a temporary folder, in a child process: staging, every
  ``python`` block of every lesson run in both languages (two lesson files at a time) and
  compared with its ``output`` block, then mkdocs.
* **notebooks**: for every lesson and language, the notebook written from the lesson
  (``minimodel.site.notebooks.write_notebook``, as ``minimodel lab notebook`` does) and
  executed top to bottom in a fresh Jupyter kernel (nbclient), one at a time; the exercise
  cells run too (the stub's check is judged "not passed"), with progress in a temporary
  learner folder.

Wall-clock seconds depend on what else the machine runs; the CPU seconds beside them (this
process and its children: the build, the lesson processes, the kernels and the judge) are
steadier. The load average at the start and the end is printed so a reader can tell.
Needs the docs and notebook extras.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbclient
import nbformat

from minimodel._fileio import atomic_write_json
from minimodel.lab.lessons import LANGS, load_lessons
from minimodel.site.notebooks import write_notebook


def cpu_seconds() -> float:
    """User + system CPU time of this process and of its finished children."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def time_site(tmp: Path) -> dict[str, float]:
    """``minimodel docs build`` into ``tmp/site``; exits if the build fails."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    done = subprocess.run([sys.executable, "-m", "minimodel", "docs", "build", "--out",
                           str(tmp / "site")], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"the site build failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return {"wall_s": time.perf_counter() - wall, "cpu_s": cpu_seconds() - cpu}


def time_notebooks(tmp: Path) -> list[dict[str, object]]:
    """Write and execute every lesson's notebook; one row per lesson and language."""
    out, rows = tmp / "notebooks", []
    os.environ["MINIMODEL_LEARNER_DIR"] = str(tmp / "learner")
    os.environ.pop("MPLBACKEND", None)           # the kernel's inline backend draws
    for lesson in load_lessons():
        for lang in LANGS:
            if not lesson.path(lang).is_file():
                continue
            wall, cpu = time.perf_counter(), cpu_seconds()
            path, _ = write_notebook(lesson, lang, out, force=True)
            written = time.perf_counter() - wall
            notebook = nbformat.read(path, as_version=4)
            nbclient.NotebookClient(notebook, timeout=600, kernel_name="python3",
                                    resources={"metadata": {"path": str(out)}}).execute()
            rows.append({"notebook": path.name, "write_s": written,
                         "wall_s": time.perf_counter() - wall, "cpu_s": cpu_seconds() - cpu})
            print(f"  {path.name:<42} {rows[-1]['wall_s']:6.1f} s wall  "
                  f"{rows[-1]['cpu_s']:6.1f} s CPU", flush=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--skip-site", action="store_true", help="do not build the site")
    parser.add_argument("--skip-notebooks", action="store_true",
                        help="do not write and run the notebooks")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args()
    report: dict[str, object] = {"cpus": os.cpu_count(), "load_start": os.getloadavg()}
    print(f"{os.cpu_count()} CPUs; load average at the start "
          + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    with tempfile.TemporaryDirectory(prefix="minimodel-build-times-") as folder:
        tmp = Path(folder)
        if not args.skip_site:
            site = time_site(tmp)
            report["site"] = site
            print(f"site build (all lessons executed, en + es, then mkdocs): "
                  f"{site['wall_s']:.1f} s wall, {site['cpu_s']:.1f} s CPU", flush=True)
        if not args.skip_notebooks:
            print("notebooks (write + execute in a fresh kernel):")
            rows = time_notebooks(tmp)
            report["notebooks"] = rows
            total_wall = sum(float(r["wall_s"]) for r in rows)
            total_cpu = sum(float(r["cpu_s"]) for r in rows)
            report["notebooks_total"] = {"count": len(rows), "wall_s": total_wall,
                                         "cpu_s": total_cpu}
            print(f"all {len(rows)} notebooks: {total_wall:.1f} s wall, {total_cpu:.1f} s CPU")
    report["load_end"] = os.getloadavg()
    print("load average at the end " + " ".join(f"{x:.1f}" for x in os.getloadavg()))
    if args.json:
        atomic_write_json(Path(args.json), report)


if __name__ == "__main__":
    main()
