"""``ragwh fetch qasper``: download, verify and extract against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import socket
import tarfile
import threading

import pytest

from ragwh.experiment.fetch import CHECKSUM_FILE, FetchError, Release, fetch_qasper


def _tarball(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, payload in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(payload)
            archive.addfile(info, io.BytesIO(payload))
    return buffer.getvalue()


@pytest.fixture()
def server():
    """Serves ``files`` (name -> bytes) over HTTP on 127.0.0.1; counts requests per path."""
    files: dict[str, bytes] = {}
    hits: dict[str, int] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server API)
            name = self.path.rsplit("/", 1)[-1]
            hits[name] = hits.get(name, 0) + 1
            if name not in files:
                self.send_response(404)
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(files[name])))
            self.end_headers()
            self.wfile.write(files[name])

        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/bucket", files, hits
    httpd.shutdown()
    httpd.server_close()


PAPER = json.dumps({"p1": {"title": "T", "abstract": "A", "full_text": [], "qas": []}}).encode()


def _releases(payload_test: bytes):
    train = _tarball({"qasper-train-v0.3.json": PAPER, "qasper-dev-v0.3.json": PAPER})
    test_sha = hashlib.sha256(payload_test).hexdigest()
    releases = (
        Release("train-dev.tgz", None, None, ("qasper-train-v0.3.json", "qasper-dev-v0.3.json")),
        Release("test.tgz", len(payload_test), test_sha, ("qasper-test-v0.3.json",)),
    )
    return train, releases


def test_download_verify_extract_and_reuse(server, tmp_path):
    url, files, hits = server
    test_tgz = _tarball({"qasper-test/qasper-test-v0.3.json": PAPER, "qasper-test/README-test.md": b"readme"})
    train, releases = _releases(test_tgz)
    files.update({"train-dev.tgz": train, "test.tgz": test_tgz})

    result = fetch_qasper(tmp_path, base_url=url, releases=releases)
    folder = tmp_path / "qasper"
    for name in ("qasper-train-v0.3.json", "qasper-dev-v0.3.json", "qasper-test-v0.3.json", "README-test.md"):
        assert (folder / name).is_file(), name
    assert json.loads((folder / "qasper-test-v0.3.json").read_bytes()) == json.loads(PAPER)
    assert [f.verified_against for f in result] == ["recorded now (no published checksum)", "published"]
    assert result[0].sha256 == hashlib.sha256(train).hexdigest()
    # the train/dev checksum was recorded (trust on first use) ...
    assert (folder / CHECKSUM_FILE).read_text() == f"{hashlib.sha256(train).hexdigest()}  train-dev.tgz\n"
    # ... and a second fetch reuses both verified tarballs without a request
    again = fetch_qasper(tmp_path, base_url=url, releases=releases)
    assert [f.downloaded for f in again] == [False, False]
    assert [f.verified_against for f in again] == ["recorded", "published"]
    assert hits == {"train-dev.tgz": 1, "test.tgz": 1}


def test_checksum_mismatch_is_refused_and_removed(server, tmp_path):
    url, files, _ = server
    good = _tarball({"qasper-test-v0.3.json": PAPER})
    _, releases = _releases(good)
    files["test.tgz"] = _tarball({"qasper-test-v0.3.json": PAPER + b" "})  # different bytes
    with pytest.raises(FetchError, match="checksum verification failed"):
        fetch_qasper(tmp_path, base_url=url, releases=releases[1:])
    assert not (tmp_path / "qasper" / "test.tgz").exists()
    assert not (tmp_path / "qasper" / "qasper-test-v0.3.json").exists()


def test_archive_without_expected_member(server, tmp_path):
    url, files, _ = server
    files["train-dev.tgz"] = _tarball({"something-else.json": PAPER})
    _, releases = _releases(b"")
    with pytest.raises(FetchError, match="lacks qasper-train-v0.3.json"):
        fetch_qasper(tmp_path, base_url=url, releases=releases[:1])


def test_http_error_names_url(server, tmp_path):
    url, _, _ = server
    _, releases = _releases(b"")
    with pytest.raises(FetchError, match=r"HTTP 404"):
        fetch_qasper(tmp_path, base_url=url, releases=releases[:1])


def test_offline_fails_fast_and_says_how_to_use_local_files(tmp_path):
    # a port with nothing listening: connection refused, exactly what a machine without network sees
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(FetchError) as info:
        fetch_qasper(tmp_path, base_url=f"http://127.0.0.1:{port}", timeout_s=2)
    message = str(info.value)
    assert "--data DIR" in message and "RAGWH_DATA" in message
    assert "qasper-train-dev-v0.3.tgz" in message


def test_cli_fetch_offline_message(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from ragwh.cli import app

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("RAGWH_QASPER_URL", f"http://127.0.0.1:{port}")
    result = CliRunner().invoke(app, ["fetch", "qasper", "--data", str(tmp_path)])
    assert result.exit_code == 1
    assert "RAGWH_DATA" in result.output


def test_fetch_hotpotqa_train_records_then_verifies(server, tmp_path):
    from ragwh.experiment.fetch import fetch_hotpotqa

    url, files, hits = server
    payload = json.dumps([{"_id": "t1"}]).encode()
    files["hotpot_train_v1.1.json"] = payload
    first = fetch_hotpotqa(tmp_path, base_url=url)
    folder = tmp_path / "hotpotqa"
    assert first.downloaded and first.verified_against == "recorded now (no published checksum)"
    assert (folder / "hotpot_train_v1.1.json").read_bytes() == payload
    assert (folder / CHECKSUM_FILE).read_text() == f"{hashlib.sha256(payload).hexdigest()}  hotpot_train_v1.1.json\n"
    again = fetch_hotpotqa(tmp_path, base_url=url)
    assert (again.downloaded, again.verified_against, hits["hotpot_train_v1.1.json"]) == (False, "recorded", 1)
    # a corrupted local copy is fetched again; a server that now serves other bytes is refused
    (folder / "hotpot_train_v1.1.json").write_bytes(b"corrupt")
    files["hotpot_train_v1.1.json"] = payload + b" "
    with pytest.raises(FetchError, match="checksum verification failed"):
        fetch_hotpotqa(tmp_path, base_url=url)
    assert not (folder / "hotpot_train_v1.1.json").exists()


def test_fetch_hotpotqa_offline_message(tmp_path):
    from ragwh.experiment.fetch import fetch_hotpotqa

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(FetchError, match=r"Copy hotpot_train_v1.1.json into .*ragwh ingest hotpotqa"):
        fetch_hotpotqa(tmp_path, base_url=f"http://127.0.0.1:{port}", timeout_s=2)
