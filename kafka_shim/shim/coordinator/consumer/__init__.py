"""The KIP-848 consumer-group coordinator: a pure state machine driven with `now` (ms)."""

from kafka_shim.shim.coordinator.consumer.config import ConsumerGroupConfig
from kafka_shim.shim.coordinator.consumer.coordinator import ConsumerGroupCoordinator
from kafka_shim.shim.coordinator.consumer.group import ConsumerGroupState
from kafka_shim.shim.coordinator.consumer.types import (
    HeartbeatRequest,
    HeartbeatResponse,
    TopicImage,
    TopicInfo,
    Topics,
)

__all__ = [
    "ConsumerGroupConfig",
    "ConsumerGroupCoordinator",
    "ConsumerGroupState",
    "HeartbeatRequest",
    "HeartbeatResponse",
    "TopicImage",
    "TopicInfo",
    "Topics",
]
