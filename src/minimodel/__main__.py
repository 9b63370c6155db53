import sys

from minimodel.cli import main

sys.exit(main())
