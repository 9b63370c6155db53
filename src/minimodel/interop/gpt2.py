"""minimodel GPT <-> Hugging Face ``GPT2LMHeadModel``: same architecture, renamed tensors.

Our GPT *is* GPT-2's architecture (pre-LN blocks, tanh GELU, learned positions, LayerNorm eps
1e-5, attention scaled by 1/sqrt(d_head)), so a conversion is a renaming plus one transpose:
Hugging Face keeps GPT-2's ``Conv1D`` layers, whose weight is stored (in, out), while our
``Linear`` stores (out, in) like ``torch.nn.Linear``::

    ours                                  Hugging Face                         conversion
    token_emb.weight        (V, d)        transformer.wte.weight      (V, d)   as is
    pos_emb.weight          (T, d)        transformer.wpe.weight      (T, d)   as is
    blocks.i.attn.c_attn.weight (3d, d)   transformer.h.i.attn.c_attn.weight (d, 3d)   .T
    blocks.i.{attn.c_proj, mlp.c_fc, mlp.c_proj}.weight                        .T
    blocks.i.{ln_1, ln_2}.*, ln_f.*, every bias                                as is
    lm_head.weight          (V, d)        lm_head.weight              (V, d)   untied only

The tie crosses over as ``tie_word_embeddings``: a tied model writes the
matrix once (no ``lm_head.weight``) and transformers ties ``lm_head`` to ``wte`` on load; an
untied model writes both. Importing re-creates the tie as one Parameter.
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
from minimodel.io import check_config_bounds
from minimodel.interop.tokenizer_export import special_roles
from minimodel.models import GPT, GPTConfig

LAYER_NORM_EPS = 1e-5  # the eps of every minimodel LayerNorm (GPTConfig has no eps field)
# All three are 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), our F.gelu.
TANH_GELU_NAMES = ("gelu_new", "gelu_pytorch_tanh", "gelu_fast")
# Per-block tensors whose weight is transposed between our Linear and GPT-2's Conv1D.
_CONV1D = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")
_LAYER_NORMS = ("ln_1", "ln_2")
# Buffers older transformers versions saved with the weights (a causal mask and -1e4);
# current versions build the mask on the fly and ignore them, and so do we.
_IGNORED_SUFFIXES = (".attn.bias", ".attn.masked_bias")


# ----------------------------------------------------------------------------- names
def name_map(n_layer: int) -> list[tuple[str, str, bool]]:
    """(our name, Hugging Face name, transpose?) for every tensor except the head."""
    rows = [("token_emb.weight", "transformer.wte.weight", False),
            ("pos_emb.weight", "transformer.wpe.weight", False)]
    for i in range(n_layer):
        ours, theirs = f"blocks.{i}.", f"transformer.h.{i}."
        for ln in _LAYER_NORMS:
            rows += [(f"{ours}{ln}.{p}", f"{theirs}{ln}.{p}", False) for p in ("weight", "bias")]
        for lin in _CONV1D:
            rows += [(f"{ours}{lin}.weight", f"{theirs}{lin}.weight", True),
                     (f"{ours}{lin}.bias", f"{theirs}{lin}.bias", False)]
    rows += [(f"ln_f.{p}", f"transformer.ln_f.{p}", False) for p in ("weight", "bias")]
    return rows


def _is_tied(model: GPT) -> bool:
    """Structural tie (one Parameter object), checked against the config."""
    tied = model.lm_head.weight is model.token_emb.weight
    if tied != bool(model.config.tie_embeddings):
        raise ValueError(f"GPT config says tie_embeddings={model.config.tie_embeddings} but the "
                         f"head {'shares' if tied else 'does not share'} the embedding matrix; "
                         "rebuild the model from its config before exporting")
    return tied


# ----------------------------------------------------------------------------- export
def hf_state_dict(model: GPT, dtype: Any = np.float32) -> dict[str, np.ndarray]:
    """The model's tensors under GPT-2 names (Conv1D weights transposed), in ``dtype``.

    A tied model yields no ``lm_head.weight``: the matrix is stored once, as ``wte``.
    """
    own = model.state_dict()
    out = {hf: np.ascontiguousarray((own[ours].T if t else own[ours]).astype(dtype))
           for ours, hf, t in name_map(model.config.n_layer)}
    if not _is_tied(model):
        out["lm_head.weight"] = np.ascontiguousarray(own["lm_head.weight"].astype(dtype))
    return out


def special_token_ids(tokenizer: Any, vocab_size: int) -> dict[str, int | None]:
    """``bos/eos/pad_token_id`` for config.json, always inside [0, vocab_size).

    End-of-text special (``<|endoftext|>``, ``</s>``...) if the tokenizer has one, as GPT-2
    uses it for both BOS and EOS; otherwise id 0, which is the NUL byte in minimodel's
    tokenizers and never occurs in real text. pad is ``[PAD]`` if present, else the EOS id.
    GPT-2's own default (50256) would point outside a small vocabulary.
    """
    eos = bos = pad = None
    if tokenizer is not None:
        roles, table = special_roles(tokenizer), tokenizer.special_tokens
        eos = table.get(roles["eos_token"]) if roles["eos_token"] else None
        bos = table.get(roles["bos_token"]) if roles["bos_token"] else None
        pad = table.get(roles["pad_token"]) if roles["pad_token"] else None
    eos = 0 if eos is None else eos
    bos = eos if bos is None else bos
    pad = eos if pad is None else pad
    for name, value in (("eos", eos), ("bos", bos), ("pad", pad)):
        if not 0 <= value < vocab_size:  # a tokenizer/model size clash is refused earlier
            raise ValueError(f"{name}_token_id {value} is outside the vocabulary ({vocab_size})")
    return {"bos_token_id": bos, "eos_token_id": eos, "pad_token_id": pad}


def hf_config(model: GPT, tokenizer: Any = None) -> dict[str, Any]:
    """The ``config.json`` of the export (GPT2Config fields)."""
    c = model.config
    return {
        "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "vocab_size": c.vocab_size,
        "n_positions": c.block_size,
        "n_embd": c.d_model,
        "n_layer": c.n_layer,
        "n_head": c.n_head,
        "n_inner": 4 * c.d_model,  # our MLP ratio is fixed at 4
        "activation_function": "gelu_new",  # tanh-approximated GELU, as F.gelu
        "layer_norm_epsilon": LAYER_NORM_EPS,
        "initializer_range": 0.02,
        # Our Dropout sits after the embeddings and after each residual branch; our attention
        # has no dropout on the attention probabilities, hence attn_pdrop 0.
        "embd_pdrop": c.dropout,
        "resid_pdrop": c.dropout,
        "attn_pdrop": 0.0,
        "scale_attn_weights": True,
        "scale_attn_by_inverse_layer_idx": False,
        "reorder_and_upcast_attn": False,
        "add_cross_attention": False,
        "tie_word_embeddings": _is_tied(model),
        **special_token_ids(tokenizer, c.vocab_size),
        "use_cache": True,
        "dtype": "float32",
    }


def to_hf_gpt2(model: GPT, out_dir: str | os.PathLike, tokenizer: Any = None, *,
          overwrite: bool = False) -> Path:
    """Write ``model`` (and optionally its tokenizer) as a Hugging Face GPT-2 folder.

    ``transformers.GPT2LMHeadModel.from_pretrained(out_dir)`` then gives the same logits
    (float32) and, when ``model`` is tied, an ``lm_head`` that shares ``wte``'s storage.

    Args:
        model: a minimodel ``GPT`` (tied or untied).
        out_dir: target folder; written through a staging folder and renamed into place, so
            it is never half-written. An existing folder holding only export files is
            replaced; anything else needs ``overwrite=True``.
        tokenizer: optional ``ByteTokenizer``/``BPETokenizer`` (or a path to minimodel's
            tokenizer JSON) whose vocab size must equal the model's; adds the tokenizer files
            so ``AutoTokenizer.from_pretrained(out_dir)`` encodes to the same ids.
        overwrite: replace ``out_dir`` whatever it holds.

    Returns:
        The output folder.

    Files: ``config.json``, ``model.safetensors`` (float32) and, with a tokenizer,
    ``tokenizer.json``, ``vocab.json``, ``merges.txt``, ``tokenizer_config.json``,
    ``special_tokens_map.json``.
    """
    if not isinstance(model, GPT):
        raise TypeError(f"to_hf_gpt2 exports a minimodel GPT (GPT-2 architecture), got "
                        f"{type(model).__name__}")
    model.check_tie_matches_config()  # config.json's tie_word_embeddings comes from the config
    tokenizer = tokenizer_for_export(tokenizer, model.config.vocab_size)
    return write_hf_folder(out_dir, hf_config(model, tokenizer), hf_state_dict(model), tokenizer,
                           model.config.block_size, overwrite)


# ----------------------------------------------------------------------------- import
# The type of every config.json field the import reads (see config_value_problems).
_GPT2_KINDS = {
    **dict.fromkeys(("vocab_size", "n_positions", "n_embd", "n_layer", "n_head", "n_inner"),
                    "positive integer"),
    "layer_norm_epsilon": "positive number",
    **dict.fromkeys(("resid_pdrop", "embd_pdrop", "attn_pdrop"), "number in [0, 1)"),
    **dict.fromkeys(("tie_word_embeddings", "scale_attn_weights", "add_cross_attention",
                     "scale_attn_by_inverse_layer_idx", "reorder_and_upcast_attn"),
                    "boolean (true or false)"),
}


def gpt_config_from_hf(config: dict[str, Any], where: str = "config.json"
                       ) -> tuple[GPTConfig, list[str]]:
    """Check a GPT-2 ``config.json`` against what minimodel's GPT computes.

    Returns:
        (GPTConfig, notes): notes describe differences that do not change the logits
        (training-only dropout settings).

    Raises:
        ValueError: naming every unsupported setting and why, at once.
    """
    get = partial(config_setting, config)  # get(key, default): the setting, or its default

    problems = config_value_problems(config, _GPT2_KINDS)
    if problems:  # the checks below compute with these values
        raise ValueError(f"cannot import {where}: " + "; ".join(problems))
    if config.get("model_type") != "gpt2":
        problems.append(f"model_type={config.get('model_type')!r} (only 'gpt2' is supported)")
    act = get("activation_function", "gelu_new")
    if act not in TANH_GELU_NAMES:
        problems.append(f"activation_function={act!r} (minimodel's GPT uses the tanh GELU: "
                        f"{' / '.join(TANH_GELU_NAMES)})")
    for key, bad, why in (
            ("scale_attn_by_inverse_layer_idx", True, "extra 1/(layer+1) attention scaling"),
            ("reorder_and_upcast_attn", True, "reordered/upcast attention"),
            ("add_cross_attention", True, "cross-attention layers (encoder-decoder use)"),
            ("scale_attn_weights", False, "attention without the 1/sqrt(d_head) scaling")):
        if bool(get(key, not bad)) == bad:
            problems.append(f"{key}={bad} ({why} is not implemented)")
    d = get("n_embd", 768)
    n_inner = config.get("n_inner")
    if n_inner is not None and n_inner != 4 * d:
        problems.append(f"n_inner={n_inner} (the MLP hidden size is fixed at 4*n_embd={4 * d})")
    eps = float(get("layer_norm_epsilon", LAYER_NORM_EPS))
    if abs(eps - LAYER_NORM_EPS) > 1e-12:
        problems.append(f"layer_norm_epsilon={eps:g} (minimodel's LayerNorm uses 1e-5; GPTConfig "
                        "has no eps setting)")
    if problems:
        raise ValueError(f"cannot import {where}: unsupported GPT-2 settings: "
                         + "; ".join(problems))
    resid = float(get("resid_pdrop", 0.1))
    notes = []
    embd, attn = float(get("embd_pdrop", 0.1)), float(get("attn_pdrop", 0.1))
    if embd != resid or attn != 0.0:
        notes.append(f"dropout: minimodel uses one rate ({resid} = resid_pdrop) after the "
                     f"embeddings and residual branches and none on attention weights (HF had "
                     f"embd_pdrop={embd}, attn_pdrop={attn}); training only, logits unaffected")
    try:
        gpt_config = GPTConfig(vocab_size=get("vocab_size", 50257),
                               block_size=get("n_positions", 1024), n_layer=get("n_layer", 12),
                               n_head=get("n_head", 12), d_model=d,
                               tie_embeddings=bool(get("tie_word_embeddings", True)),
                               dropout=resid)
    except ValueError as exc:
        raise ValueError(f"cannot import {where}: {exc}") from None
    check_config_bounds(gpt_config, where)
    return gpt_config, notes


def state_dict_from_hf(tensors: dict[str, np.ndarray], config: GPTConfig,
                       where: str = "the checkpoint") -> dict[str, np.ndarray]:
    """GPT-2 tensors -> our state dict (transposes Conv1D weights, checks shapes and the tie).

    Accepts names with or without the ``transformer.`` prefix (``GPT2Model`` checkpoints and
    the original hub files have none) and ignores old attention-mask buffers.
    """
    hf: dict[str, np.ndarray] = {}
    for key, value in tensors.items():
        if key.endswith(_IGNORED_SUFFIXES):
            continue
        if key.startswith(("wte.", "wpe.", "h.", "ln_f.")):  # GPT2Model / original hub names
            key = "transformer." + key
        hf[key] = value
    check_against_tensors(hf, config, where)  # cheap checks before anything is sized by config
    rows = name_map(config.n_layer)
    expected = {theirs for _, theirs, _ in rows}
    missing = sorted(expected - hf.keys())
    unexpected = sorted(set(hf) - expected - {"lm_head.weight"})
    if missing or unexpected:
        parts = ([f"missing {', '.join(missing[:6])}"] if missing else []) + (
            [f"unexpected {', '.join(unexpected[:6])}"] if unexpected else [])
        raise ValueError(f"{where} does not match a GPT-2 with n_layer={config.n_layer}: "
                         + "; ".join(parts))
    d, V = config.d_model, config.vocab_size
    state: dict[str, np.ndarray] = {}
    for ours, theirs, transpose in rows:
        value = hf[theirs].T if transpose else hf[theirs]
        state[ours] = np.ascontiguousarray(value)
    for name, value in state.items():
        want = _expected_shape(name, config)
        if value.shape != want:
            raise ValueError(f"{where}: {name} has shape {value.shape} (after conversion), "
                             f"expected {want} from config.json")
    head = hf.get("lm_head.weight")
    wte = state["token_emb.weight"]
    if config.tie_embeddings:
        if head is not None:
            if head.shape != wte.shape:
                raise ValueError(f"{where}: tie_word_embeddings is true but lm_head.weight "
                                 f"{head.shape} and wte {wte.shape} differ in shape")
            diff = float(np.max(np.abs(head.astype(np.float64) - wte))) if head.size else 0.0
            if diff > 0.0:
                raise ValueError(f"{where}: tie_word_embeddings is true but lm_head.weight and "
                                 f"transformer.wte.weight differ (max |difference| = {diff:.3g}); "
                                 "set tie_word_embeddings to false in config.json to import "
                                 "them as an untied model")
    else:
        if head is None:
            raise ValueError(f"{where}: tie_word_embeddings is false but there is no "
                             "lm_head.weight; the untied head's weights are missing")
        if head.shape != (V, d):
            raise ValueError(f"{where}: lm_head.weight has shape {head.shape}, expected {(V, d)}")
        state["lm_head.weight"] = np.ascontiguousarray(head)
    return state


def check_against_tensors(hf: dict[str, np.ndarray], config: GPTConfig, where: str) -> None:
    """The config's sizes against the tensors themselves (layer count, wte, wpe), and every
    weight finite: a config.json that claims 10**9 layers is refused before we iterate them."""
    check_layers_and_values(hf, "transformer.h.", config.n_layer, "n_layer", where)
    for key, want in (("transformer.wte.weight", (config.vocab_size, config.d_model)),
                      ("transformer.wpe.weight", (config.block_size, config.d_model))):
        if key in hf and hf[key].shape != want:
            raise ValueError(f"{where}: {key} has shape {hf[key].shape} but config.json "
                             f"implies {want}")


def _expected_shape(name: str, config: GPTConfig) -> tuple[int, ...]:
    """Shape of our tensor ``name`` in a GPT built from ``config`` (Linear weights (out, in))."""
    d = config.d_model
    if name == "token_emb.weight":
        return (config.vocab_size, d)
    if name == "pos_emb.weight":
        return (config.block_size, d)
    module, param = name.rsplit(".", 1)  # e.g. "blocks.0.mlp.c_fc", "weight"
    linear = {"attn.c_attn": (3 * d, d), "attn.c_proj": (d, d), "mlp.c_fc": (4 * d, d),
              "mlp.c_proj": (d, 4 * d)}
    for suffix, (out, inp) in linear.items():
        if module.endswith(suffix):
            return (out, inp) if param == "weight" else (out,)
    return (d,)  # LayerNorm weight / bias


def load_hf_gpt2(path: str | os.PathLike) -> tuple[GPT, list[str]]:
    """:func:`from_hf_gpt2` plus the notes about settings that differ without changing logits."""
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder; give a Hugging Face model folder "
                                "holding config.json and model.safetensors / pytorch_model.bin")
    config, notes = gpt_config_from_hf(read_json(folder / "config.json", "config"),
                                       where=str(folder / "config.json"))
    tensors = load_hf_weights(folder)
    state = state_dict_from_hf(tensors, config, where=str(folder))
    model = build_with_state(GPT, config, state)
    return model, notes + tensors.notes


def from_hf_gpt2(path: str | os.PathLike) -> GPT:
    """Load a local Hugging Face GPT-2 folder as a minimodel ``GPT`` with the same logits.

    The folder needs ``config.json`` and ``model.safetensors`` (or ``pytorch_model.bin``,
    read with ``torch.load(weights_only=True)``, or sharded variants). With
    ``tie_word_embeddings`` true (GPT-2's default) the head is a ``TiedHead`` on the one
    embedding Parameter; a file that also stores a *different* ``lm_head.weight`` is refused
    with the largest difference.

    Raises:
        ValueError: unsupported settings (each named), missing/unexpected tensors, wrong
            shapes, or a requested tie the weights contradict.
    """
    return load_hf_gpt2(path)[0]
