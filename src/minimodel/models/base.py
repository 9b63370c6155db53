"""What every language model here shares: an input embedding, an output head, and the rules
that keep a tie a tie when the model is changed after it was built.

A model is tied when its ``config.tie_embeddings`` is True; then ``lm_head`` is a
``TiedHead`` of the input embedding and the two share one Parameter. The operations below
can all touch that tie, so each keeps it or refuses clearly — never unties silently:

* ``resize_token_embeddings``: resizes the shared matrix in place (same Parameter object, so
  the head, ``requires_grad`` and an optimizer's reference survive) and an untied head with
  it; the config is replaced by a new object, never mutated (another model may share it).
* ``astype``: casts every parameter in place (one shared Parameter stays one).
* assigning a new input embedding re-points a tied head to it; assigning a head that would
  untie a tied model (or tie an untied one) is refused.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from minimodel.nn import Embedding, LMHead, Module, TiedHead
from minimodel.nn.checks import check_positive


class LanguageModel(Module):
    """Base class of GPT, MaskedLM and CBOW. Subclasses set ``input_embedding_name``."""

    input_embedding_name = "token_emb"
    output_head_name = "lm_head"
    config: Any

    # ------------------------------------------------------------------ HF-style accessors
    def get_input_embeddings(self) -> Embedding:
        return getattr(self, self.input_embedding_name)

    def get_output_embeddings(self) -> Module:
        return getattr(self, self.output_head_name)

    def set_input_embeddings(self, embedding: Embedding) -> None:
        setattr(self, self.input_embedding_name, embedding)

    def set_output_embeddings(self, head: Module) -> None:
        setattr(self, self.output_head_name, head)

    def loss(self, inputs: Any, targets: Any) -> Any:
        """The mean loss over the batch's labelled targets, without making the logits:
        what training calls. ``model(inputs, targets)`` returns ``(logits, loss)`` instead."""
        raise NotImplementedError(f"{type(self).__name__} does not define loss()")

    @property
    def tied(self) -> bool:
        """True when the head's matrix is the input embedding's Parameter object."""
        return isinstance(self.get_output_embeddings(), TiedHead)

    def check_tie_matches_config(self) -> None:
        """Refuse a model whose structure and config disagree about the tie (or the sizes).

        The config is what a checkpoint or an export records, so saving a model whose config
        was edited after construction (``model.config.tie_embeddings = False`` on a tied model)
        would write a file that cannot be loaded back as the same model.
        """
        c = self.config
        emb = self.get_input_embeddings()
        if self.tied != bool(c.tie_embeddings):
            raise ValueError(f"{type(self).__name__}: config.tie_embeddings={c.tie_embeddings} "
                             f"but the head is {'tied' if self.tied else 'untied'} "
                             f"({type(self.get_output_embeddings()).__name__}); the config was "
                             "changed after the model was built. Build a new model with the "
                             "config you want and load_state_dict() the weights into it.")
        if (emb.vocab_size, emb.d_model) != (c.vocab_size, c.d_model):
            raise ValueError(f"{type(self).__name__}: the embedding is ({emb.vocab_size}, "
                             f"{emb.d_model}) but the config says (vocab_size, d_model) = "
                             f"({c.vocab_size}, {c.d_model}); use resize_token_embeddings() "
                             "to change the vocabulary")

    # ------------------------------------------------------------------ replacing parts
    def __setattr__(self, name: str, value: Any) -> None:
        registered = self.__dict__.get("_modules", {})
        if name == self.input_embedding_name and name in registered:
            self._check_new_embedding(value)
            super().__setattr__(name, value)
            head = registered.get(self.output_head_name)
            if isinstance(head, TiedHead):
                head.embedding = value  # the head follows the new matrix: still one tie
            return
        if name == self.output_head_name and name in registered:
            self._check_new_head(value)
        super().__setattr__(name, value)

    def _check_new_embedding(self, emb: Any) -> None:
        if not isinstance(emb, Embedding):
            raise TypeError(f"{type(self).__name__}.{self.input_embedding_name} must be an "
                            f"nn.Embedding, got {type(emb).__name__}")
        want = (self.config.vocab_size, self.config.d_model)
        if (emb.vocab_size, emb.d_model) != want:
            raise ValueError(f"the new embedding is ({emb.vocab_size}, {emb.d_model}) but this "
                             f"model's config says (vocab_size, d_model) = {want}; call "
                             "resize_token_embeddings() to change the vocabulary")

    def _check_new_head(self, head: Any) -> None:
        name = f"{type(self).__name__}.{self.output_head_name}"
        if self.config.tie_embeddings:
            if not (isinstance(head, TiedHead) and head.embedding is self.get_input_embeddings()):
                raise ValueError(f"{name}: this model is tied (config.tie_embeddings=True), so "
                                 f"its head must be TiedHead(model.{self.input_embedding_name}); "
                                 f"got {type(head).__name__}. Replacing it would untie the model "
                                 "while its config still says tied. To train an untied model, "
                                 "build it with tie_embeddings=False.")
            return
        if isinstance(head, TiedHead) or not isinstance(head, LMHead):
            raise ValueError(f"{name}: this model is untied (config.tie_embeddings=False), so its "
                             f"head must be an nn.LMHead; got {type(head).__name__}. To tie, "
                             "build the model with tie_embeddings=True.")
        want = (self.config.vocab_size, self.config.d_model)
        if (head.vocab_size, head.d_model) != want:
            raise ValueError(f"{name}: the new head is ({head.vocab_size}, {head.d_model}) but "
                             f"the config says (vocab_size, d_model) = {want}")

    # ------------------------------------------------------------------ resize and cast
    def resize_token_embeddings(self, new_vocab_size: int,
                                rng: np.random.Generator | None = None) -> Embedding:
        """Grow or shrink the vocabulary, keeping learned rows; a tie stays a tie.

        The matrix is resized in place: the same Parameter object (so a tied head, a frozen
        ``requires_grad=False`` and an optimizer's reference all survive; the optimizer refuses
        to step until it is rebuilt, because its moments have the old shape). New rows are
        drawn from N(0, 0.02). ``self.config`` becomes a new config object with the new size;
        the old one is not modified. Returns the input embedding.
        """
        check_positive(new_vocab_size=new_vocab_size)
        self.get_input_embeddings().resize(new_vocab_size, rng)
        head = self.get_output_embeddings()
        if isinstance(head, LMHead):
            head.resize(new_vocab_size, rng)
        self.config = dataclasses.replace(self.config, vocab_size=int(new_vocab_size))
        return self.get_input_embeddings()

    def astype(self, dtype: Any) -> "LanguageModel":
        """Cast every parameter (and its gradient) to a float ``dtype``, in place; returns self.

        Each Parameter object is kept, so a tie stays one shared Parameter and ``requires_grad``
        is unchanged. An optimizer created before the cast still holds these objects, but its
        moments have the old dtype: it refuses to step (with a message) until rebuilt.
        """
        dtype = np.dtype(dtype)
        if dtype.kind != "f":
            raise TypeError(f"astype needs a floating-point dtype (np.float32, np.float64), "
                            f"got {dtype}")
        for param in self.parameters():
            param.data = param.data.astype(dtype)
            if param.grad is not None:
                param.grad = param.grad.astype(dtype)
        return self


def transformer_state_shapes(vocab_size: int, block_size: int, n_layer: int, d_model: int,
                             tied: bool, mlp_ratio: int = 4, bias: bool = True,
                             affine_ln: bool = True, final_ln: bool = True,
                             head_transform: bool = False) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every tensor in the ``state_dict()`` of a GPT-style model, computed
    from its sizes alone (nothing is allocated). Checkpoint loading compares a file with it
    *before* building the model, so a damaged or hostile config cannot make us allocate
    gigabytes. ``tests/models`` checks it against real models."""
    d, h = d_model, mlp_ratio * d_model
    shapes: dict[str, tuple[int, ...]] = {"token_emb.weight": (vocab_size, d),
                                          "pos_emb.weight": (block_size, d)}
    layers = {"attn.c_attn": (3 * d, d), "attn.c_proj": (d, d), "mlp.c_fc": (h, d),
              "mlp.c_proj": (d, h)}
    for i in range(n_layer):
        for ln in ("ln_1", "ln_2"):
            if affine_ln:
                shapes[f"blocks.{i}.{ln}.weight"] = shapes[f"blocks.{i}.{ln}.bias"] = (d,)
        for name, (out, inp) in layers.items():
            shapes[f"blocks.{i}.{name}.weight"] = (out, inp)
            if bias:
                shapes[f"blocks.{i}.{name}.bias"] = (out,)
    if final_ln:
        shapes["ln_f.weight"] = shapes["ln_f.bias"] = (d,)
    if head_transform:  # MaskedLM's BERT-style dense + GELU + LayerNorm before the decoder
        shapes["head_transform.dense.weight"] = (d, d)
        for name in ("head_transform.dense.bias", "head_transform.ln.weight",
                     "head_transform.ln.bias"):
            shapes[name] = (d,)
    if not tied:
        shapes["lm_head.weight"] = (vocab_size, d)
    return shapes
