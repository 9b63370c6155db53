"""Learner progress: concurrent writers lose nothing, broken files are named, never reset."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

import pytest

from minimodel.cli import main
from minimodel.lab.progress import Progress

WRITERS, RECORDS_EACH = 8, 14


def _write_records(learner: str, writer: int) -> None:
    progress = Progress(learner)
    for i in range(RECORDS_EACH):
        progress.record("exercise", f"w{writer}-{i}", "attempted", attempt=i)


@pytest.mark.skipif(os.name != "posix", reason="fork start method")
def test_concurrent_writers_lose_no_record(tmp_path):
    # Regression: 26 of 112 records were lost with 8 `exercise check` runs at once.
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_write_records, args=(str(tmp_path), w))
               for w in range(WRITERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0] * WRITERS
    records = Progress(tmp_path).all("exercise")
    assert len(records) == WRITERS * RECORDS_EACH
    assert all(records[f"w{w}-{RECORDS_EACH - 1}"]["attempt"] == RECORDS_EACH - 1
               for w in range(WRITERS))
    leftovers = sorted(p.name for p in (tmp_path / "progress").iterdir())
    assert leftovers == ["exercise.json", "exercise.lock"]   # no temporary files


@pytest.mark.parametrize("content, expected", [
    ("[1, 2]", "holds a list, but a mapping of item id -> record was expected"),
    ('{"layer-norm": "passed"}', "the records of layer-norm are not mappings"),
    ("{not json", "is not valid JSON"),
    (b"\xff\xfe\x00", "is not UTF-8 text"),
])
def test_a_broken_file_is_named_and_left_alone(tmp_path, content, expected):
    path = tmp_path / "progress" / "exercise.json"
    path.parent.mkdir()
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    before = path.read_bytes()
    progress = Progress(tmp_path)
    for action in (lambda: progress.all("exercise"),
                   lambda: progress.record("exercise", "layer-norm", "passed")):
        with pytest.raises(ValueError) as info:
            action()
        assert str(path) in str(info.value) and expected in str(info.value)
        assert "move it away to start the exercise progress afresh" in str(info.value)
    assert path.read_bytes() == before


def test_a_file_where_the_learner_folder_should_be(tmp_path):
    blocker = tmp_path / "learner"
    blocker.write_text("not a folder")
    with pytest.raises(ValueError, match=f"{blocker} is a file, not a folder"):
        Progress(blocker).record("quiz", "q", "attempted")
    (tmp_path / "ok" / "progress").mkdir(parents=True)
    (tmp_path / "ok" / "progress" / "quiz.json").mkdir()
    with pytest.raises(ValueError, match="quiz.json is a folder"):
        Progress(tmp_path / "ok").all("quiz")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file permissions")
def test_an_unwritable_folder_keeps_the_old_progress(tmp_path):
    progress = Progress(tmp_path)
    progress.record("quiz", "a", "attempted")
    folder = tmp_path / "progress"
    folder.chmod(0o500)
    try:
        with pytest.raises(ValueError, match="cannot save progress to"):
            progress.record("quiz", "b", "attempted")
    finally:
        folder.chmod(0o700)
    assert list(progress.all("quiz")) == ["a"]


def test_the_cli_reports_a_broken_progress_file_in_one_sentence(tmp_path, capsys):
    path = tmp_path / "progress" / "quiz.json"
    path.parent.mkdir()
    path.write_text("[]")
    answers = tmp_path / "a.json"
    answers.write_text(json.dumps({"q-13-01": 1}))
    code = main(["quiz", "take", "phase-13-embeddings", "--answers", str(answers),
                 "--learner-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and str(path) in err and "Traceback" not in err
    assert path.read_text() == "[]"
    code = main(["lab", "status", "--learner-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and str(path) in err


def test_a_full_disk_keeps_the_old_progress(tmp_path, monkeypatch):
    import errno

    import minimodel.lab.progress as progress_module

    progress = Progress(tmp_path)
    progress.record("quiz", "a", "attempted")

    def disk_full(path, obj):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path) + ".tmp")

    monkeypatch.setattr(progress_module, "atomic_write_json", disk_full)
    with pytest.raises(ValueError, match="cannot save progress to .*the previous progress is "
                                         "unchanged"):
        progress.record("quiz", "b", "attempted")
    assert list(progress.all("quiz")) == ["a"]
