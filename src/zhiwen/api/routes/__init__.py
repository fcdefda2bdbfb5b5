"""The engine's own routers (apps bring theirs through :data:`zhiwen.apps.registry.ROUTERS`)."""
