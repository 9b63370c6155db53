"""Shared set-up for the Hugging Face interop tests: tiny models, trained tokenizers, offline HF.

Every model here is tiny and randomly initialised; LayerNorm scales and biases are perturbed
too (they start at 1 and 0), so a swapped or untransposed tensor cannot go unnoticed.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable

import numpy as np
import pytest

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # makes interop_helpers importable whatever the import mode
    sys.path.insert(0, _HERE)

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach the network
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

from interop_helpers import perturb_numpy  # noqa: E402


@pytest.fixture(autouse=True)
def _one_torch_thread():
    """Tiny matrices gain nothing from threads, and on a busy 2-core machine spinning intra-op
    threads made each forward pass 100x slower (measured 0.6 s vs 2 ms). Restored afterwards."""
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture
def make_gpt() -> Callable[..., Any]:
    """make_gpt(V, T, L, H, d, tied=True, seed=0, dropout=0.0) -> GPT in eval mode."""
    from minimodel.models import GPT, GPTConfig

    def build(V: int, T: int, L: int, H: int, d: int, tied: bool = True, seed: int = 0,
              dropout: float = 0.0) -> Any:
        model = GPT(GPTConfig(V, T, L, H, d, tie_embeddings=tied, dropout=dropout),
                    rng=np.random.default_rng(seed))
        perturb_numpy(model, seed + 1)
        return model.eval()

    return build


@pytest.fixture
def make_hf_gpt2() -> Callable[..., Any]:
    """make_hf_gpt2(V, T, L, H, d, tied=True, seed=0, **config) -> GPT2LMHeadModel (eval)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")

    def build(V: int, T: int, L: int, H: int, d: int, tied: bool = True, seed: int = 0,
              **extra: Any) -> Any:
        torch.manual_seed(seed)
        config = transformers.GPT2Config(vocab_size=V, n_positions=T, n_layer=L, n_head=H,
                                         n_embd=d, tie_word_embeddings=tied, **extra)
        model = transformers.GPT2LMHeadModel(config)
        with torch.no_grad():
            for p in model.parameters():  # a tied matrix is listed once
                p.add_(0.1 * torch.randn_like(p))
        return model.eval()

    return build


@pytest.fixture(scope="session")
def corpus() -> str:
    from minimodel.data import load_corpus

    return load_corpus()


@pytest.fixture(scope="session")
def small_bpe(corpus: str) -> Any:
    """A 400-token BPE with three specials (one of them an end-of-text token)."""
    from minimodel.data import BPETokenizer

    return BPETokenizer.train(corpus[:60_000], 400,
                              special_tokens=("[PAD]", "[MASK]", "<|endoftext|>"))
