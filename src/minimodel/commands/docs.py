"""``minimodel docs build|serve``: the bilingual documentation site (lessons, lab, reference)."""

from __future__ import annotations

import argparse
import sys

from minimodel.commands._exit import EPILOG as EXIT_CODES, OK, guarded

ORDER = 60

DESCRIPTION = """\
The documentation site: lessons in English and Spanish with worked examples and links to the
exact code, the lab's pages (quiz mirror, breaks, exercises) generated from the lab's own
content, the measured results and the API reference. Built with MkDocs Material from a clone
of the repository; fully offline (no fonts, scripts or images from the network).
Needs the docs extra: pip install -e ".[docs]"."""

EPILOG = """\
examples:
  minimodel docs build                 # -> site/ ; open site/index.html in a browser
  minimodel docs build --out /tmp/site
  minimodel docs build --strict        # numeric drift in a lesson fails too (what CI runs)
  minimodel docs serve --port 8000     # build, then serve http://127.0.0.1:8000/
""" + "\n" + EXIT_CODES


BUILD_DESCRIPTION = """\
Stage docs/ with the generated pages and build the site (every lesson's code is run first).

What stops the build, with no flag (the default):
  - a lesson block that raises, or prints other text, shapes or counts than its output block;
  - a broken link or code reference (any MkDocs warning).
  A lesson's numbers that drift beyond the tolerance its output block declares are only a
  warning: float32 results differ slightly from CPU to CPU.
--strict             stops on that drift too (what CI runs).
--allow-broken-links lets broken links and other MkDocs warnings through as warnings (while
                     you draft pages); a lesson block that raises or prints other text
                     still stops the build."""


def cmd_build(args: argparse.Namespace) -> int:
    from minimodel.site.build import build  # MkDocs and the lab load only for this command

    print("running every lesson (English and Spanish, two at a time) before the build ...",
          file=sys.stderr, flush=True)
    site = build(args.out, strict=not args.allow_broken_links, drift_fails=args.strict,
                 on_progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"built {site}/ (English) and {site}/es/ (Spanish); open {site / 'index.html'}")
    return OK


def cmd_serve(args: argparse.Namespace) -> int:
    from minimodel.site.serve import serve  # MkDocs and the lab load only for this command

    if not 0 < args.port < 65536:
        raise ValueError(f"--port must be between 1 and 65535, got {args.port}")
    serve(args.out, args.port)
    return OK


def register(subparsers) -> None:
    docs = subparsers.add_parser("docs", help="build or serve the documentation site",
                                 description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    docs.set_defaults(func=lambda _args: (docs.print_help(), 0)[1])
    sub = docs.add_subparsers(dest="docs_command", metavar="SUBCOMMAND")
    p = sub.add_parser("build", help="build the site into a folder",
                       description=BUILD_DESCRIPTION,
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="site", metavar="DIR", help="output folder (default site/)")
    strictness = p.add_mutually_exclusive_group()
    strictness.add_argument("--strict", action="store_true",
                            help="stricter than the default: a lesson's numbers that drift "
                                 "beyond their declared tolerance fail the build too (CI)")
    strictness.add_argument("--allow-broken-links", action="store_true",
                            help="laxer than the default: a broken link or code reference "
                                 "(any MkDocs warning) is printed, and the build goes on")
    p.set_defaults(func=guarded(cmd_build))
    p = sub.add_parser("serve", help="build the site and serve it on this machine",
                       description="Build into --out, then serve it on 127.0.0.1 until Ctrl-C.",
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="site", metavar="DIR", help="output folder (default site/)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.set_defaults(func=guarded(cmd_serve))
