"""The composition root: the FastAPI application, built from every feature's routers.

It sits above the features (nothing imports it but the entry points: ``app.asgi``, the
CLI, the tests), so the shared web kit below (``app.web``) knows no feature. A new page
is a router in its feature's ``web`` package, listed once in ``FEATURES``.
"""

from __future__ import annotations

import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.exc import SQLAlchemyError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Route

from app.accounts.web import invitations as accounts_invitations
from app.accounts.web import pages as accounts_pages
from app.accounts.web.security import BrowserIdAndHeaders, csrf_input
from app.broker import CeleryJobQueue, make_celery
from app.bundled import bundled_dir
from app.checks.web import api as checks_api
from app.checks.web import pages as checks_pages
from app.core.refusals import Refused
from app.core.times import Clock
from app.db.models import utcnow
from app.db.session import Database
from app.dossier.web import api as dossier_api
from app.dossier.web import pages as dossier_pages
from app.errors import http_error, refusal_error, server_error, validation_error
from app.jobs.kinds import queues_of
from app.jobs.queue import JobQueue
from app.keys import derived_key
from app.pipeline import JOB_KINDS
from app.publishing.services.signing import ledger_key
from app.results.domain.presets import price_presets
from app.results.services.query import ResultsQuery
from app.results.services.results import query_results
from app.results.web import api as results_api
from app.results.web import pages as results_pages
from app.results.web import record as results_record
from app.results.web.assistant import AssistantDoor
from app.review.web import api as review_api
from app.review.web import audit_pages as review_audit_pages
from app.review.web import audits as review_audits
from app.review.web import correction_pages as review_correction_pages
from app.review.web import corrections as review_corrections
from app.review.web import disputes as review_disputes
from app.review.web import fraud as review_fraud
from app.review.web import fraud_pages as review_fraud_pages
from app.review.web import organizations as review_organizations
from app.review.web import pages as review_pages
from app.review.web import policy_pages as review_policy_pages
from app.review.web import releases as review_releases
from app.runs.web import api as runs_api
from app.runs.web import pages as runs_pages
from app.settings import Settings, get_settings, review_policy
from app.storage import private_folder
from app.submission_api.web import api as official_api
from app.submission_api.web import pages as official_pages
from app.submission_api.web import transfers as official_transfers
from app.submissions.web import api as submissions_api
from app.submissions.web import pages as submissions_pages
from app.web.api_errors import ERROR_RESPONSES
from app.web.assets import StaticAssets, swagger_ui_dir
from app.web.forms import SubmissionFormRefused
from app.web.limits import BodyLimit, body_limit, body_pace
from app.web.ratelimit import RateLimiter
from app.web.templating import templates
from app.webhooks.web import api as webhooks_api
from app.webhooks.web import pages as webhooks_pages

log = logging.getLogger(__name__)

# Every page form carries the CSRF field the accounts feature checks.
templates.env.globals["csrf_input"] = csrf_input

STATIC_DIR = bundled_dir("static")
# Each feature's API routes and pages; the API's paths all start /api/v1.
FEATURES = (
    submissions_api, dossier_api, runs_api, review_api, review_releases, results_api,
    checks_api, review_organizations, review_fraud, review_disputes, review_audits,
    review_corrections, review_pages, review_correction_pages, review_fraud_pages,
    review_audit_pages, review_policy_pages,
    submissions_pages, dossier_pages,
    runs_pages, results_pages, results_record, webhooks_api, webhooks_pages,
    checks_pages, accounts_pages, accounts_invitations, official_api, official_transfers,
    official_pages,
)  # fmt: skip


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    if app.state.serving:  # a server's process, not an app a test or a script makes
        # The public record is read before the first visitor asks for it: on a record of
        # tens of thousands of curves that is a second or two nobody then waits for.
        await anyio.to_thread.run_sync(_read_public_record, app.state.db)
        # Everything loaded at start-up lives as long as the process: moving it out of the
        # collector's reach keeps full collections, and the latency spikes they cause, short.
        gc.collect()
        gc.freeze()
        # A page makes thousands of short-lived objects that reference counting frees; the
        # default threshold (700) ran the young collection five times a page for nothing.
        gc.set_threshold(20_000, 20, 50)
    # The assistant's door (/mcp) is kept by a task of this lifespan: opened on its first
    # knock, closed with the lifespan.
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(app.state.assistant_door.keep, app.state.db, app.state.settings)
        try:
            yield
        finally:
            tasks.cancel_scope.cancel()


def _read_public_record(db: Database) -> None:
    try:
        with db.session() as session:
            query_results(session, ResultsQuery())  # the record, and what a query reads of it
    except SQLAlchemyError as problem:  # a database not migrated yet, say: the pages say so
        log.warning("the public record was not read at start-up: %s", problem)


BEARER = {
    "type": "http",
    "scheme": "bearer",
    "description": "An API token (endpoints-portal users token …); what it may do is its "
    "scopes' and its owner's standing (see Security in the README).",
}


def _document_bearer_tokens(app: FastAPI) -> None:
    """The OpenAPI document names the bearer token (Swagger UI's Authorize); every
    operation takes one, and the public ones need none."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = generate()
            schema.setdefault("components", {}).setdefault("securitySchemes", {})["bearer"] = BEARER
            schema["security"] = [{"bearer": []}, {}]
        return app.openapi_schema or {}

    app.openapi = openapi  # type: ignore[method-assign]


def _open_the_assistants_door(app: FastAPI, settings: Settings) -> None:
    """The read-only MCP server at /mcp, and what an assistant reads first (/llms.txt:
    the API's questions and the door, as llmstxt.org proposes)."""
    door = app.state.assistant_door = AssistantDoor()
    app.router.routes.append(Route("/mcp", endpoint=door))

    @app.get("/llms.txt", include_in_schema=False)
    def llms_txt() -> Response:
        text = (STATIC_DIR / "llms.txt").read_text(encoding="utf-8")
        return Response(text, media_type="text/plain; charset=utf-8")


def create_app(
    settings: Settings | None = None,
    queue: JobQueue | None = None,
    clock: Clock | None = None,
    serving: bool = False,
) -> FastAPI:
    """The portal's web app; *serving*: for a long-lived server process (``serve``, the
    ASGI entry point), which readies itself before its first request."""
    settings = settings or get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    # A cache folder another user could write to stops the portal here, naming it.
    private_folder(settings.cache_dir)
    # A broken price presets file stops the portal here, saying where and why, rather
    # than refusing every page that offers a price.
    price_presets(settings.price_presets_file)
    # So does a broken review policy file (rules §15), naming the entry at fault.
    review_policy(settings)
    # The ledger's signing key exists from the first start (made here unless supplied), so
    # its public half is served before anything is signed; a key file that is no Ed25519
    # key stops the portal here, naming it.
    ledger_key(settings)
    app = FastAPI(
        lifespan=_lifespan,
        title="MLPerf Endpoints Portal",
        version="0.1.0",
        description="Upload MLPerf Endpoints submission bundles and follow their checks.",
        # Served below from local files: the CSP allows no CDN.
        docs_url=None,
        redoc_url=None,
        responses=ERROR_RESPONSES,
    )
    app.state.settings = settings
    app.state.serving = serving
    app.state.rate_limiter = RateLimiter()
    app.state.csrf_key = derived_key(settings, "csrf")
    app.state.db = Database(settings.effective_database_url)
    if queue is None:
        queue = CeleryJobQueue(make_celery(settings), queues_of(JOB_KINDS))
    app.state.queue = queue
    # What "now" is for the chair's time-bound acts (publishing, decisions): the wall
    # clock, or a set one for rehearsals and tests (as the CLI's --now).
    app.state.clock = clock or utcnow
    assets = StaticAssets({"": STATIC_DIR, "vendor/api-docs/": swagger_ui_dir()})
    app.state.assets = assets

    @app.get("/static/{path:path}", include_in_schema=False)
    def static(request: Request, path: str) -> Response:
        return assets.response(request, path)

    @app.get("/docs", include_in_schema=False, response_class=HTMLResponse)
    def api_docs(request: Request) -> Response:
        return templates.TemplateResponse(request, "api_docs.html", {})

    # ReDoc is not offered: it needs blob: workers and a CDN logo the CSP rightly refuses.
    @app.get("/redoc", include_in_schema=False)
    def api_reference() -> Response:
        return RedirectResponse("/docs", status_code=301)

    # No body is read past its route's limit. Added first, so it sits innermost: a refusal
    # raised while a route reads the body is that route's error, answered as any other.
    app.add_middleware(BodyLimit, limit=body_limit(settings), pace=body_pace(settings))
    app.add_middleware(BrowserIdAndHeaders)
    # Pages and JSON compressed on the way out; static files come compressed already.
    app.add_middleware(GZipMiddleware, minimum_size=1024, compresslevel=6)
    for feature in FEATURES:
        app.include_router(feature.router)
    _open_the_assistants_door(app, settings)
    app.add_exception_handler(SubmissionFormRefused, dossier_pages.form_refused)
    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(Refused, refusal_error)
    app.add_exception_handler(RequestValidationError, validation_error)
    app.add_exception_handler(Exception, server_error)

    _document_bearer_tokens(app)

    @app.get("/healthz", include_in_schema=False)
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app
