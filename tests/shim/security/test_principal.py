"""Principals from certificate subjects, by Kafka's ssl.principal.mapping.rules."""

from __future__ import annotations

import pytest

from kafka_shim.shim.security.principal import PrincipalError, map_subject, parse_rules
from kafka_shim.shim.security.tls import openssl_cipher_name

SUBJECT = "CN=alice,OU=payments,O=Example,C=GB"


@pytest.mark.parametrize(
    ("rules", "principal"),
    [
        ("DEFAULT", "User:" + SUBJECT),
        ("RULE:^CN=(.*?),OU=(.*?),O=(.*?),C=(.*?)$/$1@$2/L,DEFAULT", "User:alice@payments"),
        ("RULE:^CN=(.*?),OU=.*$/$1/U", "User:ALICE"),
        ("RULE:^CN=bob,.*$/bob/, DEFAULT", "User:" + SUBJECT),
        ("RULE:^CN=(.*?),OU=(.*?),.*$/$1\\/$2/", "User:alice/payments"),
    ],
)
def test_mapping_rules_as_kafka_applies_them(rules: str, principal: str) -> None:
    assert map_subject(SUBJECT, parse_rules(rules)) == principal


def test_no_matching_rule_refuses_the_certificate() -> None:
    with pytest.raises(PrincipalError, match="No rules apply"):
        map_subject(SUBJECT, parse_rules("RULE:^CN=bob$/bob/"))
    with pytest.raises(PrincipalError, match="cannot parse"):
        parse_rules("RULES:x/y/")


def test_kafkas_cipher_suite_names_become_openssls() -> None:
    assert openssl_cipher_name("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256") == "ECDHE-RSA-AES128-GCM-SHA256"
    assert (
        openssl_cipher_name("TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256")
        == "ECDHE-ECDSA-CHACHA20-POLY1305"
    )
    assert openssl_cipher_name("TLS_RSA_WITH_AES_256_GCM_SHA384") == "AES256-GCM-SHA384"
    assert openssl_cipher_name("ECDHE-RSA-AES256-GCM-SHA384") == "ECDHE-RSA-AES256-GCM-SHA384"
