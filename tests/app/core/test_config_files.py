"""An operator's configuration file is read once, again once it changes, and a file that
cannot be read is refused in the caller's error, naming it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.core.config_files import read_config


class Broken(ValueError):
    pass


def test_a_file_is_read_again_only_once_it_has_changed(tmp_path: Path) -> None:
    reads: list[str] = []

    def read(text: str, where: str) -> str:
        reads.append(where)
        return text.strip()

    path = tmp_path / "values.toml"
    path.write_text("one")
    assert read_config(path, read, Broken) == read_config(path, read, Broken) == "one"
    assert reads == [str(path)]
    path.write_text("two!")
    os.utime(path, ns=(1, 2))  # a new modification time, whatever the clock's grain
    assert read_config(path, read, Broken) == "two!" and len(reads) == 2
    with pytest.raises(Broken, match=f"{tmp_path / 'gone.toml'}: cannot be read"):
        read_config(tmp_path / "gone.toml", read, Broken)
