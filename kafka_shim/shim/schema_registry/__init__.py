"""A Schema Registry inside the broker, speaking Confluent Schema Registry's REST API and
storing what it is told as Confluent's registry does: in a compacted `_schemas` topic, in
Confluent's key and value JSON (docs/schema-registry.md).

`records` is that JSON; `store` the registry's state read from and written to the topic;
`registry` the operations of the API; `formats` and `compatibility` the schema types and the
rules between versions; `app` the HTTP routes; `access` who may do what (Kafka ACLs).
Nothing here is imported before the Kafka listeners answer (shim.net.surfaces)."""
