"""Alembic migrations; a package only so that they travel in the wheel."""
