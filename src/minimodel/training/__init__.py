"""Training runs: ``minimodel train`` / ``minimodel compare`` as a library.

    from minimodel.training import TrainConfig, train
    result = train(TrainConfig(model="gpt", steps=200), "runs/demo")
    result.summary["val_loss"], result.summary["unigram_baseline"]

Modules: ``config`` (settings and defaults), ``tasks`` (tokenizer, batches, unigram baseline),
``loop`` (the optimisation loop, evaluation, Ctrl-C), ``state`` (exact-resume files),
``run_files`` (the run directory), ``report`` (progress bar / log lines). The command-line
options of ``minimodel train`` / ``compare`` are parsed in :mod:`minimodel.commands`, and the
process settings (BLAS threads, allocator) live in :mod:`minimodel.runtime`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from minimodel.data import public_domain
from minimodel.messages import PhraseError, phrase
from minimodel.training.config import DEFAULTS, TrainConfig
from minimodel.training.loop import Trainer, TrainResult, param_groups
from minimodel.training.lock import RunLock, RunLocked
from minimodel.training.report import (JsonReporter, PlainReporter, SilentReporter,
                                       format_perplexity, make_reporter)
from minimodel.training.run_files import check_corpus_path
from minimodel.training.tasks import load_any_tokenizer, unigram_baseline


def default_out_dir(cfg: TrainConfig) -> Path:
    """``runs/<model>-<tied|untied>`` (``cfg`` must be resolved)."""
    return Path("runs") / f"{cfg.model}-{cfg.tie_label}"


def train(config: TrainConfig, out_dir: str | os.PathLike | None = None, resume: bool = False,
          reporter: PlainReporter | None = None,
          on_step: Callable[[int, float], None] | None = None,
          explicit: dict[str, Any] | None = None, force: bool = False,
          resume_command: str | None = None, snapshots: bool = True) -> TrainResult:
    """Train (or, with ``resume``, continue) a run and return its result.

    Args:
        config: the settings; ``None`` fields take the model's defaults. With ``resume`` the
            saved settings are used and ``explicit`` (options the user typed) must agree.
        out_dir: the run directory (default ``runs/<model>-<tied|untied>``).
        reporter: where progress goes (default: silent).
        on_step: called as ``on_step(step, loss)`` after every optimizer step; raising
            KeyboardInterrupt there behaves like Ctrl-C (checkpoint + resume hint).
        force: start over in a directory that holds a run (its files move to
            ``DIR/previous/``); without it such a directory is refused.
        resume_command: what an interrupted run tells the user to type (default
            ``minimodel train --resume --out DIR``).
        snapshots: keep snapshots of the token matrices and the gradient ledger in
            ``DIR/snapshots/`` (see :mod:`minimodel.training.snapshots`).

    Only one process may train in a directory at a time (:class:`RunLock`).
    """
    cfg = config if resume else config.resolved()
    if out_dir is None:  # resume: the default directory of the model/tie typed (or gpt-tied)
        out_dir = default_out_dir(cfg if not resume else config.resolved())
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise PhraseError(phrase("train.out_is_file", out=out))
    if resume and not out.is_dir():  # refused before the lock would create the folder
        raise PhraseError(phrase("train.nothing_to_resume_no_folder", out=out))
    if not resume and cfg.corpus is not None:
        check_corpus_path(cfg)
        cfg.corpus = public_domain.as_run_corpus(cfg.corpus)
    trainer = Trainer(cfg, out, reporter, on_step, resume_command, snapshots)
    with RunLock(out):
        trainer.setup(resume, explicit, force=force)
        return trainer.run()


__all__ = ["TrainConfig", "TrainResult", "Trainer", "train", "default_out_dir", "DEFAULTS",
           "unigram_baseline", "param_groups", "load_any_tokenizer", "make_reporter",
           "PlainReporter", "SilentReporter", "JsonReporter", "RunLock", "RunLocked",
           "format_perplexity"]
