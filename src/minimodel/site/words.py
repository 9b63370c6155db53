"""The site's page names and numbers per language, and the API reference's pages. (The
site's words live in the one message catalogue, ``site.*`` in :mod:`minimodel.messages`.)"""

from __future__ import annotations

from minimodel.messages import grouped

LANGS = ("en", "es")

# The API reference: one page per module (rendered by mkdocstrings); its title per language is
# the message site.reference.<page> of minimodel/messages.yaml.
REFERENCE = {
    "nn-embedding": "minimodel.nn.embedding",
    "nn-lm-head": "minimodel.nn.lm_head",
    "functional-losses": "minimodel.functional.losses",
    "functional-activations": "minimodel.functional.activations",
    "functional-attention": "minimodel.functional.attention",
    "models-gpt": "minimodel.models.gpt",
    "models-mlm": "minimodel.models.mlm",
    "models-cbow": "minimodel.models.cbow",
    "diagnostics": "minimodel.diagnostics",
    "interop-word2vec": "minimodel.interop.word2vec",
    "interop-hf": "minimodel.interop.hf",
    "interop-gpt2": "minimodel.interop.gpt2",
    "interop-mlm-hf": "minimodel.interop.mlm_hf",
    "data-masking": "minimodel.data.masking",
    "evaluation": "minimodel.evaluation",
    "functional-normalization": "minimodel.functional.normalization",
    "functional-tensors": "minimodel.functional.tensors",
    "nn-norm": "minimodel.nn.norm",
    "nn-attention": "minimodel.nn.attention",
    "nn-block": "minimodel.nn.block",
    "data-corpus": "minimodel.data.corpus",
    "data-tokenizers": "minimodel.data.tokenizers",
}


def page_name(stem: str, lang: str, suffix: str = ".md") -> str:
    """mkdocs-static-i18n's suffix layout: ``x.md`` (English) and ``x.es.md``."""
    return f"{stem}{suffix}" if lang == "en" else f"{stem}.{lang}{suffix}"


def number(value: float, spec: str, lang: str) -> str:
    """``format(value, spec)`` written the way ``lang`` writes numbers in prose.

    Spanish groups thousands with a (non-breaking) space (:func:`minimodel.messages.grouped`,
    a four-digit number not grouped) and uses a decimal comma: 544 256, 4,2177, 2048.
    """
    text = grouped(value, spec, lang)
    return text.replace(".", ",") if lang == "es" else text
