"""The local directory store: the embedded default, one file per object."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from app.storage.base import ObjectMissing, StoreUnavailable, checked_key


class LocalStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def location(self) -> str:
        return f"file://{self.root.resolve()}"

    def _path(self, key: str) -> Path:
        return self.root / checked_key(key)

    def put_file(self, key: str, path: Path) -> None:
        target = self._path(key)
        if target.exists():
            path.unlink(missing_ok=True)
            return
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.replace(path, target)  # a finished file is at its address at once
            except OSError:  # another file system: copy beside it, then rename
                partial = target.with_name(f".{target.name}.partial")
                shutil.copyfile(path, partial)
                os.replace(partial, target)
                path.unlink(missing_ok=True)
        except OSError as exc:
            raise StoreUnavailable(f"{self.location} cannot be written: {exc}") from exc

    def open(self, key: str) -> BinaryIO:
        try:
            return self._path(key).open("rb")
        except FileNotFoundError:
            raise ObjectMissing(f"{key} is not in {self.location}") from None

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def size(self, key: str) -> int:
        try:
            return self._path(key).stat().st_size
        except FileNotFoundError:
            raise ObjectMissing(f"{key} is not in {self.location}") from None

    def delete(self, key: str) -> None:
        self._path(key).unlink(missing_ok=True)

    def keys(self) -> Iterator[str]:
        if not self.root.is_dir():
            return
        for folder in sorted(self.root.iterdir()):
            if not folder.is_dir():
                continue
            for file in sorted(folder.iterdir()):
                key = f"{folder.name}/{file.name}"
                try:
                    yield checked_key(key)
                except ValueError:
                    continue  # a partial copy or a stranger's file: not an object

    def local_path(self, key: str) -> Path:
        path = self._path(key)
        if not path.is_file():
            raise ObjectMissing(f"{key} is not in {self.location}")
        return path
