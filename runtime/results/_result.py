"""The result convention: every result carries ``success``, ``status`` and ``message``.

As scipy's ``OdeResult`` (STYLE §10): a result is an object with attributes, never a bare
dict.  :class:`Result` adds read access by key (``res["l1"]``) so code written against the
former dict results keeps working.
"""
from __future__ import annotations

import dataclasses

__all__ = ["Result"]


class Result:
    """Mixin of the result dataclasses: ``success``, ``status``, ``message`` and key access.

    A subclass is a dataclass that declares ``success: bool``, ``status: str`` and
    ``message: str`` among its fields.
    """

    success: bool
    status: str
    message: str

    def keys(self) -> list[str]:
        """The field names (the keys of the former dict result)."""
        return [f.name for f in dataclasses.fields(self)]

    def __getitem__(self, key: str):
        if key not in self.keys():
            raise KeyError(key)
        return getattr(self, key)

    def __contains__(self, key) -> bool:
        return key in self.keys()

    def __iter__(self):
        """The field names, as iterating the former dict did (``dict(res)`` works)."""
        return iter(self.keys())
