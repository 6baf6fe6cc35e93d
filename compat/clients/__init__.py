"""Python client drivers, one module per client library, sharing `compat.clients.runner`."""
