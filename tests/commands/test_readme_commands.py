"""The README's commands are safe to follow as written: the set-up block installs PyTorch's
CPU build before the test extra without replacing PyPI, every `minimodel ...` command (in a
block or inline) parses, the cheap ones run, every folder an example reads is one a README
command writes, its lesson table is the path's, and its first example prints what it shows."""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from minimodel.cli import build_parser
from minimodel.lab.lessons import load_lessons

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
TEXT = README.read_text(encoding="utf-8")


def bash_blocks(text: str) -> list[str]:
    return re.findall(r"```bash\n(.*?)```", text, flags=re.S)


def commands(block: str) -> list[str]:
    """The command lines of a block: comments dropped, ``\\`` continuations joined."""
    joined = re.sub(r"\\\n\s*", " ", block)
    lines = [line.split("  #")[0].strip() for line in joined.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def set_up_block() -> list[str]:
    section = TEXT[TEXT.index("## Set up"):]
    section = section[:section.index("\n## ", 3)]
    return commands(bash_blocks(section)[0])


def test_the_cpu_torch_wheel_is_installed_before_the_test_extra():
    lines = set_up_block()
    cpu = [i for i, line in enumerate(lines)
           if line.startswith("pip install torch") and "download.pytorch.org/whl/cpu" in line]
    extra = [i for i, line in enumerate(lines) if '".[test]"' in line]
    assert cpu and extra and cpu[0] < extra[0], lines
    # Regression: `--index-url` replaces PyPI, so on a machine that reaches only PyPI the
    # install failed; `--extra-index-url` adds the CPU wheels and keeps PyPI.
    for block in bash_blocks(TEXT):
        assert not [line for line in commands(block) if re.search(r"(?<![\w-])--index-url", line)]


def test_the_test_command_is_the_one_ci_runs():
    assert 'pip install -e ".[test]" && python -m pytest -n 2' in set_up_block()
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert '\npip install -e ".[test]" && python -m pytest -n 2\n' in ci


def test_every_block_that_installs_torch_installs_the_cpu_build_first():
    # Regression: the graduation chapter's `pip install -e ".[hf]"` pulled the CUDA build.
    for block in bash_blocks(TEXT):
        lines = commands(block)
        needs_torch = [i for i, line in enumerate(lines)
                       if re.search(r'pip install .*\.\[(hf|test)\]', line)]
        cpu = [i for i, line in enumerate(lines)
               if line.startswith("pip install torch") and "/whl/cpu" in line]
        assert not needs_torch or (cpu and cpu[0] < needs_torch[0]), lines


def minimodel_lines() -> list[str]:
    """Every `minimodel ...` command of the README: in its bash blocks and in inline code."""
    in_blocks = [part.strip() for block in bash_blocks(TEXT) for line in commands(block)
                 for part in line.split("&&") if part.strip().startswith("minimodel ")]
    inline = re.findall(r"`(minimodel [^`]+)`", re.sub(r"```.*?```", "", TEXT, flags=re.S))
    return list(dict.fromkeys(in_blocks + inline))


@pytest.mark.parametrize("line", minimodel_lines())
def test_every_minimodel_command_of_the_readme_parses(line):
    argv = shlex.split(line.split("|")[0])[1:]  # the command before a pipe
    if "--help" in argv:
        with pytest.raises(SystemExit) as done:
            build_parser().parse_args(argv)
        assert done.value.code == 0
        return
    build_parser().parse_args(argv)  # SystemExit(2) on an unknown command or option


@pytest.mark.parametrize("line", ["minimodel kernels", "minimodel lab status"])
def test_the_cheap_readme_commands_run_as_written(line, tmp_path):
    assert line in minimodel_lines()
    proc = subprocess.run([sys.executable, "-m", "minimodel", *shlex.split(line)[1:]],
                          capture_output=True, text=True, timeout=300,
                          env={"MINIMODEL_LEARNER_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr


def folders_written(lines: list[str]) -> set[str]:
    """The run folders the README's train, compare and import-hf lines create."""
    from minimodel.training import TrainConfig, default_out_dir

    written = set()
    for line in lines:
        argv = shlex.split(line.split("|")[0])[1:]
        if "--help" in argv:
            continue
        args = build_parser().parse_args(argv)
        if argv[0] == "train":
            config = TrainConfig(model=args.model or "gpt", tied=args.tied)
            written.add(args.out or default_out_dir(config.resolved()).as_posix())
        elif argv[0] == "compare":
            out = args.out or f"runs/compare-{args.model or 'gpt'}"
            # the comparison folder too: `explore` takes it for its tied and untied runs
            written |= {out, f"{out}/tied", f"{out}/untied"}
        elif argv[0] == "import-hf":
            written.add(argv[2])
    return written


def test_every_run_folder_an_example_reads_is_written_by_a_readme_command():
    written = folders_written(minimodel_lines())
    assert {"runs/gpt-tied", "runs/compare-gpt/tied", "runs/compare-gpt/untied"} <= written
    read = set(re.findall(r"minimodel (?:explore|generate|inspect|export) ((?:runs/[\w./-]+ ?)+)",
                          TEXT.replace("\n", " ")))
    folders = {f.removesuffix("/model.safetensors") for group in read for f in group.split()}
    assert folders and folders <= written, folders - written


def test_the_readme_says_what_is_bit_reproducible_and_why():
    words = " ".join(TEXT.split())
    for reason in ("BLAS", "`--threads`", "not associative", "bit-identical", "exact on every"):
        assert reason in words


def test_a_newcomer_reads_the_readme_in_five_minutes():
    assert len(TEXT.splitlines()) <= 200
    for heading in ("## Set up", "## A first example", "## The map"):
        assert heading in TEXT
    for command in ("minimodel train", "minimodel lab next", "minimodel break start",
                    "minimodel tutor", "minimodel doctor", "minimodel explore",
                    "minimodel export", "minimodel docs build", "minimodel quiz take",
                    "minimodel exercise start"):
        assert any(line.startswith(command) for line in minimodel_lines()), command


def _readme_lessons():
    spec = importlib.util.spec_from_file_location("readme_lessons",
                                                  REPO / "scripts" / "readme_lessons.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readmes_lesson_table_is_the_path():
    module = _readme_lessons()
    lessons = load_lessons()
    assert module.with_table(TEXT, module.lesson_table(lessons)) == TEXT, \
        "the README's lesson table is stale: run python scripts/readme_lessons.py"
    table = TEXT[TEXT.index(module.BEGIN):TEXT.index(module.END)]
    slugs = re.findall(r"lessons/([\w-]+)\.md\)", table)
    assert slugs == [lesson.slug for lesson in lessons]
    assert all((REPO / module.LESSON_LINK.format(slug=slug)).is_file() for slug in slugs)
    assert not re.search(r"\b(twenty|\d+)[- ]\w* lessons\b", TEXT, flags=re.I)  # no hand count


def test_the_readme_shows_no_breaks_planted_bug():
    # A learner reads the README before any break: it must not show a break's bug or its fix.
    for leak in ("TiedHead(", "std 0.02", "std=0.02", "causal=False", "vocab_size=256)"):
        assert leak not in TEXT, leak


@pytest.mark.slow
def test_the_first_example_prints_what_the_readme_shows():
    section = TEXT[TEXT.index("## A first example"):TEXT.index("## The map")]
    code = re.search(r"```python\n(.*?)```", section, flags=re.S)[1]
    shown = re.search(r"```output\n(.*?)```", section, flags=re.S)[1].split()
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=900, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    printed = proc.stdout.split()
    assert printed[:3] == shown[:3]                  # the tie, and the first step's loss
    assert len(printed) == len(shown)
    for ours, theirs in zip(printed[3:], shown[3:]):
        # later losses: float32 training, each CPU's BLAS adds in its own order
        assert abs(float(ours) - float(theirs)) <= 0.05, (printed, shown)
