"""Rate limits on sign-in and uploads, over ASGI, and the sliding window itself."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.db.session import Database
from app.main import create_app
from app.settings import Settings
from app.web.ratelimit import RateLimiter
from tests.support.accounts import ACCOUNTS, PASSWORD, bearer, create_accounts, form_token
from tests.support.fakes import RecordingQueue


def test_the_limits_are_settings_with_defaults() -> None:
    # model_copy(update=...) below would accept any name: the fields must really exist.
    assert {"login_attempts_per_minute", "uploads_per_hour"} <= set(Settings.model_fields)
    assert Settings().login_attempts_per_minute == 10 and Settings().uploads_per_hour == 120


def test_the_window_slides() -> None:
    now = [0.0]
    limiter = RateLimiter(clock=lambda: now[0])
    assert [limiter.hit("a", "c", 2, 10) for _ in range(2)] == [None, None]
    assert limiter.hit("a", "c", 2, 10) == 10.0
    assert limiter.hit("a", "other", 2, 10) is None  # per client
    assert limiter.hit("b", "c", 2, 10) is None  # per action
    now[0] = 10.5
    assert limiter.hit("a", "c", 2, 10) is None
    assert limiter.hit("a", "c", 0, 10) is None  # 0: no limit


def test_a_burst_of_sign_ins_does_not_forget_the_hour_long_upload_counts() -> None:
    """Issue 44: idle clients were forgotten by the window of whoever was counted last,
    so a burst of minute-long sign-in windows wiped the hour-long upload counters."""
    now = [0.0]
    limiter = RateLimiter(clock=lambda: now[0], max_keys=50)
    assert [limiter.hit("upload", "me", 2, 3600) for _ in range(2)] == [None, None]
    now[0] = 120.0  # two minutes on: the uploads are still inside their hour
    for client in range(60):  # past the key limit: the table is pruned
        limiter.hit("sign-in", f"client-{client}", 10, 60)
    assert limiter.hit("upload", "me", 2, 3600) == 3600 - 120
    now[0] = 4000.0  # an hour later both windows have passed: both are forgotten
    for client in range(60, 120):
        limiter.hit("sign-in", f"client-{client}", 10, 60)
    assert limiter.hit("upload", "me", 2, 3600) is None


def test_password_guessing_is_slowed_down_even_with_the_right_password(
    settings: Settings, database: Database
) -> None:
    create_accounts(database)
    limited = settings.model_copy(update={"login_attempts_per_minute": 3})
    with TestClient(create_app(limited, queue=RecordingQueue())) as client:
        token = form_token(client)
        form = {"email": ACCOUNTS["chair"][0], "csrf_token": token}
        for _ in range(3):
            assert client.post("/login", data={**form, "password": "guess"}).status_code == 401
        blocked = client.post("/login", data={**form, "password": PASSWORD})
        assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) >= 1
        assert "too many sign-in attempts" in blocked.text


def test_a_strangers_guesses_never_lock_the_owner_out(
    settings: Settings, database: Database
) -> None:
    """Failures count per client and account; the right password is never counted."""
    create_accounts(database)
    limited = settings.model_copy(update={"login_attempts_per_minute": 3})
    app = create_app(limited, queue=RecordingQueue())
    email = ACCOUNTS["chair"][0]
    with TestClient(app, client=("203.0.113.9", 4000)) as stranger:
        form = {"email": email, "csrf_token": form_token(stranger)}
        for _ in range(3):
            assert stranger.post("/login", data={**form, "password": "guess"}).status_code == 401
        assert stranger.post("/login", data={**form, "password": "guess"}).status_code == 429
    with TestClient(app, client=("198.51.100.7", 5000)) as owner:
        for _ in range(5):  # signing in again and again is never a failure
            owner.cookies.clear()
            form = {"email": email, "password": PASSWORD, "csrf_token": form_token(owner)}
            assert owner.post("/login", data=form, follow_redirects=False).status_code == 303


def test_uploads_per_account_are_limited(
    settings: Settings, database: Database, good_archive: Path
) -> None:
    tokens = create_accounts(database)
    limited = settings.model_copy(update={"uploads_per_hour": 2})
    with TestClient(create_app(limited, queue=RecordingQueue())) as client:
        files = {"file": ("g.tar.gz", good_archive.read_bytes())}
        acme = bearer(tokens["submitter"])
        assert client.post("/api/v1/submissions", files=files, headers=acme).status_code == 201
        assert client.post("/api/v1/submissions", files=files, headers=acme).status_code == 200
        third = client.post("/api/v1/submissions", files=files, headers=acme)
        assert third.status_code == 429 and "upload" in third.json()["error"]["message"]
        chair = bearer(tokens["chair"])  # another account has its own allowance
        assert client.post("/api/v1/submissions", files=files, headers=chair).status_code == 200
