"""Apply Alembic migrations programmatically (``endpoints-portal migrate``, ``serve``)."""

from __future__ import annotations

from alembic import command
from alembic.config import Config

from app.bundled import bundled_dir


def alembic_config(database_url: str) -> Config:
    # No alembic.ini: that file is for the `alembic` command in a checkout; the
    # installed package carries only the migrations.
    config = Config()
    config.set_main_option("script_location", str(bundled_dir("migrations")))
    config.attributes["database_url"] = database_url
    config.attributes["configure_logging"] = False
    return config


def upgrade(database_url: str, revision: str = "head") -> None:
    command.upgrade(alembic_config(database_url), revision)
