"""Recipe QA over HowToCook: routing, filters, dish names, its ingest plug-in and CLI.

Example::

    >>> from zhiwen.apps.recipes import answer_recipe
    >>> answer_recipe(open_kb("recipes"), "宫保鸡丁怎么做").route
    'detail'
"""

from zhiwen.apps.recipes.app import RecipesApp, app
from zhiwen.apps.recipes.service import answer_recipe, plan_recipe, stream_recipe

__all__ = ["RecipesApp", "answer_recipe", "app", "plan_recipe", "stream_recipe"]
