"""Who may do what to the registry: Kafka ACLs, so one set of rules covers a team's topics and
their schemas (docs/schema-registry.md, "Authorization").

A subject belongs to a topic: TopicNameStrategy's `<topic>-key` and `<topic>-value` to
`<topic>`, any other subject (RecordNameStrategy and the like) to the topic of its own name.
Reading a subject's schemas is DESCRIBE on that topic (what both its producers and consumers
have, READ and WRITE implying it), registering is WRITE, deleting DELETE (as DeleteRecords),
its compatibility level and mode are DESCRIBE_CONFIGS and ALTER_CONFIGS on it (as a topic's
configs). The registry-wide /config and /mode are DESCRIBE_CONFIGS and ALTER_CONFIGS on the
cluster (as broker configs). A schema read by id is visible to whoever may read one of the
subjects holding it; listings leave out what may not be seen. Without an authorizer nothing
is asked, as Kafka asks nothing there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafka_shim.shim.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.schema_registry import errors

if TYPE_CHECKING:
    from kafka_shim.shim.broker import Broker

READ_SUBJECT = AclOperation.DESCRIBE
REGISTER = AclOperation.WRITE
DELETE_SUBJECT = AclOperation.DELETE
DESCRIBE_CONFIG = AclOperation.DESCRIBE_CONFIGS
ALTER_CONFIG = AclOperation.ALTER_CONFIGS
_SUFFIXES = ("-key", "-value")


def topic_of(subject: str) -> str:
    """The topic whose ACLs govern `subject`."""
    for suffix in _SUFFIXES:
        if subject.endswith(suffix) and len(subject) > len(suffix):
            return subject[: -len(suffix)]
    return subject


class Access:
    """One request's principal and address, asked about subjects and the cluster."""

    def __init__(self, broker: Broker, principal: str, host: str) -> None:
        self.broker = broker
        self.principal = principal
        self.host = host

    def may(self, operation: AclOperation, subject: str | None) -> bool:
        authorizer = self.broker.authorizer
        if authorizer is None:
            return True
        if subject is None:
            return authorizer.authorize(
                self.principal, self.host, operation, ResourceType.CLUSTER, CLUSTER_NAME
            )
        return authorizer.authorize(
            self.principal, self.host, operation, ResourceType.TOPIC, topic_of(subject)
        )

    def require(self, operation: AclOperation, subject: str | None) -> None:
        if not self.may(operation, subject):
            where = "the cluster" if subject is None else f"topic {topic_of(subject)} (subject {subject})"
            raise errors.denied(self.principal, operation.name, where)
