"""The README's commands are safe to follow as written: the set-up block installs PyTorch's
CPU build before the test extra, every `minimodel ...` line parses, the cheap ones run, and
every folder an example reads is one an earlier README command writes."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from minimodel.cli import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"
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
    assert all("--index-url" not in line or "/whl/cpu" in line for line in lines)


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
    return [part.strip() for block in bash_blocks(TEXT) for line in commands(block)
            for part in line.split("&&") if part.strip().startswith("minimodel ")]


@pytest.mark.parametrize("line", minimodel_lines())
def test_every_minimodel_command_of_the_readme_parses(line):
    argv = shlex.split(line.split("|")[0])[1:]  # the command before a pipe
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
    assert "What is bit-reproducible, and what is not." in words
    for reason in ("BLAS", "--threads", "not associative", "bit-identical"):
        assert reason in words
