"""What a folder of captures is: the bundled generated fixtures, or recordings brought in.

A notebook opens its data with :func:`describe`, so what it says about where the turns came
from is computed from the folder it was given, and stays true when ``STREAMCALLS_DATA``
points at real recordings. :func:`unread` lists what the loader passed over or could not
read, with the reason, so nothing in the folder drops out of a notebook unannounced.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from . import provenance, timing
from .display import SafeHTML, prose, table
from .generate import TimingModel, calibration
from .sources import CAPTURE_SUFFIXES

BUNDLED = Path(__file__).resolve().parent.parent / "data"
"""The repository's ``data/`` (absent from an installed wheel)."""
_NOTES = (timing.SUFFIX, provenance.SUFFIX, ".md", "INDEX.tsv")
_IMPORTABLE = (".jsonl", ".json", ".yaml", ".yml", ".har")
UNREAD_COLUMNS = ("what", "files", "example", "reason")


def _files(folder: Path) -> list[Path]:
    out = []
    for root, _, names in os.walk(folder):
        out.extend(Path(root) / n for n in names)
    return sorted(out)


def _captures(folder: Path) -> list[Path]:
    return [p for p in _files(folder) if p.suffix in CAPTURE_SUFFIXES]


def file_of(folder: str | os.PathLike[str], turn: str) -> Path | None:
    """The capture file a ``load(folder)`` turn came from (None when there is none)."""
    root = Path(folder)
    base = root if root.is_file() else root / turn
    if root.is_file():
        return root
    found = [base.with_name(base.name + s) for s in CAPTURE_SUFFIXES]
    return next((p for p in found if p.is_file()), None)


def generated(source: str | os.PathLike[str]) -> bool:
    """True when every capture in ``source`` (a folder or one file) is byte for byte one of
    the bundled fixtures."""
    root = Path(source)
    if not BUNDLED.is_dir():
        return False
    if root.is_file():
        body = root.read_bytes()
        return any(twin.read_bytes() == body for twin in BUNDLED.rglob(root.name))
    found = _captures(root) if root.is_dir() else []
    if not found:
        return False
    for path in found:
        twin = BUNDLED / path.relative_to(root)
        if not twin.is_file() or twin.read_bytes() != path.read_bytes():
            return False
    return True


def _calibration_line() -> str:
    formats = calibration()["formats"]
    counts = ", ".join(f"{n} {name}" for name, n in
                       ((name, f["captures"]) for name, f in formats.items()))
    return (f"Where each fragment boundary falls is drawn from fragment-size histograms "
            f"measured by `scripts/calibrate.py` on real recordings published in public "
            f"repositories ({counts} captures; `docs/calibration.md`).")


def describe(folder: str | os.PathLike[str]) -> str:
    """A paragraph saying what the turns in ``folder`` (or one capture file) are and what
    is assumed."""
    root = Path(folder)
    found = _captures(root) if root.is_dir() else [root]
    timed = sum(timing.sidecar(p).is_file() for p in found)
    if generated(root):
        m = TimingModel()
        what = (f"`{root}` is one of the bundled fixtures: its turn is generated"
                if root.is_file() else
                f"`{root}` holds the bundled fixtures: all {len(found)} turns are generated")
        return (
            f"{what}, not recorded (`scripts/make_data.py`, one fixed seed per turn). "
            f"{_calibration_line()} The argument values and prose are written for the kit. "
            f"Timing is an assumption, not a measurement (no public capture records when "
            f"chunks arrived): a modelled {m.ttft:g} s before the first token, then "
            f"{m.tokens_per_second:g} tokens/s with lognormal jitter (sigma {m.jitter:g}). "
            f"Any time shown is that model's.")
    meta = sum(provenance.sidecar(p).is_file() for p in found)
    clock = (f"None has a `{timing.SUFFIX}` sidecar, so no time can be shown." if not timed else
             f"{timed} of {len(found)} have a `{timing.SUFFIX}` sidecar: `record` writes one "
             f"from measured reads, `make data` from a model, so check which before reading "
             f"its times as measured.")
    what = (f"`{root}` is not one of the bundled fixtures: a capture" if root.is_file() else
            f"`{root}` is not the bundled fixtures: {len(found)} captures")
    return (
        f"{what} the kit did not generate, so what it holds is what its source says "
        f"({meta} of {len(found)} carry a `{provenance.SUFFIX}` provenance note). {clock}")


def _reason(suffix: str) -> str:
    reads = " and ".join(CAPTURE_SUFFIXES)
    if suffix == ".json":
        return (f"load() reads only {reads} files in a folder; a streamed JSON array (Gemini "
                "without ?alt=sse) loads when named (load('dir/*.json')), and `python -m "
                "streamcalls_lab import` converts a VCR cassette saved as JSON into .sse")
    if suffix in _IMPORTABLE:
        return (f"load() reads only {reads} files; `python -m streamcalls_lab import` "
                "converts HAR exports, VCR cassettes and JSONL chunk logs into .sse")
    return f"load() reads only {reads} files"


def unread(folder: str | os.PathLike[str], deltas: pd.DataFrame | None = None) -> pd.DataFrame:
    """What in ``folder`` the notebooks cannot show, one row per kind, with the reason.

    Files the loader does not read, by suffix (notes and sidecars aside), and, given the
    ``load(folder, strict=False)`` table, each turn that came out as error rows only (a
    format the kit cannot read yet, or bytes that are no stream) or in part (good rows,
    then a problem), with its first problem.
    """
    root = Path(folder)
    rows: list[dict[str, object]] = []
    if root.is_dir():
        skipped: dict[str, list[Path]] = {}
        for path in _files(root):
            if path.suffix in CAPTURE_SUFFIXES or path.name.endswith(_NOTES):
                continue
            skipped.setdefault(path.suffix or "(no suffix)", []).append(path)
        for suffix, paths in sorted(skipped.items(), key=lambda kv: -len(kv[1])):
            rows.append({"what": f"{suffix} files", "files": len(paths),
                         "example": str(paths[0].relative_to(root)), "reason": _reason(suffix)})
    if deltas is not None and len(deltas):
        errors = deltas[deltas["kind"] == "error"].drop_duplicates("turn")
        good = set(deltas.loc[deltas["kind"] != "error", "turn"])
        for turn, problem in zip(errors["turn"], errors["problem"], strict=True):
            what = "capture read in part" if turn in good else "unreadable capture"
            rows.append({"what": what, "files": 1, "example": str(turn), "reason": str(problem)})
    return pd.DataFrame(rows, columns=list(UNREAD_COLUMNS)).astype(
        {"what": "str", "files": "int64", "example": "str", "reason": "str"})


def report(folder: str | os.PathLike[str], deltas: pd.DataFrame | None = None) -> SafeHTML:
    """Where a notebook opens its data: :func:`describe`, then :func:`unread` as a table."""
    skipped = unread(folder, deltas)
    rest = (table(skipped, caption="what the notebooks cannot show from this folder",
                  max_rows=20).html if len(skipped)
            else "<p>Every file here was read.</p>")
    return SafeHTML(f'<p class="scl-origin scl-prose">{prose(describe(folder))}</p>{rest}')


def data_folder(default: str | os.PathLike[str] = "../data",
                variable: str = "STREAMCALLS_DATA", *, optional: bool = False) -> Path:
    """The folder a notebook reads: the environment ``variable`` when it names one, else
    ``default`` (a notebook's ``../data``). Set but empty (``STREAMCALLS_DATA=``) or blank is
    unset, as a shell user means it; a value naming nothing is a ``FileNotFoundError`` that
    says which variable to fix, not an error deep inside the first load, unless the folder
    is ``optional`` (the real captures, read only when they are there)."""
    value = os.environ.get(variable, "").strip()
    if not value:
        return Path(default)
    path = Path(value).expanduser()
    if not path.exists() and not optional:
        raise FileNotFoundError(f"{variable}={value!r} names no file or folder: point it at a "
                                f"folder of captures, or unset it for the bundled data")
    return path


def sample(source: str | os.PathLike[str], n: int | None, *, seed: int = 0,
           max_bytes: int | None = None) -> pd.DataFrame:
    """At most ``n`` captures of ``source`` spread across what served them: one row per pick,
    ``turn``, ``path``, ``provider`` (the wire format read) and ``host``.

    The captures are grouped by (provider, host) (host from ``producers.served_by``: the
    capture's provenance, its stream or the folder's ``INDEX.tsv``), each group shuffled with
    ``seed``, and picks taken a round at a time, one from every group that has one left, so
    every format and host appears before any appears twice. ``n`` of ``None``, or at least the
    folder's size, picks every capture. A sample (not a full pick) leaves out captures over
    ``max_bytes``: the few very large ones cost as much to replay as hundreds of others.
    ``attrs``: ``captures`` (how many the source held), ``too_large`` (left out for size) and
    ``strata`` (how many (provider, host) pairs the source has).
    """
    import random

    picks = _strata(Path(source))
    total, too_large = len(picks), 0
    strata = len({(r["provider"], r["host"]) for r in picks})
    if n is not None and n < total:
        rng = random.Random(seed)
        if max_bytes is not None:
            small = [r for r in picks if os.path.getsize(r["path"]) <= max_bytes]
            too_large, picks = len(picks) - len(small), small
        groups: dict[tuple[str, str], list[dict[str, str]]] = {}
        for row in picks:
            groups.setdefault((row["provider"], row["host"]), []).append(row)
        for rows in groups.values():
            rng.shuffle(rows)
        chosen: list[dict[str, str]] = []
        while len(chosen) < min(n, len(picks)):
            for key in sorted(groups):
                if groups[key] and len(chosen) < min(n, len(picks)):
                    chosen.append(groups[key].pop(0))
        picks = sorted(chosen, key=lambda r: r["turn"])
    out = pd.DataFrame(picks, columns=["turn", "path", "provider", "host"]).astype("str")
    out.attrs.update(captures=total, too_large=too_large, strata=strata)
    return out


def _strata(root: Path) -> list[dict[str, str]]:
    from .loader import load  # corpus is imported by what these import
    from .producers import served_by
    from .sources import resolve

    if not resolve(root):
        return []
    events = load(root, strict=False)
    provider = (events.groupby("turn", sort=False)["provider"].first().astype(str).to_dict()
                if len(events) else {})
    hosts = served_by(root)
    rows = []
    for turn, host in zip(hosts["turn"], hosts["host"], strict=True):
        path = file_of(root, turn)
        if path is None:
            continue
        rows.append({"turn": str(turn), "path": str(path),
                     "provider": provider.get(turn, "unknown"),
                     "host": "?" if pd.isna(host) else str(host)})
    return rows
