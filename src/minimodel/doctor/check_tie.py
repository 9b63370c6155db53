"""Claimed vs stored: does what the config says about the tie match what the file holds?

The config claims tied or untied (``tie_word_embeddings``, possibly in several places); the
file shows one of three things:

    head absent               stored once: the loader must tie it back to E
    head present, identical   stored twice, W == E (harmless but wasteful; loaders may re-tie)
    head present, different   two matrices, W != E

                 absent                     identical                  different
    tied         ok                         warning (stored twice)     PROBLEM: a loader keeps
                                                                       E and drops W, another
                                                                       keeps both untied
    untied       PROBLEM: the head is       warning (copy: it will     ok
                 randomly initialised       drift apart)

What "tied" means is read from the installed transformers when it is there (the model it
builds from this config: is the head the embedding parameter?), else from the flags and the
built-in table of defaults. For "tied, head stored and different" transformers 5 (checked on
5.24: ``PreTrainedModel.tie_weights``) warns and keeps both matrices, untied; a loader that
ties unconditionally keeps E and drops W. A tied ``pytorch_model.bin`` lists E under both
names but stores it once (one storage), which is no waste. An architecture without an
output head (CLIP's text model) has nothing to tie.

A stored table that the built-in table calls the embedding, but whose name transformers turns
into no tensor of the model, is reported first (``tie.embedding_not_read``): ``from_pretrained``
would report the embedding missing and fill it with random values, whatever the tie.

Flags that disagree with each other (a top-level flag and a nested ``text_config`` flag)
are a problem of their own when the built-in table decides (which one a loader reads decides
whether the head is tied or random). When transformers decides, the finding names the flag
transformers reads; it is a problem when the file has no head and some flag says untied (a
loader that reads that flag builds a head that is not in the file: random weights), and a
warning otherwise.
"""

from __future__ import annotations

import numpy as np

from minimodel.doctor.architecture import CHECKED_VERSION, installed_version
from minimodel.doctor.findings import OK, PROBLEM, WARNING, Finding
from minimodel.doctor.subject import Subject

CHECK = "tie"


DIFF_CHUNK = 4096  # rows at a time: W - E of a 50257 x 768 matrix whole would be 147 MiB more


def difference(E: np.ndarray, W: np.ndarray) -> dict[str, float | int]:
    """How far W is from E: the largest |W - E|, the rows that differ, ||W - E|| / ||E||,
    computed a block of rows at a time (no full-size copy)."""
    max_abs, rows, delta_sq, e_sq = 0.0, 0, 0.0, 0.0
    for start in range(0, E.shape[0], DIFF_CHUNK):
        e, w = E[start:start + DIFF_CHUNK], W[start:start + DIFF_CHUNK]
        delta = w - e  # (chunk, d)
        max_abs = max(max_abs, float(np.max(np.abs(delta))) if delta.size else 0.0)
        rows += int(np.count_nonzero(np.any(delta != 0, axis=1)))
        delta_sq += float(np.einsum("ij,ij->", delta, delta, dtype=np.float64))
        e_sq += float(np.einsum("ij,ij->", e, e, dtype=np.float64))
    rel = float(np.sqrt(delta_sq) / max(np.sqrt(e_sq), 1e-30))
    return {"max_abs": max_abs, "rows_differ": rows, "relative": rel}


def check_tie(s: Subject) -> list[Finding]:
    out: list[Finding] = []
    if s.unread is not None:  # transformers would fill E with random values: say it first
        out.append(Finding(CHECK, PROBLEM, "tie.embedding_not_read", s.unread, dict(s.unread)))
    claims = [{"where": c.where, "tied": c.tied, "default": c.default} for c in s.claims]
    if len({c.tied for c in s.claims}) > 1:
        flags = "; ".join(f"{c.where} = {str(c.tied).lower()}" for c in s.claims)
        if s.arch is None:
            out.append(Finding(CHECK, PROBLEM, "tie.flags_disagree", {"flags": flags},
                               {"claims": claims}))
        else:
            # With the head absent, a loader that reads an "untied" flag builds a head that is
            # not in the file (random weights): a problem. With a head stored, a warning.
            absent_but_untied = s.W is None and not s.roles.headless and \
                any(c.tied is False for c in s.claims)
            out.append(Finding(CHECK, PROBLEM if absent_but_untied else WARNING,
                               "tie.flags_disagree_known",
                               {"flags": flags, "read": s.claims[0].said or s.claims[0].where,
                                "version": s.arch.version}, {"claims": claims}))
    tied = s.tied_claim
    head, emb = s.roles.head_name, s.roles.embedding_label
    version = installed_version() or CHECKED_VERSION
    values = {"head": head, "embedding": emb, "shape": "x".join(map(str, s.E.shape)),
              "claim": (s.claims[0].said or s.claims[0].where) if s.claims else "-",
              "version": version}
    data = {"claims": claims, "embedding": emb, "head": s.roles.head,
            "source": s.roles.source}
    if s.roles.headless:
        out.append(Finding(CHECK, OK, "tie.no_head",
                           {**values, "model": s.arch.class_name if s.arch else
                            s.files.config.get("model_type", "-")}, data))
    elif s.W is None:
        if tied is False:
            out.append(Finding(CHECK, PROBLEM, "tie.untied_head_absent", values, data))
        elif tied is None:
            out.append(Finding(CHECK, WARNING, "tie.unknown_head_absent", values, data))
        else:
            out.append(Finding(CHECK, OK, "tie.tied_stored_once", values, data))
    elif s.W.shape != s.E.shape:
        values["head_shape"] = "x".join(map(str, s.W.shape))
        status = PROBLEM if tied else OK
        out.append(Finding(CHECK, status, "tie.tied_shapes_differ" if tied else "tie.untied_ok",
                           values, data))
    else:
        diff = difference(s.E, s.W)
        values.update({k: (f"{v:.3g}" if isinstance(v, float) else v) for k, v in diff.items()})
        values["mib"] = f"{s.W.size * s.W.itemsize / 2**20:.1f}"
        data["difference"] = diff
        identical = diff["rows_differ"] == 0
        if tied is False:
            out.append(Finding(CHECK, WARNING if identical else OK,
                               "tie.untied_identical" if identical else "tie.untied_ok",
                               values, data))
        elif identical and s.files.shares_storage(s.roles.embedding, s.roles.head):
            out.append(Finding(CHECK, OK, "tie.tied_shared_storage", values, data))
        elif identical:
            out.append(Finding(CHECK, WARNING, "tie.stored_twice", values, data))
        elif tied is None:  # nothing claimed: two different matrices simply are untied
            out.append(Finding(CHECK, OK, "tie.no_claim_untied", values, data))
        elif s.arch is not None and s.arch.written_value is False:
            # the file says untied; the class ties by force (T5 in transformers 5), but with two
            # different matrices stored transformers keeps both: untied, as written
            out.append(Finding(CHECK, OK, "tie.untied_ok", values, data))
        else:
            out.append(Finding(CHECK, PROBLEM, "tie.tied_but_different", values, data))
    out.extend(_aliases(s))
    return out


def _aliases(s: Subject) -> list[Finding]:
    """T5's encoder/decoder tables are E under other names: stored copies must equal it."""
    out = []
    for name in s.roles.aliases:
        other = np.asarray(s.files.read(name), dtype=s.E.dtype)
        if other.shape == s.E.shape and np.array_equal(other, s.E):
            continue
        diff = difference(s.E, other) if other.shape == s.E.shape else {"max_abs": float("nan")}
        out.append(Finding(CHECK, PROBLEM, "tie.alias_differs",
                           {"alias": name, "embedding": s.roles.embedding_label,
                            "max_abs": f"{diff['max_abs']:.3g}"}, {"alias": name}))
    return out
