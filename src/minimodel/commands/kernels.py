"""``minimodel kernels``: which fast kernels replace which composites, and how to switch them off."""

from __future__ import annotations

import argparse
import json

from minimodel.commands._exit import EPILOG as EXIT_CODES, OK, guarded

ORDER = 45

DESCRIPTION = """\
Every computation of a minimodel model is written once, as a readable composite in
minimodel/functional/. Some have a fast kernel in minimodel/kernels/ that replaces them when
kernels are on (the default); the test suite checks each kernel against its composite, values
and gradients. This command lists the composites, their kernels and whether kernels are on.

Switch kernels off to run exactly the code you read (slower, same numbers up to rounding):
  MINIMODEL_KERNELS=0 minimodel train ...          for a whole process
  with minimodel.kernels(False): ...               for a block of Python"""

EPILOG = """\
examples:
  minimodel kernels
  MINIMODEL_KERNELS=0 minimodel kernels --json
""" + "\n" + EXIT_CODES


def register(subparsers) -> None:
    parser = subparsers.add_parser("kernels", help="list the fast kernels and whether they are on",
                                   description=DESCRIPTION, epilog=EPILOG,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true",
                        help='print {"enabled": bool, "composites": [{"name", "composite", '
                             '"kernel", "active"}]}')
    parser.set_defaults(func=guarded(run))


def describe() -> dict:
    """The table behind the command, also used by ``minimodel inspect``."""
    import minimodel  # noqa: F401  (registers the kernels)
    from minimodel import dispatch

    kernels, active = dispatch.registered_kernels(), set(dispatch.active_kernels())
    rows = []
    for name, composite in sorted(dispatch.composites().items()):
        kernel = kernels.get(name)
        rows.append({"name": name, "composite": f"{composite.__module__}.{name}",
                     "kernel": f"{kernel.__module__}.{kernel.__name__}" if kernel else None,
                     "active": name in active})
    return {"enabled": dispatch.kernels_enabled(), "composites": rows}


def run(args: argparse.Namespace) -> int:
    info = describe()
    if args.json:
        print(json.dumps(info, indent=2))
        return OK
    state = "on" if info["enabled"] else "off (MINIMODEL_KERNELS=0 or minimodel.kernels(False))"
    print(f"kernels: {state}")
    width = max(len(r["name"]) for r in info["composites"])
    for row in info["composites"]:
        if row["kernel"] is None:
            runs = "composite (no kernel)"
        else:
            runs = f"kernel {row['kernel']}" if row["active"] else "composite (kernel off)"
        print(f"  {row['name']:<{width}}  runs {runs}")
    return OK
