import gc

# Paused for the broker's start, from before its modules load (shim.cli.main.main says why and
# enables it again).
gc.disable()

from kafka_shim.shim.cli.main import main  # noqa: E402

raise SystemExit(main())
