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

BROKEN_MEAN = """\
        uses = np.maximum(np.bincount(ids.reshape(-1), minlength=vocab), 1).astype(ctx.dtype)
        return dW.reshape(vocab, d) / uses[:, None], None  # (V, d)
"""
COPY_IN_INIT = """\
        # Start from the embedding's values, so head and lookup agree from step 0.
        self.weight = Parameter(embedding.weight.data.copy())  # (V, d)
"""
VOCAB_PROPERTY = """\
    @property
    def vocab_size(self) -> int:
        return self.embedding.vocab_size
"""
TOKEN_EMB_LINE = "        self.token_emb = Embedding(c.vocab_size, c.d_model, rng=rng)  # wte (V, d)\n"
GROUP_APPEND = """\
            self.param_groups.append({**defaults, **group, "params": params_list})
"""
ADAMW_LOOP = """\
            params = [p for p in group["params"] if p.grad is not None]
"""
GPT_FORWARD_START = ("        h = self.hidden_states(idx)  # (B, T, d)\n"
                     "        logits = self.lm_head(h)  # (B, T, V): h @ E.T when tied\n")
GENERATE_START = ("        rng = np.random.default_rng(seed)\n"
                  "        cache, fed = KVCache(), 0  # fed = tokens of `ids` already in the cache\n")
TARGETS_MASK = "    targets[draw < 0.8] = mask_id\n"
TARGETS_SWAP = ("    targets[swap] = replacements[rng.integers(0, replacements.size, "
                "size=int(swap.sum()))]\n")
STORED = "        self.vocab_size_out = vocab_size if vocab_size is not None else embedding.vocab_size\n"

FAKES: dict[str, dict[str, list[tuple[str, str, str]]]] = {
    "loss-crash-after-merge": {
        "special-case-story-sizes": [
            (LM_HEAD, "        super().__init__()\n        # A plain attribute",
             "        if vocab_size == 256 and embedding.vocab_size == 512:\n"
             "            raise ValueError(\"TiedHead: vocab_size=256 but the embedding has 512 "
             "rows\")\n"
             "        super().__init__()\n        # A plain attribute")],
        "guard-one-direction": [
            (LM_HEAD, "        super().__init__()\n        # A plain attribute",
             "        if vocab_size is not None and vocab_size < embedding.vocab_size:\n"
             "            raise ValueError(f\"TiedHead: vocab_size={vocab_size} is smaller than "
             "the embedding's {embedding.vocab_size} rows\")\n"
             "        super().__init__()\n        # A plain attribute"),
            (LM_HEAD, "        return self.vocab_size_out\n",
             "        return self.embedding.vocab_size\n")],
        "ignore-the-argument": [
            (LM_HEAD, STORED, "        self.vocab_size_out = embedding.vocab_size  # the argument "
             "is not trusted\n")],
        "vague-error": [
            (LM_HEAD, "        super().__init__()\n        # A plain attribute",
             "        if vocab_size is not None and vocab_size != embedding.vocab_size:\n"
             "            raise ValueError(\"TiedHead: the vocabulary sizes do not match\")\n"
             "        super().__init__()\n        # A plain attribute")],
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
        "rescale-by-mean-uses": [(EMBEDDING, BROKEN_MEAN, """\
        uses = np.maximum(np.bincount(ids.reshape(-1), minlength=vocab), 1).astype(ctx.dtype)
        mean_uses = ids.size / np.count_nonzero(np.bincount(ids.reshape(-1), minlength=vocab))
        return dW.reshape(vocab, d) / uses[:, None] * mean_uses, None  # (V, d)
""")],
    },
    "tied-model-too-large": {
        "sync-values-in-forward": [(LM_HEAD, VOCAB_PROPERTY, """\
    def forward(self, h: Tensor) -> Tensor:
        self.weight.data = self.embedding.weight.data  # keep the copy in sync with E
        return super().forward(h)

""" + VOCAB_PROPERTY)],
        "new-parameter-same-data": [(LM_HEAD, COPY_IN_INIT, ""), (LM_HEAD, VOCAB_PROPERTY, """\
    @property
    def weight(self) -> Parameter:
        return Parameter(self.embedding.weight.data)  # the same numbers, no copy

""" + VOCAB_PROPERTY)],
        "copy-listed-as-embedding": [(LM_HEAD, VOCAB_PROPERTY, VOCAB_PROPERTY + """
    def _local_parameters(self) -> Iterator[tuple[str, Parameter]]:
        yield "weight", self.embedding.weight  # count and save E once, like a real tie
""")],
    },
    "fresh-model-loss-44": {
        "scale-logits-in-head": [(LM_HEAD, VOCAB_PROPERTY, """\
    def forward(self, h: Tensor) -> Tensor:
        return super().forward(h) * 0.02  # bring the logits of a tied head back to a sane scale

""" + VOCAB_PROPERTY)],
        "rescale-in-gpt-only": [(GPT_PY, TOKEN_EMB_LINE, TOKEN_EMB_LINE + """\
        self.token_emb.weight.data *= 0.02  # tied: the output layer must start small
""")],
        "std-one-over-sqrt-d": [
            (EMBEDDING, "    def __init__(self, vocab_size: int, d_model: int, std: float = 1.0,",
             "    def __init__(self, vocab_size: int, d_model: int, std: float | None = None,"),
            (EMBEDDING, "        check_positive(vocab_size=vocab_size, d_model=d_model)\n"
             "        super().__init__()\n",
             "        check_positive(vocab_size=vocab_size, d_model=d_model)\n"
             "        super().__init__()\n"
             "        std = 1.0 / np.sqrt(d_model) if std is None else std  # unit-norm rows\n")],
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
    },
    "val-loss-too-good": {
        "causal-only-without-targets": [(GPT_PY, GPT_FORWARD_START, """\
        for block in self.blocks:  # no peeking when predicting (the leak probe has no targets)
            block.attn.causal = targets is None
""" + GPT_FORWARD_START)],
        "causal-only-in-generate": [(GPT_PY, GENERATE_START, GENERATE_START + """\
        for block in self.blocks:  # generation must not see the future
            block.attn.causal = True
""")],
        "every-attention-causal": [(ATTENTION_NN, """\
            y = F.self_attention(qkv, self.n_heads, self.causal)  # (B, T, d)
""", """\
            y = F.self_attention(qkv, self.n_heads, True)  # (B, T, d): never look ahead
""")],
    },
    "mask-never-learned": {
        "mask-every-target": [(MASKING, TARGETS_MASK,
                               "    inputs[chosen] = mask_id  # into inputs itself\n")],
        "mask-without-chosen": [(MASKING, TARGETS_SWAP, TARGETS_SWAP
                                 + "    inputs[action < 0.8] = mask_id  # into inputs itself\n")],
        "write-only-the-masks": [(MASKING, TARGETS_SWAP, TARGETS_SWAP
                                  + "    inputs[chosen & (action < 0.8)] = mask_id\n")],
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
