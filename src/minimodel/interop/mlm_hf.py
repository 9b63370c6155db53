"""minimodel MaskedLM <-> Hugging Face ``MegatronBertForMaskedLM``: the same pre-LN encoder.

Why MegatronBERT. Our MaskedLM is GPT's trunk without the causal mask: token + learned
absolute positions (no LayerNorm on the embeddings), pre-LN blocks with the tanh GELU, a
final LayerNorm, then the head. Among transformers' masked LMs only MegatronBERT has all of
that: BERT and RoBERTa are post-LN; RoBERTa-PreLayerNorm normalises the embeddings and offsets
positions by the padding index; ESM hard-codes the erf GELU. Like every one of them,
MegatronBERT's head starts with BERT's transform (dense + activation + LayerNorm), which is
why the export needs a MaskedLM built with ``head_transform=True`` (the CLI's default).

    ours                               MegatronBERT (prefix bert.encoder.layer.i. = L.)
    token_emb.weight       (V, d)      bert.embeddings.word_embeddings.weight      as is
    pos_emb.weight         (T, d)      bert.embeddings.position_embeddings.weight  as is
    (none)                             bert.embeddings.token_type_embeddings       zeros (1, d)
    blocks.i.ln_1.*                    L.attention.ln.*
    blocks.i.attn.c_attn   (3d, d)     L.attention.self.{query,key,value} (d, d)   rows split in 3
    blocks.i.attn.c_proj               L.attention.output.dense
    blocks.i.ln_2.*                    L.ln.*
    blocks.i.mlp.c_fc / c_proj         L.intermediate.dense / L.output.dense
    ln_f.*                             bert.encoder.ln.*
    head_transform.dense.* / ln.*      cls.predictions.transform.dense.* / LayerNorm.*
    (none)                             cls.predictions.bias                         zeros (V,)
    lm_head.weight (untied only)       cls.predictions.decoder.weight (+ .bias, zeros)

Both sides store Linear weights as (out, in), so nothing is transposed. The tie crosses over
as ``tie_word_embeddings``: a tied model stores E once and transformers makes the decoder
share it; an untied one stores both. A model without biases or LayerNorm gains exports the
neutral values (zeros, ones), which leaves every logit unchanged.

One difference appears only when training continues in PyTorch: BERT-style embeddings are
built with ``padding_idx = pad_token_id``, so the lookup path never updates the ``[PAD]`` row
(the decoder path still does). minimodel's MLM never feeds ``[PAD]`` (it trains on full
blocks), so the two agree on every row a real batch touches.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from minimodel.interop._files import (build_with_state, check_layers_and_values,
                                      config_setting, config_value_problems, load_hf_weights,
                                      read_json, tokenizer_for_export, write_hf_folder)
from minimodel.interop.gpt2 import LAYER_NORM_EPS, TANH_GELU_NAMES, special_token_ids
from minimodel.io import check_config_bounds
from minimodel.models import MaskedLM, MLMConfig

MODEL_TYPE = "megatron-bert"
_LAYER = "bert.encoder.layer.{i}."
# (our module inside blocks.i, MegatronBERT module inside layer i) for the plain Linears.
_LINEARS = (("attn.c_proj", "attention.output.dense"), ("mlp.c_fc", "intermediate.dense"),
            ("mlp.c_proj", "output.dense"))
_QKV = ("query", "key", "value")  # the three row blocks of our fused c_attn, in order


def _check_exportable(model: MaskedLM) -> None:
    c = model.config
    missing = [why for flag, why in (
        (c.head_transform, "head_transform=True (BERT's dense + GELU + LayerNorm before the "
                           "decoder; every transformers masked LM has it)"),
        (c.final_ln, "final_ln=True (MegatronBERT always applies a final LayerNorm)")) if not flag]
    if missing:
        raise ValueError("this MaskedLM cannot be written as a MegatronBertForMaskedLM with the "
                         "same logits: it needs " + " and ".join(missing) + ". Train one with "
                         "`minimodel train --model mlm` (the head transform is the default) or "
                         "build MLMConfig(..., head_transform=True)")
    model.check_tie_matches_config()


def hf_state_dict_mlm(model: MaskedLM, dtype: Any = np.float32) -> dict[str, np.ndarray]:
    """The model's tensors under MegatronBERT names, in ``dtype`` (see the module table)."""
    _check_exportable(model)
    c, own = model.config, model.state_dict()
    d, V = c.d_model, c.vocab_size
    ones, zeros = np.ones(d), np.zeros(d)

    def get(name: str, neutral: np.ndarray) -> np.ndarray:
        return own.get(name, neutral)  # absent bias / LayerNorm gain: the neutral value

    out: dict[str, np.ndarray] = {
        "bert.embeddings.word_embeddings.weight": own["token_emb.weight"],
        "bert.embeddings.position_embeddings.weight": own["pos_emb.weight"],
        "bert.embeddings.token_type_embeddings.weight": np.zeros((1, d)),
    }
    for i in range(c.n_layer):
        ours, theirs = f"blocks.{i}.", _LAYER.format(i=i)
        for ln_ours, ln_theirs in (("ln_1", "attention.ln"), ("ln_2", "ln")):
            out[f"{theirs}{ln_theirs}.weight"] = get(f"{ours}{ln_ours}.weight", ones)
            out[f"{theirs}{ln_theirs}.bias"] = get(f"{ours}{ln_ours}.bias", zeros)
        qkv_w = own[f"{ours}attn.c_attn.weight"]  # (3d, d): rows of q, then k, then v
        qkv_b = get(f"{ours}attn.c_attn.bias", np.zeros(3 * d))
        for j, part in enumerate(_QKV):
            out[f"{theirs}attention.self.{part}.weight"] = qkv_w[j * d:(j + 1) * d]
            out[f"{theirs}attention.self.{part}.bias"] = qkv_b[j * d:(j + 1) * d]
        for lin_ours, lin_theirs in _LINEARS:
            weight = own[f"{ours}{lin_ours}.weight"]
            out[f"{theirs}{lin_theirs}.weight"] = weight
            out[f"{theirs}{lin_theirs}.bias"] = get(f"{ours}{lin_ours}.bias",
                                                    np.zeros(weight.shape[0]))
    out["bert.encoder.ln.weight"], out["bert.encoder.ln.bias"] = own["ln_f.weight"], own["ln_f.bias"]
    for ours, theirs in (("dense", "dense"), ("ln", "LayerNorm")):
        for p in ("weight", "bias"):
            out[f"cls.predictions.transform.{theirs}.{p}"] = own[f"head_transform.{ours}.{p}"]
    out["cls.predictions.bias"] = np.zeros(V)  # our decoder has no output bias
    if not model.tied:  # what transformers itself saves for an untied head
        out["cls.predictions.decoder.weight"] = own["lm_head.weight"]
        out["cls.predictions.decoder.bias"] = np.zeros(V)
    return {k: np.ascontiguousarray(np.asarray(v, dtype=dtype)) for k, v in out.items()}


def hf_config_mlm(model: MaskedLM, tokenizer: Any = None) -> dict[str, Any]:
    """The ``config.json`` of the export (MegatronBertConfig fields)."""
    c = model.config
    ids = special_token_ids(tokenizer, c.vocab_size)
    return {
        "model_type": MODEL_TYPE,
        "architectures": ["MegatronBertForMaskedLM"],
        "vocab_size": c.vocab_size,
        "hidden_size": c.d_model,
        "num_hidden_layers": c.n_layer,
        "num_attention_heads": c.n_head,
        "intermediate_size": c.mlp_ratio * c.d_model,
        "hidden_act": "gelu_new",  # tanh-approximated GELU, as F.gelu
        # Our Dropout sits after the embeddings and each residual branch, none on attention.
        "hidden_dropout_prob": c.dropout,
        "attention_probs_dropout_prob": 0.0,
        "max_position_embeddings": c.block_size,
        "type_vocab_size": 1,
        "initializer_range": 0.02,
        "layer_norm_eps": LAYER_NORM_EPS,
        "position_embedding_type": "absolute",
        "is_decoder": False,
        "add_cross_attention": False,
        "tie_word_embeddings": model.tied,
        "pad_token_id": ids["pad_token_id"],
        "dtype": "float32",
    }


def to_hf_mlm(model: MaskedLM, out_dir: str | os.PathLike, tokenizer: Any = None, *,
              overwrite: bool = False) -> Path:
    """Write ``model`` (and optionally its tokenizer) as a ``MegatronBertForMaskedLM`` folder.

    ``transformers.AutoModelForMaskedLM.from_pretrained(out_dir)`` then gives the same logits
    (float32) at every position, and a tied model's decoder shares the word embeddings'
    storage. Files, staging and ``overwrite`` as in :func:`minimodel.interop.gpt2.to_hf_gpt2`;
    the tokenizer files carry ``[MASK]`` as ``mask_token``.
    """
    if not isinstance(model, MaskedLM):
        raise TypeError(f"to_hf_mlm exports a minimodel MaskedLM, got {type(model).__name__}")
    tokenizer = tokenizer_for_export(tokenizer, model.config.vocab_size)
    tensors = hf_state_dict_mlm(model)  # refuses a model without the head transform first
    return write_hf_folder(out_dir, hf_config_mlm(model, tokenizer), tensors, tokenizer,
                           model.config.block_size, overwrite)


# ----------------------------------------------------------------------------- import
# The type of every config.json field the import reads (see config_value_problems).
_MLM_KINDS = {
    **dict.fromkeys(("vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers",
                     "num_attention_heads", "max_position_embeddings"), "positive integer"),
    "layer_norm_eps": "positive number",
    **dict.fromkeys(("hidden_dropout_prob", "attention_probs_dropout_prob"), "number in [0, 1)"),
    **dict.fromkeys(("is_decoder", "add_cross_attention", "tie_word_embeddings"),
                    "boolean (true or false)"),
}


def mlm_config_from_hf(config: dict[str, Any], where: str = "config.json"
                       ) -> tuple[MLMConfig, list[str]]:
    """Check a MegatronBERT ``config.json`` against what minimodel's MaskedLM computes.

    Returns (MLMConfig, notes about training-only differences); raises ValueError naming
    every unsupported setting at once.
    """
    get = partial(config_setting, config)  # get(key, default): the setting, or its default

    problems = config_value_problems(config, _MLM_KINDS)
    if problems:  # the checks below compute with these values
        raise ValueError(f"cannot import {where}: " + "; ".join(problems))
    act = get("hidden_act", "gelu")
    if act not in TANH_GELU_NAMES:
        problems.append(f"hidden_act={act!r} (minimodel uses the tanh GELU: "
                        f"{' / '.join(TANH_GELU_NAMES)})")
    eps = float(get("layer_norm_eps", 1e-12))
    if abs(eps - LAYER_NORM_EPS) > 1e-12:
        problems.append(f"layer_norm_eps={eps:g} (minimodel's LayerNorm uses 1e-5)")
    if get("position_embedding_type", "absolute") != "absolute":
        problems.append(f"position_embedding_type={config['position_embedding_type']!r} "
                        "(only learned absolute positions are implemented)")
    for key, why in (("is_decoder", "a causal MegatronBERT is a decoder, not a masked LM"),
                     ("add_cross_attention", "cross-attention layers are not implemented")):
        if get(key, False):
            problems.append(f"{key}=true ({why})")
    d, inner = get("hidden_size", 1024), get("intermediate_size", 4096)
    if inner % d:
        problems.append(f"intermediate_size={inner!r} (must be a multiple of hidden_size={d!r})")
    if problems:
        raise ValueError(f"cannot import {where}: unsupported MegatronBERT settings: "
                         + "; ".join(problems))
    notes = []
    attn = float(get("attention_probs_dropout_prob", 0.1))
    if attn != 0.0:
        notes.append(f"dropout: minimodel has none on attention weights (HF had "
                     f"attention_probs_dropout_prob={attn}); training only, logits unaffected")
    try:
        mlm_config = MLMConfig(vocab_size=get("vocab_size", 29056),
                               block_size=get("max_position_embeddings", 512),
                               n_layer=get("num_hidden_layers", 24),
                               n_head=get("num_attention_heads", 16), d_model=d,
                               tie_embeddings=bool(get("tie_word_embeddings", True)),
                               dropout=float(get("hidden_dropout_prob", 0.1)),
                               mlp_ratio=inner // d, head_transform=True)
    except ValueError as exc:
        raise ValueError(f"cannot import {where}: {exc}") from None
    check_config_bounds(mlm_config, where)
    return mlm_config, notes


def state_dict_from_hf_mlm(tensors: dict[str, np.ndarray], config: MLMConfig,
                           where: str = "the checkpoint") -> tuple[dict[str, np.ndarray], list[str]]:
    """MegatronBERT tensors -> our state dict, with the checks of the GPT-2 import: layer count
    against the tensors before anything is sized by the config, every name and shape, finite
    values, and a requested tie the weights must not contradict."""
    # Names without the "bert." prefix (a bare MegatronBertModel) are accepted; a pooler (for
    # sentence classification) and position-id buffers play no part in the masked-LM logits.
    ignored = ("position_ids", "pooler.dense.weight", "pooler.dense.bias")
    hf = {("bert." + k if k.startswith(("embeddings.", "encoder.")) else k): v
          for k, v in tensors.items() if not k.endswith(ignored)}
    check_layers_and_values(hf, "bert.encoder.layer.", config.n_layer, "num_hidden_layers",
                            where)
    template = _template(config)
    unexpected = sorted(set(hf) - set(template) - {"cls.predictions.decoder.weight",
                                                   "cls.predictions.decoder.bias",
                                                   "bert.embeddings.token_type_embeddings.weight"})
    missing = sorted(set(template) - set(hf))
    if missing or unexpected:
        parts = ([f"missing {', '.join(missing[:6])}"] if missing else []) + (
            [f"unexpected {', '.join(unexpected[:6])}"] if unexpected else [])
        raise ValueError(f"{where} does not match a MegatronBertForMaskedLM with "
                         f"num_hidden_layers={config.n_layer}: " + "; ".join(parts))
    for key, want in template.items():
        if hf[key].shape != want:
            raise ValueError(f"{where}: {key} has shape {hf[key].shape}, expected {want} from "
                             "config.json")
    notes = []
    for name in ("cls.predictions.bias", "cls.predictions.decoder.bias"):
        bias = hf.get(name, np.zeros(1))
        if np.any(bias != 0):
            raise ValueError(f"{where}: {name} is not zero (max |b| = "
                             f"{float(np.max(np.abs(bias))):.3g}); minimodel's head has no "
                             "output bias, so the logits could not be reproduced (when "
                             "training in transformers, keep it frozen at zero as "
                             "examples/continue_training_hf.py does)")
    d = config.d_model
    token_type = hf.get("bert.embeddings.token_type_embeddings.weight", np.zeros((1, d)))
    if token_type.ndim != 2 or token_type.shape[0] < 1 or token_type.shape[1] != d:
        raise ValueError(f"{where}: bert.embeddings.token_type_embeddings.weight has shape "
                         f"{token_type.shape}, expected (n, {d})")
    pos = hf["bert.embeddings.position_embeddings.weight"]
    if np.any(token_type[0] != 0):  # token_type_ids default to 0: row 0 is a constant shift
        pos = pos + token_type[0]
        notes.append("token_type_embeddings row 0 folded into the position embeddings "
                     "(token_type_ids default to 0)")
    state: dict[str, np.ndarray] = {"token_emb.weight": hf["bert.embeddings.word_embeddings.weight"],
                                    "pos_emb.weight": pos}
    for i in range(config.n_layer):
        ours, theirs = f"blocks.{i}.", _LAYER.format(i=i)
        for ln_ours, ln_theirs in (("ln_1", "attention.ln"), ("ln_2", "ln")):
            for p in ("weight", "bias"):
                state[f"{ours}{ln_ours}.{p}"] = hf[f"{theirs}{ln_theirs}.{p}"]
        for p in ("weight", "bias"):
            state[f"{ours}attn.c_attn.{p}"] = np.concatenate(
                [hf[f"{theirs}attention.self.{part}.{p}"] for part in _QKV], axis=0)
        for lin_ours, lin_theirs in _LINEARS:
            for p in ("weight", "bias"):
                state[f"{ours}{lin_ours}.{p}"] = hf[f"{theirs}{lin_theirs}.{p}"]
    for p in ("weight", "bias"):
        state[f"ln_f.{p}"] = hf[f"bert.encoder.ln.{p}"]
        state[f"head_transform.dense.{p}"] = hf[f"cls.predictions.transform.dense.{p}"]
        state[f"head_transform.ln.{p}"] = hf[f"cls.predictions.transform.LayerNorm.{p}"]
    decoder = hf.get("cls.predictions.decoder.weight")
    wte = state["token_emb.weight"]
    if config.tie_embeddings:
        if decoder is not None and (decoder.shape != wte.shape or np.any(decoder != wte)):
            raise ValueError(f"{where}: tie_word_embeddings is true but "
                             "cls.predictions.decoder.weight differs from the word embeddings; "
                             "set tie_word_embeddings to false in config.json to import them "
                             "as an untied model")
    else:
        if decoder is None or decoder.shape != (config.vocab_size, d):
            raise ValueError(f"{where}: tie_word_embeddings is false but "
                             "cls.predictions.decoder.weight is "
                             + ("missing" if decoder is None else f"{decoder.shape}, expected "
                                f"{(config.vocab_size, d)}"))
        state["lm_head.weight"] = decoder
    return {k: np.ascontiguousarray(v) for k, v in state.items()}, notes


def _template(config: MLMConfig) -> dict[str, tuple[int, ...]]:
    """MegatronBERT tensor name -> shape for ``config`` (decoder weight and bias excluded)."""
    d, V, h = config.d_model, config.vocab_size, config.mlp_ratio * config.d_model
    shapes: dict[str, tuple[int, ...]] = {
        "bert.embeddings.word_embeddings.weight": (V, d),
        "bert.embeddings.position_embeddings.weight": (config.block_size, d)}
    for i in range(config.n_layer):
        L = _LAYER.format(i=i)
        for name in ("attention.ln", "ln"):
            shapes[f"{L}{name}.weight"] = shapes[f"{L}{name}.bias"] = (d,)
        for part in _QKV + ("output",):
            name = f"attention.self.{part}" if part != "output" else "attention.output.dense"
            shapes[f"{L}{name}.weight"], shapes[f"{L}{name}.bias"] = (d, d), (d,)
        shapes[f"{L}intermediate.dense.weight"], shapes[f"{L}intermediate.dense.bias"] = (h, d), (h,)
        shapes[f"{L}output.dense.weight"], shapes[f"{L}output.dense.bias"] = (d, h), (d,)
    for name in ("bert.encoder.ln", "cls.predictions.transform.LayerNorm"):
        shapes[f"{name}.weight"] = shapes[f"{name}.bias"] = (d,)
    shapes["cls.predictions.transform.dense.weight"] = (d, d)
    shapes["cls.predictions.transform.dense.bias"] = (d,)
    shapes["cls.predictions.bias"] = (V,)
    return shapes


def load_hf_mlm(path: str | os.PathLike) -> tuple[MaskedLM, list[str]]:
    """A local ``MegatronBertForMaskedLM`` folder as a minimodel ``MaskedLM`` with the same
    logits, plus notes about settings that differ without changing them. Reading never runs
    code (see :mod:`minimodel.interop._files`)."""
    folder = Path(path)
    where = str(folder / "config.json")
    config, notes = mlm_config_from_hf(read_json(folder / "config.json", "config"), where=where)
    tensors = load_hf_weights(folder)
    state, more = state_dict_from_hf_mlm(tensors, config, where=str(folder))
    model = build_with_state(MaskedLM, config, state)
    return model, notes + more + tensors.notes
