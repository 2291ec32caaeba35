"""``endpoints-portal``: serve, worker, migrate and check."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from app.checks.domain.compliance import ComplianceResult, run_compliance
from app.checks.domain.findings import Severity, Verdict
from app.core.authorization import Role, Scope
from app.settings import Settings, get_settings
from app.submissions.domain.archive import ArchiveRejected

if TYPE_CHECKING:  # the commands import what they use, when they run
    from sqlalchemy.orm import Session

EXIT_PASSED = 0
EXIT_REJECTED = 1
EXIT_UNUSABLE = 2


@contextmanager
def _session(settings: Settings) -> Iterator[Session]:
    """A session on the migrated database, closed with the database after the command."""
    from app.db.session import Database

    _migrate(settings)
    database = Database(settings.effective_database_url)
    try:
        with database.session() as session:
            yield session
    finally:
        database.dispose()


def _migrate(settings: Settings) -> None:
    from app.db.migrate import upgrade

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    upgrade(settings.effective_database_url)


def cmd_migrate(_: argparse.Namespace) -> int:
    settings = get_settings()
    _migrate(settings)
    print(f"database is at the latest schema ({settings.effective_database_url.split('://')[0]})")
    return 0


def _load_demo_if_empty(settings: Settings) -> int:
    from app.db.session import Database
    from app.demo.load import is_empty, load_demo

    database = Database(settings.effective_database_url)
    try:
        if not is_empty(database):
            return 0
        print("empty database: loading the demo results (ENDPOINTS_PORTAL_DEMO_DATA=0 skips it)")
        return load_demo(database, settings)
    finally:
        database.dispose()


def cmd_demo(_: argparse.Namespace) -> int:
    settings = get_settings()
    _migrate(settings)
    loaded = _load_demo_if_empty(settings)
    print(
        f"{loaded} demo submission(s) loaded"
        if loaded
        else "the database is not empty; nothing loaded"
    )
    return 0


class BadNow(ValueError):
    pass


def _now(text: str | None) -> dt.datetime | None:
    """``--now``: an aware ISO 8601 time, for operators and tests that act at a set time."""
    if not text:
        return None
    try:
        now = dt.datetime.fromisoformat(text)
    except ValueError:
        raise BadNow(f"--now {text!r} is not an ISO 8601 time") from None
    if now.tzinfo is None:
        raise BadNow("--now needs a time zone, e.g. 2026-12-01T09:00:00+00:00")
    return now


def cmd_publish(args: argparse.Namespace) -> int:
    """Release a cohort (the chair's API does the same): at its time, the one due now."""
    from app.core.refusals import Refused
    from app.db.session import Database
    from app.review.services.releases import publish_cohort

    try:
        now = _now(args.now)
    except BadNow as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    settings = get_settings()
    database = Database(settings.effective_database_url)
    try:
        with database.session() as session:
            try:
                published = publish_cohort(
                    session=session,
                    settings=settings,
                    cohort_id=args.cohort,
                    at=now,
                    actor=args.actor,
                )
            except Refused as exc:
                print(f"error: {exc.message} ({exc.code})", file=sys.stderr)
                return EXIT_UNUSABLE
            session.commit()
            for p in published:
                print(f"published {p.submission.public_id} as {p.status} in {p.cohort}")
            print(f"{len(published)} publication(s) in {args.cohort}")
    finally:
        database.dispose()
    return 0


def _password(args: argparse.Namespace) -> str:
    """From standard input (--password-stdin), the environment, or a prompt."""
    import getpass

    if args.password_stdin:
        return sys.stdin.readline().rstrip("\n")
    if os.environ.get("ENDPOINTS_PORTAL_NEW_PASSWORD"):
        return os.environ["ENDPOINTS_PORTAL_NEW_PASSWORD"]
    return getpass.getpass("password: ")


def cmd_users(args: argparse.Namespace) -> int:
    """Accounts and API tokens (the first admin comes from here)."""
    from sqlalchemy import select

    from app.accounts.services.accounts import AccountError, create_user, issue_token, revoke_token
    from app.accounts.services.invitations import invite
    from app.core.authorization import Role, Scope
    from app.core.refusals import Kind
    from app.db.models import ApiToken, User

    settings = get_settings()
    with _session(settings) as session:
        try:
            if args.users_command == "create":
                created = create_user(
                    session=session,
                    email=args.email,
                    password=_password(args),
                    role=Role(args.role),
                    display_name=args.name,
                    organization=args.org,
                )
                session.commit()
                print(f"created {created.email} ({created.role})")
            elif args.users_command == "token":
                user = session.scalar(select(User).where(User.email == args.email.lower()))
                if user is None:
                    raise AccountError("no-user", f"no user {args.email}", Kind.NOT_FOUND)
                token, plaintext = issue_token(
                    session=session, user=user, name=args.name, scopes=args.scope or None
                )
                session.commit()
                print(
                    f"token {token.prefix}… with scopes {', '.join(token.scopes)}; "
                    "it is shown only now:",
                    file=sys.stderr,
                )
                print(plaintext)
            elif args.users_command == "invite":
                # The operator stands above the chair: any role may be invited from here.
                made = invite(
                    session=session,
                    settings=settings,
                    scopes=frozenset(Scope),
                    inviter=None,
                    email=args.email,
                    role=Role(args.role),
                    organization=args.org or "",
                    join_organization=args.join,
                    new_organization=args.new_organization,
                )
                session.commit()
                sent = "e-mailed; " if made.emailed else ""
                until = f"{made.invitation.expires_at:%Y-%m-%d %H:%M} UTC"
                print(
                    f"invited {made.invitation.email} as {made.invitation.role.value} ({sent}"
                    f"the link works once, until {until}; it is shown only now):",
                    file=sys.stderr,
                )
                print(settings.public_link(made.link))
            elif args.users_command == "revoke-token":
                rows = session.scalars(select(ApiToken).where(ApiToken.prefix == args.prefix)).all()
                if not rows:
                    raise AccountError("no-token", f"no token starts {args.prefix}", Kind.NOT_FOUND)
                for row in rows:
                    revoke_token(session=session, token=row)
                session.commit()
                print(f"revoked {len(rows)} token(s)")
            else:
                for user in session.scalars(select(User).order_by(User.email)):
                    state = "" if user.is_active else " (inactive)"
                    print(f"{user.email}\t{user.role}{state}")
        except AccountError as exc:
            print(f"error: {exc.message}", file=sys.stderr)
            for org in getattr(exc, "candidates", []):  # an organisation to choose
                print(f"  --join {org.slug}\t(joins {org.name})", file=sys.stderr)
            return EXIT_UNUSABLE
    return 0


def cmd_orgs(args: argparse.Namespace) -> int:
    """Organisations: their jurisdiction (holidays on the clocks) and committee seats."""
    from app.core.refusals import Refused
    from app.review.services.organizations import (
        get_organization,
        list_organizations,
        organization_view,
        update_organization,
    )

    settings = get_settings()
    with _session(settings) as session:
        if args.orgs_command == "list":
            for row in list_organizations(session, settings):
                place = "-".join(x for x in (row.country, row.subdivision) if x)
                seat = "committee" if row.on_committee else ""
                appointed = " (appointed)" if row.committee_appointed else ""
                print(f"{row.slug}\t{row.name}\t{place or '-'}\t{seat}{appointed}")
            return 0
        changes: dict[str, object] = {}
        if args.country is not None:
            changes["country"] = args.country
        if args.subdivision is not None:
            changes["subdivision"] = args.subdivision
        if args.committee is not None:
            changes["committee_appointed"] = args.committee == "yes"
        try:
            org = update_organization(
                session=session,
                organization=get_organization(session, args.slug),
                **changes,  # type: ignore[arg-type]
            )
        except Refused as exc:
            print(f"error: {exc.message} ({exc.code})", file=sys.stderr)
            return EXIT_UNUSABLE
        session.commit()
        print(organization_view(session, settings, org).model_dump_json())
    return 0


def cmd_super_passes(args: argparse.Namespace) -> int:
    """The benchmark definitions' own super-pass sizes (rules §2.1), by dataset."""
    import datetime as dt

    from app.checks.domain.datasets import pass_size
    from app.runs.services.super_passes import (
        SuperPassRefused,
        define_super_pass,
        defined_super_passes,
        remove_super_pass,
    )

    settings = get_settings()
    with _session(settings) as session:
        if args.super_passes_command == "list":
            for dataset, (size, source) in sorted(defined_super_passes(session).items()):
                one_pass = pass_size(dataset)
                of_pass = f"{size / one_pass:.3g} of a pass" if one_pass else "size unknown"
                print(f"{dataset}\t{size}\t{of_pass}\t{source}")
            return 0
        if args.super_passes_command == "unset":
            if not remove_super_pass(session, args.dataset):
                print(f"error: no super-pass is defined for {args.dataset!r}", file=sys.stderr)
                return EXIT_UNUSABLE
        else:
            try:
                define_super_pass(
                    session,
                    settings,
                    args.dataset,
                    args.size,
                    args.source,
                    clock=lambda: dt.datetime.now(dt.UTC),
                )
            except SuperPassRefused as exc:
                print(f"error: {exc}", file=sys.stderr)
                return EXIT_UNUSABLE
        session.commit()
    return 0


def cmd_storage(args: argparse.Namespace) -> int:
    """Check the artifact store, or copy this portal's artifacts to another one."""
    from app.storage import StorageError, artifact_store, open_store, private_folder
    from app.storage.s3 import S3Store
    from app.storage.transfer import copy_objects, probe

    settings = get_settings()
    scratch = private_folder(settings.cache_dir) / "transfer"
    try:
        if args.storage_command == "check":
            store = artifact_store(settings)
            if args.create and isinstance(store, S3Store) and store.ensure_bucket():
                print(f"made the bucket {store.bucket}")
            probe(store, scratch)
            print(f"{store.location}: writes, reads back and removes an object")
            return 0
        source = artifact_store(settings)
        target = open_store(
            args.to,
            cache_dir=settings.cache_dir,
            cache_bytes=settings.storage_cache_bytes,
            attempts=settings.storage_attempts,
            timeout_s=settings.storage_timeout_s,
        )
        if target.location == source.location:
            print(f"error: {args.to} is the store the portal uses already", file=sys.stderr)
            return EXIT_UNUSABLE
        if args.create and isinstance(target, S3Store):
            target.ensure_bucket()
        report = copy_objects(
            source, target, scratch, lambda key, what: print(f"{key}: {what}", flush=True)
        )
    except (StorageError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    print(
        f"{len(report.copied)} copied, {len(report.present)} there already, "
        f"{len(report.damaged)} damaged in the source, from {source.location} to "
        f"{target.location}"
    )
    if not report.ok:
        return EXIT_REJECTED
    print(f"every object checked; set ENDPOINTS_PORTAL_STORAGE_URL={args.to} to use it")
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    import worker.tasks  # noqa: F401  (registers the tasks)
    from worker.celery_app import celery_app

    argv = [
        "worker",
        "--loglevel",
        args.loglevel,
        "--concurrency",
        str(args.concurrency or get_settings().worker_concurrency),
        "--queues",
        "portal",
        "--without-gossip",
        "--without-mingle",
        "--hostname",
        f"portal-worker-{os.getpid()}@%h",
    ]
    if args.beat:
        # One process also runs the scheduler (the embedded set-up); deployments run
        # `endpoints-portal scheduler` once instead.
        argv.append("--beat")
    celery_app.worker_main(argv)
    return 0


def cmd_scheduler(args: argparse.Namespace) -> int:
    import worker.tasks  # noqa: F401  (registers the tasks)
    from worker.celery_app import celery_app

    celery_app.start(["beat", "--loglevel", args.loglevel])
    return 0


def cmd_clock(args: argparse.Namespace) -> int:
    """The review clocks once, at --now (an operator's or a test's controllable clock)."""
    from app.db.session import Database
    from app.review.services.ticks import advance_clocks

    try:
        now = _now(args.now)
    except BadNow as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    settings = get_settings()
    database = Database(settings.effective_database_url)
    try:
        with database.session() as session:
            report = advance_clocks(session, settings, now)
            session.commit()
    finally:
        database.dispose()
    for action in report.actions:
        print(action)
    print(f"{len(report.actions)} action(s) at {report.now.isoformat()}")
    return 0


def _die_with_parent() -> None:
    """In the child: ask Linux to stop it if the serving process dies (even by SIGKILL)."""
    if sys.platform.startswith("linux"):
        import ctypes

        pr_set_pdeathsig = 1
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)


class WorkerSupervisor:
    """Keeps one worker process running beside the web process; restarts it if it dies."""

    def __init__(self, restart_delay_s: float = 2.0) -> None:
        self.command = [
            sys.executable, "-m", "app.cli", "worker", "--loglevel", "INFO", "--beat"
        ]  # fmt: skip
        self.restart_delay_s = restart_delay_s
        self.process: subprocess.Popen[bytes] | None = None
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="worker-supervisor", daemon=True)

    def _spawn(self) -> subprocess.Popen[bytes]:
        # A process group of its own: the worker and its pool are stopped together, and
        # a signal meant for the web process never reaches the pool directly.
        return subprocess.Popen(self.command, preexec_fn=_die_with_parent, start_new_session=True)

    def start(self) -> None:
        self.process = self._spawn()
        self._thread.start()

    def _watch(self) -> None:
        while not self._stopping.wait(1.0):
            if self.process is not None and self.process.poll() is not None:
                code = self.process.returncode
                print(f"worker exited with {code}; restarting", file=sys.stderr)
                if self._stopping.wait(self.restart_delay_s):
                    return
                self.process = self._spawn()

    def stop(self) -> None:
        self._stopping.set()
        proc = self.process
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # warm shutdown: the worker stops its pool
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        # Whatever is left of the group: a pool process that outlived its worker, or a
        # worker stuck at exit on a pool lock a killed process held.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()


def _exit_on_sigterm(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def cmd_serve(args: argparse.Namespace) -> int:
    """Web and one worker process: what ``make run`` starts."""
    from app.submissions.services.storage import sweep_tmp
    from app.web import server

    settings = get_settings()
    _migrate(settings)
    # The only web process is starting: no upload is in flight, whatever is in tmp is
    # what a killed process left half-written.
    sweep_tmp(settings.tmp_dir, older_than_s=0)
    if settings.demo_data:
        _load_demo_if_empty(settings)
    supervisor = None if args.no_worker else WorkerSupervisor()
    if supervisor is not None:
        supervisor.start()

    from app.main import create_app

    print(f"Endpoints Portal on http://{args.host}:{args.port} (data in {settings.data_dir})")
    # uvicorn shuts down gracefully on SIGTERM, then raises the signal again; with the
    # default action that ends the process before `finally` stops the worker. Ours turns
    # it into an exit that runs the cleanup (exit status 143, as a SIGTERM'd process).
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    try:
        server.run(create_app(settings), host=args.host, port=args.port)
    finally:
        if supervisor is not None:
            supervisor.stop()
    return 0


def cmd_web(args: argparse.Namespace) -> int:
    """The web processes of a deployment, with the portal's server settings (timeouts,
    header limits); ``uvicorn app.asgi:app`` alone would run without them."""
    from app.web import server

    server.run("app.asgi:app", host=args.host, port=args.port, workers=args.workers)
    return 0


def _print_text(result: ComplianceResult, out: object = sys.stdout) -> None:
    write = out.write  # type: ignore[attr-defined]
    shown = [f for f in result.findings if f.severity != Severity.INFO]
    for finding in shown:
        where = f" [{finding.point}]" if finding.point else ""
        write(f"{finding.severity.value.upper():7} {finding.rule} ({finding.clause}){where}\n")
        write(f"        {finding.message}\n")
        if finding.fix:
            write(f"        Fix: {finding.fix}\n")
        if finding.path:
            write(f"        {finding.path}\n")
    errors = sum(f.severity == Severity.ERROR for f in result.findings)
    warnings = sum(f.severity == Severity.WARNING for f in result.findings)
    passed = len(result.findings) - errors - warnings
    word = "PASSED" if result.verdict == Verdict.PASSED else "REJECTED"
    write(
        f"{word}: {errors} error(s), {warnings} warning(s), {passed} passed check(s) "
        f"(endpoints-submission-cli {result.checker_version})\n"
    )


def cmd_check(args: argparse.Namespace) -> int:
    """Run the worker's checks locally, with no database and no server."""
    from app.checks.services.checks import checker_registries
    from app.db.models import utcnow
    from app.settings import business_calendar

    settings = get_settings()
    path = Path(args.path)
    if not path.exists():
        print(f"error: {path} does not exist", file=sys.stderr)
        return EXIT_UNUSABLE
    with tempfile.TemporaryDirectory(prefix="endpoints-portal-check-") as tmp:
        if path.is_file():
            from app.submissions.services.reading import read_archive

            try:
                reading = read_archive(settings, path, keep_events=False, under=Path(tmp))
            except ArchiveRejected as exc:
                print(f"error: {path}: {exc.message} ({exc.code})", file=sys.stderr)
                return EXIT_UNUSABLE
            root = reading.folder
        else:
            root = path
        result = run_compliance(
            root,
            evaluated_at=utcnow(),
            calendar=business_calendar(settings),
            registries=checker_registries(settings),
        )
    if args.json:
        json.dump(result.to_dict(), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        _print_text(result)
    return EXIT_PASSED if result.verdict == Verdict.PASSED else EXIT_REJECTED


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="endpoints-portal", description="MLPerf Endpoints submission portal"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the web portal and one worker process")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--no-worker", action="store_true", help="start the web process only")
    serve.set_defaults(func=cmd_serve)

    web = sub.add_parser(
        "web", help="run web processes only (deployments: workers and migrations run apart)"
    )
    web.add_argument("--host", default="127.0.0.1")
    web.add_argument("--port", type=int, default=8000)
    web.add_argument("--workers", type=int, default=1, help="web processes")
    web.set_defaults(func=cmd_web)

    storage = sub.add_parser("storage", help="the artifact store: check it, or copy to another")
    storage_sub = storage.add_subparsers(dest="storage_command", required=True)
    check_store = storage_sub.add_parser(
        "check", help="write, read back and remove an object in the configured store"
    )
    check_store.add_argument(
        "--create", action="store_true", help="make the S3 bucket first if it is not there"
    )
    migrate_store = storage_sub.add_parser(
        "migrate",
        help="copy every archive and event log to another store, checking each hash "
        "(safe to run again)",
    )
    migrate_store.add_argument("--to", required=True, help="s3://bucket/prefix or file:///path")
    migrate_store.add_argument(
        "--create", action="store_true", help="make the S3 bucket first if it is not there"
    )
    storage.set_defaults(func=cmd_storage)

    worker = sub.add_parser("worker", help="run a Celery worker process")
    worker.add_argument("--concurrency", type=int, default=None)
    worker.add_argument("--loglevel", default="INFO")
    worker.add_argument(
        "--beat", action="store_true", help="also run the scheduler of the review clocks"
    )
    worker.set_defaults(func=cmd_worker)

    scheduler = sub.add_parser(
        "scheduler", help="run the scheduler of the review clocks (one per deployment)"
    )
    scheduler.add_argument("--loglevel", default="INFO")
    scheduler.set_defaults(func=cmd_scheduler)

    clock = sub.add_parser(
        "clock", help="run the review clocks once: penalties, phases, embargo releases"
    )
    clock.add_argument("--now", default=None, help="ISO 8601 time to run them at (default: now)")
    clock.set_defaults(func=cmd_clock)

    migrate = sub.add_parser("migrate", help="apply database migrations")
    migrate.set_defaults(func=cmd_migrate)

    demo = sub.add_parser("demo", help="load the demo results into an empty database")
    demo.set_defaults(func=cmd_demo)

    users = sub.add_parser("users", help="accounts and API tokens")
    users_sub = users.add_subparsers(dest="users_command", required=True)
    create = users_sub.add_parser("create", help="create a user")
    create.add_argument("email")
    create.add_argument("--role", choices=[r.value for r in Role], required=True)
    create.add_argument("--name", default=None)
    create.add_argument("--org", default=None, help="the user's organisation")
    create.add_argument("--password-stdin", action="store_true")
    token = users_sub.add_parser("token", help="issue an API token (shown once)")
    token.add_argument("email")
    token.add_argument("--name", required=True, help="what the token is for")
    token.add_argument(
        "--scope",
        action="append",
        choices=[s.value for s in Scope],
        help="repeatable; default: every scope of the user's role",
    )
    invited = users_sub.add_parser(
        "invite", help="invite someone: prints their one-time link (e-mailed where SMTP is set)"
    )
    invited.add_argument("email")
    invited.add_argument("--role", choices=[r.value for r in Role], default="submitter")
    invited.add_argument("--org", default=None, help="a submitter's or reviewer's organisation")
    invited.add_argument(
        "--join", default=None, metavar="SLUG", help="they join this existing organisation"
    )
    invited.add_argument(
        "--new-organization",
        action="store_true",
        help="--org is a new organisation, though it looks like an existing one",
    )
    revoke = users_sub.add_parser("revoke-token", help="revoke a token by its prefix")
    revoke.add_argument("prefix")
    users_sub.add_parser("list", help="list the users")
    users.set_defaults(func=cmd_users)

    orgs = sub.add_parser("orgs", help="organisations: jurisdiction and committee appointment")
    orgs_sub = orgs.add_subparsers(dest="orgs_command", required=True)
    orgs_sub.add_parser("list", help="list the organisations")
    org_set = orgs_sub.add_parser("set", help="change an organisation")
    org_set.add_argument("slug")
    org_set.add_argument("--country", help="ISO 3166-1 alpha-2 (its public holidays)")
    org_set.add_argument("--subdivision", help="e.g. CA (with --country US)")
    org_set.add_argument(
        "--committee", choices=("yes", "no"), help="the chair's appointment (rules §4.4)"
    )
    orgs.set_defaults(func=cmd_orgs)

    passes = sub.add_parser(
        "super-passes",
        help="the benchmark definitions' super-pass sizes (default: one pass over the dataset)",
    )
    passes_sub = passes.add_subparsers(dest="super_passes_command", required=True)
    passes_sub.add_parser("list", help="the sizes that differ from one pass, with their source")
    pass_set = passes_sub.add_parser("set", help="set a dataset's super-pass size")
    pass_set.add_argument("dataset", help="a dataset of the catalogue, e.g. cnn_dailymail")
    pass_set.add_argument("size", type=int, help="requests per super-pass")
    pass_set.add_argument("--source", required=True, help="where the size comes from")
    pass_unset = passes_sub.add_parser("unset", help="back to one pass over the dataset")
    pass_unset.add_argument("dataset")
    passes.set_defaults(func=cmd_super_passes)

    publish = sub.add_parser("publish", help="publish a cohort's due results")
    publish.add_argument("cohort", help="cohort id, e.g. 2026-12-C0")
    publish.add_argument("--now", default=None, help="ISO 8601 time to publish at (default: now)")
    publish.add_argument("--actor", default="chair (CLI)", help="who publishes, for the record")
    publish.set_defaults(func=cmd_publish)

    check = sub.add_parser(
        "check", help="check a bundle directory or archive locally (exit 1 when rejected)"
    )
    check.add_argument("path", help="submission directory, organisation directory or archive")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    check.set_defaults(func=cmd_check)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
