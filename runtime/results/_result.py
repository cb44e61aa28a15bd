"""The result convention: every result carries ``success``, ``status`` and ``message``.

As scipy's ``OdeResult`` (STYLE §10): a result is an object with attributes, never a bare
dict.  :class:`Result` adds read access by key (``res["l1"]``) so code written against the
former dict results keeps working.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

__all__ = ["Result"]


@dataclass
class Result:
    """Base of the result dataclasses: ``success``, ``status``, ``message`` and key access.

    The three fields are keyword-only (after a subclass's own fields in ``__init__``);
    ``status`` is ``"computed"`` unless the producer says otherwise.
    """

    success: bool = field(default=True, kw_only=True)
    status: str = field(default="computed", kw_only=True)
    message: str = field(default="", kw_only=True)

    def keys(self) -> list[str]:
        """The field names: a subclass's own (the keys of the former dict result), then
        ``success``, ``status``, ``message``."""
        fs = dataclasses.fields(self)
        return [f.name for f in fs if not f.kw_only] + [f.name for f in fs if f.kw_only]

    def __getitem__(self, key: str):
        if key not in self.keys():
            raise KeyError(key)
        return getattr(self, key)

    def __contains__(self, key) -> bool:
        return key in self.keys()

    def __iter__(self):
        """The field names, as iterating the former dict did (``dict(res)`` works)."""
        return iter(self.keys())
