"""Broker configuration under Kafka's names: the static config, listeners, dynamic configs,
broker loggers and the generated config tables."""
