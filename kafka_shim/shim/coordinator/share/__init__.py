"""KIP-932 share groups: the membership manager and the share partitions' delivery state,
pure state machines driven with `now` (ms)."""
