"""The Embedding Projector pair: same row count, labels escaped, header only with extra columns."""

import numpy as np
import pytest

from minimodel.interop.projector import export_projector


def test_single_column_has_no_header_and_rows_align(tmp_path):
    vec, meta = export_projector(np.arange(6.0).reshape(3, 2), ["a", "b\tc", "new\nline"], tmp_path)
    rows = vec.read_text().splitlines()
    assert rows == ["0\t1", "2\t3", "4\t5"]
    assert meta.read_text().splitlines() == ["a", "b\\tc", "new\\nline"]


def test_extra_columns_get_a_header(tmp_path):
    _, meta = export_projector(np.ones((2, 3)), ["x", "y"], tmp_path, {"count": [5, 7]},
                               prefix="tied_")
    assert meta.name == "tied_metadata.tsv"
    assert meta.read_text().splitlines() == ["label\tcount", "x\t5", "y\t7"]


@pytest.mark.parametrize("vectors, labels, words", [
    (np.ones(3), ["a"], "2-D"),
    (np.ones((2, 2)), ["a"], "1 values for 2 vectors"),
    (np.array([[np.nan, 1.0]]), ["a"], "NaN"),
])
def test_bad_input_is_refused(tmp_path, vectors, labels, words):
    with pytest.raises(ValueError, match=words):
        export_projector(vectors, labels, tmp_path)


def test_no_label_can_break_a_row(tmp_path):
    # Byte-level vocabularies hold NUL, vertical tab, form feed, \x1c-\x1e, \x85, U+2028:
    # all line breaks to some reader. Each becomes a visible escape, one row per vector.
    labels = ["\x00", "\x0b", "\x0c", "\x1e", "\x85", "\u2028", "\\xd3", "\r", "plain"]
    _, meta = export_projector(np.zeros((len(labels), 2)), labels, tmp_path)
    text = meta.read_text(encoding="utf-8")
    assert text.split("\n")[:-1] == ["\\x00", "\\x0b", "\\x0c", "\\x1e", "\\x85", "\\u2028",
                                      "\\xd3", "\\r", "plain"]
    assert len(text.splitlines()) == len(labels)  # Python's widest idea of a line break
