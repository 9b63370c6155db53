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
from minimodel.models import GPT, MaskedLM


def verify_hf_export(model: GPT | MaskedLM, out_dir: str | os.PathLike, tokenizer: Any = None,
                     seed: int = 0) -> dict[str, Any]:
    """Load ``out_dir`` with transformers and compare it to ``model`` (and ``tokenizer``).

    A GPT is compared with ``GPT2LMHeadModel`` (logits at every position, then greedy
    decoding); a MaskedLM with ``MegatronBertForMaskedLM`` (logits at masked positions, then
    the top-1 prediction there, see :func:`_compare_mlm`).

    Returns:
        ``{"max_abs_logit_diff", "tied", "hf_head_shares_wte", "greedy_equal",
        "tokenizer_equal"}``; ``tokenizer_equal`` is None without a tokenizer and
        ``greedy_equal`` means "same top-1 at the masked positions" for a MaskedLM. ``ok`` is
        True when the logits agree within 1e-4, the tie matches and the predictions agree.

    Raises:
        ImportError: torch or transformers is not installed.
    """
    try:
        import torch  # noqa: F401  (checked here; the comparisons import it themselves)
        import transformers  # heavy optional dependency (the test extra)
    except ImportError as exc:
        raise ImportError(f"verifying an export needs torch and transformers ({exc}). On a "
                          "machine without a GPU install the CPU build of torch (about 200 MB, "
                          "instead of several GB of CUDA packages): pip install torch "
                          "--index-url https://download.pytorch.org/whl/cpu && pip install "
                          "transformers") from None
    transformers.utils.logging.disable_progress_bar()  # our own line reports the result
    out = Path(out_dir)
    mlm = isinstance(model, MaskedLM)
    hf_class = transformers.MegatronBertForMaskedLM if mlm else transformers.GPT2LMHeadModel
    hf = hf_class.from_pretrained(str(out), local_files_only=True)
    hf.eval()
    tied = model.lm_head.weight is model.token_emb.weight
    shares = (hf.get_output_embeddings().weight.data_ptr()
              == hf.get_input_embeddings().weight.data_ptr())
    rng = np.random.default_rng(seed)
    cfg = model.config
    T = min(cfg.block_size, 16)
    ids = rng.integers(0, cfg.vocab_size, size=(2, T))
    was_training = model.training
    model.eval()
    try:
        if mlm:
            diff, greedy = _compare_mlm(model, hf, ids, tokenizer, rng)
        else:
            diff, greedy = _compare_gpt(model, hf, ids)
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


def _compare_mlm(model: MaskedLM, hf: Any, ids: np.ndarray, tokenizer: Any,
                 rng: np.random.Generator) -> tuple[float, bool]:
    """Max |logit difference| at ~15 % masked positions (at least one per row; the inputs
    there become ``[MASK]`` when the tokenizer has one), and whether the top-1 agrees."""
    import torch  # heavy optional dependency (the test extra)

    masked = rng.random(ids.shape) < 0.15
    masked[np.arange(ids.shape[0]), rng.integers(0, ids.shape[1], ids.shape[0])] = True
    mask_id = tokenizer.special_tokens.get("[MASK]") if tokenizer is not None else None
    inputs = np.where(masked, mask_id, ids) if mask_id is not None else ids
    with no_grad():
        ours = model.forward_masked(inputs, masked).data.astype(np.float64)  # (M, V)
    with torch.no_grad():
        theirs = hf(torch.from_numpy(inputs)).logits.double().numpy()[masked]  # (M, V)
    diff = float(np.max(np.abs(ours - theirs)))
    return diff, bool(np.array_equal(ours.argmax(-1), theirs.argmax(-1)))


def _compare_gpt(model: GPT, hf: Any, ids: np.ndarray) -> tuple[float, bool]:
    """Max |logit difference| at every position, and whether greedy decoding agrees."""
    import torch  # heavy optional dependency (the test extra)

    cfg = model.config
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
    return diff, greedy
