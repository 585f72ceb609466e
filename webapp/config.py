"""Settings read from the environment once, in ``create_app``.

Every variable is optional; ``.env.example`` lists them with their defaults. Invalid values
fail at start-up with a message naming the variable, never later in a request.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    DirectoryPath,
    Field,
    FilePath,
    Json,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    ValidationError,
)

from .analysis.timezones import zone_of
from .llm.tokens import PriceTable, TokenBudget

#: Systems with an HTTP API; each has ``<P>_URL`` and the auth/TLS/timeout variables below.
HTTP_SOURCES = ("prometheus", "alertmanager", "loki", "elasticsearch")
#: Every variable that configures a telemetry source (TELEMETRY_BACKEND=live).
SOURCE_SETTINGS = (*(f"{name}_url" for name in HTTP_SOURCES), "log_dir", "telemetry_dir")
LOG_SOURCES = ("loki_url", "elasticsearch_url", "log_dir")
#: The log fields ``ELASTICSEARCH_FIELD_MAP`` may map to a field of the index.
FieldKey = Annotated[str, Field(pattern=r"^(timestamp|service|level|message|trace_id)$")]
#: How to install the optional MCP SDK, for the messages of what needs it.
MCP_EXTRA = "install it with `make mcp` or `pip install -e '.[mcp]'`"


#: A Prometheus label name.
Label = Annotated[str, Field(pattern=r"^[a-zA-Z_][a-zA-Z0-9_]*$")]


def _inline_or_file(value: Any) -> Any:
    """A JSON object written inline as is; any other text names the file that holds one."""
    if isinstance(value, str) and not value.lstrip().startswith("{"):
        try:
            return Path(value).read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"the file cannot be read: {exc}") from None
    return value


class SettingsError(ValueError):
    """An environment variable has a value the app cannot use."""


class Settings(BaseModel):
    """Typed configuration of the web app."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    database_url: str = "sqlite:///instance/diagnosis.db"
    redis_url: str | None = None
    openai_api_key: str | None = Field(default=None, repr=False)
    openai_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_response_format: Literal[
        "auto", "json_schema", "json_object_schema", "json_object", "prompt"
    ] = "auto"
    llm_timeout_seconds: PositiveFloat = 60.0
    #: The answer limit of every model call; unset: per schema (``webapp.llm.tokens``).
    llm_max_tokens: PositiveInt | None = None
    llm_temperature: Annotated[float, Field(ge=0, le=2)] = 0.0
    #: Prompt tokens one model call may send, and one diagnosis's calls (``webapp.llm.tokens``).
    llm_prompt_token_budget: PositiveInt = 12_000
    llm_run_token_budget: PositiveInt = 150_000
    #: Dollars per million input and output tokens by model (``webapp.llm.tokens``); unset: no cost.
    llm_prices: Json[dict[str, tuple[NonNegativeFloat, NonNegativeFloat]]] = {}
    run_deadline_seconds: PositiveFloat = 600.0
    telemetry_backend: Literal["demo", "live"] = "demo"
    knowledge_dir: DirectoryPath | None = None
    knowledge_db: str = "instance/knowledge.db"
    api_key: str | None = Field(default=None, repr=False)
    session_ttl_seconds: PositiveInt = 86400
    history_max_messages: PositiveInt = 12
    #: The IANA zone of a time a question writes without one ("since 10:00").
    default_timezone: str = "UTC"
    max_question_chars: PositiveInt = 4000
    max_request_bytes: PositiveInt = 2 * 1024 * 1024
    max_upload_bytes: PositiveInt = 1024 * 1024
    run_workers: PositiveInt = 8
    create_schema: bool = True
    # Telemetry sources (README "Connect your stack"); used with TELEMETRY_BACKEND=live.
    telemetry_dir: DirectoryPath | None = None
    log_dir: DirectoryPath | None = None
    service_label: Label = "service"
    service_fallback_label: Label = "job"
    #: A JSON object, service -> list of aliases, written inline or in the file the setting names.
    service_aliases: Annotated[Json[dict[str, list[str]]], BeforeValidator(_inline_or_file)] = {}
    telemetry_attempts: Annotated[int, Field(ge=1, le=10)] = 3
    telemetry_max_points: PositiveInt = 500
    metrics_step_seconds: PositiveInt = 60
    prometheus_url: str | None = None
    prometheus_bearer_token: str | None = Field(default=None, repr=False)
    prometheus_username: str | None = None
    prometheus_password: str | None = Field(default=None, repr=False)
    prometheus_tls_verify: bool = True
    prometheus_ca_bundle: FilePath | None = None
    prometheus_timeout_seconds: PositiveFloat = 10.0
    alertmanager_url: str | None = None
    alertmanager_bearer_token: str | None = Field(default=None, repr=False)
    alertmanager_username: str | None = None
    alertmanager_password: str | None = Field(default=None, repr=False)
    alertmanager_tls_verify: bool = True
    alertmanager_ca_bundle: FilePath | None = None
    alertmanager_timeout_seconds: PositiveFloat = 10.0
    loki_url: str | None = None
    loki_bearer_token: str | None = Field(default=None, repr=False)
    loki_username: str | None = None
    loki_password: str | None = Field(default=None, repr=False)
    loki_tls_verify: bool = True
    loki_ca_bundle: FilePath | None = None
    loki_timeout_seconds: PositiveFloat = 10.0
    loki_service_label: Label = "service_name"
    loki_level_label: str = "level"
    elasticsearch_url: str | None = None
    elasticsearch_bearer_token: str | None = Field(default=None, repr=False)
    elasticsearch_username: str | None = None
    elasticsearch_password: str | None = Field(default=None, repr=False)
    elasticsearch_tls_verify: bool = True
    elasticsearch_ca_bundle: FilePath | None = None
    elasticsearch_timeout_seconds: PositiveFloat = 10.0
    elasticsearch_index: str = "logs-*"
    #: A JSON object, log field -> the index's field name (ECS names by default).
    elasticsearch_field_map: Json[dict[FieldKey, Annotated[str, Field(min_length=1)]]] = {}
    alert_webhook_token: str | None = Field(default=None, repr=False)
    # Execution at scale (docs/scale.md).
    run_executor: Literal["thread", "celery"] = "thread"
    run_lease_seconds: PositiveInt = 60
    run_queue_timeout_seconds: PositiveInt = 900
    run_max_resumes: NonNegativeInt = 2
    otel_exporter_otlp_endpoint: str | None = None
    otel_service_name: str = "incident-diagnosis"
    rate_limit: str | None = None  # e.g. "30/minute" per client or API key; unset: unlimited
    #: A JSON or TOML file naming MCP servers whose tools the executor may call (docs/mcp.md).
    mcp_servers: str | None = None
    mcp_timeout_seconds: PositiveFloat = 30.0

    @property
    def offline(self) -> bool:
        """True when no API key is set: the built-in rule-based model answers."""
        return not self.openai_api_key

    def token_budget(self) -> TokenBudget:
        """``LLM_PROMPT_TOKEN_BUDGET`` per call and ``LLM_RUN_TOKEN_BUDGET`` per run."""
        return TokenBudget(self.llm_prompt_token_budget, self.llm_run_token_budget)

    def price_table(self) -> PriceTable:
        """``LLM_PRICES`` (an empty table when unset)."""
        return PriceTable(self.llm_prices)

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None
    ) -> Settings:
        """Read the variables (upper-case field names), then apply ``overrides`` (field names)."""
        env = os.environ if environ is None else environ
        raw = {name: env.get(name.upper(), "").strip() for name in cls.model_fields}
        values = {name: value for name, value in raw.items() if value}
        try:
            settings = cls.model_validate({**values, **(overrides or {})})
        except ValidationError as exc:
            error = exc.errors()[0]
            name = str(error["loc"][0])
            if error["type"] == "extra_forbidden":
                raise SettingsError(f"unknown setting: {name}") from None
            raise SettingsError(f"{name.upper()}={error['input']!r}: {error['msg']}") from None
        settings.check()
        return settings

    def check(self) -> None:
        """Raise SettingsError naming the first variable with an unusable value."""
        self._validate_telemetry()
        if self.run_executor == "celery" and not self.redis_url:
            raise SettingsError("RUN_EXECUTOR=celery needs REDIS_URL (the broker)")
        if self.rate_limit:
            from limits import parse_many

            try:
                parse_many(self.rate_limit)
            except ValueError:
                raise SettingsError(
                    f"RATE_LIMIT={self.rate_limit!r} is not a rate such as '30/minute' "
                    "or '5/second;100/hour'"
                ) from None
        if zone_of(self.default_timezone) is None:
            raise SettingsError(
                f"DEFAULT_TIMEZONE {self.default_timezone!r} is not a time zone (an IANA name "
                "such as Europe/Berlin or Asia/Shanghai, or UTC)"
            )
        self.mcp_server_list()

    def mcp_server_list(self) -> list[Any]:
        """The servers ``MCP_SERVERS`` names (``webapp.tools.mcp_client.McpServer``), parsed."""
        if not self.mcp_servers:
            return []
        try:
            from .tools.mcp_client import McpConfigError, load_servers
        except ModuleNotFoundError as exc:
            raise SettingsError(f"MCP_SERVERS needs the MCP SDK ({MCP_EXTRA})") from exc
        try:
            return list(load_servers(self.mcp_servers))
        except McpConfigError as exc:
            raise SettingsError(str(exc)) from None

    def _validate_telemetry(self) -> None:
        configured = [name for name in SOURCE_SETTINGS if getattr(self, name)]
        if self.telemetry_backend == "demo" and configured:
            raise SettingsError(
                f"{configured[0].upper()} is set but TELEMETRY_BACKEND=demo; set "
                "TELEMETRY_BACKEND=live to read telemetry from the configured sources"
            )
        if self.telemetry_backend == "live" and not configured:
            raise SettingsError(
                "TELEMETRY_BACKEND=live needs at least one of "
                + ", ".join(n.upper() for n in SOURCE_SETTINGS)
            )
        logs = [name.upper() for name in LOG_SOURCES if getattr(self, name)]
        if len(logs) > 1:
            raise SettingsError(f"set only one log source, not {' and '.join(logs)}")
        for name in HTTP_SOURCES:
            url, prefix = getattr(self, f"{name}_url"), name.upper()
            if url and not re.match(r"^https?://[^\s/]+", url):
                raise SettingsError(f"{prefix}_URL must be an http:// or https:// URL, got {url!r}")
            if getattr(self, f"{name}_password") and not getattr(self, f"{name}_username"):
                raise SettingsError(f"{prefix}_PASSWORD is set without {prefix}_USERNAME")
        if self.telemetry_dir and not (self.telemetry_dir / "dataset.json").is_file():
            raise SettingsError(f"TELEMETRY_DIR {self.telemetry_dir!r} has no dataset.json")
