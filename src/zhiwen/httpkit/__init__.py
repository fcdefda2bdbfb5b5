"""The HTTP helpers the API and every app's routes (``apps/<name>/api.py``) share.

:mod:`.deps` (the FastAPI dependencies: settings, KBs, apps, the pipeline, an app's context, who
calls and what they may do), :mod:`.auth` (a bearer key → :class:`~.auth.Access`), :mod:`.fields`
(request fields every route validates alike: a question, a KB name, the history), :mod:`.envelope`
(``{code, message, data}``) and :mod:`.sse` (an answer stream as server-sent events). It sits
above the app contract (:mod:`zhiwen.appkit`) and below the apps.
"""
