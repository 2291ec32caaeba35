"""Celery app and thin tasks: open a session, call one service, commit."""
