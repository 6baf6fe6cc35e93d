"""Topic-partition storage, behind an interface.

- `storage.log.PartitionLog`: one partition's log (append validated batches,
  read whole batches, offsets and timestamp lookups, idempotent-producer checks).
- `storage.memory.MemoryLog`: the in-memory implementation (`--memory`).
- `storage.disk_log.DiskLog`: the durable one, a directory of segments
  (`storage.segment`) with Kafka's indexes, retention and compaction
  (`storage.cleaner`), recovered at start by `storage.disk_store.DiskStore`
  (`--data-dir`).
- `storage.topics.TopicStore`: topics by name and id, each a list of logs made
  by a factory, so handlers see one interface whichever log is behind it.
- `storage.errors.StorageError`: refusals carrying a Kafka error code.
"""
