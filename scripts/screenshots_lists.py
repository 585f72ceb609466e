"""Screenshots of the list pages for the documentation: ``docs/runs.png`` and ``docs/alerts.png``.

Serves the app in-process (a temporary SQLite database, the offline model, the Alertmanager
webhook enabled), asks three questions and posts the recorded Alertmanager notification, then
drives the system Chromium headless as the browser tests do: the Runs page, and the alert inbox
after "Investigate now". Run with ``.venv/bin/python scripts/screenshots_lists.py [--out docs]``.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the harness lives with the browser tests

from tests.webapp.browser.harness import chromium, screenshot_folder, start_app  # noqa: E402

TOKEN = "screenshot-token"
QUESTIONS = (
    "Why is payment-service slow since 10:00?",
    "Why is shipping-service failing since 10:20?",
    "What does the runbook say about connection pools?",
)
WEBHOOK = ROOT / "tests/webapp/telemetry/recorded/alertmanager-0.25-webhook-v4.json"


def main() -> int:
    """Write both screenshots; exit 1 with the reason when no browser can be driven."""
    out = screenshot_folder(__doc__.splitlines()[0], ROOT / "docs")
    if out is None:
        return 1
    with tempfile.TemporaryDirectory() as scratch:
        live = start_app(Path(scratch), alert_webhook_token=TOKEN)
        try:
            client = live.app.test_client()
            for question in QUESTIONS:
                client.post("/api/chat", json={"Question": question})
            posted = client.post(
                "/api/alerts/alertmanager",
                json=json.loads(WEBHOOK.read_text()),
                headers={"Authorization": f"Bearer {TOKEN}"},
            )
            assert posted.status_code == 202, posted.data
            time.sleep(3)  # the webhook's AIOps run finishes
            with chromium(Path(scratch) / "profile") as browser:
                page = browser.new_page()
                page.goto(live.url + "/runs")
                page.locator("#runs-pager[data-state=ready]").wait_for(state="attached")
                page.mouse.move(0, 0)
                page.screenshot(path=str(out / "runs.png"))
                page.goto(live.url + "/alerts")
                page.locator("#alert-groups[data-state=ready]").wait_for(state="attached")
                page.locator("button.investigate").first.click()
                page.locator("#alerts-status a.started-run").wait_for()
                page.mouse.move(0, 0)
                page.screenshot(path=str(out / "alerts.png"))
        finally:
            live.stop()
    print(f"screenshots: wrote {out / 'runs.png'} and {out / 'alerts.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
