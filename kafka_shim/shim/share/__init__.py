"""Share groups' delivery state per partition (Kafka's SharePartitionManager) and what ShareFetch
and ShareAcknowledge share."""
