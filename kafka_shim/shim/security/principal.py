"""Principals as Kafka names them: `User:ANONYMOUS` on a plaintext or unauthenticated TLS
connection, `User:<name>` after SASL, and under mutual TLS the client certificate's subject
(RFC 2253, as Java's X500Principal.getName() writes it) mapped by ssl.principal.mapping.rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kafka_shim.shim.security.authorizer import ANONYMOUS

__all__ = ["ANONYMOUS", "PrincipalError", "Rule", "certificate_subject", "map_subject", "parse_rules", "user"]


def user(name: str) -> str:
    return f"User:{name}"


class PrincipalError(ValueError):
    """No rule maps a certificate subject, or the rules themselves cannot be parsed."""


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT, the subject itself
    replacement: str = ""
    case: str = ""  # "L" lower-cases the result, "U" upper-cases it

    def apply(self, subject: str) -> str | None:
        if self.pattern is None:
            return subject
        if self.pattern.fullmatch(subject) is None:
            return None
        mapped = self.pattern.sub(self.replacement, subject)
        return mapped.lower() if self.case == "L" else mapped.upper() if self.case == "U" else mapped


# Kafka's grammar: DEFAULT, or RULE:pattern/replacement/ with an optional L or U, comma-separated;
# a backslash escapes a slash inside pattern or replacement.
_RULE = re.compile(r"\s*(?:(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?))\s*(?:,|$)")


def parse_rules(text: str) -> tuple[Rule, ...]:
    rules: list[Rule] = []
    position = 0
    text = text.strip()
    while position < len(text):
        match = _RULE.match(text, position)
        if match is None or match.end() == position:
            raise PrincipalError(f"ssl.principal.mapping.rules: cannot parse {text[position:]!r}")
        position = match.end()
        if match[1]:
            rules.append(Rule(None))
            continue
        try:
            pattern = re.compile(match[2].replace("\\/", "/"))
        except re.error as exc:
            raise PrincipalError(f"ssl.principal.mapping.rules: bad pattern {match[2]!r}: {exc}") from exc
        # Java's replacement syntax ($1) in Python's (\g<1>).
        replacement = re.sub(r"\$(\d+)", r"\\g<\1>", match[3].replace("\\/", "/"))
        rules.append(Rule(pattern, replacement, match[4]))
    return tuple(rules) or (Rule(None),)


def map_subject(subject: str, rules: tuple[Rule, ...]) -> str:
    """The principal of a client certificate's subject (PrincipalError if no rule applies)."""
    for rule in rules:
        mapped = rule.apply(subject)
        if mapped is not None:
            return user(mapped)
    raise PrincipalError(f"No rules apply to {subject}, rules {rules}")


def certificate_subject(der: bytes) -> str:
    """The subject of a DER certificate in RFC 2253 order (most specific first)."""
    from cryptography import x509  # only connections that present a certificate pay for it

    return x509.load_der_x509_certificate(der).subject.rfc4514_string()
