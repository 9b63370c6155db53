"""Check an export with the real client: load it with transformers and compare to minimodel.

Used by ``minimodel export --verify``. Needs ``torch`` and ``transformers``; everything runs
offline from the exported folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from minimodel.autograd import no_grad
from minimodel.interop.tokenizer_import import PROBE_TEXT
from minimodel.models import GPT


def verify_hf_export(model: GPT, out_dir: str | os.PathLike, tokenizer: Any = None,
                     seed: int = 0) -> dict[str, Any]:
    """Load ``out_dir`` with transformers and compare it to ``model`` (and ``tokenizer``).

    Returns:
        ``{"max_abs_logit_diff", "tied", "hf_head_shares_wte", "greedy_equal",
        "tokenizer_equal"}``; ``tokenizer_equal`` is None without a tokenizer. ``ok`` is True
        when the logits agree within 1e-4, the tie matches and greedy decoding agrees.

    Raises:
        ImportError: torch or transformers is not installed.
    """
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ImportError(f"verifying an export needs torch and transformers ({exc}). On a "
                          "machine without a GPU install the CPU build of torch (about 200 MB, "
                          "instead of several GB of CUDA packages): pip install torch "
                          "--index-url https://download.pytorch.org/whl/cpu && pip install "
                          "transformers") from None
    out = Path(out_dir)
    hf = transformers.GPT2LMHeadModel.from_pretrained(str(out), local_files_only=True)
    hf.eval()
    tied = model.lm_head.weight is model.token_emb.weight
    shares = hf.lm_head.weight.data_ptr() == hf.transformer.wte.weight.data_ptr()
    rng = np.random.default_rng(seed)
    cfg = model.config
    T = min(cfg.block_size, 16)
    ids = rng.integers(0, cfg.vocab_size, size=(2, T))
    was_training = model.training
    model.eval()
    try:
        with no_grad():
            ours = model(ids)[0].data.astype(np.float64)
        with torch.no_grad():
            theirs = hf(torch.from_numpy(ids)).logits.double().numpy()
        diff = float(np.max(np.abs(ours - theirs)))
        # Greedy decoding; eos_token_id=None because minimodel's generate never stops early,
        # and the whole sequence must fit in n_positions (transformers does not crop).
        prompt_len = max(1, min(4, cfg.block_size // 2))
        new = min(8, cfg.block_size - prompt_len)
        prompt = ids[:, :prompt_len]
        mine = model.generate(prompt, new, temperature=0)
        with torch.no_grad():
            hf_gen = hf.generate(torch.from_numpy(prompt), max_new_tokens=new, do_sample=False,
                                 eos_token_id=None, pad_token_id=None,
                                 attention_mask=torch.ones_like(torch.from_numpy(prompt)))
        greedy = bool(np.array_equal(mine, hf_gen.numpy()))
    finally:
        model.train(was_training)
    tok_equal = None
    if tokenizer is not None:
        hf_tok = transformers.AutoTokenizer.from_pretrained(str(out), local_files_only=True)
        text = PROBE_TEXT + " " + " x".join(tokenizer.special_tokens)
        tok_equal = hf_tok.encode(text, verbose=False) == tokenizer.encode(text)
    ok = diff <= 1e-4 and tied == shares and greedy and tok_equal is not False
    return {"ok": ok, "max_abs_logit_diff": diff, "tied": tied, "hf_head_shares_wte": shares,
            "greedy_equal": greedy, "tokenizer_equal": tok_equal}
