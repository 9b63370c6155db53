"""``minimodel inspect``: what is inside a checkpoint, and what tying did to it."""

from __future__ import annotations

import argparse
import json
from typing import Any

from minimodel.commands._exit import OK, guarded

ORDER = 13

DESCRIPTION = """\
Show a checkpoint's config, its parameters with tie groups (one matrix, two names), the
parameter counts with and without tying, memory, the effective rank and participation ratio
of the embedding E (and of an untied head's W), and the nearest neighbours of a few tokens by
cosine similarity in E."""

EPILOG = """\
examples:
  minimodel inspect runs/gpt-tied
  minimodel inspect runs/gpt-tied/model.safetensors --neighbours " the" e T --k 8
  minimodel inspect runs/cbow-untied --neighbours king love --json
"""

DEFAULT_QUERIES = (" the", " and", " king", " love", "e", "T", ".", "king", "love", "good",
                   "night", "lord")
BYTES_PER_ADAMW_PARAM = 4  # weights + gradient + two moments, each one float


def register(subparsers) -> None:
    parser = subparsers.add_parser("inspect", help="parameters, tying, rank and neighbours of "
                                                   "a checkpoint",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkpoint", metavar="CHECKPOINT",
                        help="model.safetensors or the run directory holding it")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--neighbours", "--neighbors", nargs="+", metavar="TOKEN", default=None,
                        help="tokens (BPE/byte pieces, e.g. ' the', or words for CBOW) whose "
                             "nearest neighbours to list")
    parser.add_argument("--k", type=int, default=5, help="neighbours per token (default 5)")
    parser.set_defaults(func=guarded(run))


def token_id(tokenizer: Any, token: str) -> int:
    """The id of ``token``: a CBOW word, a special token, or text that is exactly one token."""
    if hasattr(tokenizer, "stoi"):  # CBOW word vocabulary
        if token.lower() not in tokenizer:
            raise ValueError(f"{token!r} is not in the word vocabulary ({tokenizer.vocab_size} "
                             "words; rare words became [UNK])")
        return tokenizer.id_of(token)
    ids = tokenizer.encode(token, allowed_special=True)
    if len(ids) != 1:
        pieces = [tokenizer.id_to_token_str(i) for i in ids]
        raise ValueError(f"{token!r} is {len(ids)} tokens {pieces}, not one; give a single "
                         f"token such as {pieces[0]!r}" if pieces else
                         "an empty token has no neighbours")
    return ids[0]


def token_text(tokenizer: Any, i: int) -> str:
    """Token ``i`` as visible text (control characters and bad bytes escaped once)."""
    from minimodel.data._tokenizer_base import visible

    if hasattr(tokenizer, "itos"):
        return "".join(visible(ch) for ch in tokenizer.itos[i])
    return tokenizer.id_to_token_str(i)


def quoted(text: str) -> str:
    """'text': quotes show a token's leading and trailing spaces. Not repr(), which would
    escape the backslashes of the already visible escapes a second time."""
    return f"'{text}'"


def default_queries(tokenizer: Any, limit: int = 5) -> list[str]:
    out = []
    for q in DEFAULT_QUERIES:
        try:
            token_id(tokenizer, q)
        except ValueError:
            continue
        out.append(q)
        if len(out) == limit:
            break
    return out


def inspect_checkpoint(path: str, queries: list[str] | None, k: int) -> dict[str, Any]:
    """Everything ``minimodel inspect`` shows, as a JSON-ready dict."""
    from minimodel.diagnostics import (effective_rank, nearest_neighbours, parameter_accounting,
                                       participation_ratio)
    from minimodel.io import read_metadata
    from minimodel.training.run_files import embedding_matrices, load_checkpoint

    if k < 1:
        raise ValueError(f"--k must be a positive integer, got {k}")
    model, tokenizer, ckpt = load_checkpoint(path)
    meta = read_metadata(ckpt)
    acct = parameter_accounting(model)
    E, W = embedding_matrices(model)

    def spectrum(m):
        return None if m is None else {"shape": list(m.shape), "max_rank": int(min(m.shape)),
                                       "effective_rank": effective_rank(m),
                                       "participation_ratio": participation_ratio(m)}

    queries = default_queries(tokenizer) if queries is None else queries
    neighbours = {}
    for q in queries:
        i = token_id(tokenizer, q)
        neighbours[q] = [{"token": token_text(tokenizer, j), "id": j, "cosine": c}
                         for j, c in nearest_neighbours(E, i, k=min(k, E.shape[0] - 1))]
    return {
        "checkpoint": str(ckpt), "model": type(model).__name__,
        "config": model.config.to_dict(), "train_step": meta.get("minimodel.train_step"),
        "tokenizer": {"type": getattr(tokenizer, "type_name", "word"),
                      "vocab_size": tokenizer.vocab_size},
        "tied": bool(model.config.tie_embeddings), "tie_groups": acct["tie_groups"],
        "parameters": {key: acct[key] for key in ("parameters", "parameters_if_untied",
                                                 "saved_by_tying", "embedding_parameters",
                                                 "non_embedding_parameters")},
        "tensors": [{**t, "count": _count(t["shape"]),
                     "tied_with": next((g for g in acct["tie_groups"] if t["name"] in g), None)}
                    for t in acct["tensors"]],
        "memory": {"weights_bytes": acct["bytes"],
                   "weights_bytes_if_untied": acct["bytes"] + acct["saved_by_tying"] *
                   E.dtype.itemsize,
                   "adamw_training_bytes": acct["bytes"] * BYTES_PER_ADAMW_PARAM},
        "embedding": spectrum(E), "head": spectrum(W),
        "neighbours": neighbours,
    }


def _count(shape: list[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _mib(n: int) -> str:
    return f"{n / 2**20:.2f} MiB"


def print_report(r: dict[str, Any]) -> None:
    from minimodel.training.report import console as make_console
    from rich.markup import escape
    from rich.table import Table

    console = make_console()
    console.print(f"[bold]{r['model']}[/] from {escape(r['checkpoint'])} "
                  f"(step {r['train_step']}), tokenizer {r['tokenizer']['type']} "
                  f"V={r['tokenizer']['vocab_size']}",
                  highlight=False)
    console.print("config: " + ", ".join(f"{k}={v}" for k, v in r["config"].items()),
                  highlight=False)
    table = Table(title="parameters (each tied matrix listed once)")
    for col in ("name", "shape", "dtype", "count", "tied with"):
        table.add_column(col, justify="right" if col == "count" else "left")
    for t in r["tensors"]:
        tied = ", ".join(n for n in (t["tied_with"] or []) if n != t["name"]) or "-"
        table.add_row(t["name"], str(tuple(t["shape"])), t["dtype"], f"{t['count']:,}",
                      escape(tied))
    console.print(table)
    p, m = r["parameters"], r["memory"]
    console.print(f"parameters {p['parameters']:,} ({'tied' if r['tied'] else 'untied'}); "
                  f"untied it would have {p['parameters_if_untied']:,} (tying saves "
                  f"{p['saved_by_tying']:,}); embedding {p['embedding_parameters']:,}, "
                  f"non-embedding {p['non_embedding_parameters']:,}", highlight=False)
    console.print(f"memory: weights {_mib(m['weights_bytes'])} (untied "
                  f"{_mib(m['weights_bytes_if_untied'])}); AdamW training ~"
                  f"{_mib(m['adamw_training_bytes'])} (weights + grads + 2 moments)",
                  highlight=False)
    for label, s in (("embedding E", r["embedding"]), ("head W", r["head"])):
        if s is not None:
            console.print(f"{label} {tuple(s['shape'])}: effective rank "
                          f"{s['effective_rank']:.1f}, participation ratio "
                          f"{s['participation_ratio']:.1f} (of at most {s['max_rank']})",
                          highlight=False)
    if r["neighbours"]:
        nt = Table(title="nearest neighbours in E (cosine)")
        nt.add_column("token")
        nt.add_column("neighbours")
        for q, items in r["neighbours"].items():
            nt.add_row(escape(quoted(q)),
                       escape("  ".join(f"{quoted(it['token'])} {it['cosine']:.2f}"
                                        for it in items)))
        console.print(nt)


def run(args: argparse.Namespace) -> int:
    report = inspect_checkpoint(args.checkpoint, args.neighbours, args.k)
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        print_report(report)
    return OK
