"""TrainConfig: every setting of a training run, with per-model defaults.

Fields left ``None`` are filled by :meth:`TrainConfig.resolved` from ``DEFAULTS[model]``; the
CLI passes ``None`` for every option the user did not type, which is how ``--resume`` can
tell "left at its default" from "asked for something different".

The GPT defaults were chosen by measurement on a busy 2-core CPU (docs/results.md): at a
fixed ~3-minute budget a shallow, wide model (2 blocks, d=128) trained for more steps beat
deeper or narrower ones, and a BPE of 1024 beat byte-level and BPE-512 in loss per character.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from minimodel.data import public_domain
from minimodel.messages import Phrase, PhraseError, phrase

MODELS = ("gpt", "mlm", "cbow")
TOKENIZERS = ("byte", "bpe")

# Per-model defaults. Why these values: see the module docstring and docs/results.md.
DEFAULTS: dict[str, dict[str, Any]] = {
    "gpt": dict(tied=True, tokenizer="bpe", vocab_size=1024, d_model=128, n_layer=2, n_head=4,
                block_size=128, batch_size=16, steps=1000, lr=3e-3, min_lr=3e-4, warmup=100,
                weight_decay=0.1, grad_clip=1.0, eval_interval=100, eval_batches=8, seed=1337,
                window=None, min_count=None, mask_prob=None, negative=None,
                head_transform=None),
    "mlm": dict(tied=True, tokenizer="bpe", vocab_size=1024, d_model=128, n_layer=2, n_head=4,
                block_size=128, batch_size=16, steps=1000, lr=3e-3, min_lr=3e-4, warmup=100,
                weight_decay=0.1, grad_clip=1.0, eval_interval=100, eval_batches=8, seed=1337,
                window=None, min_count=None, mask_prob=0.15, negative=None,
                # BERT's dense + GELU + LayerNorm before the tied decoder: the head of every
                # transformers masked LM, so the model exports exactly (MegatronBertForMaskedLM)
                head_transform=True),
    # CBOW: word2vec is untied by default; sizes give ~4 epochs over the ~188k-word corpus.
    "cbow": dict(tied=False, tokenizer="word", vocab_size=None, d_model=64, n_layer=None,
                 n_head=None, block_size=None, batch_size=256, steps=3000, lr=1e-2, min_lr=1e-3,
                 warmup=100, weight_decay=0.0, grad_clip=1.0, eval_interval=250, eval_batches=16,
                 seed=1337, window=2, min_count=3, mask_prob=None, negative=0,
                 head_transform=None),
}

# Settings that do not change the trajectory of a run: may differ on --resume.
NON_TRAJECTORY = ("eval_batches",)


@dataclass
class TrainConfig:
    """Settings of one run. ``None`` means "the default for this model" (see ``DEFAULTS``)."""

    model: str = "gpt"
    tied: bool | None = None
    corpus: str | None = None  # None: the bundled Shakespeare corpus
    tokenizer: str | None = None  # "byte" | "bpe" (GPT/MLM); CBOW always uses words
    vocab_size: int | None = None  # BPE only; the model's V comes from the tokenizer
    d_model: int | None = None
    n_layer: int | None = None
    n_head: int | None = None
    block_size: int | None = None
    batch_size: int | None = None
    steps: int | None = None
    lr: float | None = None
    min_lr: float | None = None
    warmup: int | None = None
    weight_decay: float | None = None
    grad_clip: float | None = None
    eval_interval: int | None = None
    eval_batches: int | None = None
    seed: int | None = None
    window: int | None = None  # CBOW context words on each side
    min_count: int | None = None  # CBOW: rarer words become [UNK]
    mask_prob: float | None = None  # MLM: fraction of positions that become targets
    negative: int | None = None  # CBOW: noise words per example (0: the full softmax)
    head_transform: bool | None = None  # MLM: BERT's dense + GELU + LayerNorm before the head
    val_fraction: float = 0.1

    def resolved(self) -> "TrainConfig":
        """A copy with every ``None`` replaced by the model's default, then validated."""
        if self.model not in MODELS:
            raise PhraseError(phrase("config.model_choice", choices=str(list(MODELS)),
                                     value=repr(self.model)))
        defaults = DEFAULTS[self.model]
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        # An option this model does not use (default None) is refused, not silently ignored.
        unused = [n for n, d in defaults.items() if d is None and values[n] is not None]
        if unused:
            raise PhraseError(phrase(
                "config.unused_many" if len(unused) > 1 else "config.unused_one",
                flags=", ".join(_flag(n) for n in unused), model=self.model,
                hint=phrase("config.hint_min_count") if "vocab_size" in unused else ""))
        for name, default in defaults.items():
            if values[name] is None:
                values[name] = default
        if self.warmup is None and isinstance(values["steps"], int):
            # A short run should still reach its peak LR: warm up over at most 10 % of it.
            values["warmup"] = min(values["warmup"], values["steps"] // 10)
        if self.model == "gpt" or self.model == "mlm":
            if values["tokenizer"] not in TOKENIZERS:
                raise PhraseError(phrase("config.tokenizer_choice", choices=str(list(TOKENIZERS)),
                                         value=repr(values["tokenizer"])))
            if values["tokenizer"] == "byte":
                if self.vocab_size is not None:
                    raise PhraseError(phrase("config.vocab_size_byte", value=self.vocab_size))
                values["vocab_size"] = None
        elif self.tokenizer not in (None, "word"):
            raise PhraseError(phrase("config.cbow_tokenizer", value=repr(self.tokenizer)))
        cfg = TrainConfig(**values)
        cfg._validate()
        return cfg

    def _validate(self) -> None:
        positive_ints = ["d_model", "batch_size", "steps", "eval_interval", "eval_batches"]
        if self.model != "cbow":
            positive_ints += ["n_layer", "n_head", "block_size"]
        else:
            positive_ints += ["window", "min_count"]
        for name in positive_ints:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise PhraseError(phrase("config.positive_int", flag=_flag(name),
                                         value=repr(value)))
        if self.model == "cbow" and (isinstance(self.negative, bool)
                                     or not isinstance(self.negative, int) or self.negative < 0):
            raise PhraseError(phrase("config.negative", value=repr(self.negative)))
        if self.model != "cbow" and self.d_model % self.n_head:
            raise PhraseError(phrase("config.divisible", d_model=self.d_model,
                                     n_head=self.n_head))
        for name in ("lr", "min_lr", "weight_decay", "grad_clip", "mask_prob", "val_fraction"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                raise PhraseError(phrase("config.finite", flag=_flag(name), value=repr(value)))
        for name in ("min_lr", "weight_decay", "grad_clip"):
            if getattr(self, name) < 0:
                raise PhraseError(phrase("config.non_negative", flag=_flag(name),
                                         value=getattr(self, name)))
        if self.lr <= 0:
            raise PhraseError(phrase("config.lr_positive", lr=self.lr))
        if self.min_lr > self.lr:
            raise PhraseError(phrase("config.min_lr_above", min_lr=self.min_lr, lr=self.lr))
        if isinstance(self.warmup, bool) or not isinstance(self.warmup, int) or self.warmup < 0:
            raise PhraseError(phrase("config.warmup_int", value=repr(self.warmup)))
        if self.warmup > self.steps:
            raise PhraseError(phrase("config.warmup_beyond", warmup=self.warmup,
                                     steps=self.steps, suggested=self.steps // 10))
        if not isinstance(self.seed, int) or isinstance(self.seed, bool) or self.seed < 0:
            raise PhraseError(phrase("config.seed", value=repr(self.seed)))
        if not 0.0 < self.val_fraction < 1.0:
            raise PhraseError(phrase("config.val_fraction", value=self.val_fraction))
        if self.mask_prob is not None and not 0.0 < self.mask_prob <= 1.0:
            raise PhraseError(phrase("config.mask_prob", value=self.mask_prob))
        if self.vocab_size is not None and self.vocab_size < 257:
            raise PhraseError(phrase("config.vocab_size_small", value=self.vocab_size))

    @property
    def tie_label(self) -> str:
        return "tied" if self.tied else "untied"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TrainConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise PhraseError(phrase("config.unknown_settings", names=str(sorted(unknown))))
        if data.get("model") == "mlm" and "head_transform" not in data:
            data = {**data, "head_transform": False}  # runs made before the option existed
        return cls(**data)


def _flag(name: str) -> str:
    """The command-line flag of a field: ``d_model`` -> ``--d-model``."""
    return "--" + name.replace("_", "-")


def explicit_differences(saved: TrainConfig, explicit: dict[str, Any]) -> list[Phrase]:
    """The options the user typed (``explicit``: name -> value) that differ from a saved run."""
    out = []
    for name, value in explicit.items():
        if value is None or name in NON_TRAJECTORY:
            continue
        if name == "corpus":
            value = public_domain.as_run_corpus(value)
        if value != getattr(saved, name):
            out.append(phrase("config.differs", flag=_flag(name), value=repr(value),
                              saved=repr(getattr(saved, name))))
    return out
