"""The bug-class registry: the :class:`BugClass` spec, :data:`SPECS` in report order,
:func:`register`, and putting a symptom down to classes (:func:`classify`, :func:`cover`).

The classes themselves stand one module each (or one per small family) beside this one,
each with its handler, its recogniser, its preset and its spec; ``faults/__init__`` puts
them in report order."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, KeysView, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..accumulate import Accumulator
from .symptom import Symptom

FOUND_BY_THE_KIT = "found by the kit"
"""A citation meaning: no public report yet; the kit's own suite found it."""


CORRECT = "correct"
"""The name the correct :class:`~.accumulate.Accumulator` goes by beside the ``FAULTS`` names."""


@dataclass(frozen=True)
class BugClass:
    """One bug class: everything the kit knows about it, in one place."""

    name: str
    summary: str
    """One line a maintainer can act on: what the handler assumed, and what to do instead
    (reports show it)."""
    cites: tuple[str, ...]
    """The public threads it comes from (``owner/repo#n``, ``owner/repo PR #n``), or
    :data:`FOUND_BY_THE_KIT`."""
    recognise: Callable[[Symptom], bool]
    """Whether a :class:`Symptom` is this class's: the one rule ``check_handler`` and the
    torture judge both apply."""
    handler: type[Accumulator] | None = None
    """The faulty accumulator that shows it (None: no event-level variant)."""
    preset: Mapping[str, Any] | None = field(default=None, compare=False)
    """Keyword arguments for :class:`streamcalls_lab.breaker.Setup`: a turn on which the
    handler goes wrong (every class with a handler has one)."""
    client: bool = False
    """``clients/`` has a deliberately broken torture client for it (``--bug NAME``)."""
    fallback: bool = False
    """Generic: consulted only when no other class recognises a symptom."""
    through: Mapping[str, Callable[[Symptom], bool]] = field(default_factory=dict,
                                                             compare=False)
    """Where this class's mistake shows only through another's: ``{other: recognise}``, a
    symptom ``recognise`` accepts being this class's when a client has both (a fragment
    keyed by an id it lacks made a buffer, and a list kept by position raised at the slot
    it took). Consulted over a whole run alone (the torture report's settling), and only
    where the run's other failures name both classes: one case cannot say a client has
    two bugs."""
    refuted: Callable[[Symptom], bool] | None = field(default=None, compare=False)
    """Whether a :class:`Symptom` shows that the client does not make this class's mistake
    at all: on that very case the mistake would have shown otherwise (a call handed on
    early, but later than this class hands it on). Weighed over a whole run alone (the
    torture report's settling): a class one failure refutes is not what another failure
    is put down to where a class not refuted explains it."""
    weak: Callable[[Symptom], bool] | None = field(default=None, compare=False)
    """A symptom this class's mistake gives that other causes give as well (calls lost):
    put down to it only where no specific class explains it (only the fallbacks do) and
    the run names this class on evidence of its own (the torture report's settling)."""


SPECS: dict[str, BugClass] = {}
"""Every class by name, in report order. Change it through :func:`register`."""


CLASSES: KeysView[str] = SPECS.keys()
"""Every class name, in report order (a live view: a registered class is in it)."""


FAULTS: dict[str, type[Accumulator]] = {}
"""The faulty handlers, keyed by the bug they show (the contract's names, then the
extensions), in report order; kept in step with :data:`SPECS`."""


OTHER = "other"
"""What a symptom no class recognises is put down to."""


def register(spec: BugClass) -> BugClass:
    """Add a bug class (or replace one of that name): ``check_handler``, the torture harness,
    the stepper, the breaker and ``FAULTS`` see it from now on.

    A new class is reported after the built-in specific ones and before the generic
    fallbacks (``crash``, ``identity``, ``missing_call``, ``message``, ``other``). Its ``recognise``
    should accept only its own symptom: ``check_handler(spec.handler)`` must name it alone.
    """
    if spec.handler is not None and spec.preset is None:
        raise ValueError(f"{spec.name}: a class with a handler needs a preset")
    specs = [s for s in SPECS.values() if s.name != spec.name]
    at = next((i for i, s in enumerate(specs) if s.fallback), len(specs))
    if spec.name in SPECS:
        at = list(SPECS).index(spec.name)
    specs.insert(at, spec)
    _set(specs)
    return spec


def unregister(name: str) -> None:
    """Remove a class added with :func:`register`."""
    _set([s for s in SPECS.values() if s.name != name])


def _set(specs: Iterable[BugClass]) -> None:
    # in place: CLASSES, FAULTS and every module that imported them see the change
    specs = list(specs)
    SPECS.clear()
    SPECS.update((s.name, s) for s in specs)
    FAULTS.clear()
    FAULTS.update((s.name, s.handler) for s in specs if s.handler is not None)


def classify(symptom: Symptom) -> frozenset[str]:
    """The classes whose ``recognise`` accepts ``symptom`` (any of them could explain it):
    the specific ones, else the generic fallbacks, else :data:`OTHER`."""
    specs = [s for s in SPECS.values() if s.name != OTHER]
    for fallback in (False, True):
        found = frozenset(s.name for s in specs
                          if s.fallback is fallback and s.recognise(symptom))
        if found:
            return found
    return frozenset({OTHER})


T = TypeVar("T")


def cover(findings: Sequence[T], classes: Callable[[T], frozenset[str]],
          group: Callable[[T], Hashable] | None = None) -> dict[str, list[T]]:
    """The fewest classes that explain every finding (a greedy set cover), in report order.

    A class that is the only explanation of some finding is taken first; then the class
    explaining the most findings left, ties broken in report order. With ``group`` (a
    finding's family), the cover is made within each group alone, so that a class one
    family forces never takes another family's findings by count; a tie within a group
    goes to a class some group forces anyway (the suite names it in any case), then to
    the class explaining most of the suite's findings.
    """
    order = {c: i for i, c in enumerate(SPECS)}
    if group is None:
        return _cover(findings, classes, lambda c: order.get(c, len(order)))
    groups: dict[Hashable, list[T]] = {}
    for f in findings:
        groups.setdefault(group(f), []).append(f)
    anyway = {next(iter(classes(f))) for f in findings if len(classes(f)) == 1}
    suite: dict[str, int] = {}
    for f in findings:
        for c in classes(f):
            suite[c] = suite.get(c, 0) + 1

    def rank(c: str) -> tuple[bool, int, int]:
        return c not in anyway, -suite[c], order.get(c, len(order))

    chosen: dict[str, list[T]] = {}
    for mine in groups.values():
        for c, found in _cover(mine, classes, rank).items():
            chosen.setdefault(c, []).extend(found)
    keep = {id(f): n for n, f in enumerate(findings)}  # each class's findings in input order
    return {c: sorted(chosen[c], key=lambda f: keep[id(f)])
            for c in sorted(chosen, key=lambda c: order.get(c, len(order)))}


def _cover(findings: Sequence[T], classes: Callable[[T], frozenset[str]],
           rank: Callable[[str], Any]) -> dict[str, list[T]]:
    left = list(findings)
    chosen: dict[str, list[T]] = {}
    while left:
        forced = {next(iter(classes(f))) for f in left if len(classes(f)) == 1}
        if forced:
            pick = min(forced, key=rank)
        else:
            counts: dict[str, int] = {}
            for f in left:
                for c in classes(f):
                    counts[c] = counts.get(c, 0) + 1
            pick = min(counts, key=lambda c: (-counts[c], rank(c)))
        chosen[pick] = [f for f in left if pick in classes(f)]
        left = [f for f in left if pick not in classes(f)]
    return dict(sorted(chosen.items(), key=lambda kv: rank(kv[0])))


def through(symptom: Symptom) -> frozenset[tuple[str, str]]:
    """``(cls, other)`` for each class whose mistake ``symptom`` shows through ``other``'s
    (the specs' ``through``)."""
    return frozenset((s.name, other) for s in SPECS.values()
                     for other, recognise in s.through.items() if recognise(symptom))


def refuted(symptom: Symptom) -> frozenset[str]:
    """The classes ``symptom`` shows the client does not have (the specs' ``refuted``)."""
    return frozenset(s.name for s in SPECS.values()
                     if s.refuted is not None and s.refuted(symptom))


def weakly(symptom: Symptom) -> frozenset[str]:
    """The classes whose mistake ``symptom`` may be, on weak evidence (the specs' ``weak``)."""
    return frozenset(s.name for s in SPECS.values()
                     if s.weak is not None and s.weak(symptom))


def summary(name: str) -> str:
    """A class's one-line summary ("" for a name the kit does not know)."""
    spec = SPECS.get(name)
    return spec.summary if spec is not None else ""
