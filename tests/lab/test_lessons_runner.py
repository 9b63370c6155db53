"""The lesson runner: code blocks run in order in one namespace; printed output is checked."""

from pathlib import Path

from minimodel.lab.lessons import code_blocks, lesson_problems, run_lesson

LESSON = '''---
title: "A test lesson"
quiz: []
---
# A test lesson

```python
import numpy as np
E = np.arange(6.0).reshape(3, 2)
print(E[[2, 0, 2]])
```

```output
[[4. 5.]
 [0. 1.]
 [4. 5.]]
```

```python
import matplotlib.pyplot as plt
plt.plot([1, 2])
plt.show()
x = 3
```

```bash
minimodel train   # shown, never run
```

```python
print(x)
```

```output
3
```
'''


def test_blocks_are_paired_with_the_output_written_after_them():
    blocks = code_blocks(LESSON)
    assert [b.expected for b in blocks] == ["[[4. 5.]\n [0. 1.]\n [4. 5.]]\n", None, "3\n"]
    assert blocks[0].line == 8                     # the first line of code, 1-based


def test_a_lesson_whose_output_matches_has_no_problems_and_its_figure_is_saved(tmp_path):
    path = tmp_path / "01-test.md"
    path.write_text(LESSON, encoding="utf-8")
    assert lesson_problems(path, tmp_path / "figures") == []
    assert [p.name for p in (tmp_path / "figures").iterdir()] == ["block-2-0.svg"]


def test_a_changed_number_an_unshown_print_and_an_error_are_each_refused(tmp_path):
    path = tmp_path / "01-test.md"
    path.write_text(LESSON.replace("```output\n3\n```", "```output\n4\n```"), encoding="utf-8")
    [problem] = lesson_problems(path)
    assert "01-test.md:31" in problem and "differs" in problem
    path.write_text(LESSON + '\n```python\nprint("unseen")\n```\n', encoding="utf-8")
    assert "no ```output block" in lesson_problems(path)[0]
    path.write_text(LESSON + "\n```python\nE[5]\n```\n", encoding="utf-8")
    [problem] = lesson_problems(path)
    assert problem == (f"{path}:39: the block raised IndexError: index 5 is out of bounds for "
                       "axis 0 with size 3 (line 1 of the block)")


def test_a_lesson_needing_a_missing_package_is_not_run_and_says_which_and_how(tmp_path):
    path = tmp_path / "needs.md"
    needs = "needs: [numpy, no_such_package_xyz, torch]\n---\n"
    wrong = LESSON.replace("```output\n3\n```", "```output\n4\n```")   # never compared
    path.write_text(wrong.replace("quiz: []\n---\n", "quiz: []\n" + needs, 1), encoding="utf-8")
    result = run_lesson(path)
    assert (result.runs, result.problems) == ([], [])
    assert result.drifts == [f"{path}: not run: its code needs no_such_package_xyz, not installed "
                             "here (pip install no_such_package_xyz); its outputs are shown "
                             "as written"]
    assert lesson_problems(path, strict=False) == []            # a learner's build warns
    assert lesson_problems(path) == result.drifts               # a strict one refuses
    path.write_text(LESSON.replace("quiz: []\n---\n", "quiz: []\nneeds: [numpy]\n---\n", 1),
                    encoding="utf-8")
    assert lesson_problems(path) == []                          # installed: run and compared


def test_the_model_families_lesson_without_transformers_names_the_extra_to_install(monkeypatch):
    import importlib.util

    from minimodel.lab.lessons import find_lesson

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("torch", "transformers")
                        else real(name, *a))
    for lang in ("en", "es"):
        path = find_lesson("model-families").path(lang)
        result = run_lesson(path)
        assert (result.runs, result.problems) == ([], [])
        [line] = result.drifts
        assert line.endswith(': not run: its code needs torch, transformers, not installed here '
                             '(pip install "minimodel[hf]"); its outputs are shown as written')
