"""购房顾问, the house-buying advisor: roles, tools, standard and discussion modes, calculators, market.

Example::

    >>> from zhiwen.apps.advisor import app
    >>> app.name, app.title
    ('advisor', '购房顾问')
"""

from zhiwen.apps.advisor.app import AdvisorApp, app

__all__ = ["AdvisorApp", "app"]
