"""Tiny Hugging Face models built offline from configs, and ways to damage their files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

V, D = 96, 32  # vocabulary and width of every test model: tiny, and every random row a vertex

EMBEDDING = {"gpt2": "transformer.wte.weight", "bert": "bert.embeddings.word_embeddings.weight",
             "megatron-bert": "bert.embeddings.word_embeddings.weight",
             "llama": "model.embed_tokens.weight", "qwen2": "model.embed_tokens.weight",
             "gemma": "model.embed_tokens.weight", "t5": "shared.weight"}
HEAD = {"bert": "cls.predictions.decoder.weight",
        "megatron-bert": "cls.predictions.decoder.weight"}
FAMILIES = tuple(EMBEDDING)


def build_hf(family: str, tied: bool, folder: Path, seed: int = 0, **save: Any) -> Path:
    """Save a random ``family`` model (V x D embedding) with ``save_pretrained`` and a
    vocab.json of V tokens into ``folder``."""
    import torch
    import transformers as tf

    torch.manual_seed(seed)
    small = {"num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 2 * D,
             "max_position_embeddings": 32, "hidden_size": D, "vocab_size": V,
             "tie_word_embeddings": tied}
    if family == "gpt2":
        model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=V, n_embd=D, n_layer=1, n_head=2,
                                                 n_positions=32, bos_token_id=0, eos_token_id=0,
                                                 tie_word_embeddings=tied))
    elif family == "bert":
        model = tf.BertForMaskedLM(tf.BertConfig(**small))
    elif family == "megatron-bert":
        model = tf.MegatronBertForMaskedLM(tf.MegatronBertConfig(**small))
    elif family == "llama":
        model = tf.LlamaForCausalLM(tf.LlamaConfig(num_key_value_heads=2, **small))
    elif family == "qwen2":
        model = tf.Qwen2ForCausalLM(tf.Qwen2Config(num_key_value_heads=2, **small))
    elif family == "gemma":
        model = tf.GemmaForCausalLM(tf.GemmaConfig(num_key_value_heads=2, head_dim=16, **small))
    elif family == "t5":
        model = tf.T5ForConditionalGeneration(tf.T5Config(
            vocab_size=V, d_model=D, d_kv=8, d_ff=2 * D, num_layers=1, num_heads=2,
            tie_word_embeddings=tied))
    else:
        raise ValueError(family)
    model.save_pretrained(folder, **save)
    write_vocab(folder, V)
    return folder


def write_vocab(folder: Path, size: int) -> None:
    (folder / "vocab.json").write_text(json.dumps({f"tok{i}": i for i in range(size)}),
                                       encoding="utf-8")


def write_fast_tokenizer(folder: Path, size: int, added: list[tuple[int, str]]) -> None:
    """A tokenizer.json (WordLevel) of ``size`` tokens plus ``added`` (id, text) tokens."""
    data = {"version": "1.0", "model": {"type": "WordLevel", "unk_token": "tok0",
                                        "vocab": {f"tok{i}": i for i in range(size)}},
            "added_tokens": [{"id": i, "content": text, "special": True} for i, text in added]}
    (folder / "tokenizer.json").write_text(json.dumps(data), encoding="utf-8")


def tensors(folder: Path) -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return load_file(str(folder / "model.safetensors"))


def rewrite(folder: Path, state: dict[str, np.ndarray]) -> None:
    """Replace model.safetensors with ``state`` (with the metadata transformers expects)."""
    from safetensors.numpy import save_file

    save_file({k: np.ascontiguousarray(v) for k, v in state.items()},
              str(folder / "model.safetensors"), metadata={"format": "pt"})


def edit_config(folder: Path, **changes: Any) -> None:
    path = folder / "config.json"
    config = json.loads(path.read_text(encoding="utf-8"))
    for key, value in changes.items():
        if value is None:
            config.pop(key, None)
        else:
            config[key] = value
    path.write_text(json.dumps(config), encoding="utf-8")
