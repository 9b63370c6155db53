"""Invariants behind `loss-crash-after-merge`: a tied model has ONE vocabulary size, the rows of
E, and every part of the model reports it, also after the matrix is resized (by the model, by
the embedding itself, growing or shrinking) and before any forward pass.

Sizes are drawn afresh on every run (``checks.seed``), so a fix that special-cases the story's
256/512 cannot pass. Run by `minimodel break check`; `break run` reads the same checks.
"""

import numpy as np

from minimodel_break_harness import CheckFailed, Checks, tr, use_workspace

mm = use_workspace()
from minimodel import nn  # noqa: E402
from minimodel.models import GPT, GPTConfig, MaskedLM, MLMConfig  # noqa: E402

checks = Checks()
rng = np.random.default_rng(checks.seed)


def vocab_pairs(count: int = 4) -> list[tuple[int, int]]:
    """(embedding rows, claimed size) pairs that differ, half of them in each direction."""
    pairs = []
    for i in range(count):
        a, b = sorted(rng.choice(np.arange(2, 2000), size=2, replace=False).tolist())
        pairs.append((b, a) if i % 2 == 0 else (a, b))  # claimed smaller, then larger
    return pairs


@checks.case("refuses-mismatch",
             "TiedHead(Embedding(V, d), vocab_size=V') raises ValueError naming V and V', for "
             "random pairs with V' smaller and larger than V",
             "TiedHead(Embedding(V, d), vocab_size=V') lanza ValueError con V y V', para pares "
             "aleatorios con V' menor y mayor que V")
def _():
    for rows, claimed in vocab_pairs():
        emb = nn.Embedding(rows, int(rng.integers(2, 24)), rng=rng)
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
             "embedding (random V, d)",
             "head.vocab_size, el último eje de los logits y una pérdida sobre V clases siguen "
             "al embedding (V, d aleatorios)")
def _():
    for _ in range(3):
        V, d = int(rng.integers(2, 1500)), int(rng.integers(2, 24))
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
             "without targets, and generation agree, before and after resize_token_embeddings",
             "en GPT y MaskedLM atados de V aleatorio coinciden embedding, cabeza, "
             "configuración, logits con y sin objetivos y generación, antes y después de "
             "resize_token_embeddings")
def _():
    for kind in ("gpt", "mlm"):
        V, new_V = (int(v) for v in rng.choice(np.arange(8, 700), size=2, replace=False))
        d, T = 8 * int(rng.integers(1, 3)), 6
        model = (GPT(GPTConfig(V, T, 1, 2, d), rng=rng) if kind == "gpt"
                 else MaskedLM(MLMConfig(V, T, 1, 2, d), rng=rng))
        name = tr(f"{type(model).__name__} (V={V})", f"{type(model).__name__} (V={V})")
        ids = rng.integers(0, V, size=(2, T))
        require_agree(every_size(model, ids, rng.integers(0, V, size=(2, T))), V, name)
        model.resize_token_embeddings(new_V, rng=rng)
        ids = rng.integers(0, new_V, size=(2, T))
        ids[0, 0] = new_V - 1  # the last new row must be usable
        require_agree(every_size(model, ids, rng.integers(0, new_V, size=(2, T))), new_V,
                      tr(f"{name} resized to {new_V}", f"{name} redimensionado a {new_V}"))


@checks.case("head-follows-its-matrix",
             "a TiedHead's vocab_size equals its embedding's rows right after emb.resize() "
             "(larger and smaller, random V) and after being re-pointed to another embedding, "
             "with no forward pass in between",
             "el vocab_size de un TiedHead es el número de filas de su embedding justo después "
             "de emb.resize() (mayor y menor, V aleatorio) y tras apuntarlo a otro embedding, "
             "sin ninguna pasada hacia delante entre medias")
def _():
    V = int(rng.integers(20, 900))
    d = int(rng.integers(2, 24))
    emb = nn.Embedding(V, d, rng=rng)
    head = nn.TiedHead(emb)
    for new_V in (V + int(rng.integers(1, 600)), int(rng.integers(2, V))):  # grow, then shrink
        emb.resize(new_V, rng=rng)
        if head.vocab_size != new_V:
            raise CheckFailed(f"Embedding resized from {V} to {new_V} rows, but the head tied to "
                              f"it reports vocab_size={head.vocab_size}",
                              f"Embedding redimensionado de {V} a {new_V} filas, pero la cabeza "
                              f"atada a él da vocab_size={head.vocab_size}")
        V = new_V
    other = nn.Embedding(V + int(rng.integers(1, 300)), d, rng=rng)
    head.embedding = other
    if head.vocab_size != other.vocab_size:
        raise CheckFailed(f"head re-pointed to an embedding of {other.vocab_size} rows reports "
                          f"vocab_size={head.vocab_size}",
                          f"la cabeza apuntada a un embedding de {other.vocab_size} filas da "
                          f"vocab_size={head.vocab_size}")


@checks.case("one-matrix", "a tied model still shares one Parameter between lookup and head",
             "un modelo atado sigue compartiendo un Parameter entre indexación y cabeza")
def _():
    V = int(rng.integers(8, 300))
    model = GPT(GPTConfig(V, 8, 1, 2, 16), rng=rng)
    if model.lm_head.weight is not model.token_emb.weight:
        raise CheckFailed("lm_head.weight is not token_emb.weight",
                          "lm_head.weight no es token_emb.weight")


if __name__ == "__main__":
    checks.finish()
