"""Download AllenAI's official QASPER v0.3 release tarballs, verify them and extract them (and the
official HotpotQA train file, :func:`fetch_hotpotqa`, at the end of this module).

``ragwh fetch qasper --data DIR`` writes ``DIR/qasper/qasper-{train,dev,test}-v0.3.json`` (plus the
test README and evaluator), which is what ``experiments/qasper.yml`` reads. Each tarball is
streamed to ``<name>.part`` while its sha256 is computed, checked against the expected size and
sha256, then renamed and extracted (``tarfile`` ``data`` filter: no absolute paths, no links out of
the directory).

Checksums: the test tarball's size and sha256 are published in this project's data provenance
(3,865,061 bytes, sha256 72a52a41...bdd72). For the train/dev tarball we know no independently
documented checksum, so the first download records its computed sha256 in
``DIR/qasper/SHA256SUMS`` (trust on first use) and later fetches verify against that record.

The base URL is AllenAI's S3 bucket; ``RAGWH_QASPER_URL`` or ``base_url=`` overrides it (tests serve
a tarball from 127.0.0.1). Without network the fetch fails fast and says how to use local files.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
from dataclasses import dataclass
from pathlib import Path

import httpx
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TransferSpeedColumn

QASPER_BASE_URL = "https://qasper-dataset.s3.us-west-2.amazonaws.com"
URL_ENV = "RAGWH_QASPER_URL"
CHECKSUM_FILE = "SHA256SUMS"


@dataclass(frozen=True)
class Release:
    """One release tarball; ``size``/``sha256`` are None where no documented value is known."""

    filename: str
    size: int | None
    sha256: str | None
    members: tuple[str, ...]  # the JSON files it must contain


QASPER_RELEASES: tuple[Release, ...] = (
    Release("qasper-train-dev-v0.3.tgz", None, None, ("qasper-train-v0.3.json", "qasper-dev-v0.3.json")),
    Release(
        "qasper-test-and-evaluator-v0.3.tgz",
        3_865_061,
        "72a52a41193e2838b8074f80ac074b94f956b84886c36a61c58a7df4171bdd72",
        ("qasper-test-v0.3.json",),
    ),
)


class FetchError(RuntimeError):
    """A download that failed or did not verify; the message says what to do instead."""


@dataclass(frozen=True)
class FetchedFile:
    release: str
    path: Path
    size: int
    sha256: str
    verified_against: str  # 'published' | 'recorded' | 'recorded now (no published checksum)'
    downloaded: bool  # False when an already-present, verified tarball was reused


def _offline_message(url: str, exc: Exception, data: Path) -> str:
    return (
        f"cannot download {url}: {type(exc).__name__}: {exc}. "
        "No network? Point the project at local copies instead: put the QASPER v0.3 JSON files "
        f"(qasper-train-v0.3.json, qasper-dev-v0.3.json, qasper-test-v0.3.json) under {data / 'qasper'} "
        "or any DIR/qasper/ and pass --data DIR (or set RAGWH_DATA=DIR); or copy the two release "
        f"tarballs into {data / 'qasper'} and rerun `ragwh fetch qasper --data {data}` to verify and extract them."
    )


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _read_recorded(folder: Path) -> dict[str, str]:
    file = folder / CHECKSUM_FILE
    if not file.is_file():
        return {}
    recorded = {}
    for line in file.read_text(encoding="utf-8").splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            recorded[name.strip()] = digest
    return recorded


def _write_recorded(folder: Path, recorded: dict[str, str]) -> None:
    lines = [f"{digest}  {name}\n" for name, digest in sorted(recorded.items())]
    (folder / CHECKSUM_FILE).write_text("".join(lines), encoding="utf-8")


def _expected(release: Release, recorded: dict[str, str]) -> tuple[str | None, str]:
    if release.sha256:
        return release.sha256, "published"
    if release.filename in recorded:
        return recorded[release.filename], "recorded"
    return None, "recorded now (no published checksum)"


def _verify(path: Path, release: Release, sha: str, expected: str | None) -> None:
    size = path.stat().st_size
    problems = []
    if release.size is not None and size != release.size:
        problems.append(f"size {size:,} bytes, expected {release.size:,}")
    if expected is not None and sha != expected:
        problems.append(f"sha256 {sha}, expected {expected}")
    if problems:
        raise FetchError(
            f"{path}: checksum verification failed ({'; '.join(problems)}). The file was not used; "
            "delete it and fetch again, or download it by hand from AllenAI and compare."
        )


def _download(client: httpx.Client, url: str, target: Path, progress: Progress) -> str:
    """Stream ``url`` to ``target`` (via ``target.part``); return its sha256 hex digest."""
    part = target.with_name(target.name + ".part")
    digest = hashlib.sha256()
    with client.stream("GET", url) as response:
        if response.status_code != 200:
            raise FetchError(f"cannot download {url}: HTTP {response.status_code}")
        total = int(response.headers.get("content-length", 0)) or None
        task = progress.add_task(target.name, total=total)
        with open(part, "wb") as handle:
            for block in response.iter_bytes(1 << 16):
                handle.write(block)
                digest.update(block)
                progress.advance(task, len(block))
    part.replace(target)
    return digest.hexdigest()


def _extract(path: Path, release: Release, folder: Path) -> None:
    try:
        with tarfile.open(path, "r:gz") as archive:
            names = {Path(m.name).name: m for m in archive.getmembers() if m.isfile()}
            missing = [m for m in release.members if m not in names]
            if missing:
                raise FetchError(f"{path}: archive lacks {', '.join(missing)}; it is not the QASPER v0.3 release")
            for member in names.values():
                member.name = Path(member.name).name  # flatten: everything lands in DATA/qasper/
                archive.extract(member, folder, filter="data")
    except tarfile.TarError as exc:
        raise FetchError(f"{path}: not a readable .tgz ({exc}); delete it and fetch again") from exc


def fetch_qasper(
    data: str | os.PathLike,
    *,
    base_url: str | None = None,
    releases: tuple[Release, ...] = QASPER_RELEASES,
    timeout_s: float = 20.0,
) -> list[FetchedFile]:
    """Download (unless already present and verified), verify and extract the QASPER tarballs.

    Files land in ``<data>/qasper/``. Returns one :class:`FetchedFile` per tarball. Raises
    :class:`FetchError` when offline (fast: connect timeout ``timeout_s`` seconds), on an HTTP error,
    or when a checksum does not match (the bad file is removed)."""
    data = Path(data).expanduser().resolve()
    folder = data / "qasper"
    folder.mkdir(parents=True, exist_ok=True)
    base = (base_url or os.environ.get(URL_ENV) or QASPER_BASE_URL).rstrip("/")
    recorded = _read_recorded(folder)
    fetched: list[FetchedFile] = []
    timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0))
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    with httpx.Client(timeout=timeout, follow_redirects=True) as client, Progress(*columns, transient=True) as progress:
        for release in releases:
            target = folder / release.filename
            expected, basis = _expected(release, recorded)
            downloaded = False
            if target.is_file():
                sha = _sha256_file(target)
                if expected is not None and sha != expected:
                    target.unlink()  # a stale or corrupt copy: fetch it again
            if not target.is_file():
                url = f"{base}/{release.filename}"
                try:
                    sha = _download(client, url, target, progress)
                except httpx.TransportError as exc:
                    raise FetchError(_offline_message(url, exc, data)) from exc
                downloaded = True
            _keep_verified(target, release, sha, expected, folder, recorded)
            _extract(target, release, folder)
            fetched.append(FetchedFile(release.filename, target, target.stat().st_size, sha, basis, downloaded))
    return fetched


def _keep_verified(
    target: Path, release: Release, sha: str, expected: str | None, folder: Path, recorded: dict[str, str]
) -> None:
    """Verify a fresh download (deleting it when it fails); with no checksum to verify against, record
    its sha256 in ``folder``'s SHA256SUMS (trust on first use)."""
    try:
        _verify(target, release, sha, expected)
    except FetchError:
        target.unlink()
        raise
    if expected is None:
        recorded[release.filename] = sha
        _write_recorded(folder, recorded)


# --- HotpotQA train (the query-rewriting study's first 5,000 train questions) -------------------------
HOTPOTQA_BASE_URL = "http://curtis.ml.cmu.edu/datasets/hotpot"
HOTPOTQA_URL_ENV = "RAGWH_HOTPOTQA_URL"
HOTPOTQA_TRAIN = "hotpot_train_v1.1.json"


def fetch_hotpotqa(
    data: str | os.PathLike, *, base_url: str | None = None, filename: str = HOTPOTQA_TRAIN, timeout_s: float = 20.0
) -> FetchedFile:
    """Download the official HotpotQA train file into ``<data>/hotpotqa/`` (unless already there and verified).

    No checksum of the file is published, so the first download records its sha256 in
    ``<data>/hotpotqa/SHA256SUMS`` (trust on first use, as for the QASPER train tarball) and every later
    fetch verifies against that record; a mismatching copy is deleted and fetched again. The base URL is
    the HotpotQA authors' server; ``RAGWH_HOTPOTQA_URL`` or ``base_url=`` overrides it. Raises
    :class:`FetchError` when offline (saying how to use a local copy), on an HTTP error, or when the
    fresh download does not match the recorded checksum."""
    data = Path(data).expanduser().resolve()
    folder = data / "hotpotqa"
    folder.mkdir(parents=True, exist_ok=True)
    base = (base_url or os.environ.get(HOTPOTQA_URL_ENV) or HOTPOTQA_BASE_URL).rstrip("/")
    recorded = _read_recorded(folder)
    target = folder / filename
    release = Release(filename, None, None, ())
    expected, basis = _expected(release, recorded)
    if target.is_file():
        sha = _sha256_file(target)
        if expected is not None and sha == expected:
            return FetchedFile(filename, target, target.stat().st_size, sha, basis, False)
        target.unlink()
    url = f"{base}/{filename}"
    timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, 10.0))
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn())
    with httpx.Client(timeout=timeout, follow_redirects=True) as client, Progress(*columns, transient=True) as progress:
        try:
            sha = _download(client, url, target, progress)
        except httpx.TransportError as exc:
            raise FetchError(
                f"cannot download {url}: {type(exc).__name__}: {exc}. No network? Copy {filename} into {folder} "
                f"(then `ragwh fetch hotpotqa --data {data}` records and verifies its checksum) or pass the file "
                "to `ragwh ingest hotpotqa` directly"
            ) from exc
    _keep_verified(target, release, sha, expected, folder, recorded)
    return FetchedFile(filename, target, target.stat().st_size, sha, basis, True)
