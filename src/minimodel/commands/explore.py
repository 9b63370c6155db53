"""``minimodel explore``: watch the token embeddings of runs over training, offline or live."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

from minimodel.commands._exit import EPILOG as EXIT_CODES, OK, guarded
from minimodel.explorer import serve, write_explorer
from minimodel.messages import say
from minimodel.site.words import number

ORDER = 42

DESCRIPTION = """\
Write one self-contained HTML page (opens from the file system, no network) that shows the
token embeddings of one or more runs: the tied model's one matrix E, the untied model's input
matrix E and output matrix W, as points moving over the snapshots that `minimodel train`
keeps in RUN/snapshots/ (an older run shows its final matrices only).

  - the slider and the play button walk the snapshots; frames are aligned to each other
    (orthogonal Procrustes), so a point moves only when the geometry around it changed;
  - search a token (or click a point): its trail over training and its 10 nearest
    neighbours, in every panel at once — give the tied and the untied run of
    `minimodel compare` to see the same token in the tied E, the untied E and the untied W;
  - small plots follow the slider: probe loss, effective rank, the gradient ledger (the share
    of E's gradient that came from the lookup rather than the head, by token frequency),
    neighbour churn and row norms by frequency.

With --serve the page is served on 127.0.0.1 and picks up new snapshots while the run trains.
For the TensorFlow Embedding Projector, use `minimodel export RUN --format projector DIR`."""

EPILOG = """\
examples:
  minimodel compare                                   # -> runs/compare-gpt/tied, .../untied
  minimodel explore runs/compare-gpt --out tied-vs-untied.html   # = its tied/ and untied/
  minimodel train --out runs/live &  minimodel explore runs/live --serve
  minimodel explore runs/cbow-untied --out words.html      # search "king", "love", ...
  minimodel explore runs/gpt-tied --tsne --out tsne.html    # + t-SNE of the last snapshot
  minimodel explore runs/gpt-tied --lang es --out explorador.html
""" + "\n" + EXIT_CODES


def run(args: argparse.Namespace) -> int:
    if args.tsne and importlib.util.find_spec("sklearn") is None:  # before announcing anything
        raise ValueError("--tsne needs scikit-learn: pip install scikit-learn (or the docs "
                         "extra: pip install -e '.[docs]'), or leave out --tsne")
    if args.serve:
        serve(args.runs, port=args.port, lang=args.lang,
              on_ready=lambda url: print(say("explore.serving", args.lang, url=url),
                                         flush=True))
        return OK
    out = Path(args.out)
    if out.is_dir():
        raise ValueError(say("explore.out_is_folder", args.lang, out=out,
                             example=out / "explorer.html"))
    if out.exists() and not args.force:
        raise ValueError(say("explore.out_exists", args.lang, out=out))
    if args.tsne:
        print(say("explore.tsne", args.lang), flush=True)
    path = write_explorer(args.runs, out, with_tsne=args.tsne, lang=args.lang)
    size = number(path.stat().st_size / 1e6, ".1f", args.lang)
    print(say("explore.wrote", args.lang, path=path, size=size, url=f"file://{path.resolve()}"))
    return OK


def register(subparsers) -> None:
    p = subparsers.add_parser("explore", help="watch the embeddings over training (HTML page)",
                              description=DESCRIPTION, epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders (or .safetensors files "
                   "with tokenizer.json beside them); a `minimodel compare` folder stands for "
                   "its tied and untied runs")
    p.add_argument("--out", default="explorer.html", metavar="FILE",
                   help="the HTML file to write (default explorer.html)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--tsne", action="store_true",
                   help="add a 2-D t-SNE map of each matrix's last snapshot (needs "
                        "scikit-learn, in the docs extra; slow: about 40 s per 3,000 tokens)")
    p.add_argument("--serve", action="store_true",
                   help="serve the page on 127.0.0.1 instead of writing it; it picks up new "
                        "snapshots while the run trains (Ctrl-C stops)")
    p.add_argument("--port", type=int, default=8765,
                   help="the port for --serve (default 8765; 0 picks a free one)")
    p.add_argument("--lang", choices=("en", "es"), default="en",
                   help="the page's language (default en)")
    p.set_defaults(func=guarded(run))
