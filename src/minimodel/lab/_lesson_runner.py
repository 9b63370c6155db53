"""The child process of :func:`minimodel.lab.lessons.run_blocks`: run a lesson's blocks.

``python -m minimodel.lab._lesson_runner REQUEST.json``. The request names the code blocks,
a folder for figures (or null) and the file to write the result to, a JSON list with one
``{"printed", "error", "figures"}`` per block that ran. One namespace for all blocks, as in a
notebook; the first block that raises ends the run.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import traceback
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # before pyplot: no window, figures are saved, not shown
import matplotlib.pyplot as plt  # noqa: E402


def _save_figures(figure_dir: str | None, block: int) -> list[str]:
    """Save every open figure as ``block-K-N.svg`` in ``figure_dir``; close them all."""
    names = []
    for n, number in enumerate(plt.get_fignums()):
        if figure_dir is not None:
            name = f"block-{block}-{n}.svg"
            plt.figure(number).savefig(Path(figure_dir) / name, format="svg",
                                       bbox_inches="tight")
            names.append(name)
    plt.close("all")
    return names


def main(request_path: str) -> None:
    request = json.loads(Path(request_path).read_text(encoding="utf-8"))
    if request["figure_dir"]:
        Path(request["figure_dir"]).mkdir(parents=True, exist_ok=True)
    plt.show = lambda *args, **kwargs: None   # figures are collected at the end of each block
    namespace: dict = {"__name__": "__main__"}
    runs = []
    for k, code in enumerate(request["codes"]):
        printed = io.StringIO()
        error = None
        try:
            with contextlib.redirect_stdout(printed):
                exec(compile(code, f"<block {k + 1}>", "exec"), namespace)
        except BaseException as exc:  # noqa: BLE001 - report any failure of the lesson's code
            lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__)
                     if f.filename == f"<block {k + 1}>"]
            where = f" (line {lines[-1]} of the block)" if lines else ""
            error = f"{type(exc).__name__}: {exc}{where}"
        runs.append({"printed": printed.getvalue(), "error": error,
                     "figures": _save_figures(request["figure_dir"], k + 1)})
        if error is not None:
            break
    Path(request["result"]).write_text(json.dumps(runs), encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
