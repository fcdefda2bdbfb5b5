"""The answer stage: plan → retrieve → compose (extractive, or one LLM call), and the one
:class:`~zhiwen.answer.model.Answer` / :class:`~zhiwen.answer.model.Citation` every interface
shows. It sits above retrieval and the knowledge bases and below the app kit; it names no app.
"""
