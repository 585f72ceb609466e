"""TLS options per backend, against a server with a certificate from a private CA."""

from __future__ import annotations

import shutil
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer

from tests.environment import unavailable
from tests.webapp.telemetry.recorded import recorded
from webapp.telemetry import TelemetryError
from webapp.telemetry.http import HttpOptions, HttpSource
from webapp.telemetry.loki import LokiBackend


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private CA and a certificate for 127.0.0.1 it signed."""
    if not shutil.which("openssl"):
        unavailable("openssl is missing")
    folder = tmp_path_factory.mktemp("tls")
    _openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=test-ca",
        cwd=folder,
    )
    _openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1",
        cwd=folder,
    )
    (folder / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
        cwd=folder,
    )
    return folder


@pytest.fixture
def tls_server(certificates: Path) -> Iterator[HTTPServer]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificates / "server.pem", certificates / "server.key")
    server = HTTPServer(host="127.0.0.1", port=0, ssl_context=context)
    server.start()
    server.expect_request("/loki/api/v1/label/service_name/values").respond_with_json(
        recorded("loki-label-values.json")
    )
    yield server
    server.clear()
    server.stop()


def _services(
    server: HTTPServer, ca_bundle: str | None = None, tls_verify: bool = True
) -> list[str]:
    options = HttpOptions(
        url=server.url_for("/"), attempts=1, ca_bundle=ca_bundle, tls_verify=tls_verify
    )
    return LokiBackend(HttpSource("Loki", options))._services()


def test_a_private_ca_bundle_is_trusted(tls_server: HTTPServer, certificates: Path) -> None:
    assert tls_server.url_for("/").startswith("https://")
    assert _services(tls_server, ca_bundle=str(certificates / "ca.pem")) == [
        "cart",
        "checkout",
        "payments",
    ]


def test_an_unknown_ca_is_refused_unless_verification_is_off(tls_server: HTTPServer) -> None:
    with pytest.raises(TelemetryError, match=r"unreachable.*CERTIFICATE_VERIFY_FAILED"):
        _services(tls_server)
    assert _services(tls_server, tls_verify=False)[0] == "cart"
