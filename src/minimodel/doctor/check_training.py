"""For minimodel runs: how far the run trained, and the training state of the tie (optimizer,
weight decay, gradient ledger).

A run folder keeps the optimizer beside the weights (``checkpoints/step-N/train_state.*``).
Its saved ``param_groups`` name parameters by position and its moments (``exp_avg``) have the
shape of their parameter, so the file alone shows how many times the optimizer holds the
(V, d) matrix. A tied model has one such matrix; an optimizer that holds it twice updates it
twice per step (twice the learning rate, twice the weight decay). The ledger (:mod:`.ledger`) then splits one batch's gradient of E
into its lookup and head paths, by token frequency.
"""

from __future__ import annotations

import shlex
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from minimodel.doctor.findings import INFO, OK, PROBLEM, SKIPPED, Finding
from minimodel.doctor.ledger import SUM_TOLERANCE, frequency_buckets, gradient_ledger, shares
from minimodel.doctor.subject import Subject
from minimodel.messages import Prose

LEDGER_TEXT_CHARS = 200_000  # enough text for token frequencies, quick to encode


def step_folder(s: Subject) -> Path | None:
    """The checkpoint directory given (``RUN/checkpoints/step-N``), if one was."""
    from minimodel.training import checkpoint

    here = s.files.path if s.files.path.is_dir() else s.files.path.parent
    if here.parent.name == checkpoint.CHECKPOINTS and (here / checkpoint.STATE_JSON).is_file():
        return here
    return None


def run_folder(s: Subject) -> Path | None:
    """The run folder of a minimodel checkpoint, when it has a saved training state."""
    from minimodel.training import checkpoint

    if s.files.kind != "minimodel":
        return None
    folder = s.files.folder
    if step_folder(s) is not None or (folder / checkpoint.CHECKPOINTS / checkpoint.LATEST
                                      ).is_file() or (folder / checkpoint.STATE_JSON).is_file():
        return folder
    return None


def check_training(s: Subject) -> list[Finding]:
    from minimodel.training import checkpoint

    folder = run_folder(s)
    if folder is None:
        return []
    step = step_folder(s)  # a checkpoint directory given: its own state, not LATEST's
    info, opt_sd, weights = checkpoint.read_step(step) if step else checkpoint.read(folder)
    return [_optimizer_finding(s, opt_sd), _ledger_finding(s, info, weights)]


def check_progress(s: Subject) -> list[Finding]:
    """How far the run got: the report's first line, before the tie.

    A run stopped before its first step (Ctrl-C, or ``train | head`` closing the pipe at
    once) still saves a checkpoint and a model: its weights are the random initialisation,
    which every other check finds healthy, so it is said first, as a problem. A run stopped
    part-way is only a fact worth knowing (its model is the last checkpoint's)."""
    from minimodel.training import checkpoint

    folder = run_folder(s)
    if folder is None:
        return []
    step = step_folder(s)
    info = checkpoint.read_step(step)[0] if step else checkpoint.read(folder)[0]
    done, steps = int(info["step"]), int(info["config"]["steps"])
    values = {"step": done, "steps": steps,
              "command": shlex.join(["minimodel", "train", "--resume", "--out", str(folder)])}
    if done == 0:
        return [Finding("training", PROBLEM, "training.never_trained", values)]
    if step is None and done < steps:  # a checkpoint folder given is part-way by design
        return [Finding("training", INFO, "training.stopped_early", values)]
    return []


def _optimizer_finding(s: Subject, opt_sd: dict[str, Any]) -> Finding:
    """How many optimizer entries hold a (V, d) matrix, against how many the model has."""
    shape = tuple(s.E.shape)
    # How many parameters of that shape the model has: its state_dict lists a tied matrix
    # once (tied: E; untied: E and W; plus any other tensor that happens to be V x d).
    matrices = sum(1 for t in s.files.tensors.values() if tuple(t.shape) == shape)
    entries = [(i, g.get("weight_decay", 0.0)) for g in opt_sd["param_groups"]
               for i in g["params"]]
    repeated = [i for i, n in Counter(i for i, _ in entries).items() if n > 1]
    moments = {int(i): st.get("exp_avg") for i, st in opt_sd["state"].items()}
    holding = [(i, wd) for i, wd in entries
               if moments.get(int(i)) is not None and tuple(moments[int(i)].shape) == shape]
    values = {"shape": "x".join(map(str, shape)), "entries": len(holding),
              "matrices": matrices, "decays": Prose(tuple(wd for _, wd in holding)),
              "repeated": len(repeated)}
    data = {"entries_holding_vd": [int(i) for i, _ in holding], "repeated_indices": repeated}
    if len(holding) > matrices or repeated:
        return Finding("optimizer", PROBLEM, "optimizer.twice", values, data)
    return Finding("optimizer", OK, "optimizer.once", values, data)


def _ledger_finding(s: Subject, info: dict[str, Any], weights: Path) -> Finding:
    import minimodel as mm
    from minimodel.data import get_batch
    from minimodel.training import run_files
    from minimodel.training.config import TrainConfig
    from minimodel.training.tasks import TOKENIZER_FILE, load_any_tokenizer

    model = mm.load(weights).eval()
    if type(model).__name__ != "GPT" or not model.config.tie_embeddings:
        return Finding("ledger", SKIPPED, "ledger.not_tied_gpt", {"model": type(model).__name__})
    cfg = TrainConfig.from_dict(info["config"])
    try:
        text = run_files.read_corpus(cfg)[:LEDGER_TEXT_CHARS]
    except ValueError as exc:
        return Finding("ledger", SKIPPED, "ledger.no_corpus", {"why": str(exc)})
    tokenizer = load_any_tokenizer(s.files.folder / TOKENIZER_FILE)
    ids = np.asarray(tokenizer.encode(text), dtype=np.int64)
    counts = np.bincount(ids, minlength=model.config.vocab_size)
    x, y = get_batch(ids, cfg.batch_size, min(cfg.block_size, len(ids) - 1), rng=0)  # (B, T)
    ledger = gradient_ledger(model, x, y)
    table = shares(ledger, frequency_buckets(counts))
    values = {f"{k}_share": f"{100 * v['lookup_share']:.0f}%" for k, v in table.items()}
    values.update({f"{k}_rows": v["rows"] for k, v in table.items()},
                  batch=f"{x.shape[0]}x{x.shape[1]}", error=f"{ledger.sum_error:.1e}")
    data = {"buckets": table, "sum_error": ledger.sum_error, "batch_shape": list(x.shape)}
    if ledger.sum_error > SUM_TOLERANCE:
        return Finding("ledger", PROBLEM, "ledger.sum_mismatch", values, data)
    return Finding("ledger", OK, "ledger.shares", values, data)
