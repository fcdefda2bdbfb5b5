"""The engine's own routers (apps bring theirs through their ``router()``; see :mod:`zhiwen.apps.registry`)."""
