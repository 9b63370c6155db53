"""Which stored tensor is the embedding E, which is the output head W, and what the config claims.

Every architecture stores the same two matrices under its own names:

    family              embedding E (V, d)                      head W (V, d)
    minimodel           token_emb.weight / in_emb.weight        lm_head.weight
    GPT-2               transformer.wte.weight                  lm_head.weight
    BERT, MegatronBERT  *.embeddings.word_embeddings.weight     cls.predictions.decoder.weight
    Llama, Mistral,     model.embed_tokens.weight               lm_head.weight
      Qwen2, Gemma      (model.language_model.embed_tokens.weight in multimodal wrappers)
    T5                  shared.weight (+ encoder.embed_tokens,  lm_head.weight
                        decoder.embed_tokens: the same table)
    GPT-NeoX, Pythia    gpt_neox.embed_in.weight                embed_out.weight

When transformers is installed, none of this table is used for a Hugging Face folder: the
installed version names the matrices itself (:mod:`.architecture`); the table is the fallback,
and the report says which of the two the verdict used.

A name no rule knows falls back on shapes: the embedding is the 2-D tensor with
``config.vocab_size`` rows (else the one with the most rows), preferring a name with "emb",
"tok" or "word"; the head another tensor of the same shape, preferring "head", "out", "lm".

A tied model stores E once and its head is absent; *whether* it is tied is a claim of the
config: ``tie_word_embeddings`` (Hugging Face; also inside nested configs such as
``text_config``) or ``tie_embeddings`` (minimodel). When a config does not say, the loader uses
its class's default, listed in :data:`DEFAULT_TIE` for the families we know.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from minimodel.messages import PhraseError, phrase

EMBEDDING_SUFFIXES = ("token_emb.weight", "in_emb.weight", "wte.weight",
                      "embeddings.word_embeddings.weight", "shared.weight",
                      "embed_tokens.weight", "embed_in.weight", "tok_embeddings.weight",
                      "word_embeddings.weight")
HEAD_NAMES = ("lm_head.weight", "cls.predictions.decoder.weight", "embed_out.weight",
              "output.weight", "lm_head.decoder.weight", "proj_out.weight",
              "predictions.decoder.weight", "vocab_projector.weight",
              "generator_lm_head.weight", "language_model.lm_head.weight", "head.weight")
# Words that make a tensor found by shape the embedding, or the head.
EMBEDDING_WORDS = ("emb", "wte", "tok", "word")
HEAD_WORDS = ("head", "out", "lm", "decoder", "logit", "unembed")
HEAD_BIAS_NAMES = ("cls.predictions.bias", "cls.predictions.decoder.bias", "lm_head.bias",
                   "predictions.bias", "vocab_projector.bias", "generator_lm_head.bias",
                   "final_logits_bias")
# Where each family stores its head, for naming a head that is missing (default lm_head).
HEAD_BY_MODEL_TYPE = {"bert": "cls.predictions.decoder.weight",
                      "megatron-bert": "cls.predictions.decoder.weight",
                      "roberta": "lm_head.decoder.weight", "gpt_neox": "embed_out.weight",
                      "albert": "predictions.decoder.weight", "whisper": "proj_out.weight",
                      "distilbert": "vocab_projector.weight", "rwkv": "head.weight",
                      "electra": "generator_lm_head.weight"}
# Tables that are the embedding itself under another name (T5's encoder and decoder).
ALIAS_PREFIXES = ("encoder.", "decoder.")
# What transformers uses when config.json does not state tie_word_embeddings.
DEFAULT_TIE = {"gpt2": True, "bert": True, "megatron-bert": True, "t5": True, "gemma": True,
               "gemma2": True, "gemma3": True, "gemma3_text": True, "llama": False,
               "mistral": False, "qwen2": False, "gpt_neox": False, "bloom": True,
               "falcon": True, "mamba": True, "opt": True, "gpt_neo": True, "roberta": True,
               "albert": True, "distilbert": True, "electra": True, "whisper": True,
               "bart": True, "mbart": True, "marian": True, "pegasus": True, "mt5": False,
               "gptj": False, "rwkv": False, "llava": False, "phi": False}
TIE_KEYS = ("tie_word_embeddings", "tie_embeddings")
# Text encoders without a language-model head: nothing to tie (used without transformers).
HEADLESS_MODEL_TYPES = ("clip_text_model", "clip", "siglip_text_model", "siglip")


@dataclass
class Roles:
    """The names of the matrices the checks need (None: not stored)."""

    embedding: str
    head: str | None
    head_name: str                       # where the head is (or would be) stored
    aliases: list[str] = field(default_factory=list)
    head_bias: str | None = None
    by_shape: bool = False               # found by the shape fallback
    source: str = "the built-in table"   # who named them: transformers, or the table
    headless: bool = False               # the architecture has no output head (CLIP text)
    # E (W) stored as several tables stacked along the rows: their stored names, in row order
    # (empty: the one table ``embedding`` / ``head``)
    embedding_parts: list[str] = field(default_factory=list)
    head_parts: list[str] = field(default_factory=list)

    @property
    def embedding_label(self) -> str:
        """E's stored name, or its tables' names joined with " + "."""
        return " + ".join(self.embedding_parts) if self.embedding_parts else self.embedding


@dataclass
class TieClaim:
    """One statement about the tie: where it is written and what it says."""

    where: str          # "config.json: tie_word_embeddings", "... text_config.tie_word_embeddings"
    tied: bool
    default: bool = False  # not written: the loader's default for this model type
    said: Any = None    # ``where`` as a Phrase, for a report in another language (else None)


def _claim(key: str, tied: bool, default: bool = False, **values: Any) -> TieClaim:
    """A claim whose place is a sentence of the catalogue (``doctor.claim.<key>``): ``where``
    in English (``--json``, comparisons), ``said`` in the report's language."""
    said = phrase(f"doctor.claim.{key}", **values)
    return TieClaim(str(said), tied, default, said)


def _two_dim(tensors: dict[str, Any]) -> dict[str, tuple[int, ...]]:
    return {k: t.shape for k, t in tensors.items() if len(t.shape) == 2}


def find_roles(tensors: dict[str, Any], config: dict[str, Any]) -> Roles:
    """Name the embedding, head, aliases and head bias among ``tensors`` (name -> info)."""
    matrices = _two_dim(tensors)
    embedding = None
    for suffix in EMBEDDING_SUFFIXES:
        hits = sorted((k for k in matrices if k == suffix or k.endswith("." + suffix)),
                      key=lambda k: (k.startswith(ALIAS_PREFIXES), len(k)))
        if hits:
            embedding = hits[0]
            break
    by_shape = embedding is None
    if by_shape:
        embedding = _embedding_by_shape(matrices, config)
    head_name = next((h for h in HEAD_NAMES if h in matrices), None)
    if head_name is None and by_shape:
        same = [k for k, s in matrices.items() if k != embedding and s == matrices[embedding]]
        named = [k for k in same if any(word in k.lower() for word in HEAD_WORDS)]
        head_name = (named or same or [None])[0]
    expected = head_name or HEAD_BY_MODEL_TYPE.get(config.get("model_type"), "lm_head.weight")
    aliases = [k for k in matrices if k != embedding and k.startswith(ALIAS_PREFIXES)
               and k.endswith("embed_tokens.weight")]
    bias = next((b for b in HEAD_BIAS_NAMES if b in tensors), None)
    headless = head_name is None and config.get("model_type") in HEADLESS_MODEL_TYPES
    return Roles(embedding, head_name, expected, aliases, bias, by_shape, headless=headless)


def roles_from_architecture(tensors: dict[str, Any], arch: Any) -> Roles | None:
    """The roles as the installed transformers names them (``arch``, an
    :class:`.architecture.Architecture`), with each stored key read through the version's
    checkpoint renames; None when the file holds no tensor that transformers would load as E."""
    if not arch.embedding:  # a class without head that names no embedding: the table finds it
        found = find_roles(tensors, {})
        return Roles(found.embedding, None, "-", [], None, found.by_shape, arch.source,
                     headless=True)
    stored: dict[str, list[str]] = {}  # model name -> the stored keys read into it, in order
    for key in sorted(tensors, key=arch.part_index):
        stored.setdefault(arch.rename(key), []).append(key)
    candidates = [arch.embedding, *arch.aliases] + ([arch.head] if arch.tied else [])
    embedding = next((stored[n][0] for n in candidates if n in stored), None)
    if embedding is None or len(tensors[embedding].shape) != 2:
        return None
    e_parts = _parts(stored, arch.embedding_parts, arch) if arch.embedding in stored else []
    head = stored[arch.head][0] if arch.head in stored else None
    if head == embedding:
        head = None
    h_parts = _parts(stored, arch.head_parts, arch) if head is not None else []
    aliases = [stored[n][0] for n in arch.aliases if n in stored and stored[n][0] != embedding]
    bias = stored[arch.head_bias][0] if arch.head_bias in stored else None
    return Roles(embedding, head, head or arch.head or "-", aliases, bias, False, arch.source,
                 headless=arch.head is None, embedding_parts=e_parts, head_parts=h_parts)


def _parts(stored: dict[str, list[str]], tables: list[str], arch: Any) -> list[str]:
    """The stored keys of a matrix made of several tables (``tables``: the model's names, each
    stored as one key or as several a conversion concatenates); [] when it is one stored key.
    Two stored keys renamed to one name without a position each (an old and a new layout of
    the same tensor) are one table, not two."""
    keys: list[str] = []
    for name in tables:
        found = stored.get(name, [])
        distinct = len({arch.part_index(k) for k in found}) == len(found)
        keys.extend(found if distinct else found[:1])
    return keys if len(keys) > 1 else []


def architecture_claim(arch: Any, source: str) -> TieClaim:
    """What the config claims about the head's tie: the flag transformers reads for it when
    written, else what the installed transformers builds from the class's defaults."""
    if arch.written_value is not None and arch.written_value == arch.tied:
        return TieClaim(f"{source}: {arch.tie_flag}", arch.tied)
    where = f"{source}: {arch.tie_flag}"
    if arch.written_value is not None:  # the class decides, not the flag
        return _claim("class_always_ties" if arch.tied else "class_never_ties", arch.tied,
                      where=where, value=str(arch.written_value).lower(), cls=arch.class_name,
                      version=arch.version)
    return _claim("default_of_class", arch.tied, default=True, where=where, cls=arch.class_name,
                  version=arch.version)


def _embedding_by_shape(matrices: dict[str, tuple[int, ...]], config: dict[str, Any]) -> str:
    if not matrices:
        raise PhraseError(phrase("doctor.error.no_matrix"))
    vocab = vocab_size_claims(config)
    rows = [k for k, s in matrices.items() if vocab and s[0] == vocab[0][1]] or \
        sorted(matrices, key=lambda k: -matrices[k][0])
    named = [k for k in rows if any(word in k.lower() for word in EMBEDDING_WORDS)]
    return (named or rows)[0]


def _walk(config: dict[str, Any], path: str = "") -> list[tuple[str, str, Any]]:
    """(dotted path, key, value) of every entry of a nested config."""
    out = []
    for key, value in config.items():
        here = f"{path}{key}"
        if isinstance(value, dict):
            out.extend(_walk(value, here + "."))
        else:
            out.append((here, key, value))
    return out


def tie_claims(config: dict[str, Any], source: str) -> list[TieClaim]:
    """Every tie flag in ``config``, the top-level one first (the one loaders read for the
    head); when no top-level flag is written, the loader's default for the model type."""
    written = [(where, bool(value)) for where, key, value in _walk(config)
               if key in TIE_KEYS and value is not None]
    written.sort(key=lambda item: "." in item[0])  # top level first, nested after
    claims = [TieClaim(f"{source}: {where}", tied) for where, tied in written]
    model_type = config.get("model_type")
    if not any("." not in where for where, _ in written) and model_type in DEFAULT_TIE:
        claims.insert(0, _claim("default_of_type", DEFAULT_TIE[model_type], default=True,
                                where=f"{source}: tie_word_embeddings",
                                model_type=repr(model_type)))
    return claims


def pad_token_ids(config: dict[str, Any]) -> set[int]:
    """Every ``pad_token_id`` in ``config``: rows that are zero (``nn.Embedding(padding_idx)``)
    and never predicted by design."""
    return {int(value) for where, key, value in _walk(config)
            if key == "pad_token_id" and isinstance(value, int) and not isinstance(value, bool)}


def vocab_size_claims(config: dict[str, Any]) -> list[tuple[str, int]]:
    """Every ``vocab_size`` in ``config`` (top level and nested), as (path, value)."""
    return [(where, int(value)) for where, key, value in _walk(config)
            if key == "vocab_size" and isinstance(value, int) and not isinstance(value, bool)]
