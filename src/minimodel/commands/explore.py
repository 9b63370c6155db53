"""``minimodel explore``: an offline HTML page to look at trained embeddings side by side."""

from __future__ import annotations

import argparse
import importlib.util

from minimodel.commands._exit import EPILOG as EXIT_CODES, OK, guarded

ORDER = 42

DESCRIPTION = """\
Write one self-contained HTML page (opens from the file system, no network) that shows the
token embeddings of one or more runs side by side: the tied model's one matrix E, the untied
model's input matrix E and output matrix W. Each is drawn as a 2-D or 3-D PCA projection
(and a t-SNE map with --tsne), coloured by the token's frequency in the run's
corpus. Type a token in the search box to see its 10 nearest neighbours by cosine similarity
in every matrix. For the TensorFlow Embedding Projector, use
`minimodel export RUN --format projector DIR`."""

EPILOG = """\
examples:
  minimodel explore runs/gpt-tied --out explorer.html
  minimodel compare --out runs/compare
  minimodel explore runs/compare/tied runs/compare/untied --out tied-vs-untied.html
  minimodel explore runs/cbow-untied --out words.html      # search "king", "love", ...
  minimodel explore runs/gpt-tied --tsne --out tsne.html    # + t-SNE (scikit-learn)
""" + "\n" + EXIT_CODES


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from minimodel.explorer import write_explorer

    out = Path(args.out)
    if out.is_dir():
        raise ValueError(f"--out {out} is a folder; give a file name such as {out / 'explorer.html'}")
    if out.exists() and not args.force:
        raise ValueError(f"{out} already exists; pass --force to replace it")
    if args.tsne and importlib.util.find_spec("sklearn") is None:  # before announcing it
        raise ImportError("--tsne needs scikit-learn (in the docs extra: pip install -e "
                          "'.[docs]'), or leave out --tsne")
    if args.tsne:
        print("t-SNE of every matrix (scikit-learn; about 40 s per 3,000 tokens)...",
              flush=True)
    path = write_explorer(args.runs, out, with_tsne=args.tsne)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB); open it in a browser "
          f"(file://{path.resolve()})")
    return OK


def register(subparsers) -> None:
    p = subparsers.add_parser("explore", help="write an HTML page to explore the embeddings",
                              description=DESCRIPTION, epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders (or .safetensors files "
                   "with tokenizer.json beside them)")
    p.add_argument("--out", default="explorer.html", metavar="FILE",
                   help="the HTML file to write (default explorer.html)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--tsne", action="store_true",
                   help="add a 2-D t-SNE map of each matrix (needs scikit-learn, in the docs "
                        "extra; slow: about 40 s per 3,000 tokens)")
    p.set_defaults(func=guarded(run))
