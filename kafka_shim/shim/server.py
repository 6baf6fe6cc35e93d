"""`kafka_shim.shim.server`, the names outside code has imported from it since before the
network side had a package of its own (shim.net): the pytest plugin's users and ~50 test
modules import BrokerThread from here. New code imports from shim.net."""

from kafka_shim.shim.net.listening import BoundListener
from kafka_shim.shim.net.running import BrokerThread, run_until_signalled
from kafka_shim.shim.net.server import Server
from kafka_shim.shim.net.waiting import AppendWaiters

__all__ = ["AppendWaiters", "BoundListener", "BrokerThread", "Server", "run_until_signalled"]
