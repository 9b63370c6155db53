"""Sizes agree: tokenizer, embedding rows, head rows and the config's ``vocab_size``.

Four numbers must tell one story. The tokenizer can produce ids 0 .. T-1 (T counts its added
and special tokens); the embedding has V_E rows, the head V_H, the config says V_C:

* T > V_E: some id the tokenizer produces has no row; looking it up fails (an index error,
  or on a GPU a device-side assert). Fix: ``model.resize_token_embeddings(len(tokenizer))``.
* T < V_E: rows T .. V_E-1 are *padding* (sizes rounded up to a multiple of 64 or 128 for
  fast matrix kernels, e.g. Pythia's 50304 for 50277 tokens). Harmless for lookups, but a
  head still gives those ids probability; untouched padding rows are named as such.
* V_H != V_E or V_C != V_E: a loader builds the model from the config and refuses (or
  silently truncates) the matrices; a tied head cannot have another size at all.

Which ``vocab_size`` sizes which matrix: with transformers installed, the model built from
the config says (the shapes of its embedding and head on the meta device, so Marian's separate
``decoder_vocab_size`` or BLIP-2's Q-Former vocabulary are never compared with the wrong
matrix); without it, the top-level ``vocab_size`` and ``text_config.vocab_size``.
"""

from __future__ import annotations

import numpy as np

from minimodel.doctor.findings import OK, PROBLEM, SKIPPED, WARNING, Finding, token_list
from minimodel.doctor.names import vocab_size_claims

TEXT_VOCAB = ("vocab_size", "text_config.vocab_size")  # what sizes E without transformers
from minimodel.doctor.subject import Subject

CHECK = "sizes"


def padding_state(E: np.ndarray, first: int) -> tuple[str, dict[str, float]]:
    """How the padding rows ``E[first:]`` look next to the used rows ``E[:first]``."""
    pad, used = E[first:], E[:first]
    pad_norm = float(np.median(np.linalg.norm(pad, axis=1)))
    used_norm = float(np.median(np.linalg.norm(used, axis=1))) if first else 0.0
    figures = {"padding_median_norm": pad_norm, "used_median_norm": used_norm}
    if not np.any(pad):
        return "zero", figures
    if len(pad) > 1 and np.all(pad == pad[0]):
        return "equal", figures
    if pad_norm < 0.5 * used_norm:
        return "small", figures
    return "like_used", figures


def check_sizes(s: Subject) -> list[Finding]:
    out: list[Finding] = []
    V = s.E.shape[0]
    if s.arch is not None and s.arch.embedding_shape:  # the shapes transformers builds
        claims = [(s.arch.vocab_where, s.arch.embedding_shape[0])]
    else:
        claims = [(w, v) for w, v in vocab_size_claims(s.files.config) if w in TEXT_VOCAB]
    for where, value in claims:
        if value != V:
            out.append(Finding(CHECK, PROBLEM, "sizes.config_vs_matrix",
                               {"where": where, "config": value, "rows": V,
                                "embedding": s.roles.embedding_label}))
    head_rows = s.arch.head_shape[0] if s.arch is not None and s.arch.head_shape else V
    if s.W is not None and s.W.shape[0] != head_rows:
        out.append(Finding(CHECK, PROBLEM, "sizes.head_vs_embedding",
                           {"head_rows": s.W.shape[0], "rows": V, "head": s.roles.head_name}))
    if s.vocab_error is not None:
        # a broken file in a model folder breaks whoever loads it: a problem, not a warning
        out.append(Finding(CHECK, PROBLEM, "sizes.tokenizer_unreadable",
                           {"why": s.vocab_error, "rows": V}))
        return out
    if s.vocab is None:
        out.append(Finding(CHECK, SKIPPED, "sizes.no_tokenizer",
                           {"note": s.vocab_note or "-", "rows": V}))
        return out
    T = s.vocab.size
    facts = {"tokenizer_size": T, "last_id": T - 1, "tokenizer_tokens": len(s.vocab.tokens),
             "added": len(s.vocab.added), "special": len(s.vocab.special), "rows": V}
    if T > V:
        beyond = [i for i in sorted(s.vocab.tokens) if i >= V]
        out.append(Finding(CHECK, PROBLEM, "sizes.ids_beyond_matrix",
                           {**facts, "count": len(beyond), "tokens": token_list(beyond, s.vocab)},
                           {"ids": beyond}))
    elif T < V:
        state, figures = padding_state(s.E, T)
        out.append(Finding(CHECK, WARNING, f"sizes.padding_{state}",
                           {**facts, "padding": V - T, "first": T, "last": V - 1,
                            **{k: f"{v:.3g}" for k, v in figures.items()}},
                           {"padding_ids": [T, V - 1], **figures}))
    if not out:
        out.append(Finding(CHECK, OK, "sizes.agree", facts))
    return out
