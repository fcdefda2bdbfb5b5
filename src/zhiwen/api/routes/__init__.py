"""The engine's own routers; apps bring theirs through ``router()`` (see :mod:`zhiwen.appkit.registry`)."""
