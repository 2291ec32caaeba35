"""ASGI entry point for process managers: ``uvicorn app.asgi:app --workers N``."""

from app.main import create_app

app = create_app(serving=True)
