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
from minimodel.training import checkpoint
from minimodel.training.run_files import (check_corpus_path, check_resume_config,
                                          describe_existing_run, existing_run_refusal)
from minimodel.training.tasks import load_any_tokenizer, unigram_baseline


def default_out_dir(cfg: TrainConfig) -> Path:
    """``runs/<model>-<tied|untied>`` (``cfg`` must be resolved)."""
    return Path("runs") / f"{cfg.model}-{cfg.tie_label}"


def check_options(config: TrainConfig, out_dir: str | os.PathLike | None = None,
                  resume: bool = False, explicit: dict[str, Any] | None = None,
                  force: bool = False) -> tuple[TrainConfig, Path]:
    """Refuse bad options before anything is printed or written (``PhraseError``): the config
    resolved and validated, the corpus file readable, the run folder usable (a new run without
    ``force`` into a folder that holds one is refused); with ``resume`` and ``explicit`` (the
    options typed), a folder with no checkpoint or options that differ from the saved run
    (:func:`train` reads the checkpoint again to continue it). Returns (config, folder)."""
    cfg = config if resume else config.resolved()
    if out_dir is None:  # resume: the default directory of the model/tie typed (or gpt-tied)
        out_dir = default_out_dir(cfg if not resume else config.resolved())
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise PhraseError(phrase("train.out_is_file", out=out))
    if resume and not out.is_dir():  # refused before the lock would create the folder
        raise PhraseError(phrase("train.nothing_to_resume_no_folder", out=out))
    if resume and explicit is not None:
        check_resume_config(checkpoint.read(out)[0], explicit)
    if not resume and cfg.corpus is not None:
        check_corpus_path(cfg)
    if not resume and not force and out.is_dir():
        existing = describe_existing_run(out)
        if existing:
            raise existing_run_refusal(out, existing)
    return cfg, out


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
    cfg, out = check_options(config, out_dir, resume, force=force)
    if not resume and cfg.corpus is not None:
        cfg.corpus = public_domain.as_run_corpus(cfg.corpus)
    trainer = Trainer(cfg, out, reporter, on_step, resume_command, snapshots)
    with RunLock(out):
        trainer.setup(resume, explicit, force=force)
        return trainer.run()


__all__ = ["TrainConfig", "TrainResult", "Trainer", "train", "default_out_dir", "DEFAULTS",
           "unigram_baseline", "param_groups", "load_any_tokenizer", "make_reporter",
           "PlainReporter", "SilentReporter", "JsonReporter", "RunLock", "RunLocked",
           "check_options", "format_perplexity"]
