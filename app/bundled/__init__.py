"""The files that travel with the package: page templates, static files, migrations.

In the checkout they are the top-level ``templates/``, ``static/`` and ``migrations/``
folders; ``pyproject.toml`` maps each to a subpackage here, so a wheel installed anywhere
and an editable checkout find them the same way, through :mod:`importlib.resources`.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Literal

Bundled = Literal["templates", "static", "migrations"]


def bundled_dir(name: Bundled) -> Path:
    # The package is installed unpacked (a wheel, or editable), so its files are a folder.
    return Path(str(files(f"{__name__}.{name}")))
