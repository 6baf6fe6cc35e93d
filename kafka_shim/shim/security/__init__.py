"""Security of listeners: TLS (tls), SASL sessions (sasl) over SCRAM credentials kept in the
data directory (scram_store), principals from certificates (principal), and what each
listener runs by (listener_security). Nothing here imports Trio: the server drives it."""
