"""Breaking a stream: controls over a :class:`~streamcalls_lab.breaker.Setup`, results as HTML.

:func:`render` turns a :class:`~streamcalls_lab.breaker.Result` into escaped HTML (the
static form, and what the live view shows); :class:`BreakerView` only maps widget values
to a ``Setup`` and ``render``'s output to an ``HTML`` widget.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import ipywidgets as w

from .. import breaker
from ..breaker import Bubble, CallDiff, Outcome, Result, Setup
from ..check import TURN_FORMATS, producer_families
from ..course.chapter import in_order, server_side
from ..display import SafeHTML, escape
from ..faults import FAULTS
from . import render as r

OWN = "your own"
NO_BOUNDARY = -1
# The server quirks a turn can be written with: those a correct client survives, in the
# order the first format that carries each lists them.
SERVER_QUIRKS = tuple(dict.fromkeys(q for fmt in TURN_FORMATS for q in producer_families(fmt)))

PLACES = (("sent before this one", "before"), ("interleaved with it", "interleave"),
          ("another choice's (n = 2)", "two_choices"))
"""Where the earlier call goes: before the call, its fragments alternating with the call's
(Chat, Responses), or as the first of two choices (Chat)."""
MAX_EVERY = 40
MAX_READ = 64

CONTROLS = ("preset", "provider", "args", "split", "boundary", "every", "read_size", "cut_off",
            "earlier", "place", "before", "after", "quirks")
"""Every control the view has, by attribute name, in the order a panel shows them."""
ALWAYS = ("provider", "args", "split", "boundary")
"""What every section's panel holds: the format, the text and where it is cut."""
# The controls a Setup field needs once a setup sets it away from a plain turn's value.
_FIELD_CONTROLS = {"every": ("every",), "read_size": ("read_size",), "cut_off": ("cut_off",),
                   "earlier": ("earlier", "place"), "interleave": ("place",),
                   "two_choices": ("place",), "before": ("before",), "after": ("after",),
                   "quirks": ("quirks",)}


def needed(setup: Setup | str, also: Sequence[str] = ()) -> tuple[str, ...]:
    """The controls a setup's idea needs (a preset name or a setup): :data:`ALWAYS`, each
    setting the setup changes from a plain turn of the same text, and ``also``."""
    setup = breaker.PRESETS[setup] if isinstance(setup, str) else setup
    unknown = set(also) - set(CONTROLS)
    if unknown:
        raise ValueError(f"no such control: {', '.join(sorted(unknown))} (the controls: "
                         f"{', '.join(CONTROLS)})")
    plain = Setup(args=setup.args)
    used = {*ALWAYS, *also}
    for name, controls in _FIELD_CONTROLS.items():
        if getattr(setup, name) != getattr(plain, name):
            used.update(controls)
    return tuple(c for c in CONTROLS if c in used)


def _label(diff: CallDiff) -> str:
    tool = f" · {escape(diff.tool)}" if diff.tool is not None else ""
    return f'<span class="scl-note">block {escape(diff.block)}{tool}</span> '


_MISSING = {
    "sent": '<span class="scl-note">held back: its stop never came</span>',
    "got": '<span class="scl-bad">not handed on</span>',
}
"""What a side shows for a call it does not have."""


def _sides(out: Outcome) -> tuple[str, str]:
    """The correct side (what this handler lost, marked) and this handler's side."""
    sent: list[str] = []
    got: list[str] = []
    sent_blocks = {d.block for d in out.diffs if d.sent is not None}
    for diff in out.diffs:
        label = _label(diff)
        for side, value, shown in (("sent", diff.sent, sent), ("got", diff.got, got)):
            if value is not None:
                shown.append(label + r.marked(diff.spans, side))
            elif side == "sent" and diff.block in sent_blocks:  # a second call for one block
                shown.append(label + '<span class="scl-note">no second call: one was sent</span>')
            else:
                shown.append(label + _MISSING[side])
    if any(s.op != "equal" for s in out.message_diff):
        for side, shown in (("sent", sent), ("got", got)):
            shown.append('<span class="scl-note">message</span> '
                         + r.marked(out.message_diff, side))
    if out.bubble is not None:
        got.append(_bubble(out.bubble))
    return "<br>".join(sent), "<br>".join(got)


def _bubble(b: Bubble) -> str:
    """The rendered bubble, inert: its HTML as text, and its text with what it ate marked."""
    return ('<div class="scl-bubble"><span class="scl-note">the bubble renders it as '
            f"(HTML shown as text)</span> {r.code(b.html)}<br>"
            '<span class="scl-note">and shows (what the renderer ate is marked)</span> '
            f"{r.marked(b.lost, 'sent')}</div>")


def _verdict(out: Outcome) -> str:
    if out.reason is None:
        return '<span class="scl-ok">✓ same as correct</span>'
    return f'<span class="scl-bad">✗ {escape(out.reason)}</span>'


def _sent(result: Result) -> str:
    s = result.setup
    n = len(result.fragments)
    end = ("the stream stops here: no stop event, no end of turn" if s.cut_off
           else "then the stop event")
    parts = [f"{escape(s.provider)}", f"{escape(s.tool)}", f"{len(s.args)} characters",
             f"{n} fragment{'s' * (n != 1)}",
             f"{len(result.reads)} socket read{'s' * (len(result.reads) != 1)}"
             + (f" of {s.read_size} bytes" if s.read_size else "")]
    extra = []
    if s.earlier is not None:
        how = (" (its fragments alternating with this call's)" if s.interleave
               else " (choice 0's; this call is choice 1's)" if s.two_choices else "")
        extra.append(f"an earlier {escape(s.earlier_tool or s.tool)} call{how}: "
                     f"{r.code(s.earlier)}")
    if s.before:
        extra.append(f"prose before: {r.code(s.before)}")
    if s.after and not s.cut_off:
        extra.append(f"prose after: {r.code(s.after)}")
    more = "".join(f"<div class=\"scl-note\">{e}</div>" for e in extra)
    return (f'<h4>Sent</h4><div class="scl-note">{" · ".join(parts)}</div>{more}'
            f'<div class="scl-pieces">{r.pieces(result.fragments)}</div>'
            f'<div class="scl-note">{end}</div>')


def render(result: Result, show: Sequence[str] | None = None,
           focus: str | None = None) -> SafeHTML:
    """The turn as sent, then each handler's result beside the correct one's, differences
    in ``<mark>``; ``show`` picks the faults (all by default), ``focus`` shades one row."""
    names = list(result.faults) if show is None else [n for n in show if n in result.faults]
    correct = result.correct
    handed = "<br>".join(
        f'<span class="scl-note">block {escape(c["block"])} · {escape(c["tool"])}</span> '
        + r.code(c["args"]) for c in correct.calls
    ) or '<span class="scl-note">nothing: no call got its stop event</span>'
    if correct.message:
        handed += '<br><span class="scl-note">message</span> ' + r.code(correct.message)
    rows = [r.row(["<b>correct</b>", '<span class="scl-note">the reference</span>', handed,
                   '<span class="scl-note">—</span>'], "scl-correct")]
    for name in names:
        out = result.faults[name]
        sent, got = _sides(out) if out.broken else (
            '<span class="scl-note">same</span>', '<span class="scl-note">same</span>')
        cls = " ".join(c for c in ("scl-fault", "scl-focus" if name == focus else "") if c)
        rows.append(r.row([f"<b>{escape(name)}</b>", _verdict(out), sent, got], cls))
    head = ["handler", "verdict", "correct (what this one lost or changed)", "this handler"]
    results = r.table(head, rows, "scl-results")
    return SafeHTML(r.view(_sent(result) + "<h4>Handed on</h4>" + results, "scl-breaker"))


def _error(message: str) -> SafeHTML:
    return SafeHTML(r.view(f'<span class="scl-bad">{escape(message)}</span>', "scl-breaker"))


def _computing(note: str = "computing…") -> SafeHTML:
    return SafeHTML(r.view(f'<span class="scl-note scl-computing">{escape(note)}</span>',
                           "scl-breaker"))


DELAY = 0.25
"""Seconds the controls must be still before the view runs the model again (typing)."""


class BreakerView(r.View):
    """Move a split through a document, edit it, pick the format; see every handler's result.

    ``preset`` is a ``FAULTS`` name (its :data:`~streamcalls_lab.breaker.PRESETS` setup,
    and its row shaded) or a :class:`Setup`; ``show`` limits the faults shown. ``controls``
    names the controls shown (:data:`CONTROLS`): by default all of them, stacked above the
    result, when ``show`` is None, else only those the preset needs (:func:`needed`, plus
    ``also`` and the preset picker when several faults are shown) in a panel beside the
    result, so both fit one screen. With ``show`` None the rows are the chapter's faults
    first, the server-side ones only once the **servers** toggle is on (a server-side
    preset turns it on). Hidden controls keep the preset's values. The controls
    hold one movable split plus an even spacing, so a setup's extra ``cuts`` are not kept,
    and a split at 0 means no split.

    An edit runs the model once the controls have been still for ``delay`` seconds (on the
    kernel's event loop; at once where none runs, or with ``delay`` 0); until then the
    output says it is computing and shows no verdict. A result is shown only while it is
    the current controls' (:meth:`current`). A text shorter than the split moves the split
    to its end and says so; the split goes back where it was once the text is long enough.
    """

    def __init__(self, preset: str | Setup = "trim",
                 show: Sequence[str] | None = None, delay: float = DELAY, *,
                 controls: Sequence[str] | None = None, also: Sequence[str] = ()) -> None:
        self.show = None if show is None else list(show)
        if controls is None and show is not None:
            controls = needed(preset, also)
            if len(self.show or ()) > 1:
                controls = ("preset", *controls)
        self.control_names = CONTROLS if controls is None else tuple(
            c for c in CONTROLS if c in {*controls, *also})
        self.focus: str | None = None
        self.result: Result | None = None
        self.delay = delay
        self._pending: asyncio.TimerHandle | None = None
        self._origin: str | Setup = preset
        self._wanted = 0  # the split as last set (by a preset or the slider), before clamping
        self._holding = False
        self._tool = "create_ticket"
        self._earlier_tool: str | None = None
        self._only: tuple[str, ...] = ()
        style = {"description_width": "9em"}
        wide = w.Layout(width="98%")
        self.preset = w.Dropdown(options=[*breaker.PRESETS, OWN], value=OWN,
                                 description="start from", style=style)
        self.reset_button = w.Button(description="reset", icon="undo",
                                     tooltip="back to the setup this started from")
        self.provider = w.ToggleButtons(options=list(TURN_FORMATS), description="wire format",
                                        style=style)
        self.args = w.Textarea(description="arguments", rows=3, layout=wide, style=style)
        self.split = w.IntSlider(0, min=0, max=1, description="split at", style=style,
                                 layout=wide)
        self.boundary = w.Dropdown(description="jump to", style=style, layout=wide,
                                   options=[("a place where a split bites…", NO_BOUNDARY)])
        self.every = w.IntSlider(0, min=0, max=MAX_EVERY, description="also cut every",
                                 style=style)
        self.read_size = w.IntSlider(0, min=0, max=MAX_READ, description="read size (bytes)",
                                     style=style)
        self.cut_off = w.Checkbox(False, description="the stream stops at the split",
                                  indent=False, layout=w.Layout(width="auto",
                                                                margin="0 0 0 9.5em"))
        self.earlier = w.Text(description="earlier call", placeholder="(none)", style=style,
                              layout=wide)
        self.place = w.Dropdown(options=PLACES, value="before", description="earlier call is",
                                style=style)
        self.before = w.Text(description="prose before", style=style, layout=wide)
        self.after = w.Text(description="prose after", style=style, layout=wide)
        self.quirks = w.SelectMultiple(options=SERVER_QUIRKS, value=(), rows=4,
                                       description="server quirks", style=style)
        self.servers = w.ToggleButton(False, description="servers",
                                      tooltip="also show the faults only a server's quirk "
                                              "exposes (notebook 8)")
        self.servers.observe(lambda _: self._reshow(), "value")
        self.status = w.HTML()
        self.output = w.HTML()
        for control in (self.every, self.read_size, self.cut_off, self.earlier, self.place,
                        self.before, self.after, self.provider, self.quirks):
            control.observe(self._changed, "value")
        self.split.observe(self._split_changed, "value")
        self.preset.observe(self._preset_changed, "value")
        self.boundary.observe(self._boundary_changed, "value")
        self.args.observe(self._args_changed, "value")
        self.reset_button.on_click(lambda _: self.reset())
        self.status.add_class("scl-breaker-status")
        self.output.add_class("scl-breaker-output")
        self.widget = self._layout()
        self.widget.add_class("scl-breaker-view")
        self.load(preset)

    def _layout(self) -> w.Box:
        hint = w.HTML('<span style="color:#555">0 means: no such cut, or one read for the '
                      "whole body</span>")
        if self.control_names != CONTROLS:
            return self._panel(hint)
        return w.VBox([
            w.HBox([self.preset, self.reset_button, self.provider, self.servers]), self.args,
            self.split,
            self.boundary, w.HBox([self.every, self.read_size, hint]), self.cut_off,
            self.earlier, self.place, self.before, self.after, self.quirks, self.status,
            self.output,
        ])

    def _panel(self, hint: w.HTML) -> w.Box:
        """The section's controls in a column beside the result (1280 px: both in view)."""
        shown = [getattr(self, c) for c in self.control_names]
        if {"every", "read_size"} & set(self.control_names):
            shown.append(hint)
        for control in shown:
            control.layout.width = "98%"
            control.layout.min_width = "0"
        self.provider.style = {"description_width": "9em", "button_width": "7em"}
        panel = w.VBox([*shown, self.reset_button],
                       layout=w.Layout(width="38%", min_width="20em", flex="0 0 auto"))
        panel.add_class("scl-breaker-controls")
        # a tall result (the Markdown bubble's) scrolls inside its box, beside the controls
        self.output.layout = w.Layout(max_height="70vh", overflow="auto")
        result = w.VBox([self.status, self.output], layout=w.Layout(flex="1 1 0",
                                                                    min_width="0"))
        return w.HBox([panel, result], layout=w.Layout(align_items="flex-start", width="100%"))

    # -- from widgets to the model and back ---------------------------------------------
    def setup(self) -> Setup:
        """The setup the controls describe now."""
        return Setup(
            args=self.args.value, split=self.split.value or None, every=self.every.value,
            provider=self.provider.value, tool=self._tool,
            earlier=self.earlier.value or None, earlier_tool=self._earlier_tool,
            interleave=self.place.value == "interleave",
            two_choices=self.place.value == "two_choices", before=self.before.value,
            after=self.after.value, cut_off=self.cut_off.value,
            read_size=self.read_size.value or None, quirks=tuple(self.quirks.value),
            only=self._only,
        )

    def load(self, preset: str | Setup) -> None:
        """Set every control from a preset name or a setup, then show its result."""
        setup = breaker.PRESETS[preset] if isinstance(preset, str) else preset
        name = preset if isinstance(preset, str) else OWN
        self._origin = preset
        self._holding = True
        try:
            self.focus = name if name in breaker.PRESETS else self.focus
            if server_side(name):
                self.servers.value = True
            self._tool = setup.tool
            self._earlier_tool = setup.earlier_tool
            self._only = setup.only
            self.quirks.value = tuple(q for q in setup.quirks if q in SERVER_QUIRKS)
            self.preset.value = name
            self.provider.value = setup.provider
            self.args.value = setup.args
            self._wanted = setup.split or 0
            self._bounds(setup.args)
            self.every.value = min(setup.every, MAX_EVERY)
            self.read_size.value = min(setup.read_size or 0, MAX_READ)
            self.cut_off.value = setup.cut_off
            self.earlier.value = setup.earlier or ""
            self.place.value = ("two_choices" if setup.two_choices
                                else "interleave" if setup.interleave else "before")
            self.before.value = setup.before
            self.after.value = setup.after
        finally:
            self._holding = False
        self.refresh()

    def reset(self) -> None:
        """Back to the preset or setup last loaded, every control as it set them."""
        self.load(self._origin)

    def schedule(self) -> None:
        """Run the model once the controls have been still for ``delay`` seconds; meanwhile
        the output shows that it is computing, and no verdict."""
        self._cancel()
        self.output.value = _computing().html
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no event loop (a script, a test): nothing to wait on
            loop = None
        if self.delay <= 0 or loop is None:
            self.refresh()
            return
        self._pending = loop.call_later(self.delay, self.refresh)

    @property
    def pending(self) -> bool:
        """An edit is waiting for the controls to be still."""
        return self._pending is not None

    def flush(self) -> None:
        """Run a pending refresh now."""
        if self.pending:
            self.refresh()

    def _cancel(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    def refresh(self) -> None:
        """Run the model on the current setup and show the result."""
        self._cancel()
        setup = self.setup()
        self.status.value = self._notes(setup)
        try:
            self.result = breaker.run(setup)
        except ValueError as e:
            self.result = None
            self.output.value = _error(str(e)).html
            return
        self.output.value = self.html(self.result).html

    def current(self) -> Result | None:
        """The result shown, when it was computed from the controls as they are now."""
        result = self.result
        return result if result is not None and result.setup == self.setup() else None

    def shown(self) -> list[str]:
        """The fault rows shown: ``show``, or the chapter's first and the server-side ones
        while the servers toggle is on."""
        return list(self.show) if self.show is not None else in_order(
            servers=self.servers.value)

    def html(self, result: Result) -> SafeHTML:
        """What the output shows of a result."""
        return render(result, self.shown(), self.focus)

    def _reshow(self) -> None:
        if self.result is not None and not self._holding:
            self.output.value = self.html(self.result).html

    def static(self) -> SafeHTML:
        """The current result as escaped HTML, for where no kernel runs."""
        result = self.current()
        if result is None:
            return _error("no result: the setup above is not valid")
        return self.html(result)

    def _notes(self, setup: Setup) -> str:
        """What the controls did that the reader did not ask for (a split clamped)."""
        if self._wanted > len(setup.args):
            return r.view(r.note(
                f"split at {len(setup.args)}, the end of the text: it was at {self._wanted}, "
                "and goes back there once the text is that long"), "scl-status")
        return ""

    # -- reacting -----------------------------------------------------------------------
    def _bounds(self, args: str) -> None:
        self.split.max = max(len(args), 1)
        self.split.value = min(self._wanted, len(args))
        marks = breaker.landmarks(args)
        self.boundary.options = [("a place where a split bites…", NO_BOUNDARY),
                                 *((label, at) for label, at in marks)]
        self.boundary.value = NO_BOUNDARY

    def _edited(self) -> None:
        """The controls no longer hold the preset: choosing it again reloads it."""
        if self.preset.value != OWN:
            self._holding = True
            try:
                self.preset.value = OWN
            finally:
                self._holding = False

    def _changed(self, change: dict[str, Any]) -> None:
        if self._holding:
            return
        self._edited()
        self.schedule()

    def _split_changed(self, change: dict[str, Any]) -> None:
        if self._holding:
            return
        self._wanted = change["new"]
        if self.boundary.value not in (NO_BOUNDARY, change["new"]):
            self._holding = True
            self.boundary.value = NO_BOUNDARY
            self._holding = False
        self._edited()
        self.schedule()

    def _args_changed(self, change: dict[str, Any]) -> None:
        if self._holding:
            return
        self._holding = True
        try:
            self._bounds(change["new"])
        finally:
            self._holding = False
        self._edited()
        self.schedule()

    def _preset_changed(self, change: dict[str, Any]) -> None:
        if not self._holding and change["new"] in breaker.PRESETS:
            self.load(change["new"])

    def _boundary_changed(self, change: dict[str, Any]) -> None:
        if not self._holding and change["new"] != NO_BOUNDARY:
            self.split.value = change["new"]


def overview(presets: Mapping[str, Setup] | None = None,
             provider: str | None = None, servers: bool = False) -> SafeHTML:
    """A static table: for each preset, which faults give a wrong result and why (in
    ``provider`` where the preset's turn can be written in it). Rows and columns put the
    chapter's faults first; the server-side ones are left out unless ``servers``."""
    presets = breaker.PRESETS if presets is None else presets
    names = in_order(FAULTS, servers)
    rows = []
    for name in in_order(presets, servers):
        setup = presets[name]
        if provider in setup.formats():
            setup = replace(setup, provider=provider)
        result = breaker.run(setup)
        cells = [f"<b>{escape(name)}</b>", r.code(setup.args)]
        outcomes = [result.faults[n] for n in names]
        cells += [f'<span class="scl-bad" title="{escape(o.reason)}">✗</span>'
                  if o.broken else '<span class="scl-ok">✓</span>'
                  for o in outcomes]
        rows.append(r.row(cells, "scl-overview"))
    return SafeHTML(r.view(r.table(["preset", "arguments", *names], rows, "scl-overview"),
                           "scl-breaker-overview"))


class Overview(r.View):
    """:func:`overview` with a **servers** toggle that adds the server-side faults."""

    def __init__(self, provider: str | None = None) -> None:
        self.provider = provider
        self.servers = w.ToggleButton(False, description="servers",
                                      tooltip="also show the faults only a server's quirk "
                                              "exposes (notebook 8)")
        self.output = w.HTML()
        self.servers.observe(lambda _: self.refresh(), "value")
        self.widget = w.VBox([self.servers, self.output])
        self.refresh()

    def refresh(self) -> None:
        self.output.value = self.static().html

    def static(self) -> SafeHTML:
        return overview(provider=self.provider, servers=self.servers.value)
