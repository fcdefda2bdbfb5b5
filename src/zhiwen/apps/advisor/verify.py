"""The number check for LLM-written role messages — :mod:`zhiwen.tools.numbers`, kept under its
old name for the advisor (the tool loop checks a model's final text with the same rules).

Example::

    >>> allowed = allowed_numbers([{"monthly_payment": 8967.34}], ["月收入2万"])
    >>> check_numbers("月供约0.90万元", allowed).ok
    True
"""

from zhiwen.tools.numbers import (
    NUMBER_RE,
    TRIVIAL_MAX,
    FoundNumber,
    NumberCheck,
    allowed_numbers,
    check_numbers,
    extract_numbers,
    key_numbers,
    missing_key_numbers,
)

__all__ = [
    "NUMBER_RE",
    "TRIVIAL_MAX",
    "FoundNumber",
    "NumberCheck",
    "allowed_numbers",
    "check_numbers",
    "extract_numbers",
    "key_numbers",
    "missing_key_numbers",
]
