"""Compatibility harness: real Kafka clients driven against broker targets.

- `compat.schema`: the JSON command/observation schema every driver speaks.
- `compat.clients`: the Python client drivers (run as `python -m compat.clients.<name>`).
- `compat/node`, `compat/java`: the kafkajs and Java kafka-clients drivers.
- `compat.drivers`: launchers for every client (one interface, subprocesses throughout).
- `compat.targets`: brokers to test against (kafka-shim as a subprocess, Tansu).
"""
