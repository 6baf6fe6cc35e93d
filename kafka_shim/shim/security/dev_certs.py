"""`kafka-shim dev-certs DIR`: a local CA, a broker certificate for the hosts clients connect
to, and a client certificate (for mutual TLS), as PEM files; then the settings to use them.

Keys are EC P-256 (fast handshakes, read by Java, librdkafka and Python alike), unencrypted
PKCS#8: these are development certificates, the files are written readable by their owner only.
"""

from __future__ import annotations

import argparse
import datetime
import ipaddress
import os
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

DEFAULT_HOSTS = ("localhost", "127.0.0.1", "::1")


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _pem(certificate: x509.Certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.PEM)


def _certificate(
    subject: x509.Name,
    key: ec.EllipticCurvePrivateKey,
    issuer: x509.Name,
    issuer_key: ec.EllipticCurvePrivateKey,
    days: int,
) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=days))
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False
        )
    )


def _leaf(
    common_name: str,
    usage: x509.ObjectIdentifier,
    ca: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    days: int,
    hosts: tuple[str, ...] = (),
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    builder = _certificate(_name(common_name), key, ca.subject, ca_key, days)
    builder = builder.add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
    builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if hosts:
        builder = builder.add_extension(x509.SubjectAlternativeName([_san(h) for h in hosts]), critical=False)
    return key, builder.sign(ca_key, hashes.SHA256())


def write_dev_certs(directory: Path, hosts: tuple[str, ...], client: str, days: int) -> dict[str, Path]:
    """Write the CA, broker and client files into `directory`; their paths by role."""
    directory.mkdir(parents=True, exist_ok=True)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name("kafka-shim development CA")
    ca = (
        _certificate(ca_name, ca_key, ca_name, ca_key, days)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .sign(ca_key, hashes.SHA256())
    )
    broker_key, broker = _leaf(hosts[0], ExtendedKeyUsageOID.SERVER_AUTH, ca, ca_key, days, hosts)
    client_key, client_cert = _leaf(client, ExtendedKeyUsageOID.CLIENT_AUTH, ca, ca_key, days)
    files = {
        "ca": (directory / "ca.pem", _pem(ca)),
        "ca_key": (directory / "ca-key.pem", _pem_key(ca_key)),
        # Kafka's PEM keystore: the private key, then the chain.
        "broker": (directory / "broker.pem", _pem_key(broker_key) + _pem(broker) + _pem(ca)),
        "client": (directory / "client.pem", _pem_key(client_key) + _pem(client_cert) + _pem(ca)),
        "client_cert": (directory / "client-cert.pem", _pem(client_cert)),
        "client_key": (directory / "client-key.pem", _pem_key(client_key)),
    }
    for path, content in files.values():
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(content)
    return {role: path for role, (path, _) in files.items()}


def usage_text(paths: dict[str, Path], client: str) -> str:
    ca, broker = paths["ca"].resolve(), paths["broker"].resolve()
    client_pem = paths["client"].resolve()
    cert, key = paths["client_cert"].resolve(), paths["client_key"].resolve()
    return f"""Broker (TLS on 9093 beside plaintext 9092; add ssl.client.auth=required for mutual TLS):
  kafka-shim --listeners PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9093 \\
    --config ssl.keystore.location={broker} --config ssl.truststore.location={ca}

Java clients / Kafka tools (client.properties):
  security.protocol=SSL
  ssl.truststore.type=PEM
  ssl.truststore.location={ca}
  # mutual TLS, principal User:CN={client}:
  ssl.keystore.type=PEM
  ssl.keystore.location={client_pem}

librdkafka (confluent-kafka, kcat -X ...):
  security.protocol=ssl ssl.ca.location={ca}
  ssl.certificate.location={cert} ssl.key.location={key}

kafka-python / aiokafka:
  security_protocol="SSL", ssl_cafile="{ca}", ssl_certfile="{cert}", ssl_keyfile="{key}"
"""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="kafka-shim dev-certs",
        description="Write a local CA, a broker certificate and a client certificate (PEM).",
    )
    parser.add_argument("directory", type=Path)
    parser.add_argument(
        "--host",
        action="append",
        default=[],
        help="a host name or address clients connect to (repeatable; localhost, 127.0.0.1 and ::1 "
        "are always included)",
    )
    parser.add_argument(
        "--client-name", default="client", help="the client certificate's CN (default client)"
    )
    parser.add_argument("--days", type=int, default=825, help="validity (default 825)")
    args = parser.parse_args(argv)
    hosts = tuple(dict.fromkeys([*args.host, *DEFAULT_HOSTS]))
    paths = write_dev_certs(args.directory, hosts, args.client_name, args.days)
    print(f"wrote {', '.join(path.name for path in paths.values())} to {args.directory}\n")
    print(usage_text(paths, args.client_name))
    return 0
