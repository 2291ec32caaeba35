"""``endpoints-portal super-passes``: the benchmark definitions' super-pass sizes."""

from __future__ import annotations

from app.cli.super_passes.list import list_super_passes
from app.cli.super_passes.set import set_super_pass
from app.cli.super_passes.unset import unset_super_pass
from harness.cli.kit import group


@group(
    "The benchmark definitions' super-pass sizes (default: one pass over the dataset).",
    "the datasets' super-pass sizes",
)
def super_passes() -> None:
    pass


for command in (list_super_passes, set_super_pass, unset_super_pass):
    super_passes.add_command(command)
