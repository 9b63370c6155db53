"""``minimodel doctor``: check the weight tie of any model (minimodel run, Hugging Face folder,
safetensors file) and say what is wrong, why it matters and how to fix it."""

from __future__ import annotations

import argparse
import json

from minimodel.commands._exit import EPILOG as EXIT_CODES
from minimodel.commands._exit import FAILED, OK, guarded
from minimodel.doctor import diagnose, print_report
from minimodel.doctor.texts import LANGS

ORDER = 14

DESCRIPTION = """\
Check a model's tie: is the output head the embedding matrix E (logits = h @ E.T), as its
config claims? One line per check, each ok / warning / problem with what was found, why it
matters and the fix:

  claimed vs stored   the tie flags (top level and nested, e.g. text_config) against the file:
                      head absent (tied, stored once), stored identical (twice), or different
  sizes agree         tokenizer (with added and special tokens), embedding rows, head rows and
                      config vocab_size; padding rows; ids with no row
  under-trained rows  rows training never reached (zero, duplicated, far smaller norm)
  unreachable tokens  rows inside the convex hull of the others: never the argmax (proved by a
                      witness or by linear programming; large vocabularies are sampled)
  minimodel runs      the optimizer holds the tied matrix once, weight decay once, and a
                      one-batch ledger of E's gradient: lookup vs head, by token frequency

PATH is a minimodel run folder or checkpoint (RUN/checkpoints/step-N), a Hugging Face folder
(config.json with model.safetensors, sharded or not, or pytorch_model.bin: torch's zip
format is read without torch, an older pickle needs torch) or a bare .safetensors file. Only the tensors a check needs are read, memory-mapped.
When transformers is installed, it names the embedding, the head, its bias and the tie for the
architecture config.json names (built on the meta device: no weights); otherwise a built-in
table does. The report says which."""

EPILOG = f"""\
examples:
  minimodel doctor runs/gpt-tied
  minimodel doctor out/hf --lang es
  minimodel doctor ~/models/gpt2 --tokenizer ~/models/gpt2/tokenizer.json --json

{EXIT_CODES} (exit 1 = problems found; warnings alone exit 0)
"""


def register(subparsers) -> None:
    parser = subparsers.add_parser("doctor", help="check a model's weight tie, sizes and tokens",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", metavar="PATH",
                        help="run folder, Hugging Face folder or .safetensors file")
    parser.add_argument("--tokenizer", metavar="FILE", default=None,
                        help="tokenizer.json, vocab.json or vocab.txt (default: the one beside "
                             "the model)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--lang", choices=LANGS, default="en", help="language of the report")
    parser.set_defaults(func=guarded(run))


def run(args: argparse.Namespace) -> int:
    report = diagnose(args.path, args.tokenizer)
    if args.json:
        print(json.dumps(report.to_dict(args.lang), indent=2, ensure_ascii=False))
    else:
        print_report(report, args.lang)
    return OK if report.healthy else FAILED
