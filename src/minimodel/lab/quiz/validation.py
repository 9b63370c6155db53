"""``validate_all``: every problem of every quiz file, the labelled answer sets included.

Kept apart from :mod:`.loader` because checking the labelled answers needs the grader, and the
grader needs the loader's Question and Quiz.
"""

from __future__ import annotations

import os

from minimodel.lab.quiz import loader, schema
from minimodel.lab.quiz.grading import labelled_problems

# Answers people really typed, labelled right or wrong: <quiz-id>.yaml in this subfolder.
LABELLED_SUBDIR = "labelled"


def validate_all(content_dir: str | os.PathLike | None = None) -> list[str]:
    """Every problem in every quiz file, each prefixed with the file name; empty when all good.

    Covers YAML syntax, the JSON schema, semantic rules (answer indices in range, unique ids,
    non-blank texts) and the labelled answer set
    (``labelled/<quiz-id>.yaml``: every labelled answer must grade as labelled).
    """
    files = loader.quiz_files(content_dir)
    if not files:
        return [f"no quiz files (*.yaml) found in {loader.content_folder(content_dir)}"]
    problems: list[str] = []
    for path in files:
        data, found = loader.read_checked(path)
        if not found:
            found = []
            labelled = path.parent / LABELLED_SUBDIR / path.name
            if labelled.is_file():
                found += labelled_problems(loader.build(data, path),
                                           schema.load_yaml(labelled.read_text(encoding="utf-8")))
            elif any(q["kind"] in ("numeric", "short") for q in data["questions"]):
                found.append(f"no labelled answers for its numeric and short questions; "
                             f"write {LABELLED_SUBDIR}/{path.name}")
        problems += [f"{path.name}: {p}" for p in found]
    return problems
