"""The terminal helpers the CLI and every app's commands (``apps/<name>/cli.py``) share.

:mod:`.console` (one-line errors and exit codes, JSON output, ``key=value`` options, printing an
answer or a setup) and :mod:`.view` (tables that stay readable at 80 columns, an answer's sources,
how it was made, what a setup built). It sits above the app contract (:mod:`zhiwen.appkit`) and
below the apps.
"""
