"""Regenerate every break's fake fixes (``BREAK/fakes/NAME.patch``) from the edits below.

    python scripts/make_break_fakes.py [BREAK_ID ...]

A fake fix is what a learner who chases the symptom is likely to try: it makes the story's
example look right while the cause stays. Each one is a diff against the *broken* library
(library + ``bug.patch``); ``minimodel lab validate`` proves that the break's invariants reject
every fake and that its experiment still prints ``SYMPTOM:`` under it. Each break.yaml lists its
fakes (``fakes: [{name, idea}]``); run this script after the library moves code a fake touches.
"""

from __future__ import annotations

import sys

from make_break_patch import write_patch

LM_HEAD = "minimodel/nn/lm_head.py"
EMBEDDING = "minimodel/nn/embedding.py"
GPT_PY = "minimodel/models/gpt.py"
MODULE = "minimodel/nn/module.py"
OPTIM = "minimodel/optim.py"
MASKING = "minimodel/data/masking.py"
ATTENTION_NN = "minimodel/nn/attention.py"
ATTENTION_KERNEL = "minimodel/kernels/attention.py"

BROKEN_MEAN = """\
        uses = np.maximum(np.bincount(ids.reshape(-1), minlength=vocab), 1).astype(ctx.dtype)
        return dW.reshape(vocab, d) / uses[:, None], None  # (V, d)
"""
TIE_TO_TABLE = """\
        object.__setattr__(self, "embedding", embedding)
"""
WEIGHT_PROPERTY = """
    @property
    def weight(self) -> Parameter:
        \"\"\"The embedding's Parameter, read from it at each access (so the head follows a resize).\"\"\"
        return self.embedding.weight
"""
WEIGHT_GUARD = """\
        if name == "weight":
            raise AttributeError("TiedHead.weight is the embedding's matrix and cannot be "
                                 "replaced here; assign embedding.weight instead (the head "
                                 "follows), or use an untied LMHead")
"""
REPORTED_WRAPPER = """\
    def _local_parameters(self) -> Iterator[tuple[str, Parameter]]:
        yield "weight", Parameter(self.embedding.weight.data)  # (V, d)
"""
# The head owning a copy of E (this break's planted bug until issue 47's second round): the
# weight property and its guard go, __init__ builds a Parameter from E's values.
OWN_COPY = [(LM_HEAD, TIE_TO_TABLE + WEIGHT_PROPERTY, TIE_TO_TABLE + """\
        self.weight = Parameter(embedding.weight.data.copy())  # (V, d)
"""), (LM_HEAD, WEIGHT_GUARD, "")]
NUM_PARAMS_SUM = "        return sum(p.size for p in self.parameters() if id(p) not in skip)\n"
VOCAB_PROPERTY = """\
    @property
    def vocab_size(self) -> int:
        return self.embedding.vocab_size
"""
GROUP_APPEND = """\
            self.param_groups.append({**defaults, **group, "params": params_list})
"""
ADAMW_LOOP = """\
            params = [p for p in group["params"] if p.grad is not None]
"""
RESIZE_MODEL = "minimodel/models/base.py"
RESIZE_HEAD = ("        if isinstance(head, LMHead):\n"
               "            head.resize(new_vocab_size, rng)\n")
STALE_PROPERTY = """\
    @property
    def vocab_size(self) -> int:
        return self.vocab_size_out
"""
SCALED_TABLE = ("        self.token_emb.weight.data *= math.sqrt(c.d_model)  "
                "# token vectors at the blocks' scale\n")
TARGETS_MASK = "    targets[draw < 0.8] = mask_id\n"
SEED_OR_GENERATOR = ("    rng = rng if isinstance(rng, np.random.Generator) else "
                     "np.random.default_rng(rng)\n")
TARGETS_SWAP = ("    targets[swap] = replacements[rng.integers(0, replacements.size, "
                "size=int(swap.sum()))]\n")

FAKES: dict[str, dict[str, list[tuple[str, str, str]]]] = {
    "loss-crash-after-merge": {
        "refresh-in-resize": [(RESIZE_MODEL, RESIZE_HEAD, RESIZE_HEAD + """\
        if isinstance(head, TiedHead):
            head.vocab_size_out = int(new_vocab_size)  # keep the head in step
""")],
        "refresh-on-forward": [(LM_HEAD, STALE_PROPERTY, """\
    def forward(self, h: Tensor) -> Tensor:
        self.vocab_size_out = self.embedding.vocab_size  # catch up with a resized matrix
        return super().forward(h)

""" + STALE_PROPERTY)],
        "grow-only": [(LM_HEAD, "        return self.vocab_size_out\n",
                       "        return max(self.vocab_size_out, self.embedding.vocab_size)  "
                       "# a grown matrix wins\n")],
        "special-case-story-sizes": [(LM_HEAD, "        return self.vocab_size_out\n", """\
        if self.vocab_size_out == 256:  # the byte tokenizer was merged
            return self.embedding.vocab_size
        return self.vocab_size_out
""")],
        "read-the-matrix-when-narrow": [(LM_HEAD, "        return self.vocab_size_out\n", """\
        if self.embedding.weight.shape[1] < 32:  # small models: read the matrix itself
            return self.embedding.vocab_size
        return self.vocab_size_out
""")],
    },
    "frequent-tokens-learn-slowly": {
        "divide-by-sqrt-uses": [(EMBEDDING, BROKEN_MEAN, """\
        uses = np.maximum(np.bincount(ids.reshape(-1), minlength=vocab), 1).astype(ctx.dtype)
        return dW.reshape(vocab, d) / np.sqrt(uses)[:, None], None  # (V, d) a gentler scaling
""")],
        "divide-for-batches-only": [(EMBEDDING, BROKEN_MEAN, """\
        if ids.ndim == 1:
            return dW.reshape(vocab, d), None  # (V, d)
        uses = np.maximum(np.bincount(ids.reshape(-1), minlength=vocab), 1).astype(ctx.dtype)
        return dW.reshape(vocab, d) / uses[:, None], None  # (V, d)
""")],
        "divide-for-float32-only": [(EMBEDDING, BROKEN_MEAN, """\
        if ctx.dtype == np.float64:  # the checks' dtype; float32 training still divides
            return dW.reshape(vocab, d), None  # (V, d)
        uses = np.maximum(np.bincount(ids.reshape(-1), minlength=vocab), 1).astype(ctx.dtype)
        return dW.reshape(vocab, d) / uses[:, None], None  # (V, d)
""")],
        "rescale-by-mean-uses": [(EMBEDDING, BROKEN_MEAN, """\
        uses = np.maximum(np.bincount(ids.reshape(-1), minlength=vocab), 1).astype(ctx.dtype)
        mean_uses = ids.size / np.count_nonzero(np.bincount(ids.reshape(-1), minlength=vocab))
        return dW.reshape(vocab, d) / uses[:, None] * mean_uses, None  # (V, d)
""")],
        "sum-for-narrow-tables-only": [(EMBEDDING, BROKEN_MEAN, """\
        uses = np.maximum(np.bincount(ids.reshape(-1), minlength=vocab), 1).astype(ctx.dtype)
        if d < 32:  # narrow tables: plain sum
            return dW.reshape(vocab, d), None
        return dW.reshape(vocab, d) / uses[:, None], None  # (V, d)
""")],
    },
    "tied-model-too-large": {
        "sync-values-in-forward": OWN_COPY + [(LM_HEAD, "\n" + REPORTED_WRAPPER, ""),
                                              (LM_HEAD, VOCAB_PROPERTY, """\
    def forward(self, h: Tensor) -> Tensor:
        self.weight.data = self.embedding.weight.data  # keep the copy in sync with E
        return super().forward(h)

""" + VOCAB_PROPERTY)],
        "new-parameter-same-data": [
            (LM_HEAD, WEIGHT_PROPERTY, WEIGHT_PROPERTY.replace(
                '        """The embedding\'s Parameter, read from it at each access (so the head follows a resize)."""\n'
                "        return self.embedding.weight\n",
                "        return Parameter(self.embedding.weight.data)  # the same numbers, no copy\n")),
            (LM_HEAD, "\n" + REPORTED_WRAPPER, "")],
        "copy-listed-as-embedding": OWN_COPY + [(LM_HEAD, REPORTED_WRAPPER, """\
    def _local_parameters(self) -> Iterator[tuple[str, Parameter]]:
        yield "weight", self.embedding.weight  # count and save E once, like a real tie
""")],
        "head-owns-a-copy": OWN_COPY + [(LM_HEAD, "\n" + REPORTED_WRAPPER, "")],
        "report-nothing": [(LM_HEAD, REPORTED_WRAPPER, """\
    def _local_parameters(self) -> Iterator[tuple[str, Parameter]]:
        yield from ()  # E belongs to the embedding, which already reports it
""")],
        "dedupe-only-in-num-params": [(MODULE, NUM_PARAMS_SUM, """\
        arrays = {id(p.data): p for p in self.parameters() if id(p) not in skip}  # one per array
        return sum(p.size for p in arrays.values())
""")],
    },
    "fresh-model-loss-44": {
        "scale-logits-in-head": [(LM_HEAD, VOCAB_PROPERTY, """\
    def forward(self, h: Tensor) -> Tensor:
        return super().forward(h) / np.sqrt(self.d_model)  # undo the table's scale for the logits

""" + VOCAB_PROPERTY)],
        "scale-only-untied": [(GPT_PY, SCALED_TABLE, """\
        if not c.tie_embeddings:  # a tied table is also the output layer: leave it small
    """ + SCALED_TABLE)],
        "scale-only-wide": [(GPT_PY, SCALED_TABLE, """\
        if c.d_model > 400:  # wide models only: token vectors at the blocks' scale
    """ + SCALED_TABLE)],
        "fix-for-multiples-of-16-only": [(GPT_PY, SCALED_TABLE, """\
        if c.d_model % 16:  # widths off the usual grid: token vectors at the blocks' scale
    """ + SCALED_TABLE)],
        "scale-in-forward": [
            (GPT_PY, SCALED_TABLE, ""),
            (GPT_PY, "        x = self.token_emb(ids) + self.pos_emb(np.arange(start, start + T))  "
             "# (B, T, d) + (T, d)\n",
             "        x = (self.token_emb(ids) * math.sqrt(self.config.d_model)  "
             "# the input job only\n"
             "             + self.pos_emb(np.arange(start, start + T)))  # (B, T, d) + (T, d)\n")],
        "shrink-the-default": [
            (EMBEDDING, "EMBEDDING_INIT_STD = 0.02  "
             "# GPT-2's value for its embeddings and output layer",
             "EMBEDDING_INIT_STD = 0.02 / 8  # GPT-2's 0.02 over sqrt(64), so a scaled table ends "
             "at 0.02")],
    },
    "embedding-moves-too-far": {
        "optimizer-dedupes-silently": [(OPTIM, GROUP_APPEND, """\
            unique = list({id(p): p for p in params_list}.values())  # a tie listed twice: once
            self.param_groups.append({**defaults, **group, "params": unique})
""")],
        "skip-the-name-lm-head": [(MODULE, """\
                if remove_duplicate and full_name in seen:
""", """\
                if remove_duplicate and (full_name in seen or full_name == "lm_head.weight"):
""")],
        "halve-lr-when-listed-twice": [(OPTIM, ADAMW_LOOP, ADAMW_LOOP + """\
            uses = max((sum(q is p for q in self._params()) for p in params), default=1)
            group = {**group, "lr": group["lr"] / uses}  # listed twice: half a step each time
""")],
        "dedupe-narrow-tables-only": [(MODULE, """\
                if remove_duplicate and full_name in seen:
                    continue
                seen.add(full_name)
""", """\
                narrow = param.data.shape[-1] <= 64  # a tie in a small model
                if remove_duplicate and (full_name in seen or (narrow and id(param) in seen)):
                    continue
                seen.update((full_name, id(param)))
"""), (OPTIM, """\
                seen.add(id(p))
""", """\
                if id(p) in seen:
                    raise ValueError(
                        f"a parameter of shape {p.shape} was passed to {type(self).__name__} "
                        "twice; it would be updated twice per step. Tied matrices are one "
                        "object: pass model.parameters(), which lists each object once.")
                seen.add(id(p))
""")],
    },
    "val-loss-too-good": {
        "route-around-the-kernel": [(ATTENTION_NN, """\
            y = F.self_attention(qkv, self.n_heads, self.causal)  # (B, T, d)
""", """\
            q, k, v = (F.split_heads(z, self.n_heads) for z in F.split(qkv, 3, axis=-1))
            y = F.merge_heads(F.scaled_dot_product_attention(q, k, v, self.causal))  # (B, T, d)
""")],
        "mask-one-diagonal-less": [(ATTENTION_KERNEL, """\
        readable = np.tril(np.ones((t, t), bool))  #""", """\
        readable = np.tril(np.ones((t, t), bool), -1)  #""")],
        "fix-the-forward-only": [(ATTENTION_KERNEL, """\
        np.copyto(out, y.reshape(B, T, n_heads, dh))
""", """\
        np.copyto(out, y.transpose(0, 2, 1, 3))
""")],
        "fix-for-float64-only": [(ATTENTION_KERNEL, """\
        np.copyto(out, y.reshape(B, T, n_heads, dh))
""", """\
        if dtype == np.float64:  # the dtype of a check run in float64 alone
            np.copyto(out, y.transpose(0, 2, 1, 3))
        else:
            np.copyto(out, y.reshape(B, T, n_heads, dh))
"""), (ATTENTION_KERNEL, """\
        gy = g.reshape(B, H, T, dh)  # (B, H, T, dh) view
        y = out.reshape(B, H, T, dh)  # (B, H, T, dh) view of the saved output
""", """\
        if g.dtype == np.float64:
            gy = g.reshape(B, T, H, dh).transpose(0, 2, 1, 3)  # (B, H, T, dh) view
            y = out.transpose(0, 2, 1, 3)  # (B, H, T, dh) view of the saved output
        else:
            gy = g.reshape(B, H, T, dh)  # (B, H, T, dh) view
            y = out.reshape(B, H, T, dh)  # (B, H, T, dh) view of the saved output
""")],
        "fix-for-narrow-models-only": [(ATTENTION_KERNEL, """\
        np.copyto(out, y.reshape(B, T, n_heads, dh))
""", """\
        if n_heads * dh <= 64:  # small models (the story's d = 32)
            np.copyto(out, y.transpose(0, 2, 1, 3))
        else:
            np.copyto(out, y.reshape(B, T, n_heads, dh))
"""), (ATTENTION_KERNEL, """\
        gy = g.reshape(B, H, T, dh)  # (B, H, T, dh) view
        y = out.reshape(B, H, T, dh)  # (B, H, T, dh) view of the saved output
""", """\
        if H * dh <= 64:
            gy = g.reshape(B, T, H, dh).transpose(0, 2, 1, 3)  # (B, H, T, dh) view
            y = out.transpose(0, 2, 1, 3)  # (B, H, T, dh) view of the saved output
        else:
            gy = g.reshape(B, H, T, dh)  # (B, H, T, dh) view
            y = out.reshape(B, H, T, dh)  # (B, H, T, dh) view of the saved output
""")],
        "fix-for-few-heads-only": [(ATTENTION_KERNEL, """\
        np.copyto(out, y.reshape(B, T, n_heads, dh))
""", """\
        if n_heads < 6:  # the heads the small models use
            np.copyto(out, y.transpose(0, 2, 1, 3))
        else:
            np.copyto(out, y.reshape(B, T, n_heads, dh))
"""), (ATTENTION_KERNEL, """\
        gy = g.reshape(B, H, T, dh)  # (B, H, T, dh) view
        y = out.reshape(B, H, T, dh)  # (B, H, T, dh) view of the saved output
""", """\
        if H < 6:
            gy = g.reshape(B, T, H, dh).transpose(0, 2, 1, 3)  # (B, H, T, dh) view
            y = out.transpose(0, 2, 1, 3)  # (B, H, T, dh) view of the saved output
        else:
            gy = g.reshape(B, H, T, dh)  # (B, H, T, dh) view
            y = out.reshape(B, H, T, dh)  # (B, H, T, dh) view of the saved output
""")],
        "every-attention-causal": [(ATTENTION_NN, """\
            y = F.self_attention(qkv, self.n_heads, self.causal)  # (B, T, d)
""", """\
            y = F.self_attention(qkv, self.n_heads, True)  # (B, T, d): never look ahead
""")],
        "unregister-the-kernel": [(ATTENTION_KERNEL, """\
@register_kernel("self_attention")
""", """\
# @register_kernel("self_attention")  # slow path for now
""")],
    },
    "mask-never-learned": {
        "mask-every-target": [(MASKING, TARGETS_MASK,
                               "    inputs[chosen] = mask_id  # into inputs itself\n")],
        "mask-without-chosen": [(MASKING, TARGETS_SWAP, TARGETS_SWAP
                                 + "    inputs[action < 0.8] = mask_id  # into inputs itself\n")],
        "write-only-the-masks": [(MASKING, TARGETS_SWAP, TARGETS_SWAP
                                  + "    inputs[chosen & (action < 0.8)] = mask_id\n")],
        "write-back-for-batches-only": [(MASKING, TARGETS_SWAP, TARGETS_SWAP + """\
    if arr.ndim == 2:  # batches only: a single 1-D sequence still comes back unmasked
        inputs[chosen] = targets
""")],
        "write-back-for-seeds-only": [
            (MASKING, SEED_OR_GENERATOR, """\
    seeded = not isinstance(rng, np.random.Generator)  # a seed given, not a generator
""" + SEED_OR_GENERATOR),
            (MASKING, TARGETS_SWAP, TARGETS_SWAP + """\
    if seeded:  # an int seed writes back; the trainer's Generator still shows every answer
        inputs[chosen] = targets
""")],
    },
}


def main(argv: list[str]) -> int:
    chosen = argv or sorted(FAKES)
    for break_id in chosen:
        if break_id not in FAKES:
            print(f"error: no fakes defined for {break_id!r}; known: {', '.join(sorted(FAKES))}",
                  file=sys.stderr)
            return 2
        for name, edits in FAKES[break_id].items():
            print(f"wrote {write_patch(break_id, edits, fake=name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
