"""Typed settings, read from ``ENDPOINTS_PORTAL_*`` environment variables.

Values the rules mark tentative carry the clause they come from (rules §15), so an
operator can change them without touching code.
"""

from __future__ import annotations

import datetime as dt
from functools import lru_cache
from pathlib import Path

from pydantic import AliasChoices, Field, computed_field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.core.clocks import ReviewClock
from app.core.cohorts import BusinessCalendar
from app.core.endpoints import parse_allowed
from app.core.policy import ReviewPolicy, review_policy_of
from app.storage.factory import parse_storage_url


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="ENDPOINTS_PORTAL_", extra="ignore", populate_by_name=True
    )

    data_dir: Path = Path("./var")
    # DATABASE_URL / REDIS_URL are also read without the prefix, as deployments name them.
    database_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("ENDPOINTS_PORTAL_DATABASE_URL", "DATABASE_URL"),
    )
    redis_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("ENDPOINTS_PORTAL_REDIS_URL", "REDIS_URL"),
    )
    worker_concurrency: int = 2
    # Load the demo results into an empty database when the portal starts.
    demo_data: bool = True

    # Every other request body (JSON and form routes), counted while it streams.
    max_request_bytes: int = 512 * 1024
    # The web server: how long a connection may take to send its request's headers, and
    # how long an idle keep-alive connection is kept.
    header_timeout_s: float = 10.0
    idle_timeout_s: float = 5.0
    # A request's body must keep coming: after this grace, on average at least this many
    # bytes a second since the request began (a 2G link does 4 KB/s; an upload on any
    # steady link goes through, a trickle does not hold a connection).
    min_body_bytes_per_s: float = Field(default=2048.0, gt=0)
    body_grace_s: float = Field(default=10.0, gt=0)

    # Intake limits (architecture §5: nothing in a bundle is trusted).
    max_upload_bytes: int = 512 * 1024 * 1024
    max_archive_members: int = 20_000
    max_extracted_bytes: int = 4 * 1024 * 1024 * 1024
    max_member_bytes: int = 2 * 1024 * 1024 * 1024
    max_compression_ratio: float = 200.0
    # Ratios only mean something once an archive is large enough to matter.
    compression_ratio_floor_bytes: int = 64 * 1024 * 1024
    # Reading one archive (architecture, decision 18): a child process with this much
    # processor time and address space (the largest legal archive needs about half the
    # time on a slow core), killed past a wall-clock deadline (default: twice the time
    # plus 30 s, for a busy machine).
    archive_cpu_s: int = Field(default=120, ge=1)
    archive_memory_bytes: int = Field(default=1024**3, ge=256 * 1024**2)
    archive_wall_s: float | None = Field(default=None, gt=0)

    # Run artifacts (events.jsonl) uploaded per point, and how far a re-count may differ
    # from the reported values before it is a finding (rules §1.3, configurable).
    max_events_bytes: int = 8 * 1024**3
    retokenize_tolerance_tokens: float = 0.01
    retokenize_tolerance_timing: float = 0.02
    # A point's events larger than this (uncompressed) are counted in parts, one job per
    # part, so several workers share it (harness/metrics/ranges.py); at most this many parts,
    # each counting every N-th block of this many lines.
    retokenize_split_bytes: int = 2 * 1024**3
    retokenize_max_parts: int = 8
    retokenize_block_lines: int = 10_000

    # Cohort calendar (rules §4.1): 1st/3rd Wednesday 08:00 America/Los_Angeles, and the
    # checks must pass at least this many business days before the Wednesday.
    cohort_timezone: str = "America/Los_Angeles"
    cohort_cutoff_business_days: int = 1
    # Extra non-business dates (the MLCommons calendar's closures): they count for the
    # cohort cutoff and, with each submitter's public holidays, for the objection clocks.
    holidays: list[dt.date] = Field(default_factory=list)
    # Rules §11.3: the submitter's primary jurisdiction's public holidays are not business
    # days; organisations without one declared use this (ISO 3166-1 alpha-2).
    default_jurisdiction: str = "US"
    holiday_years: tuple[int, int] = (2025, 2035)
    # MLCommons' published seed sets (§4.6) and approved drafters, in the official
    # checker's file format. Unset: the lists the pinned checker ships. A newly published
    # seed set is adopted by pointing this at MLCommons' newer file.
    seed_sets_file: Path | None = None
    approved_drafters_file: Path | None = None

    # Reproductions (rules §11.4): the margin, where benchmark datasets and reference
    # tokenizers live, and how long one run may take.
    reproduction_margin: float = 0.10
    reproduction_margin_same_system: float = 0.05  # §11.4: a re-run on the exact same system
    # Latency beside the verdict (never the verdict, §11.4): the band around each submitted
    # TTFT and TPOT percentile (P50, P90, P99), and the largest histogram distance.
    reproduction_latency_band: float = 0.10
    reproduction_histogram_distance: float = 0.15
    # Where reproductions may send load (SSRF guard): each entry a host and a port
    # (name:port, *.suffix:port, network:port, host:* for every port; see
    # app/core/endpoints.py). Nothing by default: an operator lists the endpoints.
    reproduction_allowed_endpoints: list[str] = Field(default_factory=list)
    # Webhooks (issue 50): a public address is allowed; a loopback, private or link-local
    # one only where this list (same form as the reproductions' list) admits it. How often
    # the worker looks for events and due deliveries, each delivery's timeout, and after
    # how many failed attempts in a row a subscription is paused.
    webhook_allowed_endpoints: list[str] = Field(default_factory=list)
    webhook_interval_s: float = Field(default=10.0, gt=0)
    webhook_timeout_s: float = Field(default=10.0, gt=0)
    webhook_pause_after: int = Field(default=8, ge=1)
    reproduction_max_time_cap_s: float = 3600.0
    # Added to the point's §6.2 minimum for a reproduction's default time cap: the first
    # super-pass is dropped as warm-up, so the run must outlast the minimum by it.
    reproduction_warmup_s: float = 120.0
    # Runs one request may ask for (a series, for repeatability); they run one after the
    # other, as does every run against one endpoint: a run waits, checking again every
    # reproduction_endpoint_wait_s, while an earlier one on its endpoint is not finished.
    reproduction_max_runs: int = Field(default=5, ge=1, le=20)
    reproduction_endpoint_wait_s: float = Field(default=30.0, gt=0)
    datasets_dir: Path | None = None  # default: <data_dir>/datasets, files <dataset>.jsonl
    # Dataset names a point may declare beyond the official checker's (the catalogue).
    extra_datasets: list[str] = Field(default_factory=list)
    tokenizer_registry: Path | None = None  # JSON: {model: {location, chat_template}}
    # Encrypts endpoint API keys at rest; default: a key file made in the data dir.
    secret_key: str | None = None
    # The Ed25519 key that signs the record's ledger (issue 50): a PEM (PKCS #8) private
    # key file the operator supplies, else one made on first use in <data_dir>/release-signing
    # (web and worker processes of one deployment must share it).
    release_signing_key_file: Path | None = None

    # Rate limits per client (0 turns one off): sign-in attempts a minute, uploads an hour,
    # events files an hour; and the distinct events files one point may have.
    login_attempts_per_minute: int = 10
    uploads_per_hour: int = 120
    events_uploads_per_hour: int = 60
    events_files_per_point: int = Field(default=5, ge=1)

    # The official Submission API (/submission-api, the official CLI's): how long an
    # unpinned run is kept (unless a live submission uses it), how long a signed upload
    # and download URL works, and the oldest CLI taken (major.minor; default: the pinned
    # CLI's, as the official service takes only the latest release's).
    run_expiry_days: float = Field(default=90.0, gt=0)
    signed_upload_s: int = Field(default=3600, gt=0)
    signed_download_s: int = Field(default=300, gt=0)
    submission_api_min_cli: str | None = None
    # How often a worker looks for a staged upload (S3) and removes expired runs.
    staged_upload_poll_s: float = Field(default=2.0, gt=0)
    run_expiry_interval_s: float = Field(default=3600.0, gt=0)

    # The review committee's policy values (rules §15: windows, response clocks, penalties,
    # disputes, the late window, the point cap, the committee window) in the format of
    # app/core/review_policy.toml; the values the rules state today when unset.
    review_policy_file: Path | None = None
    # The rules version and first cohort that result ids count from (rules §9.7).
    # Reviewer draws (rules §4.4) are random; a seed makes them repeatable (rehearsals).
    reviewer_draw_seed: int | None = None
    rules_version: str = "1.0"
    first_cohort: str = "2026-10-C1"
    # Publication status (rules §11.10): the Preview window from the first public cohort,
    # its one extension (at most, asked how many days ahead), the submitter's notices
    # before expiry; RDI cooling-off; how far an Available result's throughput may fall
    # from its Preview's, point by point.
    preview_window_days: int = Field(default=180, gt=0)
    preview_extension_max_days: int = Field(default=60, ge=0)
    preview_extension_lead_days: int = Field(default=30, ge=0)
    preview_notice_days: list[int] = [30, 7]
    rdi_cooling_off_days: int = Field(default=221, ge=0)
    preview_continuity_drop: float = Field(default=0.05, ge=0, lt=1)
    # How often the worker's scheduler runs the review clocks.
    clock_interval_s: float = 60.0

    # E-mail for notifications; without a host they stay in the in-app inbox only.
    smtp_host: str | None = None
    smtp_port: int = 25
    smtp_sender: str = "endpoints-portal@localhost"
    public_url: str = "http://127.0.0.1:8000"

    # Jobs: a running job whose heartbeat is older than this is taken as lost.
    job_stale_after_s: float = 300.0
    job_recovery_interval_s: float = 30.0  # how often a worker looks for lost jobs
    job_max_attempts: int = 3

    # The price presets buyers may choose (app/results/domain/price_presets.toml's format);
    # the portal's own demo list when unset.
    price_presets_file: Path | None = None

    # Where archives and event logs are stored (architecture, decision 15): file:///path
    # (default: <data_dir>/blobs) or s3://bucket/prefix, with the store's endpoint and
    # credentials in the standard AWS_* variables. Each host keeps the local copies it
    # reads in a bounded cache (default: <data_dir>/cache), private to the portal's user
    # (app.storage.cache.private_folder), safe to delete at any time.
    storage_url: str | None = None
    storage_cache_dir: Path | None = None
    storage_cache_bytes: int = 10 * 1024**3
    # Each call to the store: attempts (with backoff) and the connection timeout.
    storage_attempts: int = 3
    storage_timeout_s: float = 5.0
    # A job that finds the store out of reach waits and runs again, first after this
    # long, doubling up to the longest wait; after this many tries it fails, saying why.
    storage_wait_first_s: float = 5.0
    storage_wait_longest_s: float = 300.0
    storage_wait_tries: int = 12

    @field_validator("storage_url")
    @classmethod
    def _storage_url_parses(cls, url: str | None) -> str | None:
        if url is not None:
            parse_storage_url(url)  # a bad URL stops the portal at start, saying why
        return url

    @field_validator("reproduction_allowed_endpoints", "webhook_allowed_endpoints")
    @classmethod
    def _endpoints_parse(cls, entries: list[str]) -> list[str]:
        parse_allowed(entries)  # a bad entry stops the portal at start, naming it
        return entries

    @property
    def submission_api_minimum_cli(self) -> str:
        """The oldest official CLI the Submission API takes (major.minor): the setting,
        else the pinned CLI's own release."""
        if self.submission_api_min_cli:
            return self.submission_api_min_cli
        from importlib.metadata import version

        return ".".join(version("endpoints-submission-cli").split(".")[:2])

    def public_link(self, path: str) -> str:
        """*path* on the portal's public address: what e-mails and the command line give."""
        return f"{self.public_url.rstrip('/')}{path}"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def effective_database_url(self) -> str:
        if self.database_url:
            url = self.database_url
            # Plain postgres URLs mean psycopg 3, the driver we ship.
            for prefix in ("postgresql://", "postgres://"):
                if url.startswith(prefix):
                    return "postgresql+psycopg://" + url[len(prefix) :]
            return url
        return f"sqlite:///{(self.data_dir / 'portal.sqlite3').resolve()}"

    @computed_field  # type: ignore[prop-decorator]
    @property
    def broker_url(self) -> str:
        if self.redis_url:
            return self.redis_url
        # Embedded default: kombu's SQLAlchemy transport on its own SQLite file, so the
        # broker's polling never contends with the portal's own database.
        return f"sqla+sqlite:///{(self.data_dir / 'broker.sqlite3').resolve()}"

    @property
    def blobs_dir(self) -> Path:
        return self.data_dir / "blobs"

    @property
    def effective_storage_url(self) -> str:
        return self.storage_url or f"file://{self.blobs_dir.resolve()}"

    @property
    def cache_dir(self) -> Path:
        """This host's caches: extracted bundles, local copies of S3 objects, scratch."""
        return self.storage_cache_dir or self.data_dir / "cache"

    @property
    def bundles_dir(self) -> Path:
        """Extracted bundles, a cache of the store's archives (submissions.services.extracted)."""
        return self.cache_dir / "bundles"

    @property
    def tmp_dir(self) -> Path:
        return self.data_dir / "tmp"

    @property
    def effective_datasets_dir(self) -> Path:
        return self.datasets_dir or self.data_dir / "datasets"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


def business_calendar(settings: Settings) -> BusinessCalendar:
    """The cohort calendar of the operator's settings: its zone, holidays and cutoff."""
    return BusinessCalendar.of(
        settings.cohort_timezone, settings.holidays, settings.cohort_cutoff_business_days
    )


def review_clock(settings: Settings, calendar: BusinessCalendar | None = None) -> ReviewClock:
    """The review clock of the operator's settings (rules §11.3), on the cohort calendar
    unless *calendar* (a submitter's business days) is given."""
    return ReviewClock(calendar or business_calendar(settings), review_policy(settings).review)


def review_policy(settings: Settings) -> ReviewPolicy:
    """The policy values in force (the operator's file, else the rules' own values)."""
    return review_policy_of(settings.review_policy_file)
