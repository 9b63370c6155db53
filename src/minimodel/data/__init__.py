"""Data: tokenizers, the bundled corpus, LM batching, MLM masking, CBOW and word similarity.

This package depends only on NumPy and the standard library, so it can be used (and
tested) without the autograd engine::

    from minimodel.data import BPETokenizer, load_corpus, train_val_split, get_batch
    text = load_corpus()                                  # bundled Shakespeare, ~1 MB
    tok = BPETokenizer.train(text, vocab_size=2048, special_tokens=("[PAD]", "[MASK]"))
    train, val = train_val_split(tok.encode(text), val_fraction=0.1)
    x, y = get_batch(train, batch_size=8, block_size=64, rng=0)   # (8, 64) int64 each
"""

from minimodel.data.cbow import (
    UNK,
    WordVocab,
    build_word_vocab,
    cbow_examples,
    iter_cbow_batches,
)
from minimodel.data.corpus import (
    BUNDLED_CORPUS,
    BUNDLED_CORPUS_SHA256,
    check_corpus_length,
    get_batch,
    iter_eval_batches,
    load_corpus,
    train_val_split,
)
from minimodel.data.masking import IGNORE_INDEX, mask_tokens
from minimodel.data.tokenizers import (
    MASK,
    PAD,
    BPETokenizer,
    ByteTokenizer,
    Tokenizer,
    check_vocab_match,
    load_tokenizer,
)
from minimodel.data.wordsim import WORD_SIMILARITY_SETS, load_word_similarity

__all__ = [
    "Tokenizer", "ByteTokenizer", "BPETokenizer", "load_tokenizer", "check_vocab_match",
    "PAD", "MASK", "UNK", "IGNORE_INDEX",
    "BUNDLED_CORPUS", "BUNDLED_CORPUS_SHA256", "load_corpus", "check_corpus_length",
    "train_val_split", "get_batch", "iter_eval_batches",
    "mask_tokens",
    "WordVocab", "build_word_vocab", "cbow_examples", "iter_cbow_batches",
    "WORD_SIMILARITY_SETS", "load_word_similarity",
]
