"""Every performance case of ``minimodel bench`` (a thin entry point; same options).

    python benchmarks/run_all.py --write-md          # all cases -> bench-report.md
    python benchmarks/run_all.py --cases step --configs large --steps 20
"""

from __future__ import annotations

import os
import sys

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")
sys.path.insert(0, SRC)

from minimodel.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
