import sys

from kafka_shim.pipeline.lag.cli import main

sys.exit(main())
