"""Every performance case of ``minimodel bench`` (a thin wrapper; same options).

    PYTHONPATH=src python benchmarks/run_all.py --write-md          # all cases -> BENCHMARKS.md
    PYTHONPATH=src python benchmarks/run_all.py --cases step --configs large --steps 20
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

from minimodel.bench import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
