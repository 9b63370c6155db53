"""`minimodel doctor` on a GPT-2-small-size folder: wall time and peak memory, without torch.

    python benchmarks/doctor_gpt2_small.py                 # build in a temporary folder, 1 run
    python benchmarks/doctor_gpt2_small.py --rounds 3 --keep /tmp/gpt2-small --json out.json

The folder is what ``save_pretrained`` writes for GPT-2 small (V = 50257, d = 768, 12 layers,
124 M parameters, tied: no lm_head.weight), with random float32 weights written by
``safetensors.numpy`` and a vocab.json of 50257 tokens, so neither the builder nor the doctor
needs torch. The doctor runs in a fresh process (``python -m minimodel doctor DIR --json``)
with torch and transformers hidden from it (``sys.modules`` entries set to None, so importing
them fails); its wall time, CPU time (user + system: what a shared machine's load does not inflate) and
peak resident memory (``getrusage(RUSAGE_CHILDREN)``, the child's ``ru_maxrss``) are printed. Every check runs, the unreachable-token one included
(sampled at this size: its line says how many rows). Targets: under 10 s and under 1 GiB.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from minimodel._fileio import atomic_write_json
from minimodel.commands._argtypes import at_least

V, D, N_LAYER, N_CTX = 50257, 768, 12, 1024
TARGET_S, TARGET_BYTES = 10.0, 2**30
# Runs the doctor with torch and transformers unimportable, as on a machine without them.
CHILD = ("import sys; sys.modules.update(torch=None, transformers=None); "
         "from minimodel.cli import main; sys.exit(main(['doctor', sys.argv[1], '--json']))")


def gpt2_small_tensors(rng: np.random.Generator) -> dict[str, np.ndarray]:
    """GPT-2 small's state dict as save_pretrained writes it for a tied model (Conv1D layout)."""
    def normal(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02)

    t = {"transformer.wte.weight": normal(V, D), "transformer.wpe.weight": normal(N_CTX, D),
         "transformer.ln_f.weight": np.ones(D, np.float32),
         "transformer.ln_f.bias": np.zeros(D, np.float32)}
    for i in range(N_LAYER):
        p = f"transformer.h.{i}."
        t.update({p + "ln_1.weight": np.ones(D, np.float32), p + "ln_1.bias": np.zeros(D, np.float32),
                  p + "ln_2.weight": np.ones(D, np.float32), p + "ln_2.bias": np.zeros(D, np.float32),
                  p + "attn.c_attn.weight": normal(D, 3 * D), p + "attn.c_attn.bias": np.zeros(3 * D, np.float32),
                  p + "attn.c_proj.weight": normal(D, D), p + "attn.c_proj.bias": np.zeros(D, np.float32),
                  p + "mlp.c_fc.weight": normal(D, 4 * D), p + "mlp.c_fc.bias": np.zeros(4 * D, np.float32),
                  p + "mlp.c_proj.weight": normal(4 * D, D), p + "mlp.c_proj.bias": np.zeros(D, np.float32)})
    return t


def build(folder: Path) -> int:
    """Write the folder; returns its parameter count."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    tensors = gpt2_small_tensors(np.random.default_rng(0))
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": V,
              "n_embd": D, "n_layer": N_LAYER, "n_head": 12, "n_positions": N_CTX,
              "tie_word_embeddings": True, "bos_token_id": V - 1, "eos_token_id": V - 1}
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    vocab = {f"t{i}": i for i in range(V - 1)} | {"<|endoftext|>": V - 1}
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    return sum(a.size for a in tensors.values())


def measure(folder: Path) -> dict:
    """One doctor run in a fresh process: wall seconds, the child's peak RSS, its verdict."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, str(folder)], capture_output=True,
                          text=True)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"the doctor failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    # ru_maxrss is the largest of the children waited for so far, in KiB on Linux; each round
    # is its own process, so a later, smaller round cannot lower it: report the maximum.
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = after.ru_maxrss * 1024
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    report = json.loads(proc.stdout)
    reach = next(f for f in report["findings"] if f["check"] == "reachability")
    return {"wall_s": wall, "cpu_s": cpu, "peak_rss_bytes": peak, "exit_code": proc.returncode,
            "findings": [(f["status"], f["key"]) for f in report["findings"]],
            "reachability": {k: reach["data"][k] for k in ("method", "checked", "reachable")}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=at_least(1), default=1, help="doctor runs (default 1)")
    parser.add_argument("--keep", metavar="DIR", default=None,
                        help="build the folder here and keep it (reused when it exists)")
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the figures")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp) / "gpt2-small"
        if not (folder / "model.safetensors").is_file():
            n = build(folder)
            print(f"built {folder}: {n:,} parameters, "
                  f"{(folder / 'model.safetensors').stat().st_size / 2**20:.0f} MiB")
        runs = [measure(folder) for _ in range(args.rounds)]
    best = min(r["wall_s"] for r in runs)
    peak = max(r["peak_rss_bytes"] for r in runs)
    print(f"doctor: wall {best:.2f} s (best of {len(runs)}; target < {TARGET_S:.0f} s), "
          f"peak memory {peak / 2**20:.0f} MiB (target < {TARGET_BYTES / 2**20:.0f} MiB), "
          f"CPU {min(r['cpu_s'] for r in runs):.2f} s, exit {runs[0]['exit_code']}")
    print(f"unreachable-token check: {runs[0]['reachability']}")
    print("findings: " + ", ".join(f"{s} {k}" for s, k in runs[0]["findings"]))
    if args.json:
        atomic_write_json(args.json, {"runs": runs, "best_wall_s": best, "peak_rss_bytes": peak})
    return 0 if best < TARGET_S and peak < TARGET_BYTES else 1


if __name__ == "__main__":
    sys.exit(main())
