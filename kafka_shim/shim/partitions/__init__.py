"""The partition service: what Kafka's LogValidator and ReplicaManager do to a partition's
log, in one place that the Produce, Fetch, ListOffsets and DeleteRecords handlers and the
console call alike (a handler only translates the wire to it and back).

- `validation`: a Produce's records as Kafka accepts them (magic, CRC, sizes, control batches,
  keys on compacted topics; magic 0/1 message sets up-converted).
- `append`: the partition a client may write, and the append (LogAppendTime stamped; the
  log checks idempotent and transactional sequences and epochs).
- `read`: a Fetch's read under an isolation level, with the aborted transactions served and
  down-conversion for Fetch v0-3.
- `offsets`: ListOffsets' lookups (special timestamps, by time, v0's by segment).
- `delete`: DeleteRecords' move of the log start offset.

Authorization, leadership among emulated brokers and the wire's versions stay the handlers'
(they know the request); nothing here imports a handler, the broker or Trio."""
