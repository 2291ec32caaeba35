"""The FastAPI application."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from app.db.session import Database
from app.services.jobs import JobQueue
from app.settings import Settings, get_settings

from .api.submissions import router as submissions_api
from .pages import router as pages_router

STATIC_DIR = Path(__file__).resolve().parents[2] / "static"


def create_app(settings: Settings | None = None, queue: JobQueue | None = None) -> FastAPI:
    settings = settings or get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    app = FastAPI(
        title="MLPerf Endpoints Portal",
        version="0.1.0",
        description="Upload MLPerf Endpoints submission bundles and follow their checks.",
    )
    app.state.settings = settings
    app.state.db = Database(settings.effective_database_url)
    if queue is None:
        # Imported here so that tests can run the app with another queue.
        from worker.celery_app import CeleryJobQueue, make_celery

        queue = CeleryJobQueue(make_celery(settings))
    app.state.queue = queue
    app.mount("/static", StaticFiles(directory=str(STATIC_DIR)), name="static")
    app.include_router(submissions_api)
    app.include_router(pages_router)

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app
