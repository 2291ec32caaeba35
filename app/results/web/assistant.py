"""The assistant's door (issue 50, item 4): a read-only MCP server, streamable HTTP at
``/mcp``, whose tools are the public API's questions. Every answer comes from the public
record by the services the API calls, as a visitor who is not signed in sees it, with the
API's numbers; a refused question is answered with the API's words."""

from __future__ import annotations

import datetime as dt
import importlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
from sqlalchemy.orm import Session

from app.core.refusals import Refused
from app.db.session import Database
from app.results.domain.presets import price_presets
from app.results.services.compare import CompareParams, compare_query
from app.results.services.plan import PlanParams, capacity_plan
from app.results.services.public import checked_cohort, list_cohorts
from app.results.services.query import ResultsParams, parse_results_query
from app.results.services.report import result_report
from app.results.services.results import list_benchmarks, query_results
from app.settings import Settings

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

log = logging.getLogger(__name__)
T = TypeVar("T")
INSTRUCTIONS = (
    "MLPerf Endpoints results as the portal publishes them: Pareto curves of system "
    "throughput against tokens/s per user, one per system, benchmark and cohort, each with "
    "its status (verified, provisional, unverified), publication status (Available, Preview, "
    "RDI) and the rules' tags. Find the systems that meet a latency SLA, plan capacity for a "
    "load, compare systems, or read one result. Read-only; the same numbers as the REST API "
    "(GET /api/v1/...)."
)


def assistant_server(database: Database, settings: Settings) -> MCPServer:
    """The MCP server of one portal app (its database and settings)."""
    # The MCP library takes a second of CPU to load: imported here, when a door opens.
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server: MCPServer = MCPServer(name="mlperf-endpoints-portal", instructions=INSTRUCTIONS)

    def answer(work: Callable[[Session], T]) -> T:
        with database.session() as session:
            try:
                return work(session)
            except Refused as refused:  # the API's words, and the parameter they are about
                where = refused.detail.get("field")
                message = f"{where}: {refused.message}" if where else refused.message
                raise ToolError(message) from refused

    _register_tools(server, answer, settings)
    return server


class Answer(Protocol):
    """A question asked of the record in a session of its own, a refusal in the API's words."""

    def __call__(self, work: Callable[[Session], T]) -> T: ...


def _register_tools(server: MCPServer, answer: Answer, settings: Settings) -> None:
    """The tools: the public API's questions, each answered by the API's own service."""

    @server.tool(
        name="list_benchmarks",
        description="The benchmarks with published results (of a cohort, if given).",
    )
    def list_benchmarks_tool(cohort: str | None = None) -> list[dict[str, Any]]:
        return answer(
            lambda s: [
                b.model_dump(mode="json") for b in list_benchmarks(s, checked_cohort(s, cohort))
            ]
        )

    @server.tool(name="list_cohorts", description="The released cohorts, newest first.")
    def list_cohorts_tool() -> list[dict[str, Any]]:
        return answer(lambda s: [c.model_dump(mode="json") for c in list_cohorts(s)])

    @server.tool(
        description="The systems that meet a latency SLA on a benchmark, best first: each "
        "system's best admissible point (as GET /api/v1/results ranks them). Limits: "
        "ttft_p90_max_ms, tps_per_user_min, concurrency_min; cohort: YYYY-MM-C0/C1 (default "
        "the current results)."
    )
    def find_systems(
        benchmark: str,
        ttft_p90_max_ms: float | None = None,
        tps_per_user_min: float | None = None,
        concurrency_min: int | None = None,
        cohort: str | None = None,
        normalize: str | None = None,
    ) -> dict[str, Any]:
        params = _params(ResultsParams, locals())

        def ranked(session: Session) -> dict[str, Any]:
            page = query_results(session, parse_results_query(session, params, price_presets()))
            return {
                "benchmark": page.benchmark,
                "cohort": page.cohort,
                "sla": page.sla.model_dump(mode="json"),
                "ranking": [row.model_dump(mode="json") for row in page.ranking],
                "not_drawn": page.more_total,
            }

        return answer(ranked)

    @server.tool(
        description="How many systems each published curve needs to hold a number of "
        "concurrent users within a latency SLA (as GET /api/v1/plan)."
    )
    def plan_capacity(
        benchmark: str,
        users: int,
        ttft_p90_max_ms: float | None = None,
        tps_per_user_min: float | None = None,
        cohort: str | None = None,
    ) -> dict[str, Any]:
        params = _params(PlanParams, locals())
        return answer(lambda s: capacity_plan(s, params, price_presets()).model_dump(mode="json"))

    @server.tool(
        description="2 to 4 published submissions (their ids, from find_systems' "
        "`submission`) side by side on one benchmark (as GET /api/v1/compare)."
    )
    def compare_systems(submissions: list[str], benchmark: str | None = None) -> dict[str, Any]:
        params = CompareParams.of({"submission": submissions, "benchmark": benchmark or ""})
        return answer(lambda s: compare_query(s, settings, None, params).model_dump(mode="json"))

    @server.tool(
        description="One published result by its result id (or an unverified result's "
        "curve id): its statement, status, tags, points and citation (as GET "
        "/api/v1/results/{ref})."
    )
    def get_result(ref: str) -> dict[str, Any]:
        def report(session: Session) -> dict[str, Any]:
            q = parse_results_query(session, ResultsParams.of({}))
            today = dt.datetime.now(dt.UTC).date()
            return result_report(session, settings, None, ref, q, today).model_dump(mode="json")

        return answer(report)


def assistant_endpoint(server: MCPServer, public_url: str) -> Any:
    """The door's ASGI endpoint (stateless, JSON answers), for the portal's ``/mcp``. Its
    DNS-rebinding guard admits the portal's public host and loopback."""
    from mcp.server.transport_security import TransportSecuritySettings

    public = urlsplit(public_url)
    app = server.streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(
            allowed_hosts=[public.netloc, "127.0.0.1:*", "localhost:*"],
            allowed_origins=[
                f"{public.scheme}://{public.netloc}",
                "http://127.0.0.1:*",
                "http://localhost:*",
            ],
        ),  # fmt: skip
    )
    (route,) = app.routes
    return route.app  # type: ignore[attr-defined]


class AssistantDoor:
    """``/mcp``: the MCP server, opened on the first knock and kept open while the app's
    lifespan runs it (``keep``); 503 while none runs. Not opened at every start: its
    library alone is a quarter of the web process's start-up."""

    def __init__(self) -> None:
        self._endpoint: Any = None
        self._knocked: anyio.Event | None = None
        self._opened: anyio.Event | None = None

    async def keep(self, database: Database, settings: Settings) -> None:
        """The door for one lifespan (a task of it, cancelled when it ends): waits for the
        first knock, then runs the server's session manager (one per start)."""
        knocked = self._knocked = anyio.Event()
        opened = self._opened = anyio.Event()
        try:
            await knocked.wait()
            try:
                # Loaded beside the event loop: the pages keep answering meanwhile.
                await anyio.to_thread.run_sync(importlib.import_module, "mcp.server.mcpserver")
                server = assistant_server(database, settings)
                endpoint = assistant_endpoint(server, settings.public_url)
            except Exception:  # a door that cannot open says 503; the portal runs on
                log.exception("the assistant's door (/mcp) could not be opened")
                opened.set()
                await anyio.sleep_forever()
            async with server.session_manager.run():
                self._endpoint = endpoint
                opened.set()
                await anyio.sleep_forever()
        finally:
            self._endpoint = self._knocked = self._opened = None

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        knocked, opened = self._knocked, self._opened
        if knocked is not None and opened is not None:
            knocked.set()
            await opened.wait()
        endpoint = self._endpoint
        if endpoint is None:
            await send({"type": "http.response.start", "status": 503,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")]})  # fmt: skip
            await send({"type": "http.response.body", "body": b"the MCP door is not open yet"})
            return
        await endpoint(scope, receive, send)


def _params(kind: type[ResultsParams], given: dict[str, Any]) -> Any:
    """A tool's arguments as the address would give them (text), for the API's parser."""
    return kind.of(
        {k: str(v) for k, v in given.items() if v is not None and k in kind.model_fields}
    )
