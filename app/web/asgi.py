"""ASGI entry point for process managers: ``uvicorn app.web.asgi:app --workers N``."""

from app.web.main import create_app

app = create_app()
