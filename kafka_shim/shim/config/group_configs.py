"""Groups' own configs (IncrementalAlterConfigs on the GROUP resource), kept in the data
directory (in memory for --memory), and the share-group config each group is served with: a
group's share.* values over the broker's."""

from __future__ import annotations

from kafka_shim.shim.coordinator.share.config import ShareGroupConfig
from kafka_shim.storage.data_dir import DataDir


class GroupConfigs(dict[str, dict[str, str]]):
    """Group id -> its own configs. A dict, as DescribeConfigs and ListConfigResources read it;
    `replace` is the change that is kept."""

    def __init__(self, data_dir: DataDir | None, share_defaults: ShareGroupConfig) -> None:
        super().__init__(data_dir.read_group_configs() if data_dir is not None else {})
        self._data_dir = data_dir
        self.share_defaults = share_defaults

    def replace(self, group_id: str, configs: dict[str, str]) -> None:
        """A group's own configs replaced (none: the broker's apply again), kept at once."""
        if configs:
            self[group_id] = configs
        else:
            self.pop(group_id, None)
        if self._data_dir is not None:
            self._data_dir.write_group_configs(self)

    def share_config_of(self, group_id: str) -> ShareGroupConfig:
        return self.share_defaults.with_overrides(self.get(group_id, {}))
