"""ListOffsets (key 2): offsets by timestamp or by the special timestamps
(-1 latest, -2 earliest, -3 max timestamp from v7, -4 earliest local from v8,
-5 latest tiered from v9, -6 earliest pending upload from v11). v10 (KIP-1075) adds the
time the broker may take to ask remote storage; v11 is v10 on the wire.

v0 (the magic 0/1 era) answers up to `max_num_offsets` offsets per partition, segment
base offsets at or before the timestamp, in `old_style_offsets`.
"""

from kafka_shim.protocol.api import Api
from kafka_shim.protocol.schema import INT8, INT16, INT32, INT64, STRING, Array, Field, Message, Names

ListOffsetsRequest = Message(
    "ListOffsetsRequest",
    versions="0-11",
    flexible="6+",
    fields=[
        Field("replica_id", INT32),
        Field("isolation_level", INT8, "2+"),
        Field(
            "topics",
            Array(
                Field("name", STRING, names=Names.TOPIC),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32, names=Names.PARTITION),
                        Field("current_leader_epoch", INT32, "4+", default=-1),
                        Field("timestamp", INT64),
                        Field("max_num_offsets", INT32, "0", default=1),
                    ),
                ),
            ),
        ),
        Field("timeout_ms", INT32, "10+", default=0),
    ],
)

ListOffsetsResponse = Message(
    "ListOffsetsResponse",
    versions="0-11",
    flexible="6+",
    fields=[
        Field("throttle_time_ms", INT32, "2+"),
        Field(
            "topics",
            Array(
                Field("name", STRING),
                Field(
                    "partitions",
                    Array(
                        Field("partition_index", INT32),
                        Field("error_code", INT16),
                        Field("old_style_offsets", Array(INT64), "0"),
                        Field("timestamp", INT64, "1+", default=-1),
                        Field("offset", INT64, "1+", default=-1),
                        Field("leader_epoch", INT32, "4+", default=-1),
                    ),
                ),
            ),
        ),
    ],
)

API = Api(2, "ListOffsets", ListOffsetsRequest, ListOffsetsResponse)
