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

BROKEN_SCATTER = """\
        dW = np.zeros((vocab, d), dtype=ctx.dtype)  # (V, d)
        dW[ids.reshape(-1)] += g.reshape(-1, d)  # each row of g added at its token id
        return dW, None
"""
COPY_IN_INIT = """\
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
LABELS_ALL = "    labels = x.copy()  # (N, T) the original ids\n"
RANDOM_FILL = ("    inputs[to_random] = replacements[rng.integers(0, replacements.size, "
               "size=int(to_random.sum()))]\n")
CHOSEN_LINE = "    chosen = (rng.random(x.shape) < mask_prob) & candidate  # (N, T)\n"
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
        "multiply-by-count": [(EMBEDDING, BROKEN_SCATTER, """\
        dW = np.zeros((vocab, d), dtype=ctx.dtype)  # (V, d)
        flat_ids = ids.reshape(-1)  # (N,)
        counts = np.bincount(flat_ids, minlength=vocab)  # (V,) uses of each row
        dW[flat_ids] = g.reshape(-1, d) * counts[flat_ids, None]  # a row used k times: k x
        return dW, None
""")],
        "add-per-example": [(EMBEDDING, BROKEN_SCATTER, """\
        dW = np.zeros((vocab, d), dtype=ctx.dtype)  # (V, d)
        per_example = ids.reshape(ids.shape[0], -1) if ids.ndim > 1 else ids.reshape(-1, 1)
        g_rows = g.reshape(per_example.shape + (d,))
        for example, grad in zip(per_example, g_rows):  # add each example's rows in turn
            dW[example] += grad
        return dW, None
""")],
        "add-at-for-1d-only": [(EMBEDDING, BROKEN_SCATTER, """\
        dW = np.zeros((vocab, d), dtype=ctx.dtype)  # (V, d)
        if ids.ndim == 1:
            np.add.at(dW, ids, g)  # repeated ids add up
        else:
            dW[ids.reshape(-1)] += g.reshape(-1, d)  # each row of g added at its token id
        return dW, None
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
        "label-where-input-changed": [(MASKING, LABELS_ALL, ""), (MASKING, RANDOM_FILL, RANDOM_FILL + """\
    labels = np.where(inputs != x, x, IGNORE_INDEX)  # (N, T) score what was corrupted
""")],
        "label-only-mask": [(MASKING, LABELS_ALL, ""), (MASKING, RANDOM_FILL, RANDOM_FILL + """\
    labels = np.where(inputs == mask_id, x, IGNORE_INDEX)  # (N, T) score the [MASK]s
""")],
        "labels-before-promotion": [(MASKING, LABELS_ALL, ""), (MASKING, CHOSEN_LINE, CHOSEN_LINE + """\
    labels = np.where(chosen, x, IGNORE_INDEX)  # (N, T)
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
