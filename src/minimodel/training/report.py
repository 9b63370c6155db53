"""How a run talks to the terminal: a Rich progress bar, or one plain line per evaluation.

The bar (step, loss, tokens/s, ETA) is only drawn on an interactive terminal; with
``--quiet`` or when stdout is a pipe/file (CI, ``| tee``) each evaluation prints one line, so
logs stay readable and greppable.

Every line is a message of the catalogue (``minimodel.messages``), said in the reporter's
language (``lang``); the training code hands over :class:`~minimodel.messages.Phrase` objects
and never knows the language. Numbers keep one format in both languages (a decimal point),
so a log can be compared figure by figure. ``--json`` is always English: it is for programs.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any, TextIO

from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from minimodel._console import Console
from minimodel.messages import DEFAULT_LANG, Phrase, grouped, in_lang, phrase, say
from minimodel.runtime import configure


def configure_run(threads: str | int | None = "auto") -> Phrase:
    """Apply a run's speed settings (:func:`minimodel.runtime.configure`) and return its
    one-line note, e.g. "BLAS threads: 1", to be said in the reader's language."""
    choice, fields = configure(threads)
    return phrase(f"runtime.threads_{choice}", **fields)


def format_perplexity(ppl: float | None) -> str:
    """2 decimals for sensible values, 3 significant digits for large ones: never 300 digits."""
    if ppl is None or not math.isfinite(ppl):
        return "overflow"
    return f"{ppl:.2f}" if ppl < 1e6 else f"{ppl:.3g}"


def format_eval_line(row: dict[str, Any], total_steps: int, lang: str = DEFAULT_LANG) -> str:
    """``step  5/20  train 3.1234  val 3.2345  ppl 25.43  lr 1.00e-02  9,871 tok/s  0.4s``."""
    return say("train.eval_line", lang, step=f"{row['step']:>{len(str(total_steps))}}",
               total=total_steps, train_loss=row["train_loss"], val_loss=row["val_loss"],
               ppl=format_perplexity(row["val_ppl"]), lr=row["lr"],
               tokens_per_s=row["tokens_per_s"], elapsed=row["elapsed"])


class PlainReporter:
    """One line per evaluation, plus messages (a str or a Phrase, said in ``lang``)."""

    def __init__(self, stream: TextIO | None = None, lang: str = DEFAULT_LANG) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.lang = lang

    def start(self, total: int, done: int) -> None:
        self.total = total

    def step(self, step: int, loss: float, tokens_per_s: float) -> None:
        pass

    def eval(self, row: dict[str, Any]) -> None:
        print(format_eval_line(row, self.total, self.lang), file=self.stream, flush=True)

    def message(self, text: object) -> None:
        print(in_lang(text, self.lang), file=self.stream, flush=True)

    def close(self) -> None:
        pass


class RichReporter(PlainReporter):
    """A live progress bar; evaluation lines and messages are printed above it."""

    def __init__(self, lang: str = DEFAULT_LANG) -> None:
        super().__init__(lang=lang)
        self.console = Console()
        self.progress = None

    def start(self, total: int, done: int) -> None:
        self.total = total
        self.progress = Progress(
            TextColumn(f"[bold]{say('train.bar_label', self.lang)}"), BarColumn(),
            MofNCompleteColumn(),
            TextColumn(say("train.bar_loss", self.lang, loss="{task.fields[loss]}")),
            TextColumn("{task.fields[tps]} tok/s"),
            TimeElapsedColumn(), TextColumn(say("train.bar_eta", self.lang)),
            TimeRemainingColumn(),
            console=self.console, transient=False)
        self.progress.start()
        self.task = self.progress.add_task("train", total=total, completed=done, loss="-",
                                           tps="-")

    def step(self, step: int, loss: float, tokens_per_s: float) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=step, loss=f"{loss:.4f}",
                                 tps=grouped(tokens_per_s, ",.0f", self.lang))

    def eval(self, row: dict[str, Any]) -> None:
        self.message(format_eval_line(row, self.total, self.lang))

    def message(self, text: object) -> None:
        if self.progress is not None:
            self.progress.console.print(in_lang(text, self.lang), markup=False, highlight=False)
        else:
            print(in_lang(text, self.lang), flush=True)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


class SilentReporter(PlainReporter):
    """Prints nothing (library use and tests)."""

    def eval(self, row: dict[str, Any]) -> None:
        pass

    def message(self, text: object) -> None:
        pass


class JsonReporter(PlainReporter):
    """Machine-readable progress (``train --json``): one JSON object per line on stdout.

        {"event": "start", "total_steps": 1000, "done": 0}
        {"event": "step", "step": 5, "loss": 6.12, "tokens_per_s": 21000.0}   (every 10 steps)
        {"event": "eval", "step": 100, "train_loss": ..., "val_loss": ..., ...}
        {"event": "message", "text": "..."}
        {"event": "summary", ...}                                              (the command)

    Non-finite numbers are written as null: every line is strict JSON. The texts are English
    whatever ``--lang`` says: a program reading them gets the same lines in every language.
    """

    STEP_EVERY = 10

    def __init__(self, stream: TextIO | None = None, lang: str = DEFAULT_LANG) -> None:
        super().__init__(stream, lang)
        # Messages said while the run is set up (BLAS threads, the tokenizer) wait for the
        # start event, so the first line a reader gets (`train --json | head -1`) is "start".
        self._held: list[object] | None = []

    def emit(self, event: str, **fields: Any) -> None:
        clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                 for k, v in fields.items()}
        print(json.dumps({"event": event, **clean}, allow_nan=False), file=self.stream,
              flush=True)

    def start(self, total: int, done: int) -> None:
        self.total = total
        self.emit("start", total_steps=total, done=done)
        self._release_held()

    def step(self, step: int, loss: float, tokens_per_s: float) -> None:
        if step % self.STEP_EVERY == 0 or step == self.total:
            self.emit("step", step=step, loss=loss, tokens_per_s=tokens_per_s)

    def eval(self, row: dict[str, Any]) -> None:
        self.emit("eval", **row)

    def message(self, text: object) -> None:
        if self._held is not None:
            self._held.append(text)
        else:
            self.emit("message", text=in_lang(text, DEFAULT_LANG))

    def close(self) -> None:
        self._release_held()   # a run that stopped before its start event still says them

    def _release_held(self) -> None:
        held, self._held = self._held or [], None
        for text in held:
            self.message(text)


def console():
    """A Rich console; when stdout is not a terminal, 120 columns so tables are not cut."""
    return Console() if sys.stdout.isatty() else Console(width=120)


def make_reporter(quiet: bool, as_json: bool = False, lang: str = DEFAULT_LANG) -> PlainReporter:
    """The reporter for a run: JSON lines (always English), a live bar on a terminal, else one
    plain line per evaluation; the last two in ``lang``."""
    if as_json:
        return JsonReporter()
    if not quiet and sys.stdout.isatty():
        return RichReporter(lang)
    return PlainReporter(lang=lang)
