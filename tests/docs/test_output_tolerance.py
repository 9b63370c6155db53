"""What is exact and what is not: a lesson's ``output`` block compared exactly, within the
tolerance it declares, or as a sample; numeric drift warns a learner's build and fails a strict
one, while an exception or a changed shape fails every build with file and line; the page and
the notebook say, in one line, why the reader's numbers differ."""

from __future__ import annotations

from pathlib import Path

import pytest

from minimodel.cli import main
from minimodel.lab.lessons import (LANGS, code_blocks, load_lessons, run_lesson,
                                   with_output_notes, without_output_blocks)
from minimodel.lab.output_check import OutputMark, compare, parse_mark
from minimodel.messages import say
from minimodel.site.lesson_pages import LessonCodeError
from minimodel.site.stage import stage


def test_numbers_within_the_declared_tolerance_pass_and_beyond_it_drift():
    mark = parse_mark("rtol=0.01 atol=0.002")
    assert mark == OutputMark(rtol=0.01, atol=0.002)
    written = "ln V = 5.545   mean of the last 20: 3.103"
    assert compare(written, "ln V = 5.545   mean of the last 20: 3.084", mark).kind == "ok"
    assert compare(written, "ln V = 5.545   mean of the last 20: 3.135", mark).kind == "ok"
    # |3.137 - 3.103| = 0.034 > 0.002 + 0.01 * 3.103 = 0.033
    verdict = compare(written, "ln V = 5.545   mean of the last 20: 3.137", mark)
    assert verdict.kind == "drift" and [(d.written, d.printed) for d in verdict.deviations] \
        == [("3.103", "3.137")]
    assert verdict.deviations[0].absolute == pytest.approx(0.034)
    assert "3.103 -> 3.137" in verdict.summary(mark) and "rtol=0.01 atol=0.002" in \
        verdict.summary(mark)
    # exact (no mark): any difference in a decimal number is drift, never silently accepted
    assert compare(written, "ln V = 5.545   mean of the last 20: 3.104").kind == "drift"
    assert compare("err 8.2e-02", "err 1.0e-01", parse_mark("rtol=0.5")).kind == "ok"


@pytest.mark.parametrize("printed, why", [
    ("mean of the last 21: 3.103", "whole number"),          # a count
    ("shape (8, 17) loss 3.103", "whole number"),            # a shape
    ("mean of the first 20: 3.103", "text"),                 # the words
    ("mean of the last 20: 3.103 3.1", "number of printed"),  # one value more
    ("mean of the last 20: 3.1030", "format"),               # another format: another code
])
def test_a_changed_shape_count_text_or_format_is_content_even_under_a_tolerance(printed, why):
    written = "shape (8, 16) loss 3.103" if "shape" in printed else "mean of the last 20: 3.103"
    verdict = compare(written, printed, parse_mark("rtol=0.5 atol=1"))
    assert verdict.kind == "content" and why in verdict.reason


def test_a_sample_checks_that_sampling_ran_and_printed_that_kind_of_text():
    written = "ROMEO:\nM\n\nTuoriut\nT s team arlha,endett,,"
    sample = parse_mark("sample")
    assert compare(written, "ROMEO:\nOE\nTipiovo t s team brnrey", sample).kind == "ok"
    assert "first line" in compare(written, "JULIET:\nabc de fg hi jk", sample).reason
    assert "characters" in compare(written, "ROMEO:", sample).reason
    assert "characters" in compare(written, "ROMEO:\n" + "x" * 200, sample).reason


@pytest.mark.parametrize("words", ["rtol", "rtol=-1", "rtol=abc", "tol=0.1", "exactish",
                                   "sample rtol=0.1"])
def test_a_mark_that_cannot_be_read_is_named(words):
    with pytest.raises(ValueError, match="rtol=R|either a sample"):
        parse_mark(words)


def _lesson(folder: Path, body: str, name: str = "demo.md") -> Path:
    """A one-lesson folder (with the path file beside it that lists the lesson)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder.parent / "path.yaml").write_text(f"- {Path(name).stem}\n", encoding="utf-8")
    path = folder / name
    path.write_text('---\ntitle: "Demo"\nquiz: []\nbreaks: []\nexercises: []\n---\n\n# Demo\n\n'
                    + body, encoding="utf-8")
    return path


DRIFTING = ("```python\nimport numpy as np\nx = np.float32(3.084)\n"
            "print(f'loss {x:.3f} after {20} steps')\n```\n\n"
            "```output rtol=0.001\nloss 3.103 after 20 steps\n```\n\nAfter.\n")


def test_numeric_drift_warns_a_learners_build_and_fails_a_strict_one(tmp_path):
    lessons = tmp_path / "lessons"
    _lesson(lessons, DRIFTING)
    warnings: list[str] = []
    staged = stage(tmp_path / "docs", lessons_dir=lessons, on_drift=warnings.append)
    [warning] = warnings
    assert "demo.md:11" in warning and "3.103 -> 3.084" in warning and "--strict" in warning
    page = (staged / "lessons" / "demo.md").read_text(encoding="utf-8")
    assert "```output\nloss 3.103" in page and "rtol=" not in page     # the mark is not shown
    assert say("lesson.drift_note", "en", tolerance="± 0.1 %") in page
    with pytest.raises(LessonCodeError, match=r"(?s)drifted beyond.*demo\.md:11.*3\.084"):
        stage(tmp_path / "strict", lessons_dir=lessons, drift_fails=True)


@pytest.mark.parametrize("code, expected", [
    ("import numpy as np\nprint(np.zeros((8, 17)).shape)", r"demo\.md:11: .*\(8, 16\)"),
    ("import numpy as np\nnp.zeros(3)[5]", r"demo\.md:11: the block raised IndexError"),
])
def test_an_exception_or_a_changed_shape_fails_every_build(tmp_path, code, expected):
    lessons = tmp_path / "lessons"
    _lesson(lessons, f"```python\n{code}\n```\n\n```output rtol=0.5 atol=1\n(8, 16)\n```\n")
    for drift_fails in (False, True):
        with pytest.raises(LessonCodeError, match=f"(?s){expected}"):
            stage(tmp_path / f"docs-{drift_fails}", lessons_dir=lessons,
                  drift_fails=drift_fails, on_drift=lambda text: None)


def test_the_page_and_the_notebook_carry_one_line_under_marked_blocks_only(tmp_path):
    text = DRIFTING + ("\n```python\nprint('ROMEO:')\nprint('zz')\n```\n\n```output sample\n"
                       "ROMEO:\nxy\n```\n\n```python\nprint(2)\n```\n\n```output\n2\n```\n")
    for lang in LANGS:
        drift = say("lesson.drift_note", lang, tolerance="± 0,1 %" if lang == "es"
                    else "± 0.1 %")
        sample = say("lesson.sample_note", lang)
        page = with_output_notes(text, lang)
        assert page.count(drift) == 1 and page.count(sample) == 1
        assert "```output sample" not in page and page.count("```output\n") == 3
        assert page.index("loss 3.103") < page.index(drift) < page.index("After.")
        notebook = without_output_blocks(text, lang)
        assert "```output" not in notebook and drift in notebook and sample in notebook
        assert [b.code for b in code_blocks(notebook)] == [b.code for b in code_blocks(text)]
    assert "asociativa" in say("lesson.drift_note", "es", tolerance="± 1 %")


def test_the_command_passes_strict_to_the_build(monkeypatch, tmp_path, capsys):
    import minimodel.site.build as site_build

    calls = []
    monkeypatch.setattr(site_build, "build",
                        lambda out, **kw: calls.append(kw) or Path(out))
    assert main(["docs", "build", "--out", str(tmp_path), "--strict"]) == 0
    assert main(["docs", "build", "--out", str(tmp_path)]) == 0
    assert main(["docs", "build", "--out", str(tmp_path), "--allow-broken-links"]) == 0
    assert [(c["drift_fails"], c["strict"]) for c in calls] == [(True, True), (False, True),
                                                                 (False, False)]
    with pytest.raises(SystemExit) as usage:
        main(["docs", "build", "--strict", "--allow-broken-links"])
    assert usage.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_the_build_help_says_what_each_flag_does_and_the_default(capsys):
    # --strict and --no-strict once changed two different things (numeric drift; broken
    # links) under names that read as opposites, and the help never said what the default is
    with pytest.raises(SystemExit):
        main(["docs", "build", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--no-strict" not in text
    assert "with no flag (the default)" in text
    assert "--strict stops on that drift too" in text
    assert "--allow-broken-links lets broken links and other MkDocs warnings through" in text
    with pytest.raises(SystemExit) as usage:
        main(["docs", "build", "--no-strict"])
    assert usage.value.code == 2


MARKED = [(lesson.path(lang), block) for lesson in load_lessons() for lang in LANGS
          if lesson.path(lang).is_file()
          for block in code_blocks(lesson.path(lang).read_text(encoding="utf-8"))
          if block.mark]


def test_every_mark_in_the_lessons_reads_and_twins_declare_the_same():
    for path, block in MARKED:
        parse_mark(block.mark)
    for lesson in load_lessons():
        marks = [[b.mark for b in code_blocks(lesson.path(lang).read_text(encoding="utf-8"))]
                 for lang in LANGS if lesson.path(lang).is_file()]
        assert all(m == marks[0] for m in marks), lesson.stem


def test_a_run_reports_drift_apart_from_problems(tmp_path):
    result = run_lesson(_lesson(tmp_path, DRIFTING))
    assert result.problems == [] and len(result.drifts) == 1
