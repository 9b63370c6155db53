"""``minimodel generate``: continue a prompt with a trained GPT checkpoint."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Iterator

from minimodel.commands import _argtypes as argtypes
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
    parser.add_argument("--seed", type=argtypes.seed, default=None, metavar="S",
                        help="sampling seed (default: random)")
    parser.add_argument("--json", action="store_true",
                        help='print {"prompt", "continuation", "text", "new_ids"} as JSON')
    parser.set_defaults(func=guarded(run))


def check_generate_options(prompt: str, max_new_tokens: int, temperature: float,
                           top_k: int | None) -> None:
    """Refuse bad options before the model runs, naming the option."""
    import math

    if not prompt:
        raise ValueError("--prompt is empty; give at least one character to continue")
    if max_new_tokens < 0:
        raise ValueError(f"--max-new-tokens must be >= 0, got {max_new_tokens}")
    if not math.isfinite(temperature) or temperature < 0:
        raise ValueError(f"--temperature must be a finite number >= 0 (0 = greedy), got "
                         f"{temperature}")
    if top_k is not None and top_k < 1:
        raise ValueError(f"--top-k must be a positive integer, got {top_k}")


def stream_text(model, tokenizer, prompt: str, max_new_tokens: int, temperature: float,
                top_k: int | None, seed: int | None) -> Iterator[tuple[str, int]]:
    """Yield (new text, new id) per generated token, text as soon as it is printable.

    Byte-level tokens can end in the middle of a multi-byte character: the text decoded so far
    is only released up to its last complete character, the rest follows with later tokens.
    """
    import numpy as np

    ids = tokenizer.encode(prompt, allowed_special=False)
    shown = len(prompt)
    all_ids = list(ids)
    for next_id in model.generate_stream(np.array([ids], dtype=np.int64), max_new_tokens,
                                         temperature=temperature, top_k=top_k, seed=seed):
        all_ids.append(int(next_id[0]))
        text = tokenizer.decode(all_ids)
        stable = text.rstrip("\ufffd")  # an unfinished character decodes as U+FFFD
        yield stable[shown:], int(next_id[0])
        shown = max(shown, len(stable))
    text = tokenizer.decode(all_ids)
    if len(text) > shown:  # a genuinely undecodable tail: show it as it is
        yield text[shown:], -1


def run(args: argparse.Namespace) -> int:
    from minimodel.training.run_files import load_checkpoint

    check_generate_options(args.prompt, args.max_new_tokens, args.temperature, args.top_k)
    model, tokenizer, ckpt = load_checkpoint(args.checkpoint)
    if type(model).__name__ != "GPT":
        raise ValueError(f"{ckpt} holds a {type(model).__name__} model; generate needs a GPT "
                         "(causal) checkpoint, e.g. from `minimodel train --model gpt`")
    pieces = stream_text(model, tokenizer, args.prompt, args.max_new_tokens, args.temperature,
                         args.top_k, args.seed)
    if args.json:
        chunks, new_ids = [], []
        for text, new_id in pieces:
            chunks.append(text)
            if new_id >= 0:
                new_ids.append(new_id)
        continuation = "".join(chunks)
        print(json.dumps({"prompt": args.prompt, "continuation": continuation,
                          "text": args.prompt + continuation, "new_ids": new_ids},
                         ensure_ascii=False, indent=2))
        return OK
    sys.stdout.write(args.prompt)
    sys.stdout.flush()
    for text, _ in pieces:  # streamed: each token appears as soon as it is chosen
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()
    sys.stdout.write("\n")
    return OK
