"""购房顾问 (seed 003): roles, tools, standard and discussion modes, calculators and market tables.

Example::

    >>> from zhiwen.apps.advisor import app
    >>> app.name, app.title
    ('advisor', '购房顾问')
"""

from zhiwen.apps.advisor.app import AdvisorApp, app

__all__ = ["AdvisorApp", "app"]
