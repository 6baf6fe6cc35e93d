"""What Kafka's KRaft controller decides in a single-node cluster: replica placement, feature
levels, the metadata quorum."""
