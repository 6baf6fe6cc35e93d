"""The test broker's front ends: fault rules, the clock, request recording, emulated brokers and
the control endpoint."""
