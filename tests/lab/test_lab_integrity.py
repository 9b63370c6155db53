"""The lab's content is what was shipped: the manifest is current, and a changed reference is
refused with the files named and the repair command."""

import pytest

from minimodel.lab import integrity
from minimodel.lab.exercises import check_solution, get_exercise


def test_the_manifest_matches_the_content():
    assert integrity.problems() == [], ("lab content changed: run "
                                        "`python scripts/update_lab_manifest.py`")


def test_a_tampered_reference_is_refused(monkeypatch):
    ex = get_exercise("gelu-tanh")
    recorded = integrity._recorded()
    key = "lab/content/exercises/gelu-tanh/reference.py"
    assert key in recorded
    # As if the file had changed after installation: its hash no longer matches.
    monkeypatch.setattr(integrity, "_recorded", lambda: {**recorded, key: "0" * 64})
    with pytest.raises(integrity.ContentTampered) as err:
        check_solution(ex, source=ex.reference_path.read_text(), seed=0)
    text = str(err.value)
    assert key in text and "--force-reinstall" in text and "update_lab_manifest" in text
    assert integrity.problems() == [key]


def test_a_missing_manifest_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(integrity, "MANIFEST", tmp_path / "none.json")
    with pytest.raises(integrity.ContentTampered, match="missing or damaged"):
        integrity.verify()
