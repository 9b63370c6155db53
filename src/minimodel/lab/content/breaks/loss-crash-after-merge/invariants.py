"""Invariants behind `loss-crash-after-merge`: a tied model has ONE vocabulary size, the rows of
E, and every part of the model reports it, also after the matrix is resized (by the model, by
the embedding itself, growing or shrinking) and before any forward pass.

Sizes are drawn afresh on every run (``checks.seed``), so a fix that special-cases the story's
256/512 cannot pass; besides small models, every check that builds a layer or a model also
draws the main job's d = 128 and a d above 768 with V >= 1024, so a fix gated on the width
fails. The experiment's own GPT (T = 8, d = 16, 2 heads, float32, resized from 256 to 512
with a Generator) is one more case, the others resize with a Generator or with the default
``rng=None`` in turn, so a fix that misses the experiment's values fails too.
Run by `minimodel break check`; `break run` reads the same checks.
"""

import numpy as np

from minimodel_break_harness import (WIDE_VOCAB, CheckFailed, Checks, tr, use_workspace,
                                     wide_widths)

mm = use_workspace()
from minimodel import nn  # noqa: E402
from minimodel.models import GPT, GPTConfig, MaskedLM, MLMConfig  # noqa: E402

checks = Checks()
rng = np.random.default_rng(checks.seed)


def vocab_pairs(count: int = 4, low: int = 2) -> list[tuple[int, int]]:
    """(embedding rows, claimed size) pairs from ``low`` to 2999 that differ, half of them in
    each direction."""
    pairs = []
    for i in range(count):
        a, b = sorted(rng.choice(np.arange(low, 3000), size=2, replace=False).tolist())
        pairs.append((b, a) if i % 2 == 0 else (a, b))  # claimed smaller, then larger
    return pairs


@checks.case("refuses-mismatch",
             "TiedHead(Embedding(V, d), vocab_size=V') raises ValueError naming V and V', for "
             "random pairs with V' smaller and larger than V (d up to 23, 128 and above 768)",
             "TiedHead(Embedding(V, d), vocab_size=V') lanza ValueError con V y V', para pares "
             "aleatorios con V' menor y mayor que V (d hasta 23, 128 y más de 768)")
def _():
    widths = [int(rng.integers(2, 24)) for _ in range(4)] + wide_widths(rng)
    for (rows, claimed), d in zip(vocab_pairs() + vocab_pairs(2, WIDE_VOCAB), widths):
        emb = nn.Embedding(rows, d, rng=rng)
        try:
            nn.TiedHead(emb, vocab_size=claimed)
        except ValueError as exc:
            message = str(exc)
            if str(rows) not in message or str(claimed) not in message:
                raise CheckFailed(f"embedding {rows} rows, vocab_size={claimed}: the ValueError "
                                  f"should name both sizes, got: {message}",
                                  f"embedding de {rows} filas, vocab_size={claimed}: el "
                                  f"ValueError debería nombrar los dos tamaños; dice: {message}")
            continue
        raise CheckFailed(f"TiedHead accepted vocab_size={claimed} for an embedding of {rows} rows",
                          f"TiedHead aceptó vocab_size={claimed} para un embedding de {rows} filas")


@checks.case("size-from-embedding",
             "head.vocab_size, the logits' last axis and a loss over V classes all follow the "
             "embedding (random V, d; d = 128 and above 768 too)",
             "head.vocab_size, el último eje de los logits y una pérdida sobre V clases siguen "
             "al embedding (V, d aleatorios; también d = 128 y más de 768)")
def _():
    sizes = [(int(rng.integers(2, 1500)), int(rng.integers(2, 24))) for _ in range(3)]
    for V, d in sizes + [(int(rng.integers(WIDE_VOCAB, 3000)), d) for d in wide_widths(rng)]:
        emb = nn.Embedding(V, d, rng=rng)
        for head in (nn.TiedHead(emb), nn.TiedHead(emb, vocab_size=V)):
            h = mm.Tensor(rng.standard_normal((2, 3, d)).astype(np.float32))
            logits = head(h)
            loss = head.loss(h.reshape(-1, d), rng.integers(0, V, size=6))
            sizes = (head.vocab_size, logits.shape[-1])
            if sizes != (V, V) or not np.isfinite(float(loss.data)):
                raise CheckFailed(f"embedding has {V} rows but (head.vocab_size, logits columns) "
                                  f"= {sizes}",
                                  f"el embedding tiene {V} filas pero (head.vocab_size, columnas "
                                  f"de los logits) = {sizes}")


def every_size(model, ids: np.ndarray, targets: np.ndarray) -> dict[str, int]:
    """The vocabulary size as seen by each part of a model and each code path."""
    logits, loss = model(ids, targets)
    if not np.isfinite(float(loss.data)):
        raise CheckFailed("the loss is not finite", "la pérdida no es finita")
    rows = model.token_emb.weight.shape[0]
    sizes = {tr("embedding rows", "filas del embedding"): rows,
             "lm_head.vocab_size": model.lm_head.vocab_size,
             "config.vocab_size": model.config.vocab_size,
             tr("logits (with targets)", "logits (con objetivos)"): logits.shape[-1],
             tr("logits (no targets)", "logits (sin objetivos)"): model(ids)[0].shape[-1]}
    if isinstance(model, GPT):  # generation samples from V classes: ids up to V - 1, no more
        new = model.generate(ids[:1, :2], max_new_tokens=4, temperature=1.0, seed=0)[:, 2:]
        sizes[tr("largest generated id + 1", "mayor id generado + 1")] = max(int(new.max()) + 1,
                                                                             rows)
    return sizes


def require_agree(sizes: dict[str, int], want: int, what: str) -> None:
    wrong = {k: v for k, v in sizes.items() if v != want}
    if wrong:
        raise CheckFailed(f"{what}: the vocabulary is {want} but {wrong}",
                          f"{what}: el vocabulario es {want} pero {wrong}")


@checks.case("every-path-agrees",
             "in tied GPT and MaskedLM of random V, embedding, head, config, logits with and "
             "without targets, and generation agree, before and after resize_token_embeddings "
             "(d = 8 or 16, 128 and above 768; and the experiment's GPT, 256 -> 512, d = 16)",
             "en GPT y MaskedLM atados de V aleatorio coinciden embedding, cabeza, "
             "configuración, logits con y sin objetivos y generación, antes y después de "
             "resize_token_embeddings (d = 8 o 16, 128 y más de 768; y el GPT del experimento, "
             "256 -> 512, d = 16)")
def _():
    # (kind, d, V, new V, T): each kind small, then a random kind at d = 128 and above 768,
    # then the experiment's own GPT (T = 8, d = 16, resized from 256 to 512 ids).
    models = [("gpt", 8 * int(rng.integers(1, 3)), 8), ("mlm", 8 * int(rng.integers(1, 3)), 8)]
    models += [(("gpt", "mlm")[int(rng.integers(2))], d, WIDE_VOCAB)
               for d in wide_widths(rng, multiple=2)]
    models = [(kind, d) + tuple(int(v) for v in rng.choice(np.arange(low, low + 700), size=2,
                                                          replace=False)) + (6,)
              for kind, d, low in models] + [("gpt", 16, 256, 512, 8)]
    for i, (kind, d, V, new_V, T) in enumerate(models):
        model = (GPT(GPTConfig(V, T, 1, 2, d), rng=rng) if kind == "gpt"
                 else MaskedLM(MLMConfig(V, T, 1, 2, d), rng=rng))
        name = f"{type(model).__name__} (V={V}, d={d})"
        ids = rng.integers(0, V, size=(2, T))
        require_agree(every_size(model, ids, rng.integers(0, V, size=(2, T))), V, name)
        # rng: a Generator (even cases: the experiment's is the last) or None (the default)
        model.resize_token_embeddings(new_V, rng=None if i % 2 else rng)
        ids = rng.integers(0, new_V, size=(2, T))
        ids[0, 0] = new_V - 1  # the last new row must be usable
        require_agree(every_size(model, ids, rng.integers(0, new_V, size=(2, T))), new_V,
                      tr(f"{name} resized to {new_V}", f"{name} redimensionado a {new_V}"))


@checks.case("head-follows-its-matrix",
             "a TiedHead's vocab_size equals its embedding's rows right after emb.resize() "
             "(larger and smaller, random V; d up to 23, 128 and above 768) and after being "
             "re-pointed to another embedding, with no forward pass in between",
             "el vocab_size de un TiedHead es el número de filas de su embedding justo después "
             "de emb.resize() (mayor y menor, V aleatorio; d hasta 23, 128 y más de 768) y tras "
             "apuntarlo a otro embedding, sin ninguna pasada hacia delante entre medias")
def _():
    sizes = [(int(rng.integers(20, 900)), int(rng.integers(2, 24)))]
    for V, d in sizes + [(int(rng.integers(WIDE_VOCAB, 2049)), d) for d in wide_widths(rng)]:
        one_head_follows(V, d)


def one_head_follows(V: int, d: int) -> None:
    """head-follows-its-matrix for an embedding of ``V`` rows and width ``d``."""
    emb = nn.Embedding(V, d, rng=rng)
    head = nn.TiedHead(emb)
    for new_V in (V + int(rng.integers(1, 600)), int(rng.integers(2, V))):  # grow, then shrink
        emb.resize(new_V, rng=rng)
        if head.vocab_size != new_V:
            raise CheckFailed(f"Embedding (d={d}) resized from {V} to {new_V} rows, but the head "
                              f"tied to it reports vocab_size={head.vocab_size}",
                              f"Embedding (d={d}) redimensionado de {V} a {new_V} filas, pero la "
                              f"cabeza atada a él da vocab_size={head.vocab_size}")
        V = new_V
    other = nn.Embedding(V + int(rng.integers(1, 300)), d, rng=rng)
    head.embedding = other
    if head.vocab_size != other.vocab_size:
        raise CheckFailed(f"head re-pointed to an embedding of {other.vocab_size} rows (d={d}) "
                          f"reports vocab_size={head.vocab_size}",
                          f"la cabeza apuntada a un embedding de {other.vocab_size} filas (d={d}) "
                          f"da vocab_size={head.vocab_size}")


@checks.case("one-matrix", "a tied model still shares one Parameter between lookup and head "
             "(d = 16, 128 and above 768)",
             "un modelo atado sigue compartiendo un Parameter entre indexación y cabeza (d = 16, "
             "128 y más de 768)")
def _():
    sizes = [(int(rng.integers(8, 300)), 16)]
    for V, d in sizes + [(int(rng.integers(WIDE_VOCAB, 2049)), d)
                         for d in wide_widths(rng, multiple=2)]:
        model = GPT(GPTConfig(V, 8, 1, 2, d), rng=rng)
        if model.lm_head.weight is not model.token_emb.weight:
            raise CheckFailed(f"d={d}: lm_head.weight is not token_emb.weight",
                              f"d={d}: lm_head.weight no es token_emb.weight")


if __name__ == "__main__":
    checks.finish()
