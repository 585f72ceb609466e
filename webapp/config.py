"""Settings read from the environment once, in ``create_app`` (SPEC section 10).

Every variable is optional; ``.env.example`` lists them with their defaults. Invalid values
fail at start-up with a message naming the variable, never later in a request.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

RESPONSE_FORMATS = ("json_schema", "json_object")
BACKENDS = ("demo",)


class SettingsError(ValueError):
    """An environment variable has a value the app cannot use."""


@dataclass(frozen=True)
class Settings:
    """Typed configuration of the web app."""

    database_url: str = "sqlite:///instance/diagnosis.db"
    redis_url: str | None = None
    openai_api_key: str | None = field(default=None, repr=False)
    openai_base_url: str | None = None
    llm_model: str = "gpt-4o-mini"
    llm_response_format: str = "json_schema"
    llm_timeout_seconds: float = 60.0
    telemetry_backend: str = "demo"
    knowledge_dir: str | None = None
    knowledge_db: str = "instance/knowledge.db"
    api_key: str | None = field(default=None, repr=False)
    session_ttl_seconds: int = 86400
    history_max_messages: int = 12
    max_question_chars: int = 4000
    max_request_bytes: int = 2 * 1024 * 1024
    max_upload_bytes: int = 1024 * 1024
    port: int = 8000
    run_workers: int = 8
    create_schema: bool = True
    rate_limit: str | None = None  # e.g. "30/minute" per client or API key; unset: unlimited

    @property
    def offline(self) -> bool:
        """True when no API key is set: the built-in rule-based model answers."""
        return not self.openai_api_key

    @classmethod
    def from_env(
        cls, environ: Mapping[str, str] | None = None, overrides: Mapping[str, Any] | None = None
    ) -> Settings:
        """Read the variables (upper-case field names), then apply ``overrides`` (field names)."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        for spec in fields(cls):
            raw = env.get(spec.name.upper())
            if raw is None or raw.strip() == "":
                continue
            values[spec.name] = _convert(spec.name, raw.strip(), spec.type)
        settings = replace(cls(), **values)
        if overrides:
            unknown = sorted(set(overrides) - {f.name for f in fields(cls)})
            if unknown:
                raise SettingsError(f"unknown setting(s): {', '.join(unknown)}")
            settings = replace(settings, **dict(overrides))
        settings.validate()
        return settings

    def validate(self) -> None:
        """Raise SettingsError naming the first variable with an unusable value."""
        if self.llm_response_format not in RESPONSE_FORMATS:
            raise SettingsError(f"LLM_RESPONSE_FORMAT must be one of {', '.join(RESPONSE_FORMATS)}")
        if self.telemetry_backend not in BACKENDS:
            raise SettingsError(f"TELEMETRY_BACKEND must be one of {', '.join(BACKENDS)}")
        for name in (
            "session_ttl_seconds",
            "history_max_messages",
            "max_question_chars",
            "max_request_bytes",
            "max_upload_bytes",
            "port",
            "run_workers",
        ):
            if getattr(self, name) < 1:
                raise SettingsError(f"{name.upper()} must be a positive integer")
        if self.llm_timeout_seconds <= 0:
            raise SettingsError("LLM_TIMEOUT_SECONDS must be positive")
        if self.rate_limit:
            from limits import parse_many

            try:
                parse_many(self.rate_limit)
            except ValueError:
                raise SettingsError(
                    f"RATE_LIMIT={self.rate_limit!r} is not a rate such as '30/minute' "
                    "or '5/second;100/hour'"
                ) from None
        if self.knowledge_dir and not Path(self.knowledge_dir).is_dir():
            raise SettingsError(f"KNOWLEDGE_DIR {self.knowledge_dir!r} is not a directory")


def _convert(name: str, raw: str, kind: Any) -> Any:
    text = str(kind)
    try:
        if text.startswith("int"):
            return int(raw)
        if text.startswith("float"):
            return float(raw)
        if text.startswith("bool"):
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
    except ValueError:
        raise SettingsError(f"{name.upper()}={raw!r} is not a valid {text.split(' ')[0]}") from None
    return raw
