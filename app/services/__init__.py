"""Use cases: keyword-only functions taking a session. No web framework, no Celery."""
