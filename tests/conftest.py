"""Fixtures shared by the site, notebook and browser tests: the lessons plus a demo lesson
(tests/docs/fixtures) that has maths, a figure drawn by its code and an exercise, whatever the
real lessons hold, and the site built from them once per test run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from filelock import FileLock

from minimodel.lab.lessons import LESSONS_DIR, path_file
from minimodel.site.build import build

FIXTURES = Path(__file__).parent / "docs" / "fixtures"


def copy_lessons(folder: Path) -> Path:
    """A copy of the lessons in ``folder`` and of the path file beside it; returns ``folder``."""
    shutil.copytree(LESSONS_DIR, folder)
    shutil.copy(path_file(), path_file(folder))
    return folder


def lessons_with_demo(folder: Path) -> Path:
    """A copy of the lessons with the demo lesson added last on the path; returns the folder."""
    copy_lessons(folder)
    for page in FIXTURES.glob("runnable-demo*.md"):
        shutil.copy(page, folder / page.name)
    with path_file(folder).open("a", encoding="utf-8") as path:
        path.write("- runnable-demo\n")
    return folder


@pytest.fixture(scope="session")
def demo_lessons(tmp_path_factory) -> Path:
    return lessons_with_demo(tmp_path_factory.mktemp("lessons") / "lessons")


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The site built from the lessons and the demo lesson (strict: any warning fails, and so
    does a lesson's numeric drift beyond its declared tolerance, as `docs build --strict`).

    Built once per test run: with pytest-xdist every worker asks for it, so the first one
    builds it in the folder the workers share (under a file lock) and the others read it.
    Building it is running every lesson in both languages, the costliest step of the suite.
    """
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent               # every worker's base temp sits in this folder
    with FileLock(str(shared / "site.lock")):
        built = shared / "site-built.txt"
        if built.is_file():
            return Path(built.read_text(encoding="utf-8"))
        lessons = shared / "site-lessons"
        shutil.rmtree(lessons, ignore_errors=True)   # left by an earlier worker whose build failed
        site = build(shared / "site", lessons_dir=lessons_with_demo(lessons), drift_fails=True)
        built.write_text(str(site), encoding="utf-8")
        return site
