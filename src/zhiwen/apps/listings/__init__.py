"""Property search over Lianjia listings: understanding, filters, re-scoring, ``/ask``.

Example::

    >>> from zhiwen.apps.listings import app
    >>> app.ask(AskRequest(question="浦东800万以内的两房"), build_context()).data["retrieved_properties"]
"""

from zhiwen.apps.listings.app import ListingsApp, app

__all__ = ["ListingsApp", "app"]
