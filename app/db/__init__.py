"""Persistence: SQLAlchemy 2 models and session factories (SQLite and PostgreSQL)."""
