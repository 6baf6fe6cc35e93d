"""The error of a configuration that cannot be served, named on its own so that what checks a
setting (shim.security's listener checks among them) raises it without importing the whole
broker configuration that calls those checks."""

from __future__ import annotations


class ConfigError(ValueError):
    """A bad or conflicting setting; the message names the key (the command line exits 2 with it)."""
