"""``DEFAULT_TIMEZONE``: the zone of a time a question writes without one."""

from __future__ import annotations

import pytest

from webapp.config import Settings, SettingsError
from webapp.demo.backend import DemoTelemetryBackend
from webapp.llm.offline.conversation import Catalog
from webapp.llm.offline.planner import plan
from webapp.tools.catalog import diagnosis_tools
from webapp.tools.knowledge import KnowledgeIndex
from webapp.wiring import chat_model

NOW = "2026-11-30T12:00:00Z"


def test_the_default_is_utc_and_a_bad_zone_is_refused() -> None:
    assert Settings.from_env({}).default_timezone == "UTC"
    assert Settings.from_env({"DEFAULT_TIMEZONE": "Asia/Shanghai"}).default_timezone == (
        "Asia/Shanghai"
    )
    with pytest.raises(SettingsError, match="DEFAULT_TIMEZONE"):
        Settings.from_env({"DEFAULT_TIMEZONE": "Mars/Olympus"})


def test_the_offline_model_reads_zoneless_times_in_the_configured_zone() -> None:
    model = chat_model(Settings.from_env({"DEFAULT_TIMEZONE": "Asia/Shanghai"}))
    tools = diagnosis_tools(DemoTelemetryBackend(), KnowledgeIndex(":memory:"), None)
    catalog = Catalog([t.definition() for t in tools])
    request = {"question": "payment-service slow since 18:00", "reference_time": NOW}
    shanghai = plan(request, catalog, getattr(model, "default_timezone", "UTC"))
    assert shanghai["window"]["start"] == "2026-11-30T10:00:00Z"  # 18:00 +08:00
    assert shanghai["window"]["zone"] == "Asia/Shanghai"
    # A stated zone wins over the default.
    stated = plan({**request, "question": "payment-service slow since 11:00 CET"}, catalog)
    assert stated["window"]["start"] == "2026-11-30T10:00:00Z"
