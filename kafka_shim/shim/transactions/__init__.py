"""The transaction coordinator (a pure state machine driven with `now`) and the glue
that writes its transactions' markers."""
