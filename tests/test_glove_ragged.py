"""A GloVe-text line with a different number of values is an error at file:line, never a silently renamed word."""
from __future__ import annotations

import pytest

from dialeval.core.errors import UsageError
from dialeval.formats.vectors import load_vectors


@pytest.mark.parametrize("text, bad_line", [
    ("cat 0.1 0.2 0.3\ndog 0.4 0.5\n", 1),  # two lines, a tie: the dimension guess cannot be trusted
    ("dog 0.4 0.5\ncat 0.1 0.2 0.3\n", 2),
    ("".join(f"w{i} 0.1 0.2\n" for i in range(50)) + "cat 0.1 0.2 0.3\n", 51),  # many lines, one ragged
])
def test_a_ragged_glove_line_is_an_error_at_its_line(tmp_path, text, bad_line):
    path = tmp_path / "ragged.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError, match=rf"ragged\.txt:{bad_line}: .*numbers"):
        load_vectors(path, fmt="glove-text", words=["cat", "dog"])
    with pytest.raises(UsageError, match=rf"ragged\.txt:{bad_line}: "):
        load_vectors(path, words=["cat", "dog"])  # the format sniffed, same answer


def test_glove_words_with_spaces_still_load(tmp_path):
    path = tmp_path / "spaced.txt"
    path.write_text("new york 0.5 0.5\n12 34 0.1 0.2\ncat 0.3 0.4\n", encoding="utf-8")
    v = load_vectors(path, fmt="glove-text", words=["new york", "12 34", "cat"])
    assert (v.identity.dim, v.identity.vocab_size) == (2, 3)
    assert sorted(v.key_to_index) == ["12 34", "cat", "new york"]
