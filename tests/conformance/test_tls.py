"""`ridge serve --ssl-certfile --ssl-keyfile` serves HTTPS: a test CA signs a certificate for 127.0.0.1
and localhost, and the official `openai` client, trusting only that CA, runs a chat completion whole and
streamed. A client that does not trust the CA is refused, plain HTTP on the TLS port gets no answer, and
a missing, unreadable or mismatched certificate or key stops the server at start with a clear error."""
import datetime
import http.client
import ipaddress
import ssl
import subprocess
import urllib.error
import urllib.request

import openai
import pytest

from serve_fixture import running_server

x509 = pytest.importorskip("cryptography.x509", reason="tools/setup_test_deps.sh installs cryptography")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID  # noqa: E402

QUESTION = "Reply with one word: yes or no. Is the sky blue?"


def _name(common_name):
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _write_key(path, key):
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))


def make_certificates(folder):
    """A self-signed CA and a server certificate it signed for 127.0.0.1 and localhost:
    {'ca': ca.pem, 'cert': server.pem, 'key': server.key, 'other_key': a key of no certificate}."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(_name("ridge test CA")).issuer_name(_name("ridge test CA"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True, content_commitment=False,
                                       key_encipherment=False, data_encipherment=False, key_agreement=False,
                                       encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(_name("127.0.0.1")).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    files = {"ca": folder / "ca.pem", "cert": folder / "server.pem", "key": folder / "server.key",
             "other_key": folder / "other.key"}
    files["ca"].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files["cert"].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    _write_key(files["key"], key)
    _write_key(files["other_key"], ec.generate_private_key(ec.SECP256R1()))
    return files


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certificates(tmp_path_factory.mktemp("tls"))


@pytest.fixture(scope="module")
def trusting(certs):
    return ssl.create_default_context(cafile=str(certs["ca"]))


@pytest.fixture(scope="module")
def server(ridge_bin, default_model, certs, trusting):
    with running_server(ridge_bin, default_model, "--ssl-certfile", str(certs["cert"]), "--ssl-keyfile", str(certs["key"]),
                        ssl_context=trusting) as s:
        yield s


@pytest.fixture(scope="module")
def client(server, certs):
    http_client = openai.DefaultHttpxClient(verify=ssl.create_default_context(cafile=str(certs["ca"])))
    return openai.OpenAI(base_url=server.api_url, api_key="unused", max_retries=0, timeout=120, http_client=http_client)


def test_banner_says_https(server):
    assert server.scheme == "https"
    assert server.api_url.startswith("https://127.0.0.1:")
    assert f"on https://127.0.0.1:{server.port}/" in server.log()


def test_chat_completion_over_https(client):
    model = client.models.list().data[0].id
    reply = client.chat.completions.create(model=model, messages=[{"role": "user", "content": QUESTION}], max_tokens=16,
                                           temperature=0)
    assert reply.choices[0].message.content
    assert reply.usage.completion_tokens > 0

    stream = client.chat.completions.create(model=model, messages=[{"role": "user", "content": QUESTION}], max_tokens=16,
                                            temperature=0, stream=True)
    chunks = list(stream)
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert len(chunks) > 2
    assert any(c.choices and c.choices[0].finish_reason for c in chunks)
    assert streamed == reply.choices[0].message.content  # greedy: the same text whole or streamed


def test_untrusted_client_is_refused(server):
    # The system's CAs do not know the test CA: the handshake fails on the client's side.
    client = openai.OpenAI(base_url=server.api_url, api_key="unused", max_retries=0, timeout=30)
    with pytest.raises(openai.APIConnectionError):
        client.models.list()


def test_plain_http_to_the_tls_port_fails(server, trusting):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=10)
    try:
        with pytest.raises((OSError, http.client.HTTPException)):
            conn.request("GET", "/health")
            conn.getresponse().read()
    finally:
        conn.close()
    # ... and HTTPS still answers after it.
    with urllib.request.urlopen(f"{server.base_url}/health", timeout=10, context=trusting) as r:
        assert r.status == 200


def run_serve(ridge_bin, default_model, *args, timeout=120):
    return subprocess.run([ridge_bin, "serve", "-m", default_model, "--port", "0", "-t", "2", "--ctx-size", "512", *args],
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_missing_certificate_is_an_error(ridge_bin, default_model, certs, tmp_path):
    missing = tmp_path / "nowhere.pem"
    out = run_serve(ridge_bin, default_model, "--ssl-certfile", str(missing), "--ssl-keyfile", str(certs["key"]))
    assert out.returncode != 0
    assert "--ssl-certfile" in out.stderr and str(missing) in out.stderr, out.stderr
    assert "on http" not in out.stderr


def test_key_without_certificate_is_an_error(ridge_bin, default_model, certs):
    out = run_serve(ridge_bin, default_model, "--ssl-keyfile", str(certs["key"]))
    assert out.returncode != 0
    assert "--ssl-certfile" in out.stderr and "--ssl-keyfile" in out.stderr, out.stderr


@pytest.mark.parametrize("broken", ["not_pem", "wrong_key"])
def test_invalid_certificate_or_key_is_an_error(ridge_bin, default_model, certs, tmp_path, broken):
    cert, key = certs["cert"], certs["key"]
    if broken == "not_pem":
        cert = tmp_path / "garbage.pem"
        cert.write_text("this is not a certificate\n")
    else:
        key = certs["other_key"]  # a valid key, but not the certificate's
    out = run_serve(ridge_bin, default_model, "--ssl-certfile", str(cert), "--ssl-keyfile", str(key))
    assert out.returncode != 0
    assert "TLS certificate" in out.stderr and str(cert) in out.stderr and str(key) in out.stderr, out.stderr
    assert "on http" not in out.stderr
