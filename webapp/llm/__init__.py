"""LLM side: chat-model clients (OpenAI-compatible and offline), the ReAct loop, prompts."""
