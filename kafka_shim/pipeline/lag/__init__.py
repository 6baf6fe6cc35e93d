"""The consumer-lag report: __consumer_offsets (commit history and group metadata)
and log-end offsets, read through the kshim source, become per group x topic x
partition lag over time, commit rate, rebalances and stalled consumers, written as
Parquet tables and one HTML page.

    kafka-shim lag-report --bootstrap HOST:PORT --out DIR   (or python -m pipeline.lag)
"""
