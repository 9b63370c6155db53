"""The lesson runner: code blocks run in order in one namespace; printed output is checked."""

from pathlib import Path

from minimodel.lab.lessons import code_blocks, lesson_problems

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
