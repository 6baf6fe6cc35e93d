"""The network side: the only modules that import Trio (tests/test_layers.py).

framing (frames in, answers out, within request memory), gate (TLS, SASL, connection quotas),
connections (accept loops, one task per connection, the reaper), dispatch (the one path every
Kafka request takes), listening (bound sockets), waiting (wake-ups, long polls), context (the
request context on Trio), surfaces (the HTTP surfaces' start-up), server (listeners, emulated
brokers, timers), running (until a signal, or on a thread). docs/architecture.md draws it.
"""
