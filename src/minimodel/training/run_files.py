"""The files of a run directory, and building what a run needs (corpus, tokenizer, model).

    DIR/model.safetensors    mm.save format + minimodel.train_step metadata
    DIR/tokenizer.json       the tokenizer (a CBOW run: its word vocabulary)
    DIR/run.json             config, tokenizer cache key, data sizes, baselines
    DIR/metrics.jsonl        one JSON object per evaluation
    DIR/loss.png             train / validation curves
    DIR/train_state.{json,npz}  optimizer + RNG + step (see training/state.py)
    DIR/summary.json         final figures (written when the run completes)
    DIR/word_similarity.json CBOW only: SimLex-999 / WordSim-353 results
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np

from minimodel._fileio import atomic_write_json, atomic_write_text
from minimodel.data import check_vocab_match, load_corpus
from minimodel.data.corpus import BUNDLED_CORPUS
from minimodel.training.config import TrainConfig, explicit_differences
from minimodel.training.state import STATE_JSON, STATE_NPZ
from minimodel.training.tasks import (TOKENIZER_FILE, build_tokenizer, load_any_tokenizer,
                                      make_task, save_any_tokenizer, split_text, tokenizer_key)

MODEL_FILE = "model.safetensors"
METRICS_FILE = "metrics.jsonl"
RUN_FILE = "run.json"
SUMMARY_FILE = "summary.json"
WORDSIM_FILE = "word_similarity.json"
PLOT_FILE = "loss.png"


@dataclass
class Run:
    tokenizer: Any
    task: Any
    model: Any
    baseline: float
    corpus_sha256: str


def corpus_name(cfg: TrainConfig) -> str:
    return cfg.corpus if cfg.corpus is not None else f"<bundled {BUNDLED_CORPUS}>"


def read_corpus(cfg: TrainConfig) -> str:
    """The corpus text, with a clear ValueError for a missing path (exit code 2 in the CLI)."""
    if cfg.corpus is not None and not Path(cfg.corpus).exists():
        raise ValueError(f"corpus file {cfg.corpus} does not exist; give a UTF-8 text file, "
                         "or leave out --corpus for the bundled Shakespeare corpus")
    return load_corpus(cfg.corpus)


def build_model(cfg: TrainConfig, vocab_size: int, rng: np.random.Generator) -> Any:
    """The model of ``cfg.model``; ``vocab_size`` always comes from the tokenizer."""
    from minimodel.models import CBOW, GPT, MaskedLM, CBOWConfig, GPTConfig, MLMConfig

    if cfg.model == "gpt":
        return GPT(GPTConfig(vocab_size, cfg.block_size, cfg.n_layer, cfg.n_head, cfg.d_model,
                             tie_embeddings=cfg.tied), rng=rng)
    if cfg.model == "mlm":
        return MaskedLM(MLMConfig(vocab_size, cfg.block_size, cfg.n_layer, cfg.n_head,
                                  cfg.d_model, tie_embeddings=cfg.tied), rng=rng)
    return CBOW(CBOWConfig(vocab_size, cfg.d_model, cfg.window, tie_embeddings=cfg.tied), rng=rng)


def check_resume_config(info: dict[str, Any], explicit: dict[str, Any]) -> TrainConfig:
    """The saved config, refusing options typed on the command line that would change it."""
    saved = TrainConfig.from_dict(info["config"])
    diffs = explicit_differences(saved, explicit)
    if diffs:
        raise ValueError("--resume continues a run with its saved settings, but these options "
                         "differ: " + "; ".join(diffs) + ". Drop them, or start a new run "
                         "with a different --out")
    if explicit.get("eval_batches") is not None:
        saved.eval_batches = explicit["eval_batches"]
    return saved


def clear_run(out_dir: Path) -> None:
    """Remove the files of an earlier run (the tokenizer cache and run.json are kept)."""
    for name in (STATE_JSON, STATE_NPZ, METRICS_FILE, SUMMARY_FILE, WORDSIM_FILE, MODEL_FILE,
                 PLOT_FILE):
        (out_dir / name).unlink(missing_ok=True)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def prepare_run(cfg: TrainConfig, out_dir: Path, log: Callable[[str], None],
                resume_info: dict[str, Any] | None = None) -> Run:
    """Corpus -> tokenizer -> task -> model, fresh or from the checkpoint of a resumed run."""
    import minimodel as mm
    from minimodel.io import read_metadata

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
        ckpt = out_dir / MODEL_FILE
        step = read_metadata(ckpt).get("minimodel.train_step")
        if step != str(resume_info["step"]):
            raise ValueError(f"{ckpt} is from step {step} but the training state from step "
                             f"{resume_info['step']}: the last save was cut short; start the "
                             "run again without --resume")
        model = mm.load(ckpt)
        check_vocab_match(model.config.vocab_size, tokenizer.vocab_size,
                          where=f"{ckpt} vs {out_dir / TOKENIZER_FILE}")
    else:
        cached = (_read_json(out_dir / RUN_FILE) or {}).get("tokenizer_key")
        tokenizer = build_tokenizer(cfg, train_text, out_dir, cached, log)
        init_rng = np.random.default_rng(np.random.SeedSequence(cfg.seed).spawn(2)[0])
        model = build_model(cfg, tokenizer.vocab_size, init_rng)
    task = make_task(cfg, text, tokenizer, name)  # refuses a corpus too short to train on
    baseline = task.baseline()
    if resume_info is None:  # only now, when the data is known to be usable, touch files
        save_any_tokenizer(tokenizer, out_dir / TOKENIZER_FILE)
    V = tokenizer.vocab_size
    info = {"config": cfg.to_dict(), "tokenizer_key": tokenizer_key(cfg, train_text),
            "corpus": name, "corpus_sha256": sha, "corpus_chars": len(text), "vocab_size": V,
            "train_tokens": int(len(task.train_ids)), "val_tokens": int(len(task.val_ids)),
            "unigram_baseline": baseline, "uniform_baseline": math.log(V),
            "parameters": model.num_params()}
    atomic_write_json(out_dir / RUN_FILE, info)
    kind = "word" if cfg.model == "cbow" else cfg.tokenizer
    log(f"corpus {name}: {len(text):,} chars -> {kind} vocabulary of {V} -> "
        f"{info['train_tokens']:,} train / {info['val_tokens']:,} val tokens")
    log(f"{cfg.model} ({cfg.tie_label}): {model.num_params():,} parameters; baselines: unigram "
        f"{baseline:.4f}, uniform ln V {math.log(V):.4f} nats/token")
    return Run(tokenizer, task, model, baseline, sha)


def save_model(model: Any, out_dir: Path, step: int) -> None:
    from minimodel.io import save

    save(model, out_dir / MODEL_FILE, extra_metadata={"minimodel.train_step": str(step),
                                                      "minimodel.tokenizer": TOKENIZER_FILE})


# ----------------------------------------------------------------------------- metrics
def read_metrics(out_dir: Path, up_to_step: int | None = None) -> list[dict[str, Any]]:
    path = out_dir / METRICS_FILE
    if not path.is_file():
        return []
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]
    return [r for r in rows if up_to_step is None or r["step"] <= up_to_step]


def write_metrics(out_dir: Path, rows: list[dict[str, Any]]) -> None:
    # Rewritten whole (atomically) rather than appended: a crash never leaves half a line.
    atomic_write_text(out_dir / METRICS_FILE, "".join(json.dumps(r) + "\n" for r in rows))


def plot_run(out_dir: Path, metrics: list[dict[str, Any]], cfg: TrainConfig,
             baseline: float) -> None:
    from minimodel.plotting import plot_losses

    plot_losses(metrics, out_dir / PLOT_FILE, title=f"{cfg.model} ({cfg.tie_label})",
                baseline=baseline)


# ----------------------------------------------------------------------------- summary
def embedding_matrices(model: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """(E, W): the input embedding and, for an untied model, the head's own matrix."""
    emb = model.in_emb if hasattr(model, "in_emb") else model.token_emb
    tied = model.config.tie_embeddings
    return emb.weight.data, (None if tied else model.lm_head.weight.data)


def make_summary(trainer: Any, val_full: float) -> dict[str, Any]:
    from minimodel.diagnostics import effective_rank, parameter_accounting, participation_ratio

    cfg, model = trainer.cfg, trainer.model
    acct = parameter_accounting(model)
    E, W = embedding_matrices(model)
    last = trainer.metrics[-1] if trainer.metrics else {}
    acc = trainer.acc
    summary: dict[str, Any] = {
        "model": cfg.model, "tied": cfg.tied, "steps": trainer.step,
        "vocab_size": int(E.shape[0]), "d_model": int(E.shape[1]),
        "parameters": acct["parameters"], "parameters_if_untied": acct["parameters_if_untied"],
        "train_loss": last.get("train_loss"), "val_loss": val_full,
        "val_ppl": math.exp(min(val_full, 700.0)), "unigram_baseline": trainer.baseline,
        "uniform_baseline": math.log(E.shape[0]),
        "tokens_per_s": acc["total_tokens"] / max(acc["total_compute_s"], 1e-9),
        "train_time_s": acc["total_compute_s"], "elapsed_s": trainer.elapsed(),
        "erank_embedding": effective_rank(E), "pr_embedding": participation_ratio(E),
        "erank_head": effective_rank(W) if W is not None else None,
        "pr_head": participation_ratio(W) if W is not None else None,
    }
    if cfg.model == "cbow":
        from minimodel.evaluation import evaluate_cbow

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
                trainer.reporter.message(f"word similarity ({which} vectors) " + r.describe())
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
    import minimodel as mm

    path = Path(path)
    ckpt = path / MODEL_FILE if path.is_dir() else path
    if not ckpt.is_file():
        where = f"the directory {path} has no {MODEL_FILE}" if path.is_dir() else \
            f"checkpoint {path} does not exist"
        raise ValueError(f"{where}; give a run directory (e.g. runs/gpt-tied) or its "
                         f"{MODEL_FILE}")
    model = mm.load(ckpt)
    tok_path = ckpt.parent / TOKENIZER_FILE
    tokenizer = load_any_tokenizer(tok_path)
    check_vocab_match(model.config.vocab_size, tokenizer.vocab_size,
                      where=f"{ckpt} vs {tok_path}")
    return model, tokenizer, ckpt
