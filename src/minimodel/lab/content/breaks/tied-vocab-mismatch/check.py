"""Checks for `tied-vocab-mismatch`: the tied head's size comes from the embedding, and a
disagreeing size fails at construction with a message that names both sizes."""

import numpy as np

from minimodel.lab.breaks.harness import CheckFailed, Checks, use_workspace

mm = use_workspace()
from minimodel import nn  # noqa: E402
from minimodel.models import GPT, GPTConfig  # noqa: E402

checks = Checks()
rng = np.random.default_rng(0)


@checks.case("refuses-mismatch",
             "TiedHead(Embedding(512, d), vocab_size=256) raises ValueError naming 512 and 256",
             "TiedHead(Embedding(512, d), vocab_size=256) lanza ValueError con 512 y 256")
def _():
    emb = nn.Embedding(512, 16, rng=rng)
    try:
        nn.TiedHead(emb, vocab_size=256)
    except ValueError as exc:
        message = str(exc)
        if "512" not in message or "256" not in message:
            raise CheckFailed(f"the ValueError should name both sizes, got: {message}",
                              f"el ValueError debería nombrar ambos tamaños; dice: {message}")
        return
    raise CheckFailed("no ValueError: the head accepted 256 classes for a 512-row matrix",
                      "no hubo ValueError: la cabeza aceptó 256 clases para una matriz de 512 filas")


@checks.case("size-from-embedding",
             "head.vocab_size and the logits' last axis equal embedding.vocab_size",
             "head.vocab_size y el último eje de los logits valen embedding.vocab_size")
def _():
    for V in (7, 300, 512):
        emb = nn.Embedding(V, 8, rng=rng)
        for head in (nn.TiedHead(emb), nn.TiedHead(emb, vocab_size=V)):
            logits = head(mm.Tensor(np.ones((2, 3, 8), dtype=np.float32)))
            sizes = (head.vocab_size, logits.shape[-1])
            if sizes != (V, V):
                raise CheckFailed(f"embedding has {V} rows but (head.vocab_size, logits columns) "
                                  f"= {sizes}",
                                  f"el embedding tiene {V} filas pero (head.vocab_size, columnas "
                                  f"de los logits) = {sizes}")


@checks.case("follows-resize",
             "after GPT.resize_token_embeddings(300) the tied head reports 300 classes",
             "tras GPT.resize_token_embeddings(300) la cabeza atada indica 300 clases")
def _():
    model = GPT(GPTConfig(vocab_size=256, block_size=8, n_layer=1, n_head=2, d_model=16),
                rng=np.random.default_rng(1))
    model.resize_token_embeddings(300, rng=np.random.default_rng(2))
    logits, _ = model(np.array([[1, 299, 5]]))
    sizes = (model.lm_head.vocab_size, logits.shape[-1])
    if sizes != (300, 300):
        raise CheckFailed(f"(lm_head.vocab_size, logits columns) = {sizes}; the head kept a "
                          "stale size instead of reading it from the embedding",
                          f"(lm_head.vocab_size, columnas de los logits) = {sizes}; la cabeza "
                          "guardó un tamaño viejo en vez de leerlo del embedding")


@checks.case("gpt-tied", "a tied GPT still builds, shares one matrix and gives (B, T, V) logits",
             "un GPT atado se sigue construyendo, comparte una matriz y da logits (B, T, V)")
def _():
    model = GPT(GPTConfig(vocab_size=64, block_size=8, n_layer=1, n_head=2, d_model=16),
                rng=np.random.default_rng(3))
    logits, loss = model(np.array([[1, 2, 3, 4]]), np.array([[2, 3, 4, 5]]))
    if model.lm_head.weight is not model.token_emb.weight:
        raise CheckFailed("lm_head.weight is not token_emb.weight",
                          "lm_head.weight no es token_emb.weight")
    if logits.shape != (1, 4, 64):
        raise CheckFailed(f"logits shape {logits.shape}, expected (1, 4, 64)",
                          f"logits de forma {logits.shape}, se esperaba (1, 4, 64)")
    if not np.isfinite(float(loss.data)):
        raise CheckFailed("the loss is not finite", "la pérdida no es finita")


checks.finish()
