"""The conversation stage: (history, question) → a standalone question, what it carried over, and
whether it changed anything. Offline by rules (:mod:`.offline`), or with one bounded LLM call
that falls back to the rules (:mod:`.condense`). Every entry point (generic QA, the apps, REST,
the OpenAI front door, the CLI chat) goes through :func:`~zhiwen.conversation.condense.condense`.
"""
