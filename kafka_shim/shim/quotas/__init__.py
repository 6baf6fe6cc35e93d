"""Client quotas: their values (KIP-546), byte-rate enforcement and throttling."""
