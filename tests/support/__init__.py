"""Test helpers shared across test packages (import as ``support.…``; ``tests/`` is on sys.path)."""
