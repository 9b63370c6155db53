"""How a run talks to the terminal: a Rich progress bar, or one plain line per evaluation.

The bar (step, loss, tokens/s, ETA) is only drawn on an interactive terminal; with
``--quiet`` or when stdout is a pipe/file (CI, ``| tee``) each evaluation prints one line, so
logs stay readable and greppable.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, TextIO

from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from minimodel._console import Console


def format_perplexity(ppl: float | None) -> str:
    """2 decimals for sensible values, 3 significant digits for large ones: never 300 digits."""
    if ppl is None or not math.isfinite(ppl):
        return "overflow"
    return f"{ppl:.2f}" if ppl < 1e6 else f"{ppl:.3g}"


def format_eval_line(row: dict[str, Any], total_steps: int) -> str:
    return (f"step {row['step']:>{len(str(total_steps))}}/{total_steps}  "
            f"train {row['train_loss']:.4f}  val {row['val_loss']:.4f}  "
            f"ppl {format_perplexity(row['val_ppl'])}  lr {row['lr']:.2e}  "
            f"{row['tokens_per_s']:,.0f} tok/s  {row['elapsed']:.1f}s")


class PlainReporter:
    """One line per evaluation, plus messages; no cursor tricks."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream if stream is not None else sys.stdout

    def start(self, total: int, done: int) -> None:
        self.total = total

    def step(self, step: int, loss: float, tokens_per_s: float) -> None:
        pass

    def eval(self, row: dict[str, Any]) -> None:
        print(format_eval_line(row, self.total), file=self.stream, flush=True)

    def message(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def close(self) -> None:
        pass


class RichReporter(PlainReporter):
    """A live progress bar; evaluation lines and messages are printed above it."""

    def __init__(self) -> None:
        super().__init__()
        self.console = Console()
        self.progress = None

    def start(self, total: int, done: int) -> None:
        self.total = total
        self.progress = Progress(
            TextColumn("[bold]train"), BarColumn(), MofNCompleteColumn(),
            TextColumn("loss {task.fields[loss]}"), TextColumn("{task.fields[tps]} tok/s"),
            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            console=self.console, transient=False)
        self.progress.start()
        self.task = self.progress.add_task("train", total=total, completed=done, loss="-",
                                           tps="-")

    def step(self, step: int, loss: float, tokens_per_s: float) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=step, loss=f"{loss:.4f}",
                                 tps=f"{tokens_per_s:,.0f}")

    def eval(self, row: dict[str, Any]) -> None:
        self.message(format_eval_line(row, self.total))

    def message(self, text: str) -> None:
        if self.progress is not None:
            self.progress.console.print(text, markup=False, highlight=False)
        else:
            print(text, flush=True)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


class SilentReporter(PlainReporter):
    """Prints nothing (library use and tests)."""

    def eval(self, row: dict[str, Any]) -> None:
        pass

    def message(self, text: str) -> None:
        pass


class JsonReporter(PlainReporter):
    """Machine-readable progress (``train --json``): one JSON object per line on stdout.

        {"event": "start", "total_steps": 1000, "done": 0}
        {"event": "step", "step": 5, "loss": 6.12, "tokens_per_s": 21000.0}   (every 10 steps)
        {"event": "eval", "step": 100, "train_loss": ..., "val_loss": ..., ...}
        {"event": "message", "text": "..."}
        {"event": "summary", ...}                                              (the command)

    Non-finite numbers are written as null: every line is strict JSON.
    """

    STEP_EVERY = 10

    def emit(self, event: str, **fields: Any) -> None:
        clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                 for k, v in fields.items()}
        print(json.dumps({"event": event, **clean}, allow_nan=False), file=self.stream,
              flush=True)

    def start(self, total: int, done: int) -> None:
        self.total = total
        self.emit("start", total_steps=total, done=done)

    def step(self, step: int, loss: float, tokens_per_s: float) -> None:
        if step % self.STEP_EVERY == 0 or step == self.total:
            self.emit("step", step=step, loss=loss, tokens_per_s=tokens_per_s)

    def eval(self, row: dict[str, Any]) -> None:
        self.emit("eval", **row)

    def message(self, text: str) -> None:
        self.emit("message", text=text)


def console():
    """A Rich console; when stdout is not a terminal, 120 columns so tables are not cut."""
    return Console() if sys.stdout.isatty() else Console(width=120)


def make_reporter(quiet: bool, as_json: bool = False) -> PlainReporter:
    if as_json:
        return JsonReporter()
    if not quiet and sys.stdout.isatty():
        return RichReporter()
    return PlainReporter()
