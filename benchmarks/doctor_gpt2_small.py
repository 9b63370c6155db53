"""`minimodel doctor` on a GPT-2-small-size folder: wall time and peak memory, per layout.

    python benchmarks/doctor_gpt2_small.py                 # every layout, 1 run each
    python benchmarks/doctor_gpt2_small.py --rounds 3 --layouts safetensors-tied bin-untied
    python benchmarks/doctor_gpt2_small.py --without-transformers --layouts safetensors-tied

The folders are what ``save_pretrained`` writes for GPT-2 small (V = 50257, d = 768, 12 layers,
124 M parameters) with random float32 weights, in four layouts: ``model.safetensors`` or
``pytorch_model.bin`` (a torch pickle), tied (no ``lm_head.weight`` in safetensors; in the
pickle both names share one storage, as ``torch.save(model.state_dict())`` writes it) or untied
(a second V x d matrix), each with a vocab.json of 50257 tokens. The doctor runs in a fresh
process (``minimodel doctor DIR --json``) with the packages installed here, so transformers
names the matrices when it is installed (``--without-transformers`` hides torch and
transformers, as on a machine without them; the pickles then cannot be read). Printed per
layout: wall time, CPU time (user + system, the helper process's included: what a shared
machine's load does not inflate) and the peak resident memory: ``VmHWM`` of the doctor's
process read at its exit, plus that of the process it starts to ask transformers on a first run
(``ru_maxrss`` would include the benchmark's own size at the fork). Every check runs, the
unreachable-token one included (sampled at this size). With
transformers, each layout is run first with an empty cache (the doctor asks transformers, which
imports torch and the model's code) and then ``--rounds`` times with the cache that first run
wrote (what every later run on the same config does); the cache is a temporary folder, never
the user's. Targets: under 10 s and under 1 GiB, in every layout.
"""

from __future__ import annotations

import argparse
import json
import os
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
LAYOUTS = ("safetensors-tied", "safetensors-untied", "bin-tied", "bin-untied")
# Runs the doctor and reports the peak memory (KiB) on stderr's last line: its own and that of
# the process it starts to ask transformers (first runs); with HIDE, torch and transformers are
# unimportable, as on a machine without them. The peak is VmHWM (KiB), the high-water mark of a
# process's own memory: ru_maxrss would also count the parent's resident size at the fork (the
# benchmark holds the built model). The helper process gets one more argument, a file, and
# writes its VmHWM there as it exits; the two peaks are added (both may be resident at once).
VMHWM = "int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))"
PEAK_AT_EXIT = ("import atexit, re, sys; "
                f"atexit.register(lambda: open(sys.argv[-1], 'w').write(str({VMHWM}))); ")
CHILD = ("import os, sys, re{hide}; import minimodel.doctor.background as bg; "
         f"bg.CHILD = [*bg.CHILD[:2], {PEAK_AT_EXIT!r} + bg.CHILD[2], *bg.CHILD[3:], sys.argv[2]]; "
         "from minimodel.cli import main; "
         "code = main(['doctor', sys.argv[1], '--json']); "
         f"own = {VMHWM}; "
         "helper = int(open(sys.argv[2]).read()) if os.path.exists(sys.argv[2]) else 0; "
         "print('PEAK', own, helper, file=sys.stderr); "
         "sys.exit(code)")
HIDE = "; sys.modules.update(torch=None, transformers=None)"


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


def build(folder: Path, layout: str) -> int:
    """Write the folder in ``layout``; returns its parameter count."""
    from safetensors.numpy import save_file

    folder.mkdir(parents=True, exist_ok=True)
    tensors = gpt2_small_tensors(np.random.default_rng(0))
    tied = layout.endswith("-tied")
    if not tied:
        tensors["lm_head.weight"] = gpt2_small_tensors(np.random.default_rng(1))[
            "transformer.wte.weight"]
    if layout.startswith("bin"):
        import torch  # only to write the pickle layouts

        state = {k: torch.from_numpy(v) for k, v in tensors.items()}
        if tied:  # one storage under two names, as torch.save(model.state_dict()) writes it
            state["lm_head.weight"] = state["transformer.wte.weight"]
        torch.save(state, folder / "pytorch_model.bin")
    else:
        save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "vocab_size": V,
              "n_embd": D, "n_layer": N_LAYER, "n_head": 12, "n_positions": N_CTX,
              "tie_word_embeddings": tied, "bos_token_id": V - 1, "eos_token_id": V - 1}
    (folder / "config.json").write_text(json.dumps(config, indent=2), encoding="utf-8")
    vocab = {f"t{i}": i for i in range(V - 1)} | {"<|endoftext|>": V - 1}
    (folder / "vocab.json").write_text(json.dumps(vocab), encoding="utf-8")
    return sum(a.size for a in tensors.values())  # untied: the head's V x d more


def measure(folder: Path, hide: bool, cache: Path) -> dict:
    """One doctor run in a fresh process (its cache in ``cache``): wall seconds, CPU, its own
    peak RSS, its verdict."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    helper_peak = cache.with_name(f"{cache.name}-helper-peak")  # beside the cache folder
    helper_peak.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, "-c", CHILD.format(hide=HIDE if hide else ""),
                           str(folder), str(helper_peak)], capture_output=True, text=True,
                          env={**os.environ, "XDG_CACHE_HOME": str(cache)})
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"the doctor failed (exit {proc.returncode}):\n{proc.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    own_kib, helper_kib = map(int, proc.stderr.strip().splitlines()[-1].split()[1:])  # KiB
    report = json.loads(proc.stdout)
    reach = next(f for f in report["findings"] if f["check"] == "reachability")
    return {"wall_s": wall, "cpu_s": cpu, "peak_rss_bytes": (own_kib + helper_kib) * 1024,
            "own_peak_bytes": own_kib * 1024, "helper_peak_bytes": helper_kib * 1024,
            "exit_code": proc.returncode, "source": report["source"],
            "stderr_lines": len(proc.stderr.strip().splitlines()) - 1,
            "findings": [(f["status"], f["key"]) for f in report["findings"]],
            "reachability": {k: reach["data"][k] for k in ("method", "checked", "reachable")}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=at_least(1), default=1, help="doctor runs per layout")
    parser.add_argument("--layouts", nargs="*", choices=LAYOUTS, default=list(LAYOUTS))
    parser.add_argument("--without-transformers", action="store_true",
                        help="hide torch and transformers from the doctor")
    parser.add_argument("--keep", metavar="DIR", default=None,
                        help="build the folders here and keep them (reused when they exist)")
    parser.add_argument("--json", metavar="FILE", default=None, help="also write the figures")
    args = parser.parse_args()
    results, ok = {}, True
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.keep) if args.keep else Path(tmp)
        for layout in args.layouts:
            folder = root / f"gpt2-small-{layout}"
            if not (folder / "config.json").is_file():
                n = build(folder, layout)
                size = sum(p.stat().st_size for p in folder.iterdir())
                print(f"built {folder}: {n:,} parameters, {size / 2**20:.0f} MiB on disk")
            cache = Path(tmp) / f"cache-{layout}"
            kinds = [("table only" if args.without_transformers else "cached", args.rounds)]
            if not args.without_transformers:
                kinds.insert(0, ("first run", 1))
            for kind, rounds in kinds:
                runs = [measure(folder, args.without_transformers, cache) for _ in range(rounds)]
                best = min(r["wall_s"] for r in runs)
                peak = max(r["peak_rss_bytes"] for r in runs)
                helper = max(r["helper_peak_bytes"] for r in runs)
                ok = ok and best < TARGET_S and peak < TARGET_BYTES
                print(f"{layout:20s} {kind:9s} wall {best:.2f} s (best of {len(runs)}; target < "
                      f"{TARGET_S:.0f} s), peak memory {peak / 2**20:.0f} MiB (target < "
                      f"{TARGET_BYTES / 2**20:.0f} MiB; "
                      f"{'' if helper else 'no '}helper process"
                      f"{f' {helper / 2**20:.0f} MiB' if helper else ''}), "
                      f"CPU {min(r['cpu_s'] for r in runs):.2f} s, exit {runs[0]['exit_code']}, stderr lines {runs[0]['stderr_lines']}")
                print(f"  roles from {runs[0]['source']}; reachability {runs[0]['reachability']}")
                print("  findings: " + ", ".join(f"{s} {k}" for s, k in runs[0]["findings"]))
                results[f"{layout} {kind}"] = {"runs": runs, "best_wall_s": best,
                                               "peak_rss_bytes": peak}
    if args.json:
        atomic_write_json(args.json, results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
