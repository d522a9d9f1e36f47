"""The memo key parsed data files are cached under (files.read.memo_key): an edited file is read again, and a
missing one is one usage line saying what it should have been."""
from __future__ import annotations

import os

import pytest

from dialeval.core.errors import UsageError
from dialeval.files.read import memo_key


def test_an_edited_file_gets_a_new_key(tmp_path):
    f = tmp_path / "dialog-babi-task1-API-calls-candidates.txt"
    f.write_text("1 hello what can i help you with today\n")
    first = memo_key(f)
    assert first == (str(f), f.stat().st_size, f.stat().st_mtime_ns)
    f.write_text("1 hello what can i help you with today\n2 i'm on it\n")
    os.utime(f, ns=(first[2] + 10**9, first[2] + 10**9))
    assert memo_key(f) != first


def test_a_missing_file_is_one_line_naming_what_it_should_be(tmp_path):
    with pytest.raises(UsageError) as e:
        memo_key(tmp_path / "entities.txt", "the Movie Dialog entity list")
    assert str(e.value) == f"{tmp_path / 'entities.txt'}: no such file (the Movie Dialog entity list)"
    with pytest.raises(UsageError) as e:
        memo_key(tmp_path / "cand-valid.txt")
    assert "no such file" in str(e.value) and "Errno" not in str(e.value)
