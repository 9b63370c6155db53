"""``lab validate`` runs the code of the lessons that changed since they last passed, strictly:
a page whose printed output differs from its code fails validate, not only `check-lessons`."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from minimodel.cli import main
from minimodel.lab import lesson_runs
from minimodel.lab.lesson_runs import changed_files, file_hash, lesson_run_problems, record_path

PAGE = """---
title: "{title}"
quiz: []
breaks: []
exercises: []
---

# {title}

```python
x = 2
```

```python
print(x * {factor})
```

```output
{shown}
```
"""


def _lessons(tmp_path: Path, shown_en: str = "6", shown_es: str = "6") -> Path:
    folder = tmp_path / "content" / "lessons"
    folder.mkdir(parents=True)
    (folder.parent / "path.yaml").write_text("- demo\n", encoding="utf-8")
    (folder / "demo.md").write_text(PAGE.format(title="Demo", factor=3, shown=shown_en), "utf-8")
    (folder / "demo.es.md").write_text(PAGE.format(title="Demo", factor=3, shown=shown_es),
                                       "utf-8")
    return folder


def _run(folder: Path, learner: Path, every: bool = False) -> tuple[list[str], list[str]]:
    ran: list[str] = []
    problems = lesson_run_problems(every=every, lessons_dir=folder, learner_dir=learner,
                                   on_file=lambda path, i, n: ran.append(path.name))
    return problems, ran


def test_a_wrong_output_fails_and_a_fixed_page_is_recorded_then_skipped(tmp_path):
    folder, learner = _lessons(tmp_path, shown_es="7"), tmp_path / "learner"
    problems, ran = _run(folder, learner)
    assert ran == ["demo.md", "demo.es.md"]
    [problem] = problems
    assert "demo.es.md:15: the printed output differs from the ```output block" in problem
    # Only the passing file is recorded, with the hash of what ran.
    assert json.loads(record_path(learner).read_text()) == {
        "demo.md": file_hash(folder / "demo.md")}

    (folder / "demo.es.md").write_text(PAGE.format(title="Demo", factor=3, shown="6"), "utf-8")
    assert _run(folder, learner) == ([], ["demo.es.md"])         # only the changed file ran
    assert _run(folder, learner) == ([], [])                      # nothing changed: nothing ran
    assert _run(folder, learner, every=True) == ([], ["demo.md", "demo.es.md"])

    # Editing a passed page makes it changed again.
    (folder / "demo.md").write_text(PAGE.format(title="Demo", factor=4, shown="6"), "utf-8")
    problems, ran = _run(folder, learner)
    assert ran == ["demo.md"] and len(problems) == 1 and "demo.md:15" in problems[0]


def test_numeric_drift_beyond_the_declared_tolerance_fails_validate(tmp_path):
    # check-lessons only warns about drift without --strict; validate is strict.
    folder = _lessons(tmp_path)
    (folder / "demo.md").write_text(
        PAGE.format(title="Demo", factor=3.0005, shown="6.000").replace("```output\n",
                                                                   "```output rtol=1e-6\n"),
        encoding="utf-8")
    problems, _ = _run(folder, tmp_path / "learner")
    assert len(problems) == 1 and "drifted beyond the tolerance" in problems[0]


def test_files_identical_to_the_last_commit_are_not_rerun(tmp_path):
    folder = _lessons(tmp_path)
    files = [folder / "demo.md", folder / "demo.es.md"]
    # Committed and unchanged (git names neither): nothing to run.
    assert changed_files(files, {}, uncommitted_names=set()) == []
    assert changed_files(files, {}, uncommitted_names={"demo.es.md"}) == [files[1]]
    # Outside git, every file not recorded as passing runs.
    assert changed_files(files, {"demo.md": file_hash(files[0])}, None) == [files[1]]


def test_uncommitted_names_edited_and_new_lessons_in_a_git_checkout(tmp_path):
    folder = _lessons(tmp_path)
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=a"]
    subprocess.run([*git, "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([*git, "add", "-A"], cwd=tmp_path, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "lessons"], cwd=tmp_path, check=True)
    assert lesson_runs.uncommitted(folder) == set()
    (folder / "demo.es.md").write_text("edited", encoding="utf-8")
    (folder / "new.md").write_text("new", encoding="utf-8")
    assert lesson_runs.uncommitted(folder) == {"demo.es.md", "new.md"}
    # A clone tracks its upstream: a lesson committed there but not upstream is still changed.
    clone = tmp_path / "clone"
    subprocess.run([*git, "clone", "-q", str(tmp_path), str(clone)], check=True)
    lessons = clone / "content" / "lessons"
    (lessons / "mine.md").write_text("mine", encoding="utf-8")
    subprocess.run([*git, "add", "-A"], cwd=clone, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "mine"], cwd=clone, check=True)
    assert lesson_runs.uncommitted(lessons) == {"mine.md"}
    outside = tmp_path.parent / f"{tmp_path.name}-outside"     # beside the repository
    outside.mkdir()
    assert lesson_runs.uncommitted(outside) is None


def test_lab_validate_section_lessons_exits_1_naming_the_block(tmp_path, monkeypatch, capsys):
    folder = _lessons(tmp_path, shown_en="5")
    monkeypatch.setenv("MINIMODEL_LEARNER_DIR", str(tmp_path / "learner"))
    monkeypatch.setattr(lesson_runs, "LESSONS_DIR", folder)
    real = lesson_runs.lesson_run_problems
    monkeypatch.setattr(lesson_runs, "lesson_run_problems",
                        lambda **kw: real(lessons_dir=folder, **kw))
    assert main(["lab", "validate", "--section", "lessons", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    [problem] = report["sections"]["lessons"]
    assert "demo.md:15: the printed output differs" in problem
    assert main(["lab", "validate", "--section", "lessons", "--all-lessons"]) == 1
    captured = capsys.readouterr()
    assert "lesson 1/2: demo.md" in captured.err and "lesson 2/2: demo.es.md" in captured.err
    assert "lessons: 1 problem(s)" in captured.out


@pytest.mark.parametrize("flag", ["--all-lessons"])
def test_validate_help_names_the_lesson_run(capsys, flag):
    with pytest.raises(SystemExit):
        main(["lab", "validate", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert flag in out and "changed since it last passed" in out
