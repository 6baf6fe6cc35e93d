"""Who may do what and how clients prove who they are: authorization, TLS and SASL (each may
be set per listener), delegation tokens."""

from __future__ import annotations

from kafka_shim.protocol.settings.setting import (
    BOOLEAN,
    INT,
    LIST,
    LONG,
    PASSWORD,
    STRING,
)
from kafka_shim.protocol.settings.setting import broker_setting as _broker
from kafka_shim.protocol.settings.setting import listener_setting as _ssl

SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
TLS_PROTOCOLS = ("TLSv1.2", "TLSv1.3")
# Kafka's built-in ACL authorizer, by the class name a server.properties names it with.
STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

# Authorization.
AUTHORIZATION = [
    _broker("authorizer.class.name", STRING, "", "empty: no authorization; Kafka's StandardAuthorizer or "
            "AclAuthorizer class name: the built-in ACL authorizer", "authorizer_class_name",
            choices=("", STANDARD_AUTHORIZER,
                     "kafka.security.authorizer.AclAuthorizer")),
    _broker("super.users", STRING, "", "principals allowed everything, separated by ;", "super_users"),
    _broker("allow.everyone.if.no.acl.found", BOOLEAN, "false", "a resource without ACLs is open to all",
            "allow_everyone_if_no_acl_found"),
]  # fmt: skip


# TLS and SASL (each listener_setting may be set per listener as
# listener.name.<listener>.<name>).
TLS_AND_SASL = [
    _ssl("ssl.keystore.type", STRING, "PEM", "format of the broker's key and certificate", choices=("PEM",),
         kafka_default="JKS", why="Python's ssl reads PEM; JKS and PKCS12 stores are not supported"),
    _ssl("ssl.keystore.location", STRING, None, "PEM file holding the broker's private key and certificate "
         "chain"),
    _ssl("ssl.keystore.certificate.chain", PASSWORD, None, "the broker's certificate chain, PEM text "
         "(instead of ssl.keystore.location)"),
    _ssl("ssl.keystore.key", PASSWORD, None, "the broker's private key, PEM text (instead of "
         "ssl.keystore.location)"),
    _ssl("ssl.key.password", PASSWORD, None, "password of an encrypted private key"),
    _ssl("ssl.truststore.type", STRING, "PEM", "format of the trusted CA certificates", choices=("PEM",),
         kafka_default="JKS", why="Python's ssl reads PEM; JKS and PKCS12 stores are not supported"),
    _ssl("ssl.truststore.location", STRING, None, "PEM file of CA certificates client certificates must "
         "chain to"),
    _ssl("ssl.truststore.certificates", PASSWORD, None, "CA certificates, PEM text (instead of "
         "ssl.truststore.location)"),
    _ssl("ssl.client.auth", STRING, "none", "whether clients must present a certificate",
         choices=("none", "requested", "required")),
    _ssl("ssl.principal.mapping.rules", STRING, "DEFAULT", "how a client certificate's subject becomes the "
         "principal: RULE:pattern/replacement/[LU],...,DEFAULT"),
    _ssl("ssl.enabled.protocols", LIST, "TLSv1.2,TLSv1.3", "TLS versions accepted", choices=TLS_PROTOCOLS),
    _ssl("ssl.cipher.suites", LIST, "", "TLS 1.2 cipher suites (IANA or OpenSSL names; empty: "
         "OpenSSL's defaults)"),
    # --- security: SASL
    _ssl("sasl.enabled.mechanisms", LIST, ",".join(SASL_MECHANISMS), "mechanisms SASL listeners offer",
         choices=SASL_MECHANISMS, kafka_default="GSSAPI",
         why="Kerberos is not supported; PLAIN and SCRAM users come from --user and the admin API"),
    _ssl("connections.max.reauth.ms", LONG, "0", "a SASL session's lifetime before the client must "
         "re-authenticate (KIP-368); 0: never", minimum=0),
    _broker("connection.failed.authentication.delay.ms", INT, "100", "how long a failed login waits "
            "before its answer and the close: slows clients that retry at once",
            "failed_authentication_delay_ms", minimum=0),
    _broker("sasl.server.max.receive.size", INT, "524288", "largest frame accepted before "
            "authentication on a SASL listener", "sasl_server_max_receive_size", minimum=1),
]  # fmt: skip


# Delegation tokens (KIP-48), SCRAM logins with a token's id and HMAC.
DELEGATION_TOKENS = [
    _broker("delegation.token.secret.key", PASSWORD, None, "the key token HMACs are made with "
            "(HmacSHA512); unset: the token APIs answer DELEGATION_TOKEN_AUTH_DISABLED",
            "delegation_token_secret_key"),
    _broker("delegation.token.max.lifetime.ms", LONG, "604800000", "longest a token lives, renewals "
            "included (a request may ask for less)", "delegation_token_max_lifetime_ms", minimum=1),
    _broker("delegation.token.expiry.time.ms", LONG, "86400000", "how long a token lives before it "
            "must be renewed", "delegation_token_expiry_time_ms", minimum=1),
    _broker("delegation.token.expiry.check.interval.ms", LONG, "3600000", "how often expired tokens "
            "are removed (an expired token logs in nowhere meanwhile)",
            "delegation_token_expiry_check_interval_ms", minimum=1),
]  # fmt: skip
