"""The training loop: AdamW with warm-up + cosine LR, evaluation, checkpoints, exact resume.

One step::

    x, y   = task.sample(batch_rng)                    # (B, T) ids / targets
    loss   = model.loss(x, y)                          # mean cross-entropy, nats/token
    loss.backward();  clip_grad_norm(params, c)        # global L2 norm <= c
                                                       # (model.loss: F.batch_loss, two halves at once with kernels on)
    lr_t   = cosine_with_warmup(t, lr, warmup, steps, min_lr)
    AdamW step with weight decay on matrices only      # nanoGPT grouping: ndim >= 2

Why decay only matrices: decaying LayerNorm gains and biases pulls them towards 0, which
changes what the layer computes rather than regularising it (Loshchilov & Hutter 2019;
nanoGPT). The tied matrix is one parameter object, so it sits in exactly one group.

Ctrl-C: the first SIGINT only sets a flag; the loop stops at the next step boundary, saves a
checkpoint (model, optimizer, RNG, step) and tells you how to resume. A KeyboardInterrupt
raised from inside a step (e.g. from the ``on_step`` hook) is handled the same way; the batch
sampler's state at the start of the unfinished step is saved, so that step is redone.
"""

from __future__ import annotations

import math
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from minimodel._console import stdout_to_devnull
from minimodel.autograd import no_grad
from minimodel.diagnostics import effective_rank
from minimodel.labels import IGNORE_INDEX
from minimodel.messages import Phrase, PhraseError, SaysItself, phrase
from minimodel.optim import AdamW, clip_grad_norm, cosine_with_warmup
from minimodel.training import checkpoint
from minimodel.training import run_files as rf
from minimodel.training.config import DEFAULTS, TrainConfig
from minimodel.training.report import PlainReporter, SilentReporter
from minimodel.training.snapshots import Snapshots
from minimodel.training.state import rng_from_json, rng_state_to_json

BETAS = (0.9, 0.99)  # beta2 = 0.99 as nanoGPT's small character-level runs: few tokens/step


class Diverged(SaysItself, FloatingPointError):
    """The loss or the weights stopped being finite; the message says what was kept and what
    to try (a Phrase, said in the reader's language)."""


@dataclass
class TrainResult:
    """What a run produced. ``summary`` holds the final figures (see ``summary.json``)."""

    out_dir: Path
    config: TrainConfig
    step: int
    interrupted: bool = False
    summary: dict[str, Any] = field(default_factory=dict)
    metrics: list[dict[str, Any]] = field(default_factory=list)


class _SigintGuard:
    """First Ctrl-C: set ``requested`` (stop at the next step boundary). Second: raise now."""

    def __init__(self) -> None:
        self.requested = False
        self._old: Any = None

    def __enter__(self) -> "_SigintGuard":
        if threading.current_thread() is threading.main_thread():
            self._old = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc: Any) -> None:
        if self._old is not None:
            signal.signal(signal.SIGINT, self._old)


def param_groups(model: Any, weight_decay: float) -> list[dict[str, Any]]:
    """Two AdamW groups: matrices (ndim >= 2) with decay, vectors (biases, LN) without."""
    params = list(model.parameters())  # each tied object once
    return [{"params": [p for p in params if p.ndim >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0}]


class Trainer:
    """Runs one training job into ``out_dir``. Use :func:`minimodel.training.train`."""

    def __init__(self, cfg: TrainConfig, out_dir: Path, reporter: PlainReporter | None = None,
                 on_step: Callable[[int, float], None] | None = None,
                 resume_command: str | None = None, snapshots: bool = True) -> None:
        self.cfg = cfg
        self.keep_snapshots = snapshots
        self.out_dir = Path(out_dir)
        self.reporter = reporter if reporter is not None else SilentReporter()
        self.on_step = on_step
        # What an interrupted run tells the user to type (compare continues its own way).
        self.resume_command = resume_command or f"minimodel train --resume --out {self.out_dir}"

    # ------------------------------------------------------------------ setup
    def setup(self, resume: bool, explicit: dict[str, Any] | None = None,
              force: bool = False) -> None:
        """Build (or, with ``resume``, restore) everything a run needs.

        A directory that already holds a finished or interrupted run is refused unless
        ``force``; then its files are moved to ``DIR/previous/`` (or ``previous-2/``... when
        that is taken) once the new run's data is known to be usable — an earlier model is
        never deleted by a new run.
        """
        self.session_start = time.perf_counter()
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if resume:
            info, opt_sd, weights = checkpoint.read(self.out_dir)
            self.cfg = rf.check_resume_config(info, explicit or {})
            run = rf.prepare_run(self.cfg, self.out_dir, self.reporter.message, resume_info=info,
                                 weights=weights)
        else:
            existing = rf.describe_existing_run(self.out_dir)
            if existing and not force:
                raise rf.existing_run_refusal(self.out_dir, existing)
            moved_to: list[Path] = []
            run = rf.prepare_run(
                self.cfg, self.out_dir, self.reporter.message,
                before_writing=(lambda d: moved_to.append(rf.set_aside_previous_run(d)))
                if existing else None)
            if moved_to:
                self.reporter.message(phrase("train.moved_earlier", existing=existing,
                                             previous=moved_to[0]))
        self.tokenizer, self.task, self.model = run.tokenizer, run.task, run.model
        self.baseline, self.corpus_sha256 = run.baseline, run.corpus_sha256
        self.params = list(self.model.parameters())
        self.optimizer = AdamW(param_groups(self.model, self.cfg.weight_decay), lr=self.cfg.lr,
                               betas=BETAS, weight_decay=self.cfg.weight_decay)
        if resume:
            self.optimizer.load_state_dict(opt_sd)
            self.step = int(info["step"])
            self.batch_rng = rng_from_json(info["rng"])
            self.acc = dict(info["accumulators"])
            self.elapsed_before = float(info["elapsed"])
            self.metrics = rf.read_metrics(self.out_dir, up_to_step=self.step)
            self.reporter.message(phrase("train.resuming_from", step=self.step,
                                         steps=self.cfg.steps, out=self.out_dir))
        else:
            self.step = 0
            # Seed stream 0 initialises the model (run_files.prepare_run), 1 samples batches.
            seeds = np.random.SeedSequence(self.cfg.seed).spawn(2)
            self.batch_rng = np.random.default_rng(seeds[1])
            self.acc = {"loss_sum": 0.0, "loss_n": 0, "tokens": 0, "compute_s": 0.0,
                        "total_tokens": 0, "total_compute_s": 0.0}
            self.elapsed_before = 0.0
            self.metrics = []
        rf.write_metrics(self.out_dir, self.metrics)
        self.snapshots = (Snapshots.for_run(self.out_dir, self.model, self.task, self.cfg.steps)
                          if self.keep_snapshots else None)
        if self.snapshots is not None:
            self.snapshots.forget_after(self.step)  # frames a killed run took past its checkpoint
        self._mid_step = False
        self._updating = False
        self._rng_at_step_start = rng_state_to_json(self.batch_rng)

    # ------------------------------------------------------------------ one step / eval
    def lr_at(self, step: int) -> float:
        c = self.cfg
        return cosine_with_warmup(step, c.lr, c.warmup, c.steps, c.min_lr)

    def train_step(self, batch: tuple[np.ndarray, ...]) -> float:
        x, y, *extra = batch  # extra: CBOW's noise words with --negative
        self.model.train()
        # With kernels on, model.loss runs the batch's halves in two threads (F.batch_loss)
        loss_tensor = self.model.loss(x, y, *extra)
        loss_tensor.backward()
        loss = float(loss_tensor.data)
        if self.cfg.grad_clip > 0:
            clip_grad_norm(self.params, self.cfg.grad_clip)
        lr = self.lr_at(self.step)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self._updating = True  # an interrupt now would leave a half-updated model
        self.optimizer.step()
        self._updating = False
        self.optimizer.zero_grad()
        return loss

    def evaluate(self, max_batches: int | None) -> float:
        """Mean loss per scored target over the validation batches (weighted by targets)."""
        total, count = 0.0, 0
        self.model.eval()
        try:
            with no_grad():
                for x, y in self.task.eval_batches(max_batches):
                    loss = self.model.loss(x, y)  # no (N, V) logits
                    n = int(np.count_nonzero(np.asarray(y) != IGNORE_INDEX))
                    total += float(loss.data) * n
                    count += n
        finally:
            self.model.train()
        return total / max(count, 1)

    def elapsed(self) -> float:
        return self.elapsed_before + (time.perf_counter() - self.session_start)

    def _eval_row(self) -> dict[str, Any]:
        acc = self.acc
        val = self.evaluate(self.cfg.eval_batches)
        row = {"step": self.step,
               "train_loss": acc["loss_sum"] / max(acc["loss_n"], 1),
               "val_loss": val, "val_ppl": rf.perplexity(val),
               "lr": self.lr_at(self.step - 1),
               "tokens_per_s": acc["tokens"] / max(acc["compute_s"], 1e-9),
               "elapsed": self.elapsed()}
        # The effective rank over training (one SVD of V x d per evaluation): where a tied and
        # an untied matrix part ways, and where collapse would show.
        E, W = rf.embedding_matrices(self.model)
        if np.all(np.isfinite(E)):
            row["erank_embedding"] = effective_rank(E)
        if W is not None and np.all(np.isfinite(W)):
            row["erank_head"] = effective_rank(W)
        acc.update(loss_sum=0.0, loss_n=0, tokens=0, compute_s=0.0)
        return row

    def save_checkpoint(self, rng_state: dict[str, Any] | None = None) -> None:
        """Commit model + optimizer + run state as one unit (see ``training/checkpoint.py``).

        Weights that are no longer finite are never written: the last good checkpoint stays.
        """
        bad = [name for name, p in self.model.named_parameters() if not np.all(np.isfinite(p.data))]
        if bad:
            raise Diverged(phrase(
                "train.diverged_weights", step=self.step,
                names=", ".join(bad[:3]) + (" ..." if len(bad) > 3 else ""),
                kept=self._kept(), advice=self._divergence_advice()))
        info = {"config": self.cfg.to_dict(), "rng": rng_state or rng_state_to_json(self.batch_rng),
                "accumulators": self.acc, "elapsed": self.elapsed(),
                "corpus_sha256": self.corpus_sha256}
        checkpoint.commit(self.out_dir, self.step, self.optimizer.state_dict(), info,
                          lambda path: rf.save_model(self.model, path, self.step))

    def _kept(self) -> Phrase:
        """What a diverged run leaves: its last good checkpoint, or nothing yet."""
        try:
            folder = checkpoint.latest(self.out_dir)
        except ValueError:
            folder = None
        if folder is None:
            return phrase("train.kept_nothing")
        return phrase("train.kept_checkpoint", name=folder.name, out=self.out_dir)

    def _take_snapshot(self) -> None:
        """The token matrices and the gradient ledger at this step, if the schedule says so."""
        if self.snapshots is not None:
            self.snapshots.take_if_due(self.model, self.step)

    def _divergence_advice(self) -> Phrase:
        """A new learning rate worth trying: a tenth of this one, never above the model's
        default (a run at 1e9 is not helped by 1e8)."""
        c = self.cfg
        default = DEFAULTS[c.model]["lr"]
        suggested = min(c.lr / 10, default)
        return phrase("train.advice_default_lr" if suggested == default else "train.advice",
                      lr=c.lr, suggested=suggested, warmup=c.warmup,
                      clip=(phrase("train.clip_keep", clip=c.grad_clip) if c.grad_clip > 0
                            else phrase("train.clip_on")),
                      where=phrase("train.where_force" if self._has_checkpoint()
                                   else "train.where_same"))

    def _has_checkpoint(self) -> bool:
        try:
            return checkpoint.latest(self.out_dir) is not None
        except ValueError:
            return False

    # ------------------------------------------------------------------ the loop
    def run(self) -> TrainResult:
        cfg, acc, task = self.cfg, self.acc, self.task
        if self.step >= cfg.steps and (self.out_dir / rf.SUMMARY_FILE).is_file():
            self.reporter.message(phrase("train.already_trained", out=self.out_dir,
                                         step=self.step, steps=cfg.steps))
            return TrainResult(self.out_dir, cfg, self.step, summary=rf.read_summary(self.out_dir),
                               metrics=self.metrics)
        if self.step >= cfg.steps:  # cut after its last checkpoint's commit: finish it
            self.reporter.message(phrase("train.finishing_stopped_run", out=self.out_dir,
                                         step=self.step))
            return self._finish(committed=True)
        guard = _SigintGuard()
        try:
            # inside the try: a reader gone at the start event keeps a step-0 checkpoint
            self.reporter.start(cfg.steps, self.step)
            self._take_snapshot()  # step 0: the initialisation
            with guard:
                while self.step < cfg.steps:
                    if guard.requested:
                        raise KeyboardInterrupt
                    self._rng_at_step_start = rng_state_to_json(self.batch_rng)
                    self._mid_step = True
                    batch = task.sample(self.batch_rng)
                    t0 = time.perf_counter()
                    loss = self.train_step(batch)
                    dt = time.perf_counter() - t0
                    self.step += 1
                    self._mid_step = False
                    acc["loss_sum"] += loss
                    acc["loss_n"] += 1
                    acc["tokens"] += task.tokens_per_step
                    acc["compute_s"] += dt
                    acc["total_tokens"] += task.tokens_per_step
                    acc["total_compute_s"] += dt
                    if not math.isfinite(loss):
                        raise Diverged(phrase(
                            "train.diverged_loss", which=phrase("train.which_train"),
                            loss=loss, step=self.step, kept=self._kept(),
                            advice=self._divergence_advice()))
                    self.reporter.step(self.step, loss, task.tokens_per_step / max(dt, 1e-9))
                    if self.on_step is not None:
                        self.on_step(self.step, loss)
                    self._take_snapshot()
                    if self.step % cfg.eval_interval == 0 or self.step == cfg.steps:
                        row = self._eval_row()
                        if not math.isfinite(row["val_loss"]):
                            raise Diverged(phrase(
                                "train.diverged_loss", which=phrase("train.which_val"),
                                loss=row["val_loss"], step=self.step, kept=self._kept(),
                                advice=self._divergence_advice()))
                        self.metrics.append(row)
                        rf.write_metrics(self.out_dir, self.metrics)
                        self.reporter.eval(row)
                        if self.step < cfg.steps:
                            self.save_checkpoint()
        except KeyboardInterrupt:
            return self._interrupted()
        except BrokenPipeError:
            # The reader of our output went away (`train --json | head -2`): stop as after
            # Ctrl-C, with the checkpoint saved, and say so on stderr (stdout leads nowhere).
            stdout_to_devnull()
            self.reporter = PlainReporter(sys.stderr, self.reporter.lang)
            self.reporter.message(phrase("train.reader_gone"))
            return self._interrupted()
        finally:
            self.reporter.close()
        return self._finish()

    def _interrupted(self) -> TrainResult:
        if self._updating:
            self.reporter.message(phrase("train.interrupted_mid_update", step=self.step + 1,
                                         out=self.out_dir, command=self.resume_command))
            return TrainResult(self.out_dir, self.cfg, self.step, interrupted=True,
                               metrics=self.metrics)
        self.optimizer.zero_grad()
        try:
            self.save_checkpoint(self._rng_at_step_start if self._mid_step else None)
        except FloatingPointError as exc:  # diverged before the interrupt: keep the last good one
            self.reporter.message(phrase("train.interrupted_diverged", step=self.step,
                                         problem=exc))
            return TrainResult(self.out_dir, self.cfg, self.step, interrupted=True,
                               metrics=self.metrics)
        rf.plot_run(self.out_dir, self.metrics, self.cfg, self.baseline)
        self.reporter.message(phrase("train.interrupted", step=self.step, steps=self.cfg.steps,
                                     out=self.out_dir, command=self.resume_command))
        return TrainResult(self.out_dir, self.cfg, self.step, interrupted=True,
                           metrics=self.metrics)

    def _finish(self, committed: bool = False) -> TrainResult:
        """The final checkpoint (``committed``: already the current one, only publish it),
        the plot and summary.json, each an idempotent step a resume can redo."""
        self.reporter.message(phrase("train.evaluating_full"))
        val_full = self.evaluate(None)  # the whole validation split, the headline figure
        if not math.isfinite(val_full):
            raise Diverged(phrase("train.diverged_full_val", loss=val_full,
                                  advice=self._divergence_advice()))
        if committed:
            checkpoint.publish_model(checkpoint.latest(self.out_dir) / checkpoint.MODEL_FILE,
                                     self.out_dir / checkpoint.MODEL_FILE)
            checkpoint.sweep(self.out_dir)
        else:
            self.save_checkpoint()
        rf.plot_run(self.out_dir, self.metrics, self.cfg, self.baseline)
        summary = rf.make_summary(self, val_full)
        rf.write_summary(self.out_dir, summary)
        return TrainResult(self.out_dir, self.cfg, self.step, summary=summary,
                           metrics=self.metrics)

