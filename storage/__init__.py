"""Topic-partition storage, behind an interface.

- `storage.log.PartitionLog`: one partition's log (append validated batches,
  read whole batches, offsets and timestamp lookups, idempotent-producer checks).
- `storage.memory.MemoryLog`: the in-memory implementation.
- `storage.topics.TopicStore`: topics by name and id, each a list of logs made
  by a factory, so a durable log slots in without touching handlers.
- `storage.errors.StorageError`: refusals carrying a Kafka error code.
"""
