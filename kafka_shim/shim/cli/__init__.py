"""The command line: `kafka-shim` (main), `kafka-shim ctl`, the everyday Kafka tools and the
container entrypoint."""
