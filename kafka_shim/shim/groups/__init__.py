"""The group service: one object that routes a group request to the coordinator of the
group's type and carries out what the coordinator answers (records, memory, timers, replies).

Shaped after Kafka's group-coordinator module: `GroupService` plays GroupCoordinatorService
(handlers call it and never pick a coordinator), the coordinators play CoordinatorShards
answering pure results, and `GroupEffects` plays the runtime that writes a result's records
before its changes are kept and its answer goes out."""
