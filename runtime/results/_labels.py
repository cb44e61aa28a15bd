"""Labels of saved points (AUTO's ``LAB``): how a point of a run file is named and found.

Every saved point has a stable label ``GROUP:INDEX``: the branch's group in the file
(``equilibria``, ``periodic``, ``restart_1``, ...; groups are never renumbered, an appended
restart gets a new one) and the point's index in it.  A special point is also named by its
kind and its rank along its branch, ``KIND<rank>``: ``fold1``, ``hopf2``, ``bp1``, ``pd1``,
``ns1`` (any case; AUTO's type names ``LP``, ``HB``, ``BP``, ``PD``, ``TR`` are accepted too),
the rank defaulting to 1.  On the command line a point is ``FILE@POINT`` or
``FILE@GROUP:POINT``, ``POINT`` being an index (negative counts from the end) or a special
point's name; without a group, the file's main branch (periodic, else equilibria).
"""
from __future__ import annotations

from dataclasses import dataclass
import re

from ..errors import InputError
from ._branch import SPECIAL_KINDS

__all__ = ["PointRef", "check_restart_point", "parse_point", "point_index", "special_labels", "special_point"]

#: AUTO's names of the special points (constants.f90 / the ``TY`` column) -> ours
AUTO_NAMES = {"lp": "fold", "hb": "hopf", "bp": "bp", "pd": "pd", "tr": "ns"}
_SPECIAL = re.compile(r"(?P<kind>[a-z]+?)(?P<rank>[0-9]*)")
FORMS = ("an index (40, -1), a special point (fold, fold2, hopf1, bp1, pd1, ns1; AUTO's LP1, HB1, "
         "BP1, PD1, TR1), or GROUP:POINT (periodic:40, equilibria:hopf2, restart_1:-1)")


@dataclass(frozen=True)
class PointRef:
    """A parsed point reference: the group (None: the main branch) and either an ``index``
    or a special point's ``kind`` and ``rank`` (1-based)."""

    text: str
    group: str | None = None
    index: int | None = None
    kind: str | None = None
    rank: int = 1


def parse_point(text: str, where: str = "point") -> PointRef:
    """The :class:`PointRef` of ``text`` (``POINT`` or ``GROUP:POINT``).

    Raises
    ------
    InputError
        ``text`` names no point: the message says ``where`` and the forms accepted.
    """
    group, sep, point = str(text).strip().rpartition(":")
    point = point.strip()
    if (sep and not group.strip()) or not point:
        raise InputError(f"{where} {text!r}: expected {FORMS}")
    group = group.strip() or None
    if re.fullmatch(r"[+-]?[0-9]+", point):
        return PointRef(str(text), group, index=int(point))
    m = _SPECIAL.fullmatch(point.lower())
    kind = m and AUTO_NAMES.get(m["kind"], m["kind"])
    if not m or kind not in SPECIAL_KINDS:
        raise InputError(f"{where} {text!r}: {point!r} is not a point; expected {FORMS}")
    rank = int(m["rank"] or 1)
    if rank < 1:
        raise InputError(f"{where} {text!r}: special points are ranked from 1 ({kind}1 is the first)")
    return PointRef(str(text), group, kind=kind, rank=rank)


def special_point(branch, ref: PointRef, where: str = "point"):
    """The :class:`SpecialPoint` ``ref`` names (None for an index).

    Raises
    ------
    InputError
        No such special point (the message lists those there are).
    """
    if ref.index is not None:
        return None
    found = branch.special_points(ref.kind)
    if ref.rank > len(found):
        there = ", ".join(special_labels(branch)) or "none"
        raise InputError(f"{where} {ref.text!r}: the branch has {len(found)} {ref.kind} point(s); its special "
                         f"points: {there}")
    return found[ref.rank - 1]


def point_index(branch, ref: PointRef, where: str = "point") -> int:
    """The index (0..len-1) in ``branch`` of the saved point ``ref`` names; for a special
    point (located between two saved points, ``SpecialPoint.index`` the first), the saved
    point nearest to it in the parameter.

    Raises
    ------
    InputError
        An index out of range, or no such special point.
    """
    n = len(branch)
    if ref.index is not None:
        if not -n <= ref.index < n:
            raise InputError(f"{where} {ref.text!r}: the branch has {n} points (0..{n - 1}, or negative from the end)")
        return ref.index % n
    sp = special_point(branch, ref, where)
    near = [i for i in (int(sp.index), int(sp.index) + 1) if 0 <= i < n]
    return min(near, key=lambda i: abs(float(branch.param[i]) - sp.param))


def special_labels(branch) -> list:
    """``KIND<rank>`` of each special point of ``branch``, in branch order (``fold1``, ``hopf2``)."""
    seen: dict = {}
    labels = []
    for s in branch.special:
        seen[s.kind] = seen.get(s.kind, 0) + 1
        labels.append(f"{s.kind}{seen[s.kind]}")
    return labels


def check_restart_point(branch, index, where="restart point"):
    """Refuse a point there is nothing to continue from: the end of a periodic branch on a
    Hopf point (zero amplitude, where the orbits meet the equilibria)."""
    n = len(branch)
    index = int(index) % n
    at_hopf = [s for s in branch.special_points("hopf") if int(s.index) == index]
    if branch.kind != "equilibrium" and at_hopf:
        param = branch.provenance.get("continuation_parameter", "lam")
        raise InputError(f"{where} {index}: the periodic branch ends there on the Hopf point at {param} = "
                         f"{branch.param[index]:.10g}, with zero amplitude: there is no periodic orbit to continue "
                         f"from it; restart from an earlier point (e.g. {index - 1}), or start a periodic branch at "
                         "that Hopf point of the equilibria (frictionkit continue ... --from-hopf K)")
    return index
