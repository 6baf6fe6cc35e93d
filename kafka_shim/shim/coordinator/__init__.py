"""The classic group coordinator: a pure state machine driven with `now` (ms)."""
