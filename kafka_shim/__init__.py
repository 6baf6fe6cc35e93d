"""kafka-shim: a Kafka wire-protocol-compatible broker in Python.

Everything installs under this one name. The layers live in the repository's top-level
folders, as the design fixes them, and are linked in here: `kafka_shim.protocol` (bytes <->
objects), `kafka_shim.storage` (logs on disk), `kafka_shim.shim` (the coordinators, handlers,
server and CLI) and `kafka_shim.pipeline` (the Spark source and sink). Importing this package
imports none of them.
"""
