"""Browser tests: the UI in headless Debian Chromium, driven by Playwright, against the app
served in-process on a free port (SQLite, the offline model).

Without ``/usr/bin/chromium`` or the playwright package every test here is skipped with the
reason; with ``CI=1`` it fails instead, because CI must run them.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pytest

from tests.environment import unavailable
from webapp.demo.backend import DemoTelemetryBackend
from webapp.llm.offline import OfflineChatModel
from webapp.llm.types import ChatResult, Message

from .harness import LiveApp, browser_missing, chromium, start_app

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, ConsoleMessage, Page

QUESTION = "Why is payment-service slow since 10:00?"
TIMEOUT_MS = 30_000
#: Dollars per million prompt / completion tokens, for any model: every run shows a cost.
PRICES = '{"*": [2, 8]}'


def require_browser() -> None:
    """Skip when the browser cannot be driven here; fail under ``CI=1``."""
    reason = browser_missing()
    if reason is None:
        return
    unavailable(f"browser tests skipped: {reason}")


class GatedModel(OfflineChatModel):
    """The offline model, but the composer waits while the test holds the gate closed."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.gate.set()
        self.waiting = threading.Event()

    def complete(self, messages: Sequence[Message], **kwargs: Any) -> ChatResult:
        format_ = kwargs.get("response_format") or {}
        if format_.get("json_schema", {}).get("name") == "composer_output":
            self.waiting.set()
            self.gate.wait(timeout=30)
        return super().complete(messages, **kwargs)


@dataclass
class Console:
    """Console errors and uncaught exceptions of one page, minus the ones a test expects."""

    errors: list[str] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)

    def allow(self, fragment: str) -> None:
        """Expect console errors containing ``fragment`` (e.g. a deliberate 404 response)."""
        self.allowed.append(fragment)

    def unexpected(self) -> list[str]:
        """Errors no test expected."""
        return [e for e in self.errors if not any(a in e for a in self.allowed)]


@pytest.fixture(scope="session")
def demo_data() -> DemoTelemetryBackend:
    backend = DemoTelemetryBackend()
    backend.services()  # load once
    return backend


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrowserContext]:
    """One headless system Chromium for the session, with a fresh user-data dir."""
    require_browser()
    with chromium(tmp_path_factory.mktemp("chromium-profile")) as context:
        context.set_default_timeout(TIMEOUT_MS)
        yield context


@pytest.fixture(scope="module")
def gated_model() -> GatedModel:
    return GatedModel()


@pytest.fixture(scope="module")
def live(
    tmp_path_factory: pytest.TempPathFactory,
    demo_data: DemoTelemetryBackend,
    gated_model: GatedModel,
) -> Iterator[LiveApp]:
    """The app on a free port for this module (the models are bound to its database)."""
    require_browser()
    app = start_app(
        tmp_path_factory.mktemp("live-app"),
        backend=demo_data,
        model=gated_model,
        llm_prices=PRICES,
    )
    yield app
    gated_model.gate.set()
    app.stop()


@pytest.fixture
def console() -> Console:
    return Console()


@pytest.fixture
def page(browser: BrowserContext, live: LiveApp, console: Console) -> Iterator[Page]:
    """A new tab with this origin's storage cleared; console errors are collected."""
    tab = browser.new_page()

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            console.errors.append(f"console: {message.text} ({message.location.get('url')})")

    tab.on("console", on_console)
    tab.on("pageerror", lambda error: console.errors.append(f"pageerror: {error}"))
    tab.goto(live.url + "/static/favicon.svg")
    tab.evaluate("localStorage.clear()")
    yield tab
    tab.close()
    assert console.unexpected() == [], "console errors on the page"


def read_json(page: Page, url: str) -> Any:
    """GET a JSON envelope through the browser and return its data."""
    response = page.request.get(url)
    assert response.ok, f"{url}: {response.status} {response.text()}"
    return response.json()["data"]


def ask(page: Page, live: LiveApp, question: str = QUESTION, mode: str = "auto") -> dict[str, str]:
    """Ask on the chat page and wait for the streamed run to finish; its session and run ids."""
    if page.url != live.url + "/":
        page.goto(live.url + "/")
    page.fill("#question", question)
    page.select_option("#mode", mode)
    page.click("#send")
    turn = page.locator(".turn").last
    turn.locator(".badge.state.ok, .badge.state.failed, .badge.state.degraded").wait_for()
    return {
        "sessionId": turn.get_attribute("data-session-id") or "",
        "runId": turn.get_attribute("data-run-id") or "",
    }


def asked_run(live: LiveApp, browser: BrowserContext, *endpoints: str) -> dict[str, Any]:
    """Ask :data:`QUESTION` once through the UI; its ids and the data of each run endpoint
    (``trace``, ``graph``, ``evidence``: ``GET /api/diagnosis/<sessionId>/<name>?runId=``)."""
    page = browser.new_page()
    try:
        ids = ask(page, live)
        base = f"{live.url}/api/diagnosis/{ids['sessionId']}"
        found = {name: read_json(page, f"{base}/{name}?runId={ids['runId']}") for name in endpoints}
    finally:
        page.close()
    return {**ids, **found}
