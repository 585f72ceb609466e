"""With ``API_KEY`` set, the pages load without it and the scripts send the key the user stored."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from webapp.demo.backend import DemoTelemetryBackend

from .conftest import QUESTION, Console, require_browser
from .harness import LiveApp, start_app

if TYPE_CHECKING:
    from playwright.sync_api import Page

KEY = "browser-test-key"


@pytest.fixture(scope="module")
def live(
    tmp_path_factory: pytest.TempPathFactory, demo_data: DemoTelemetryBackend
) -> Iterator[LiveApp]:
    require_browser()
    app = start_app(tmp_path_factory.mktemp("live-app-key"), backend=demo_data, api_key=KEY)
    yield app
    app.stop()


def test_the_page_asks_for_the_key_and_then_sends_it(
    page: Page, live: LiveApp, console: Console
) -> None:
    console.allow("401")
    response = page.goto(live.url + "/")
    assert response is not None and response.status == 200
    page.fill("#question", QUESTION)
    page.click("#send")
    error = page.locator(".turn").last.locator(".turn-error")
    error.filter(has_text="Open Settings and enter the API key").wait_for()
    page.click("#settings-open")
    page.fill("#settings-key", KEY)
    page.click("#settings-save")
    page.fill("#question", QUESTION)
    page.click("#send")
    turn = page.locator(".turn").last
    turn.locator(".badge.state.ok").wait_for()
    assert turn.locator(".answer h3").count() > 0
    assert page.evaluate("localStorage.getItem('diagnosis.apiKey')") == KEY
