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

from starlette.requests import Request

from kafka_shim.shim.schema_registry import errors
from kafka_shim.shim.security.authorization import Rule, each, whole
from kafka_shim.shim.security.authorizer import CLUSTER_NAME, AclOperation, ResourceType
from kafka_shim.shim.web.http_guard import allowed, principal_of

READ_SUBJECT = AclOperation.DESCRIBE
REGISTER = AclOperation.WRITE
DELETE_SUBJECT = AclOperation.DELETE
DESCRIBE_CONFIG = AclOperation.DESCRIBE_CONFIGS
ALTER_CONFIG = AclOperation.ALTER_CONFIGS
TOPIC, CLUSTER = ResourceType.TOPIC, ResourceType.CLUSTER
_SUFFIXES = ("-key", "-value")

# The registry's rows of the authorization table (shim.security.authorization), one per kind of
# endpoint, each naming the Confluent resource method it guards: shim.web.http_guard lets a
# route's handler ask only the checks of its row.
READS = Rule(
    "SubjectsResource, SubjectVersionsResource, SchemasResource: reads", (each(READ_SUBJECT, TOPIC),)
)
REGISTERS = Rule("SubjectVersionsResource.register", (each(REGISTER, TOPIC),))
DELETES = Rule(
    "SubjectsResource.deleteSubject, SubjectVersionsResource.deleteSchemaVersion",
    (each(DELETE_SUBJECT, TOPIC),),
)
DESCRIBES_CONFIG = Rule(
    "ConfigResource, ModeResource: reads", (each(DESCRIBE_CONFIG, TOPIC), whole(DESCRIBE_CONFIG, CLUSTER))
)
ALTERS_CONFIG = Rule(
    "ConfigResource, ModeResource: updates and deletes",
    (each(ALTER_CONFIG, TOPIC), whole(ALTER_CONFIG, CLUSTER)),
)


def topic_of(subject: str) -> str:
    """The topic whose ACLs govern `subject`."""
    for suffix in _SUFFIXES:
        if subject.endswith(suffix) and len(subject) > len(suffix):
            return subject[: -len(suffix)]
    return subject


def may(request: Request, operation: AclOperation, subject: str | None) -> bool:
    """Whether the request's principal may `operation` the subject's topic (None: the cluster)."""
    if subject is None:
        return allowed(request, operation, CLUSTER, CLUSTER_NAME)
    return allowed(request, operation, TOPIC, topic_of(subject))


def require(request: Request, operation: AclOperation, subject: str | None) -> None:
    """Refused with Confluent's 40301 unless `may`."""
    if not may(request, operation, subject):
        where = "the cluster" if subject is None else f"topic {topic_of(subject)} (subject {subject})"
        raise errors.denied(principal_of(request), operation.name, where)
