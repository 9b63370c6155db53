"""Generation speed with the KV cache: minimodel's GPT.generate against transformers' generate.

    python benchmarks/generate_vs_hf.py                   # both sizes, 3 rounds
    python benchmarks/generate_vs_hf.py --rounds 1 --configs small --json out.json

Same model (minimodel's random-initialised GPT, exported to GPT2LMHeadModel so both hold the
same weights), greedy decoding, a prompt of 16 tokens and 256 new tokens, 2 threads each.
Printed: new tokens per second (median of the rounds; each implementation in a fresh process,
alternating), the ratio minimodel / transformers (the target is >= 1), and minimodel's
per-token time with a 256-token prompt against a 16-token one (the KV cache keeps it near 1).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from minimodel._fileio import atomic_write_json
from minimodel.commands._argtypes import at_least, comma_choices

CONFIGS = {"small": dict(vocab_size=512, d_model=128), "large": dict(vocab_size=8192, d_model=256)}
N_LAYER, N_HEAD, NEW, THREADS = 4, 4, 256, 2
WORKER = "--worker"


def _model(config: str):
    import numpy as np

    from minimodel.models.gpt import GPT, GPTConfig

    c = CONFIGS[config]
    return GPT(GPTConfig(vocab_size=c["vocab_size"], block_size=512, n_layer=N_LAYER,
                         n_head=N_HEAD, d_model=c["d_model"]), rng=np.random.default_rng(0))


def worker(impl: str, config: str, prompt_len: int) -> dict:
    import numpy as np

    from minimodel.runtime import configure

    configure(THREADS)
    model = _model(config)
    prompt = np.random.default_rng(1).integers(0, model.config.vocab_size, (1, prompt_len))
    if impl == "minimodel":
        model.generate(prompt, 8, temperature=0)  # warm-up
        start = time.perf_counter()
        out = model.generate(prompt, NEW, temperature=0)
        seconds = time.perf_counter() - start
        tokens = out.shape[1] - prompt_len
    else:
        import tempfile

        import torch
        from transformers import GPT2LMHeadModel

        from minimodel.interop import to_hf

        torch.set_num_threads(THREADS)
        folder = tempfile.mkdtemp()
        to_hf(model, folder)
        hf = GPT2LMHeadModel.from_pretrained(folder).eval()
        ids = torch.tensor(prompt)
        kwargs = dict(attention_mask=torch.ones_like(ids), do_sample=False, eos_token_id=None,
                      pad_token_id=0)
        with torch.no_grad():
            hf.generate(ids, max_new_tokens=8, **kwargs)  # warm-up
            start = time.perf_counter()
            out = hf.generate(ids, max_new_tokens=NEW, min_new_tokens=NEW, **kwargs)
            seconds = time.perf_counter() - start
        tokens = out.shape[1] - prompt_len
    return {"tokens_per_s": tokens / seconds, "ms_per_token": 1000 * seconds / tokens}


def _run(impl: str, config: str, prompt_len: int) -> dict:
    done = subprocess.run([sys.executable, __file__, WORKER, impl, config, str(prompt_len)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{impl} {config} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == WORKER:
        print(json.dumps(worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=at_least(1), default=3,
                        help="interleaved fresh-process rounds, median reported (default 3)")
    parser.add_argument("--configs", default=tuple(CONFIGS),
                        type=comma_choices(tuple(CONFIGS), "config"),
                        help="comma list of model sizes: small (d=128), large (d=256)")
    parser.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    args = parser.parse_args()
    table = []
    for config in args.configs:
        runs: dict[str, list[dict]] = {"minimodel": [], "transformers": [], "minimodel-256": []}
        for round_ in range(args.rounds):
            order = ["minimodel", "transformers"] if round_ % 2 == 0 else ["transformers",
                                                                             "minimodel"]
            for impl in order:
                runs[impl].append(_run(impl, config, 16))
            runs["minimodel-256"].append(_run("minimodel", config, 256))
        med = {k: statistics.median(r["tokens_per_s"] for r in v) for k, v in runs.items()}
        flat = (statistics.median(r["ms_per_token"] for r in runs["minimodel-256"])
                / statistics.median(r["ms_per_token"] for r in runs["minimodel"]))
        c = CONFIGS[config]
        table.append({"config": f"{config} d={c['d_model']} V={c['vocab_size']}",
                      "minimodel_tokens_per_s": med["minimodel"],
                      "transformers_tokens_per_s": med["transformers"],
                      "ratio": med["minimodel"] / med["transformers"],
                      "per_token_prompt256_over_prompt16": flat})
    print(f"greedy generation, prompt 16, {NEW} new tokens, {N_LAYER} layers, {N_HEAD} heads, "
          f"{THREADS} threads, median of {args.rounds} rounds")
    print(f"{'config':<24} {'minimodel tok/s':>16} {'transformers tok/s':>19} {'ratio':>7} "
          f"{'per-token 256/16':>17}")
    for r in table:
        print(f"{r['config']:<24} {r['minimodel_tokens_per_s']:>16.1f} "
              f"{r['transformers_tokens_per_s']:>19.1f} {r['ratio']:>7.2f} "
              f"{r['per_token_prompt256_over_prompt16']:>17.2f}")
    if args.json:
        atomic_write_json(args.json, table)  # never a half-written file


if __name__ == "__main__":
    main()
