"""A break's visible surface (lab/breaks/surface.py): what is on it, how cause and secret words
are matched, which findings fail `lab validate` and which warn, and the dump script
(scripts/break_surface.py) that writes it as files.

The fixtures are a synthetic break, lesson path, workspace and docs folder in tmp_path, with one
planted leak each: a lesson, a docstring, the run output, the page.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

from minimodel.lab.breaks import load_break
from minimodel.lab.lessons import load_lessons
from minimodel.lab.breaks.catalog import Break, secrecy_problems, term_pattern
from minimodel.lab.breaks.surface import comments_and_docstrings, surface_problems

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import break_surface  # noqa: E402

BUG = """\
--- a/minimodel/nn/thing.py
+++ b/minimodel/nn/thing.py
@@ -1,4 +1,4 @@
 \"\"\"A thing.\"\"\"
 
 def scale(x):
-    return x * 0.02
+    return x * 1.0
"""


def _text(en: str, es: str | None = None) -> dict[str, str]:
    return {"en": en, "es": es or en}


def make_break(tmp_path: Path, **extra) -> Break:
    folder = tmp_path / "breaks" / "loss-too-high"
    folder.mkdir(parents=True)
    data = {"id": "loss-too-high", "cause_words": ["std", "initialis"],
            "title": _text("A fresh model's loss is too high", "Una pérdida demasiado alta"),
            "summary": _text("The loss starts at 44."), "intro": _text("Bug report: 44."),
            "predict": [_text("What loss do you expect?")],
            "observe": _text("Compare the loss with ln V."),
            "hints": [_text("Print the weights' spread."), _text("Look at the std."),
                      _text("The std should be 0.02.")],
            "explanation": _text("Initialise with std 0.02."), **extra}
    (folder / "break.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    (folder / "bug.patch").write_text(BUG, encoding="utf-8")
    return Break(data["id"], folder, data)


def make_path(tmp_path: Path, lesson_body: str, title: str = "Loss at the start") -> Path:
    """A two-lesson path whose second lesson lists the break, and a third lesson after it."""
    lessons = tmp_path / "content" / "lessons"
    lessons.mkdir(parents=True)
    (tmp_path / "content" / "path.yaml").write_text("- first\n- second\n- third\n")
    for slug, body, breaks, head in (("first", "Plain words.\n", "[]", "First"),
                                     ("second", lesson_body, "[loss-too-high]", title),
                                     ("third", "Here we initialise with std 0.02.\n", "[]",
                                      "Third")):
        for name in (f"{slug}.md", f"{slug}.es.md"):
            (lessons / name).write_text(f'---\ntitle: "{head}"\nquiz: []\nbreaks: {breaks}\n'
                                        f"exercises: []\n---\n\n# {head}\n\n{body}",
                                        encoding="utf-8")
    return lessons


def make_workspace(tmp_path: Path, docstring: str) -> Path:
    root = tmp_path / "ws"
    (root / "minimodel" / "nn").mkdir(parents=True)
    (root / "minimodel" / "nn" / "thing.py").write_text(
        f'"""{docstring}"""\n\ndef scale(x):\n    return x * 1.0  # the weights\n',
        encoding="utf-8")
    return root


def make_docs(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "README.md").write_text("# minimodel\n\nA small library.\n", encoding="utf-8")
    return root


def check(tmp_path, brk, lesson="Nothing to see.\n", docstring="A thing.", run="loss 44.1\n",
          title="Loss at the start"):
    return surface_problems(brk, make_workspace(tmp_path, docstring), run,
                            lessons_dir=make_path(tmp_path, lesson, title),
                            docs_root=make_docs(tmp_path), questions={})


# --------------------------------------------------------------------------- matching


@pytest.mark.parametrize("term, text, found", [
    ("std", "weights drawn with std 1", True),
    ("std", "x.std() of the rows", True),
    ("std", "printed on stdout", False),          # short: whole word only
    ("mask", "the Masked positions", True),       # four letters or more: a stem
    ("mask", "unmasked positions", False),        # but it starts a word
    ("initialis", "Initialising the model", True),
    ("0.02", "scaled by 0.025", False),           # ends in a digit: whole
    ("0.02", "std=0.02.", True),
    ("last write", "the last\n  write wins", True),   # a wrapped phrase
    ("+=", "grad[ids] += g", True),
    ("máscara", "LA MÁSCARA causal", True),
    ("`is`", "compare with `is`", True),
    ("`is`", "this is it", False),
])
def test_a_term_matches_at_word_boundaries(term, text, found):
    assert bool(term_pattern(term).search(text)) is found


def test_comments_and_docstrings_are_read_but_not_code():
    source = ('"""Module doc: std."""\n\nclass A:\n    """Class doc."""\n\n'
              "    def f(self):\n        x = std(1)  # a comment\n        return 'std'\n")
    prose = dict(comments_and_docstrings(source))
    assert prose == {1: "Module doc: std.", 4: "Class doc.", 7: "# a comment"}


# --------------------------------------------------------------------------- the check


def test_a_clean_surface_has_no_finding(tmp_path):
    assert check(tmp_path, make_break(tmp_path)) == ([], [])


def test_a_cause_word_in_the_lesson_before_the_break_warns(tmp_path):
    problems, warnings = check(tmp_path, make_break(tmp_path),
                               lesson="Text.\n\nWe set the std to 1 here.\n")
    assert problems == []
    assert len(warnings) == 2                       # the English and the Spanish lesson
    assert "break loss-too-high: cause word 'std'" in warnings[0]
    assert "lesson second.md:12: We set the std to 1 here." in warnings[0]
    assert "lesson second.es.md:12:" in warnings[1]


def test_a_lesson_after_the_break_is_not_on_its_surface(tmp_path):
    # "third" says "initialise with std 0.02" but comes after the break's lesson
    assert check(tmp_path, make_break(tmp_path)) == ([], [])


def test_a_secret_word_in_a_lesson_fails(tmp_path):
    brk = make_break(tmp_path, secret_words=["std 1"])
    problems, warnings = check(tmp_path, brk, lesson="Text.\n\nWe use std 1 here.\n")
    assert warnings == []
    assert [p.split(": ", 1)[1][:60] for p in problems] == [
        "secret word 'std 1' on the surface before rung 2: lesson sec"] * 2   # en and es
    assert "lesson second.md:12" in problems[0] and "lesson second.es.md:12" in problems[1]


def test_a_cause_word_in_a_docstring_of_the_patched_file_fails(tmp_path):
    problems, _ = check(tmp_path, make_break(tmp_path),
                        docstring="A thing.\n\nIts std must be 0.02.")
    assert problems == ["break loss-too-high: cause word 'std' on the surface before rung 2: "
                        "workspace minimodel/nn/thing.py:3: Its std must be 0.02."]


def test_a_cause_word_in_the_run_output_fails(tmp_path):
    problems, _ = check(tmp_path, make_break(tmp_path),
                        run="loss 44.1\nweights initialised with std 1.0\n")
    assert len(problems) == 2
    assert all("run experiment output (en):2: weights initialised" in p for p in problems)
    assert {p.split("'")[1] for p in problems} == {"std", "initialis"}


def test_a_cause_word_on_the_break_page_fails(tmp_path, monkeypatch):
    from minimodel.lab.breaks import surface

    real = surface.break_page

    def page_with_a_leak(*args, **kwargs):    # as if the generator printed more than the YAML
        return real(*args, **kwargs) + "\nThe weights are initialised too wide.\n"

    monkeypatch.setattr(surface, "break_page", page_with_a_leak)
    problems, _ = check(tmp_path, make_break(tmp_path))
    assert len(problems) == 2                                # the en and es pages
    assert all(" page lab/breaks/loss-too-high (" in p and "cause word 'initialis'" in p
               and "The weights are initialised too wide." in p for p in problems)


def test_the_page_link_to_its_lesson_is_searched_with_the_lesson(tmp_path):
    # a break in a lesson called "Initialising ...": its title is the lesson's, so a warning
    problems, warnings = check(tmp_path, make_break(tmp_path), title="Initialising weights")
    assert problems == []
    assert len(warnings) == 2                                # the en and es lessons' titles
    assert "lesson second.md:8: # Initialising weights" in warnings[0]
    assert "lesson second.es.md:8: # Initialising weights" in warnings[1]


def test_hint_one_is_on_the_surface_but_not_hint_two(tmp_path):
    brk = make_break(tmp_path, hints=[_text("Look at the std."), _text("Print the spread."),
                                      _text("It should be 0.02.")])
    problems, _ = check(tmp_path, brk)
    assert any("hint break.yaml hints[1] (en)" in p for p in problems)
    assert not any("hints[2]" in p for p in problems)


def test_secret_words_are_kept_out_of_the_first_read_texts(tmp_path):
    brk = make_break(tmp_path, secret_words=["ln V"])
    assert any("observe (en) names the cause (ln V)" in p for p in secrecy_problems(brk))


def test_secret_words_must_be_phrases(tmp_path):
    brk = make_break(tmp_path, secret_words=["ok", ""])
    assert any("secret_words must be a list of non-empty phrases" in p
               for p in secrecy_problems(brk))


# --------------------------------------------------------------------------- the dump


def test_the_dump_holds_the_surface_and_nothing_past_the_rung(tmp_path):
    brk = load_break("loss-crash-after-merge")
    out = tmp_path / "surface"
    assert break_surface.main([brk.id, "--rung", "1", "--out", str(out), "--no-run"]) == 0
    written = {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8")
               for p in out.rglob("*") if p.is_file()}
    # The break's lesson, numbered by its place in path.yaml (never a number written here).
    own = next(lesson for lesson in load_lessons() if brk.id in lesson.breaks)
    assert {"INDEX.md", "NOTES.md", "start-output.txt", "report.md", "hints.md", "page.md",
            "README.md", "workspace/minimodel/nn/lm_head.py",
            f"lessons/{own.number:02d}-{own.slug}.md"} <= set(written)
    after = f"lessons/{own.number + 1:02d}-"                              # after the break
    assert not any(name.startswith(after) for name in written)
    everything = "\n".join(written.values())
    hints = brk.texts("hints", "en")
    assert " ".join(hints[0].split()) in " ".join(written["hints.md"].split())
    assert " ".join(hints[0].split()) in " ".join(written["page.md"].split())
    flat = " ".join(everything.split())
    assert " ".join(hints[1].split()) not in flat
    assert " ".join(brk.text("explanation", "en").split()) not in flat
    assert "Started break loss-crash-after-merge" in written["start-output.txt"]
    assert all(f"`{name}`" in written["INDEX.md"] for name in written if name != "INDEX.md")


def test_the_dump_refuses_a_rung_past_the_ladder(tmp_path, capsys):
    assert break_surface.main(["loss-crash-after-merge", "--rung", "9", "--no-run",
                               "--out", str(tmp_path / "x")]) == 2
    assert "has 4 hints; give 0 (before any hint) to 4" in capsys.readouterr().err


# --------------------------------------------------------------------------- lab validate


def test_validate_prints_warnings_without_failing(monkeypatch, capsys):
    from minimodel.cli import main
    from minimodel.lab import overview

    def breaks() -> list[str]:
        overview.WARNINGS["breaks"] = ["break b: cause word 'mask' ... lesson x.md:3: a mask"]
        return []

    monkeypatch.setattr(overview, "SECTIONS", {"breaks": breaks})
    assert main(["lab", "validate"]) == 0
    out = capsys.readouterr().out
    assert "breaks: ok, 1 warning(s)" in out
    assert "  ~ warning: break b: cause word 'mask' ... lesson x.md:3: a mask" in out
    assert main(["lab", "validate", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True
    assert report["warnings"] == {"breaks": ["break b: cause word 'mask' ... lesson x.md:3: a mask"]}
