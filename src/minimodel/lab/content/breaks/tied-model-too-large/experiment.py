"""Experiment for the break `tied-model-too-large`: what a tied GPT costs, counted and on disk.

The story is the user's: the same GPT built tied and untied (the main job's sizes), its
parameter count and the size of the checkpoint `minimodel.save` writes, against the saving a
tie promises (V*d parameters, 4*V*d bytes in float32). The last word comes from the break's
invariants (GPT, MaskedLM and CBOW; training, saving, loading, resizing), not from this example.
"""

import os
import tempfile

import numpy as np

from minimodel_break_harness import conclude, es_num, say, use_workspace

mm = use_workspace()
from minimodel.models import GPT, GPTConfig  # noqa: E402
from invariants import checks  # noqa: E402

say(f"minimodel imported from {mm.__file__}", f"minimodel importado desde {mm.__file__}")
V, D = 1024, 128  # the main job's sizes: BPE with V = 1024, d = 128, 2 blocks
cfg = dict(vocab_size=V, block_size=128, n_layer=2, n_head=4, d_model=D)
models = {tied: GPT(GPTConfig(**cfg, tie_embeddings=tied), rng=np.random.default_rng(0))
          for tied in (True, False)}


def checkpoint_bytes(model) -> int:
    """Size in bytes of the file ``minimodel.save`` writes for ``model``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.safetensors")
        mm.save(model, path)
        return os.path.getsize(path)


count = {tied: m.num_params() for tied, m in models.items()}
size = {tied: checkpoint_bytes(m) for tied, m in models.items()}
saved_params, saved_bytes = count[False] - count[True], size[False] - size[True]
say(f"GPT(V = {V}, d = {D}, 2 blocks)      tied        untied      tied saves   a tie should save",
    f"GPT(V = {V}, d = {D}, 2 bloques)     atado       sin atar    ahorro       debería ahorrar")
say(f"  num_params()                {count[True]:>10,}  {count[False]:>10,}  {saved_params:>10,}"
    f"   V*d = {V * D:,}",
    f"  num_params()                {es_num(count[True], '>10,')}  {es_num(count[False], '>10,')}  "
    f"{es_num(saved_params, '>10,')}   V*d = {es_num(V * D, ',')}")
say(f"  model.safetensors (bytes)   {size[True]:>10,}  {size[False]:>10,}  {saved_bytes:>10,}"
    f"   4*V*d = {4 * V * D:,}",
    f"  model.safetensors (bytes)   {es_num(size[True], '>10,')}  {es_num(size[False], '>10,')}  "
    f"{es_num(saved_bytes, '>10,')}   4*V*d = {es_num(4 * V * D, ',')}")

conclude(checks, saved_params != V * D or saved_bytes < 4 * V * D,
         f"the tie saved {saved_params:,} of the {V * D:,} parameters it should save, and "
         f"{saved_bytes:,} of the {4 * V * D:,} bytes on disk",
         f"la atadura ahorró {es_num(saved_params, ',')} de los {es_num(V * D, ',')} parámetros "
         f"que debería ahorrar, y {es_num(saved_bytes, ',')} de los {es_num(4 * V * D, ',')} "
         "bytes en disco",
         "OK: the tie saves V*d parameters in the count and 4*V*d bytes on disk.",
         "OK: la atadura ahorra V*d parámetros en el recuento y 4*V*d bytes en disco.")
