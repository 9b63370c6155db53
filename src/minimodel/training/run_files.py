"""The files of a run directory, and building what a run needs (corpus, tokenizer, model).

    DIR/model.safetensors    the latest weights (mm.save format + minimodel.train_step)
    DIR/tokenizer.json       the tokenizer (a CBOW run: its word vocabulary)
    DIR/run.json             config, tokenizer cache key, data sizes, baselines
    DIR/metrics.jsonl        one JSON object per evaluation (strict JSON: null, never NaN)
    DIR/loss.png             train / validation curves
    DIR/checkpoints/         weights + optimizer + RNG + step, committed as one unit
                             (see training/checkpoint.py)
    DIR/summary.json         final figures (written when the run completes)
    DIR/word_similarity.json CBOW only: SimLex-999 / WordSim-353 results
    DIR/previous/            the run this directory held before a `--force` re-run (older
                             ones in previous-2/, previous-3/...: never deleted)
    DIR/.lock                held while a process trains here (training/lock.py)
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from minimodel._fileio import atomic_write_json, atomic_write_text, require_file
from minimodel.data import check_vocab_match, load_corpus, public_domain
from minimodel.data.corpus import BUNDLED_CORPUS
from minimodel.diagnostics import effective_rank, parameter_accounting, participation_ratio
from minimodel.evaluation import evaluate_cbow
from minimodel.io import load, read_metadata, save
from minimodel.messages import Phrase, PhraseError, Prose, phrase
from minimodel.models import CBOW, GPT, CBOWConfig, GPTConfig, MaskedLM, MLMConfig
from minimodel.plotting import plot_losses
from minimodel.training import checkpoint
from minimodel.training.budget import check_fits
from minimodel.training.config import TrainConfig, explicit_differences
from minimodel.training.tasks import (TOKENIZER_FILE, build_tokenizer, load_any_tokenizer,
                                      make_task, save_any_tokenizer, split_text, tokenizer_key)

MODEL_FILE = checkpoint.MODEL_FILE
METRICS_FILE = "metrics.jsonl"
RUN_FILE = "run.json"
SUMMARY_FILE = "summary.json"
WORDSIM_FILE = "word_similarity.json"
PLOT_FILE = "loss.png"
PREVIOUS_DIR = "previous"
# What a run leaves in its directory (moved aside by a --force re-run).
RUN_OUTPUTS = (MODEL_FILE, checkpoint.CHECKPOINTS, METRICS_FILE, SUMMARY_FILE, WORDSIM_FILE,
               PLOT_FILE, checkpoint.STATE_JSON, checkpoint.STATE_NPZ)


@dataclass
class Run:
    tokenizer: Any
    task: Any
    model: Any
    baseline: float
    corpus_sha256: str


def corpus_name(cfg: TrainConfig) -> str:
    return cfg.corpus if cfg.corpus is not None else f"<bundled {BUNDLED_CORPUS}>"


def check_corpus_path(cfg: TrainConfig) -> None:
    """A clear ValueError/OSError when ``--corpus`` is missing, a folder, a loop... Called
    before the run directory is locked, so a typo is reported as a typo."""

    if public_domain.is_requested(cfg.corpus):
        public_domain.require_installed()
        return
    if cfg.corpus is not None and not os.path.lexists(cfg.corpus):
        raise PhraseError(phrase("train.no_corpus_file", corpus=cfg.corpus,
                                 name=public_domain.NAME))
    if cfg.corpus is not None:
        require_file(cfg.corpus, "corpus")


def read_corpus(cfg: TrainConfig) -> str:
    """The corpus text, with a clear ValueError for a missing path (exit code 2 in the CLI)."""

    if cfg.corpus == public_domain.NAME:  # a run stores a file's absolute path, so the bare
        return public_domain.load_public_domain_text()  # name is the named corpus, from any cwd
    check_corpus_path(cfg)
    return load_corpus(cfg.corpus)


def build_model(cfg: TrainConfig, vocab_size: int, rng: np.random.Generator) -> Any:
    """The model of ``cfg.model``; ``vocab_size`` always comes from the tokenizer."""
    if cfg.model == "gpt":
        return GPT(GPTConfig(vocab_size, cfg.block_size, cfg.n_layer, cfg.n_head, cfg.d_model,
                             tie_embeddings=cfg.tied), rng=rng)
    if cfg.model == "mlm":
        return MaskedLM(MLMConfig(vocab_size, cfg.block_size, cfg.n_layer, cfg.n_head,
                                  cfg.d_model, tie_embeddings=cfg.tied,
                                  head_transform=bool(cfg.head_transform)), rng=rng)
    return CBOW(CBOWConfig(vocab_size, cfg.d_model, cfg.window, tie_embeddings=cfg.tied), rng=rng)


def check_resume_config(info: dict[str, Any], explicit: dict[str, Any]) -> TrainConfig:
    """The saved config, refusing options typed on the command line that would change it."""
    saved = TrainConfig.from_dict(info["config"])
    diffs = explicit_differences(saved, explicit)
    if diffs:
        raise PhraseError(phrase("train.resume_options_differ", diffs=diffs))
    if explicit.get("eval_batches") is not None:
        saved.eval_batches = explicit["eval_batches"]
    return saved


def existing_run_refusal(out_dir: Path, existing: Phrase) -> PhraseError:
    """The error for a new run into a folder that holds one (``existing``: what
    :func:`describe_existing_run` said): continue it with --resume (unless it is finished or
    damaged), start over with --force, or choose another --out."""
    start_over = phrase("train.start_over", previous=previous_dir(out_dir))
    # a finished run or a damaged one cannot be continued: no --resume then
    can_resume = existing.key not in ("train.existing_finished", "train.existing_damaged")
    return PhraseError(phrase("train.refuse_resumable" if can_resume else "train.refuse_finished",
                              out=out_dir, existing=existing, start_over=start_over))


def describe_existing_run(out_dir: Path) -> Phrase | None:
    """"a finished run (step 1000/1000)", "an interrupted run (...)", or None if none is here
    (a Phrase: its key says which)."""
    summary = _read_json(out_dir / SUMMARY_FILE)
    try:
        current = checkpoint.latest(out_dir)
    except ValueError:
        return phrase("train.existing_damaged")
    state = _read_json(current / checkpoint.STATE_JSON) if current else \
        _read_json(out_dir / checkpoint.STATE_JSON)  # a run from minimodel <= 0.1
    steps = ((state or {}).get("config") or {}).get("steps")
    if summary:
        return phrase("train.existing_finished", step=summary.get("steps", "?"),
                      steps=steps or "?")
    if state:
        return phrase("train.existing_interrupted", step=state.get("step", "?"),
                      steps=steps or "?")
    if (out_dir / MODEL_FILE).is_file():
        return phrase("train.existing_model", file=MODEL_FILE)
    return None


def previous_dir(out_dir: Path) -> Path:
    """Where a --force re-run sets the current run aside: ``DIR/previous/``, or when that is
    taken by an earlier one, the first free of ``previous-2/``, ``previous-3/``... (never
    replaced: a run set aside is a learner's work too)."""
    target, number = out_dir / PREVIOUS_DIR, 1
    while target.exists():
        number += 1
        target = out_dir / f"{PREVIOUS_DIR}-{number}"
    return target


def set_aside_previous_run(out_dir: Path) -> Path:
    """Move the outputs of the run in ``out_dir`` to :func:`previous_dir` and return it; its
    tokenizer and run.json are copied along, so the moved model stays usable."""
    target = previous_dir(out_dir)
    staging = out_dir / f".{PREVIOUS_DIR}.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    for name in (TOKENIZER_FILE, RUN_FILE):
        if (out_dir / name).is_file():
            shutil.copy2(out_dir / name, staging / name)
    for name in RUN_OUTPUTS:
        if (out_dir / name).exists():
            os.replace(out_dir / name, staging / name)
    os.replace(staging, target)
    return target


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def prepare_run(cfg: TrainConfig, out_dir: Path, log: Callable[[Phrase], None],
                resume_info: dict[str, Any] | None = None, weights: Path | None = None,
                before_writing: Callable[[Path], None] | None = None) -> Run:
    """Corpus -> tokenizer -> task -> model, fresh or from the checkpoint of a resumed run.

    Nothing in ``out_dir`` is touched until the corpus is known to be usable; then
    ``before_writing(out_dir)`` runs (a --force re-run moves the earlier run aside there).
    """
    text = read_corpus(cfg)
    sha = hashlib.sha256(text.encode("utf-8")).hexdigest()
    name = corpus_name(cfg)
    train_text, _ = split_text(text, cfg.val_fraction)
    if resume_info is not None:
        if resume_info.get("corpus_sha256") != sha:
            raise ValueError(f"the corpus {name} changed since the run in {out_dir} started "
                             "(sha256 differs); resuming would train on different data. "
                             "Start a new run instead")
        tokenizer = load_any_tokenizer(out_dir / TOKENIZER_FILE)
        ckpt = weights if weights is not None else out_dir / MODEL_FILE
        step = read_metadata(ckpt).get("minimodel.train_step")
        if step != str(resume_info["step"]):
            raise ValueError(f"{ckpt} is from step {step} but the training state from step "
                             f"{resume_info['step']}: the checkpoint is damaged; start the run "
                             "again with --force")
        model = load(ckpt)
        check_vocab_match(model.config.vocab_size, tokenizer.vocab_size,
                          where=f"{ckpt} vs {out_dir / TOKENIZER_FILE}")
    else:
        cached = (_read_json(out_dir / RUN_FILE) or {}).get("tokenizer_key")
        tokenizer = build_tokenizer(cfg, train_text, out_dir, cached, log)
        check_fits(cfg, tokenizer.vocab_size)  # before allocating anything model-sized
        init_rng = np.random.default_rng(np.random.SeedSequence(cfg.seed).spawn(2)[0])
        model = build_model(cfg, tokenizer.vocab_size, init_rng)
    task = make_task(cfg, text, tokenizer, name)  # refuses a corpus too short to train on
    baseline = task.baseline()
    if resume_info is None:  # only now, when the data is known to be usable, touch files
        if before_writing is not None:
            before_writing(out_dir)
        save_any_tokenizer(tokenizer, out_dir / TOKENIZER_FILE)
    V = tokenizer.vocab_size
    info = {"config": cfg.to_dict(), "tokenizer_key": tokenizer_key(cfg, train_text),
            "corpus": name, "corpus_sha256": sha, "corpus_chars": len(text), "vocab_size": V,
            "train_tokens": int(len(task.train_ids)), "val_tokens": int(len(task.val_ids)),
            "unigram_baseline": baseline, "uniform_baseline": math.log(V),
            "parameters": model.num_params()}
    if cfg.corpus is None:   # run.json keeps the file's name; the log says it in the reader's language
        name = phrase("train.bundled_corpus", file=BUNDLED_CORPUS)
    atomic_write_json(out_dir / RUN_FILE, info)
    log(phrase("train.corpus_line", name=name, chars=len(text), vocab_size=V,
               kind=phrase("train.kind_word") if cfg.model == "cbow" else cfg.tokenizer,
               train_tokens=info["train_tokens"], val_tokens=info["val_tokens"]))
    log(phrase("train.model_line", model=cfg.model,
               tie=phrase("train.tied" if cfg.tied else "train.untied"),
               parameters=model.num_params(), unigram=Prose(baseline),
               uniform=Prose(math.log(V))))
    return Run(tokenizer, task, model, baseline, sha)


def save_model(model: Any, path: Path, step: int) -> None:
    """The weights at ``path`` (inside a checkpoint directory), tagged with the step."""
    save(model, path, extra_metadata={"minimodel.train_step": str(step),
                                      "minimodel.tokenizer": TOKENIZER_FILE})


# ----------------------------------------------------------------------------- metrics
def read_metrics(out_dir: Path, up_to_step: int | None = None) -> list[dict[str, Any]]:
    """The evaluation rows of a run; a damaged file is a clear error naming it and the line."""
    path = out_dir / METRICS_FILE
    if not path.is_file():
        return []
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            step = int(row["step"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path} line {number} is damaged ({exc}); repair or delete that "
                             "line (the metrics are only a log: the checkpoint is intact)") from None
        if up_to_step is None or step <= up_to_step:
            rows.append(row)
    return rows


def perplexity(loss: float) -> float | None:
    """exp(loss), or None when it overflows (a loss above ~700 nats/token means divergence)."""
    return math.exp(loss) if math.isfinite(loss) and loss < 700 else None


def _finite_or_none(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def write_metrics(out_dir: Path, rows: list[dict[str, Any]]) -> None:
    """Rewritten whole (atomically) rather than appended: a crash never leaves half a line.
    Strict JSON: a non-finite number is written as null (bare NaN is not JSON)."""
    text = "".join(json.dumps({k: _finite_or_none(v) for k, v in r.items()}, allow_nan=False)
                   + "\n" for r in rows)
    atomic_write_text(out_dir / METRICS_FILE, text)


def plot_run(out_dir: Path, metrics: list[dict[str, Any]], cfg: TrainConfig,
             baseline: float) -> None:
    plot_losses(metrics, out_dir / PLOT_FILE, title=f"{cfg.model} ({cfg.tie_label})",
                baseline=baseline)


# ----------------------------------------------------------------------------- summary
def embedding_matrices(model: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """(E, W): the input embedding and, for an untied model, the head's own matrix."""
    emb = model.in_emb if hasattr(model, "in_emb") else model.token_emb
    tied = model.config.tie_embeddings
    return emb.weight.data, (None if tied else model.lm_head.weight.data)


def make_summary(trainer: Any, val_full: float) -> dict[str, Any]:
    cfg, model = trainer.cfg, trainer.model
    acct = parameter_accounting(model)
    E, W = embedding_matrices(model)
    last = trainer.metrics[-1] if trainer.metrics else {}
    acc = trainer.acc
    summary: dict[str, Any] = {
        "model": cfg.model, "tied": cfg.tied, "steps": trainer.step,
        "negative": cfg.negative if cfg.model == "cbow" else None,
        "vocab_size": int(E.shape[0]), "d_model": int(E.shape[1]),
        "parameters": acct["parameters"], "parameters_if_untied": acct["parameters_if_untied"],
        "train_loss": last.get("train_loss"), "val_loss": val_full,
        "val_ppl": perplexity(val_full), "unigram_baseline": trainer.baseline,
        "uniform_baseline": math.log(E.shape[0]),
        "tokens_per_s": acc["total_tokens"] / max(acc["total_compute_s"], 1e-9),
        "train_time_s": acc["total_compute_s"], "elapsed_s": trainer.elapsed(),
        "erank_embedding": effective_rank(E), "pr_embedding": participation_ratio(E),
        "erank_head": effective_rank(W) if W is not None else None,
        "pr_head": participation_ratio(W) if W is not None else None,
    }
    if cfg.model == "cbow":
        results = evaluate_cbow(model, trainer.tokenizer)
        wordsim = {which: {name: r.to_dict() for name, r in sets.items()}
                   for which, sets in results.items()}
        atomic_write_json(trainer.out_dir / WORDSIM_FILE, wordsim)
        summary["word_similarity"] = {which: {name: {"spearman": d["spearman"],
                                                      "coverage": d["coverage"],
                                                      "covered": d["covered"], "pairs": d["pairs"]}
                                              for name, d in sets.items()}
                                      for which, sets in wordsim.items()}
        for which, sets in results.items():
            for r in sets.values():
                trainer.reporter.message(phrase("train.word_similarity", result=r.phrase(),
                                                which=phrase(f"train.vectors_{which}")))
    return summary


def write_summary(out_dir: Path, summary: dict[str, Any]) -> None:
    atomic_write_json(out_dir / SUMMARY_FILE, summary)


def read_summary(out_dir: Path) -> dict[str, Any]:
    return _read_json(out_dir / SUMMARY_FILE) or {}


def load_checkpoint(path: str | Path) -> tuple[Any, Any, Path]:
    """(model, tokenizer, checkpoint path) from a run directory or a ``.safetensors`` file.

    The tokenizer is ``tokenizer.json`` next to the checkpoint; a model/tokenizer vocabulary
    mismatch is refused with both sizes named.
    """

    path = Path(path)
    if path.is_dir():
        ckpt = path / MODEL_FILE
        if not ckpt.exists():
            raise ValueError(f"the directory {path} has no {MODEL_FILE}; give a run directory "
                             f"(e.g. runs/gpt-tied) or its {MODEL_FILE}")
    else:
        ckpt = path
    require_file(ckpt, "checkpoint")
    model = load(ckpt)
    tok_path = ckpt.parent / TOKENIZER_FILE
    tokenizer = load_any_tokenizer(tok_path)
    check_vocab_match(model.config.vocab_size, tokenizer.vocab_size,
                      where=f"{ckpt} vs {tok_path}")
    return model, tokenizer, ckpt
