"""MLM and CBOW training steps: minimodel against the same models written in PyTorch.

    python benchmarks/mlm_cbow_vs_torch.py                 # 3 rounds
    python benchmarks/mlm_cbow_vs_torch.py --rounds 1 --json out.json

One training step = forward, loss, backward, AdamW step, zero_grad, 2 threads each, each
implementation in its own process (alternating), median of 10 timed steps after 3 warm-up
steps, median over the rounds.

* ``mlm``: a tied masked LM (d=256, V=8192, 4 layers, 4 heads, B=16, T=128): the encoder is
  GPT's trunk without the causal mask; 15 % of positions are scored, and the head projects
  only those rows (minimodel's MaskedLM; in PyTorch ``h[mask] @ E.T`` + cross-entropy).
* ``cbow-softmax``: untied CBOW (V=5000, d=64, window 2, batch 1024), full softmax.
* ``cbow-negative``: the same with negative sampling, K=5 noise words per example.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

import numpy as np

from minimodel._fileio import atomic_write_json
from minimodel.commands._argtypes import at_least, comma_choices

THREADS, WARMUP, STEPS = 2, 3, 10
MLM = dict(V=8192, d=256, L=4, H=4, B=16, T=128)
CBOW = dict(V=5000, d=64, window=2, B=1024, K=5)
CASES = ("mlm", "cbow-softmax", "cbow-negative")
WORKER = "--worker"


def _mlm_data():
    rng = np.random.default_rng(0)
    x = rng.integers(0, MLM["V"], (MLM["B"], MLM["T"]))
    labels = np.where(rng.random(x.shape) < 0.15, x, -100)
    return x, labels


def _cbow_data():
    rng = np.random.default_rng(0)
    ctx = rng.integers(0, CBOW["V"], (CBOW["B"], 2 * CBOW["window"]))
    tgt = rng.integers(0, CBOW["V"], CBOW["B"])
    neg = rng.integers(1, CBOW["V"], (CBOW["B"], CBOW["K"]))
    return ctx, tgt, neg


def minimodel_step(case: str):
    from minimodel import optim
    from minimodel.models import CBOW as MMCBOW, CBOWConfig, MaskedLM, MLMConfig

    if case == "mlm":
        model = MaskedLM(MLMConfig(vocab_size=MLM["V"], block_size=MLM["T"], n_layer=MLM["L"],
                                   n_head=MLM["H"], d_model=MLM["d"]),
                         rng=np.random.default_rng(0))
        x, labels = _mlm_data()
        loss_of = lambda: model.loss(x, labels)  # noqa: E731
    else:
        model = MMCBOW(CBOWConfig(vocab_size=CBOW["V"], d_model=CBOW["d"],
                                  window=CBOW["window"]), rng=np.random.default_rng(0))
        ctx, tgt, neg = _cbow_data()
        if case == "cbow-negative":
            loss_of = lambda: model.loss(ctx, tgt, neg)  # noqa: E731
        else:
            loss_of = lambda: model.loss(ctx, tgt)  # noqa: E731
    opt = optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)

    def step() -> None:
        loss = loss_of()
        loss.backward()
        opt.step()
        opt.zero_grad()
    return step


def torch_step(case: str):
    import torch
    import torch.nn as tnn
    import torch.nn.functional as TF

    torch.manual_seed(0)
    if case == "mlm":
        d, H = MLM["d"], MLM["H"]

        class Block(tnn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.ln_1, self.ln_2 = tnn.LayerNorm(d), tnn.LayerNorm(d)
                self.c_attn, self.c_proj = tnn.Linear(d, 3 * d), tnn.Linear(d, d)
                self.c_fc, self.c_out = tnn.Linear(d, 4 * d), tnn.Linear(4 * d, d)

            def forward(self, x):
                B, T, C = x.shape
                q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
                q, k, v = (t.view(B, T, H, C // H).transpose(1, 2) for t in (q, k, v))
                y = TF.scaled_dot_product_attention(q, k, v, is_causal=False)
                x = x + self.c_proj(y.transpose(1, 2).reshape(B, T, C))
                return x + self.c_out(TF.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

        class Encoder(tnn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.tok, self.pos = tnn.Embedding(MLM["V"], d), tnn.Embedding(MLM["T"], d)
                self.blocks = tnn.ModuleList(Block() for _ in range(MLM["L"]))
                self.ln_f = tnn.LayerNorm(d)

            def forward(self, x, labels):
                h = self.tok(x) + self.pos(torch.arange(x.shape[1]))
                for block in self.blocks:
                    h = block(h)
                h = self.ln_f(h)
                chosen = labels != -100
                logits = h[chosen] @ self.tok.weight.T  # tied head on the masked rows only
                return TF.cross_entropy(logits, labels[chosen])

        model = Encoder()
        x, labels = (torch.from_numpy(a) for a in _mlm_data())
        loss_of = lambda: model(x, labels)  # noqa: E731
    else:
        V, d = CBOW["V"], CBOW["d"]
        e_in, e_out = tnn.Embedding(V, d), tnn.Embedding(V, d)
        model = tnn.ModuleList([e_in, e_out])
        ctx, tgt, neg = (torch.from_numpy(a) for a in _cbow_data())

        def loss_of():
            h = e_in(ctx).mean(1)  # (B, d)
            if case == "cbow-softmax":
                return TF.cross_entropy(h @ e_out.weight.T, tgt)
            rows = e_out(torch.cat([tgt[:, None], neg], 1))  # (B, 1+K, d)
            scores = (rows @ h.unsqueeze(-1)).squeeze(-1)
            sign = torch.ones(scores.shape[1])
            sign[1:] = -1
            return -TF.logsigmoid(scores * sign).sum(1).mean()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)

    def step() -> None:
        loss = loss_of()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    return step


def worker(impl: str, case: str) -> dict:
    if impl == "torch":
        import torch

        torch.set_num_threads(THREADS)
        step = torch_step(case)
    else:
        from minimodel.runtime import configure

        configure(THREADS)
        step = minimodel_step(case)
    for _ in range(WARMUP):
        step()
    times = []
    for _ in range(STEPS):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return {"ms": 1000 * statistics.median(times)}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == WORKER:
        print(json.dumps(worker(sys.argv[2], sys.argv[3])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=at_least(1), default=3,
                        help="interleaved fresh-process rounds, median reported (default 3)")
    parser.add_argument("--cases", default=CASES, type=comma_choices(CASES, "case"),
                        help=f"comma list of {', '.join(CASES)} (default all)")
    parser.add_argument("--json", metavar="FILE", help="also write the table as JSON")
    args = parser.parse_args()
    table = []
    for case in args.cases:
        runs: dict[str, list[float]] = {"minimodel": [], "torch": []}
        for round_ in range(args.rounds):
            for impl in ("minimodel", "torch") if round_ % 2 == 0 else ("torch", "minimodel"):
                done = subprocess.run([sys.executable, __file__, WORKER, impl, case],
                                      capture_output=True, text=True)
                if done.returncode != 0:
                    sys.exit(f"{impl} {case} failed:\n{done.stderr[-2000:]}")
                runs[impl].append(json.loads(done.stdout.strip().splitlines()[-1])["ms"])
        mm, pt = statistics.median(runs["minimodel"]), statistics.median(runs["torch"])
        table.append({"case": case, "minimodel_ms": mm, "torch_ms": pt, "ratio": mm / pt})
    print(f"training step (forward, backward, AdamW), {THREADS} threads, median of "
          f"{args.rounds} rounds; mlm {MLM}; cbow {CBOW}")
    print(f"{'case':<15} {'minimodel ms':>13} {'PyTorch ms':>11} {'minimodel / PyTorch':>20}")
    for r in table:
        print(f"{r['case']:<15} {r['minimodel_ms']:>13.1f} {r['torch_ms']:>11.1f} "
              f"{r['ratio']:>20.2f}")
    if args.json:
        atomic_write_json(args.json, table)  # never a half-written file


if __name__ == "__main__":
    main()
