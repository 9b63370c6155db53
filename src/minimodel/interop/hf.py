"""One entry point per direction for Hugging Face folders, whatever the model.

    to_hf(model, "out/hf", tokenizer=tok)   # GPT -> GPT2LMHeadModel, MaskedLM -> MegatronBertForMaskedLM
    model = from_hf("out/hf")               # config.json's model_type picks the converter

The converters themselves are :mod:`minimodel.interop.gpt2` and :mod:`minimodel.interop.mlm_hf`;
each documents its tensor table and the checks it makes. CBOW vectors go to gensim and the
Embedding Projector instead (:mod:`minimodel.interop.word2vec`, :mod:`minimodel.interop.projector`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from minimodel.interop._files import read_json
from minimodel.interop.gpt2 import load_hf_gpt2, to_hf_gpt2
from minimodel.interop.mlm_hf import MODEL_TYPE as MLM_MODEL_TYPE
from minimodel.interop.mlm_hf import load_hf_mlm, to_hf_mlm
from minimodel.models import GPT, MaskedLM

SUPPORTED = {"gpt2": "GPT2LMHeadModel -> GPT", MLM_MODEL_TYPE: "MegatronBertForMaskedLM -> MaskedLM"}


def to_hf(model: Any, out_dir: str | os.PathLike, tokenizer: Any = None, *,
          overwrite: bool = False) -> Path:
    """Write a GPT or MaskedLM as a Hugging Face folder with the same logits; returns the folder.

    Args:
        model: a minimodel ``GPT`` (-> ``GPT2LMHeadModel``) or ``MaskedLM`` built with
            ``head_transform=True`` (-> ``MegatronBertForMaskedLM``), tied or untied.
        out_dir: target folder, written through a staging folder and renamed into place.
        tokenizer: optional minimodel tokenizer (or the path of its JSON) whose vocab size
            equals the model's; adds the files ``AutoTokenizer.from_pretrained`` reads.
        overwrite: replace ``out_dir`` even if it holds files an export does not write.
    """
    if isinstance(model, GPT):
        return to_hf_gpt2(model, out_dir, tokenizer, overwrite=overwrite)
    if isinstance(model, MaskedLM):
        return to_hf_mlm(model, out_dir, tokenizer, overwrite=overwrite)
    raise TypeError(f"to_hf exports a GPT or a MaskedLM, got {type(model).__name__}; CBOW word "
                    "vectors go to the word2vec formats (minimodel.interop.word2vec)")


def load_hf(path: str | os.PathLike) -> tuple[Any, list[str]]:
    """(model, notes) from a local Hugging Face folder; ``config.json``'s ``model_type``
    chooses GPT (``gpt2``) or MaskedLM (``megatron-bert``)."""
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is not a folder; give a Hugging Face model folder "
                                "holding config.json and model.safetensors / pytorch_model.bin")
    model_type = read_json(folder / "config.json", "config").get("model_type")
    if model_type == MLM_MODEL_TYPE:
        return load_hf_mlm(folder)
    if model_type == "gpt2":
        return load_hf_gpt2(folder)
    kinds = "; ".join(f"{k!r} ({v})" for k, v in SUPPORTED.items())
    raise ValueError(f"cannot import {folder / 'config.json'}: model_type={model_type!r} is not "
                     f"supported; minimodel reads {kinds}")


def from_hf(path: str | os.PathLike) -> Any:
    """The model of a local Hugging Face folder (see :func:`load_hf`), with the same logits.

    A tied folder (``tie_word_embeddings``) comes back as one Parameter shared by the input
    embedding and the head; a file whose stored head contradicts the tie is refused.
    """
    return load_hf(path)[0]
