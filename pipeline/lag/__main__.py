import sys

from pipeline.lag.cli import main

sys.exit(main())
