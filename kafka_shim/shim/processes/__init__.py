"""One OS process per emulated broker (`--brokers N --process-per-broker`): a prototype of a
broker that uses more than one core. supervisor binds every broker's listeners and starts the
processes; node runs one of them (its own Trio loop, the partitions it leads and the groups it
coordinates); catalog_follower keeps a non-controller's topics those of the controller's
catalog on disk; refusals answers what the processes do not share yet. docs/performance.md
has the study and the figures."""
