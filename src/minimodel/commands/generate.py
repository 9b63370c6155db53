"""``minimodel generate``: continue a prompt with a trained GPT checkpoint."""

from __future__ import annotations

import argparse
import json

from minimodel.commands._exit import OK, guarded

ORDER = 12

DESCRIPTION = """\
Load a GPT checkpoint and the tokenizer.json next to it, and print the prompt followed by
max-new-tokens sampled tokens. temperature 0 is greedy (arg-max); --top-k keeps only the k
most likely tokens at each step; --seed makes sampling reproducible."""

EPILOG = """\
examples:
  minimodel generate runs/gpt-tied --prompt "ROMEO:" --max-new-tokens 200
  minimodel generate runs/gpt-tied/model.safetensors --prompt "To be" --temperature 0
  minimodel generate runs/gpt-tied --prompt "KING" --top-k 20 --seed 1 --json
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser("generate", help="sample a continuation from a GPT checkpoint",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", metavar="CHECKPOINT_OR_DIR",
                        help="model.safetensors or the run directory holding it")
    parser.add_argument("--prompt", required=True, help="text to continue (non-empty)")
    parser.add_argument("--max-new-tokens", type=int, default=200, metavar="N",
                        help="tokens to generate (default 200)")
    parser.add_argument("--temperature", type=float, default=0.8, metavar="T",
                        help="softmax temperature; 0 = greedy (default 0.8)")
    parser.add_argument("--top-k", type=int, default=None, metavar="K",
                        help="sample among the K most likely tokens only")
    parser.add_argument("--seed", type=int, default=None, metavar="S",
                        help="sampling seed (default: random)")
    parser.add_argument("--json", action="store_true",
                        help='print {"prompt", "continuation", "text", "new_ids"} as JSON')
    parser.set_defaults(func=guarded(run))


def generate_text(model, tokenizer, prompt: str, max_new_tokens: int, temperature: float,
                  top_k: int | None, seed: int | None) -> tuple[str, list[int]]:
    """(continuation text, new token ids) for ``prompt``."""
    import numpy as np

    if not prompt:
        raise ValueError("--prompt is empty; give at least one character to continue")
    if max_new_tokens < 0:
        raise ValueError(f"--max-new-tokens must be >= 0, got {max_new_tokens}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"--top-k must be a positive integer, got {top_k}")
    ids = tokenizer.encode(prompt, allowed_special=False)
    out = model.generate(np.array([ids], dtype=np.int64), max_new_tokens,
                         temperature=temperature, top_k=top_k, seed=seed)  # (1, T + n)
    new_ids = out[0, len(ids):].tolist()
    # Decode prompt + continuation together, then cut: a multi-byte character split across
    # the boundary decodes correctly only as a whole.
    full = tokenizer.decode(out[0].tolist())
    continuation = full[len(prompt):] if full.startswith(prompt) else tokenizer.decode(new_ids)
    return continuation, new_ids


def run(args: argparse.Namespace) -> int:
    from minimodel.training.run_files import load_checkpoint

    model, tokenizer, ckpt = load_checkpoint(args.checkpoint)
    if type(model).__name__ != "GPT":
        raise ValueError(f"{ckpt} holds a {type(model).__name__} model; generate needs a GPT "
                         "(causal) checkpoint, e.g. from `minimodel train --model gpt`")
    if args.temperature < 0:
        raise ValueError(f"--temperature must be >= 0 (0 = greedy), got {args.temperature}")
    continuation, new_ids = generate_text(model, tokenizer, args.prompt, args.max_new_tokens,
                                          args.temperature, args.top_k, args.seed)
    if args.json:
        print(json.dumps({"prompt": args.prompt, "continuation": continuation,
                          "text": args.prompt + continuation, "new_ids": new_ids},
                         ensure_ascii=False, indent=2))
    else:
        print(args.prompt + continuation)
    return OK
