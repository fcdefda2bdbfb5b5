"""Policy QA over several KBs: visa-free table, airline/crew provisions and general statutes.

Intent classification (rules + a zh/en country gazetteer + embeddings, or an LLM), question
rewrite, dual-question retrieval with independent rerank, date-aware answers with citations.

Example::

    >>> from zhiwen.apps.policy import app
    >>> app.setup(Path("../shared/data"), build_context())
    >>> app.ask(AskRequest(question="边检证件过期后流程是什么？"), build_context()).data["strategy"]
    'single'
"""

from zhiwen.apps.policy.app import PolicyApp, app

__all__ = ["PolicyApp", "app"]
