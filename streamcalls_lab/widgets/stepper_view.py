"""Step through an accumulator: buttons, a slider and a play clock over a pure Stepper.

:func:`render` draws one step of a :class:`~streamcalls_lab.Stepper` as escaped HTML: the
raw frame, the event, every buffer as its handler keys it, the message surface, what is handed on,
and how each fault variant has fared so far. :class:`StepperView` only moves the index, picks
the capture and the speed; what each control means (the picker's choices, where a jump to the
first divergence lands, a speed's clock, the still a page without a kernel shows) is the
model's (:mod:`streamcalls_lab.stepper`).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from os import PathLike
from pathlib import Path
from typing import Any

import ipywidgets as w
import pandas as pd
import traitlets

from ..accumulate import CallKey, present
from ..course.stepping import chapter_first
from ..display import SafeHTML, code_point, escape, hidden, visible
from ..sources import Source
from ..stepper import (
    CORRECT,
    RECORDED,
    SPEEDS,
    TICK_MS,
    Choice,
    Clock,
    Pace,
    Relay,
    Speed,
    Step,
    Stepper,
    choices,
    clock,
    divergence_step,
    first_divergence,
    history,
    pace,
    relay,
    still_step,
)
from . import render as r

FRAME_CHARS = 1500
TOOLTIPS = {
    "back": "one event back (the step before)",
    "next": "one event on (the step after)",
    "slider": "drag to any step: step i is the state once event i has arrived",
    "jump": "go to the first step where a fault variant differs from the correct handler "
            "(the variant 'buffers of' names, else any)",
    "play": "play the turn at the chosen speed; stop rewinds to step 0",
    "speed": "how fast play moves: a fixed number of events a second (slow enough to "
             "narrate), or a multiple of the pace the turn was recorded at",
    "handler": "whose buffers, message surface and handed-on calls the panel shows",
    "capture": "which capture of the folder to step through",
    "stream": "step through the provider's stream or the browser-side stream an app sends "
              "on from it; the other follows to its matching step, shown side by side",
}
"""What each control of a :class:`StepperView` does, shown when the pointer rests on it."""


def _tools(stepper: Stepper, seq: Any) -> dict[Hashable, str]:
    """Each call's tool, from the announcements up to this event, under every key a handler
    files a call by: (choice, block), the block alone, the call's id."""
    ev = stepper.events
    starts = ev[(ev["kind"] == "call_start") & (ev["seq"] <= seq)]
    choices = starts["choice"] if "choice" in starts else [None] * len(starts)
    out: dict[Hashable, str] = {}
    for block, choice, call_id, tool in zip(starts["block"], choices, starts["call_id"],
                                            starts["tool"], strict=True):
        if present(tool) is None:
            continue
        for key in (CallKey(present(choice), present(block)), present(block), present(call_id)):
            if key is not None:
                out.setdefault(key, str(tool))
    return out


def _buffer_cell(text: str, step: Step, key: Hashable) -> str:
    """The buffer as code, the fragment this step appended (if it is at the end) marked."""
    ev = step.event
    fragment = ev.get("fragment")
    here = CallKey(ev.get("choice"), ev.get("block"))
    if ev.get("kind") == "args_delta" and key in (here, here.block) and fragment and (
            text.endswith(fragment)):
        head = text[: len(text) - len(fragment)]
        return (f'<code class="scl-frag scl-buffer">{visible(head)}'
                f'<mark class="scl-new">{visible(fragment)}</mark></code>')
    return f'<code class="scl-frag scl-buffer">{visible(text)}</code>'


def _event(step: Step) -> str:
    ev = step.event
    fields = ("kind", "event", "block", "call_id", "tool")
    cells = [escape(ev.get(f)) for f in fields]
    cells.append(r.code(ev["fragment"]) if ev.get("fragment") is not None else "")
    return r.table([*fields, "fragment"], [r.row(cells)], "scl-event")


def _frame(step: Step) -> str:
    text = step.frame or ""
    cut = len(text) > FRAME_CHARS
    more = f'\n<span class="scl-more">… {len(text) - FRAME_CHARS} more</span>' if cut else ""
    # a control or bidi character in a frame is drawn as its escape, never obeyed
    shown = "".join(c if c == "\n" or not hidden(c) else code_point(c)
                    for c in text[:FRAME_CHARS])
    return f'<pre class="scl-code scl-frame">{escape(shown)}{more}</pre>'


def _state(stepper: Stepper, step: Step, handler: str) -> str:
    state = step.correct if handler == CORRECT else step.variants[handler]
    snap = state.snapshot
    tools = _tools(stepper, step.event.get("seq"))
    rows = [r.row([f'<span class="scl-block">{escape(key)}</span>', escape(tools.get(key)),
                   _buffer_cell(text, step, key)]) for key, text in snap.buffers.items()]
    buffers = (r.table(["block", "tool", "buffer"], rows, "scl-buffers") if rows
               else '<div class="scl-note scl-buffers-empty">no argument buffer yet</div>')
    done = "<br>".join(
        f'<span class="scl-note">block {escape(c["block"])} · {escape(c["tool"])}</span> '
        + r.code(c["args"]) for c in snap.finished) or '<span class="scl-note">nothing yet</span>'
    error = (f'<div class="scl-bad">{escape(state.error)}</div>' if state.error else "")
    name = "the correct handler" if handler == CORRECT else f"the {escape(handler)} variant"
    return (f"<h4>Buffers of {name}, keyed as it keys them</h4>{error}{buffers}"
            f'<h4>Message surface</h4><div class="scl-message">{r.code(snap.message)}</div>'
            f"<h4>Handed on so far</h4><div>{done}</div>")


def _variants(stepper: Stepper, i: int, servers: bool = True) -> str:
    table = chapter_first(history(stepper, i), servers)
    rows = []
    for row in table.itertuples(index=False):
        if pd.isna(row.first_step):
            now, first = '<span class="scl-ok">✓ same as correct</span>', ""
        else:
            now = (f'<span class="scl-bad">✗ {escape(row.now)}</span>' if row.now
                   else '<span class="scl-note">agrees again now</span>')
            first = f"step {int(row.first_step)}: {escape(row.first_reason)}"
        rows.append(r.row([f"<b>{escape(row.variant)}</b>", now, first], "scl-variant"))
    hidden, wrong = table.attrs["hidden"], table.attrs["hidden_wrong"]
    more = r.view(r.note(
        f"{len(hidden)} variants only a server's quirk exposes are not listed ({len(wrong)} "
        "of them went wrong by this step): the servers toggle lists them"),
        "scl-servers-hidden") if hidden else ""
    return ("<h4>Fault variants so far</h4>"
            + r.table(["variant", "now", "first went wrong at"], rows, "scl-variants") + more)


def render(stepper: Stepper, i: int, handler: str = CORRECT,
           times: Clock | None = None, note: str = "", beside: str = "",
           servers: bool = True) -> SafeHTML:
    """Step ``i`` of ``stepper`` as escaped HTML, buffers of ``handler`` (a variant name);
    ``note`` (plain text) is said under the step's heading, ``beside`` (HTML already
    escaped: :func:`render_beside`) drawn under it. The variants come the chapter's first;
    without ``servers`` those only a server's quirk exposes are counted, not listed."""
    if not len(stepper):
        return SafeHTML(r.view('<span class="scl-note">no events in this turn</span>',
                               "scl-stepper"))
    step = stepper.state(i)
    t = times.times[i] if times is not None else step.event.get("t")
    when = "" if present(t) is None else f" · t = {t:.3f} s"
    if times is not None and not times.recorded:
        when += " (no recorded timing: evenly spaced)"
    head = (f'<div class="scl-step-head">step <b class="scl-index">{i}</b> '
            f"(event {i + 1} of {len(stepper)}) · turn {escape(stepper.turn)} · seq "
            f"{escape(step.event.get('seq'))}{when}</div>")
    if note:
        head += f'<div class="scl-note scl-still-note">{escape(note)}</div>'
    head += beside

    body = (head + "<h4>Raw frame</h4>" + _frame(step) + "<h4>Event</h4>" + _event(step)
            + _state(stepper, step, handler) + _variants(stepper, i, servers))
    return SafeHTML(r.view(body, "scl-stepper"))


def _side(stepper: Stepper, i: int, fmt: str, shown: bool) -> str:
    step = stepper.state(i)
    buffers = "<br>".join(
        f'<span class="scl-note">block {escape(key)}:</span> '
        + (r.code(b) if b else '<span class="scl-note">(empty)</span>')
        for key, b in step.buffers.items()) or (
        '<span class="scl-note">no argument buffer yet</span>')
    mark = " (stepping)" if shown else " (at its matching step)"
    return (f'<td class="scl-side"><h4>{escape(fmt)}{mark}: step {i} of {len(stepper)}</h4>'
            f"{_frame(step)}<h4>Buffers</h4>{buffers}<h4>Message surface</h4>"
            f"{r.code(step.message)}</td>")


def render_beside(pair: Relay, shown: int, i: int) -> str:
    """The provider's stream and the browser-side one side by side (escaped HTML): step
    ``i`` of the one stepped (``shown``: 0 the provider's, 1 the browser's) and the other
    at its matching step, each with its raw frame, buffers and message surface."""
    streams = (pair.provider, pair.browser)
    other = pair.browser_step(i) if shown == 0 else pair.provider_step(i)
    at = (i, other) if shown == 0 else (other, i)
    cells = "".join(_side(streams[k], at[k], pair.formats[k], k == shown) for k in (0, 1))
    return (f'<table class="scl-table scl-beside scl-relay"><tbody><tr>{cells}</tr></tbody>'
            "</table>")


def _problem(text: str) -> SafeHTML:
    return SafeHTML(r.view(f'<div class="scl-bad">{escape(text)}</div>', "scl-stepper"))


class StepperView(r.View):
    """Next, back, a slider, a jump to the first divergence and play over one turn.

    ``source`` is anything :class:`~streamcalls_lab.Stepper` takes (a capture path, by
    default the first turn in it) or a ready ``Stepper``; the rest goes to the Stepper.
    ``choices`` (a folder, a glob or a HAR file) fills a capture picker with its captures;
    a folder given as ``source`` fills it too. A :class:`~streamcalls_lab.stepper.Relay`
    (or :meth:`relayed`) steps a provider's stream and the browser-side one sent on from
    it, switchable, the other shown beside at its matching step.
    """

    @classmethod
    def relayed(cls, turn: Any, provider: str | None = None, browser: str = "ai-sdk-ui",
                *, faults: Mapping[str, type] | None = None) -> StepperView:
        """A view of ``turn`` (a turn script or a capture, as
        :func:`~streamcalls_lab.stepper.relay` takes) as the provider streams it and as
        the browser receives it."""
        return cls(relay(turn, provider, browser, faults=faults))

    def __init__(self, source: Source | Stepper | Relay, *, turn: str | None = None,
                 read_size: int | None = None,
                 faults: Mapping[str, type] | None = None,
                 choices: Source | None = None) -> None:
        self._options: dict[str, Any] = {"read_size": read_size, "faults": faults}
        self.relay = source if isinstance(source, Relay) else None
        if isinstance(source, Relay):
            source = source.provider
        self.stepper = source if isinstance(source, Stepper) else Stepper(
            source, turn=turn, read_size=read_size, faults=faults)
        self.clock = clock(self.stepper, None if isinstance(source, Stepper) else source)
        self.choices, shown = _picker_choices(source, choices)
        self._given = (self.stepper, self.clock)
        self.pace: Pace = pace(self.clock, RECORDED, TICK_MS)
        last = max(len(self.stepper) - 1, 0)
        self.back = w.Button(description="◀ back", tooltip=TOOLTIPS["back"])
        self.next = w.Button(description="next ▶", tooltip=TOOLTIPS["next"])
        self.jump = w.Button(description="⇥ first divergence", tooltip=TOOLTIPS["jump"],
                             layout=w.Layout(width="12em"))
        self.slider = w.IntSlider(0, min=0, max=last, description="step",
                                  tooltip=TOOLTIPS["slider"], layout=w.Layout(width="50%"))
        # No description on these: ipywidgets shows a tooltip only on a control without one
        # (a Play or a Dropdown puts it nowhere else), so a Label names each instead.
        self.play = w.Play(0, min=0, max=self.pace.max, step=self.pace.step,
                           interval=self.pace.interval, tooltip=TOOLTIPS["play"])
        self.speed = w.Dropdown(options=[(s.label, s) for s in SPEEDS], value=RECORDED,
                                tooltip=TOOLTIPS["speed"], layout=w.Layout(width="12em"))
        self.handler = w.Dropdown(options=[CORRECT, *self.stepper.faults],
                                  tooltip=TOOLTIPS["handler"], layout=w.Layout(width="12em"))
        labels = [(f"{self.stepper.turn} (as given)" if c is None else c.label
                   if c.problem is None else f"{c.label} (cannot be read)", n)
                  for n, c in enumerate(self.choices)]
        self.capture = w.Dropdown(options=labels, value=shown if labels else None,
                                  tooltip=TOOLTIPS["capture"], layout=w.Layout(width="32em"))
        sides = self.relay.formats if self.relay is not None else ()
        self.stream = w.ToggleButtons(
            options=[(f"{kind}: {fmt}", n) for n, (kind, fmt) in
                     enumerate(zip(("provider", "browser"), sides, strict=False))],
            tooltip=TOOLTIPS["stream"], style={"button_width": "auto"})
        # says, once the kernel has put the clock on a speed, how long play takes at it
        self.timing = w.Label(_timing(RECORDED, self.pace))
        self.servers = w.ToggleButton(False, description="servers",
                                      tooltip="also list the variants only a server's quirk "
                                              "exposes (notebook 8)")
        self.status = w.HTML()
        self.output = w.HTML()
        for widget, cls in ((self.back, "scl-back"), (self.next, "scl-next"),
                            (self.jump, "scl-jump"), (self.slider, "scl-step-slider"),
                            (self.play, "scl-play"), (self.speed, "scl-speed"),
                            (self.timing, "scl-timing"),
                            (self.handler, "scl-handler"), (self.capture, "scl-capture"),
                            (self.stream, "scl-stream"),
                            (self.status, "scl-stepper-status"),
                            (self.output, "scl-stepper-output")):
            widget.add_class(cls)
        self.back.on_click(lambda _: self.go(self.slider.value - 1))
        self.next.on_click(lambda _: self.go(self.slider.value + 1))
        self.jump.on_click(lambda _: self.jump_to_divergence())
        self.slider.observe(lambda _: self.show(), "value")
        # the link guards against its own echo: a moved slider sets the clock, not back
        traitlets.link((self.play, "value"), (self.slider, "value"),
                       transform=(lambda v: self.pace.step_of(v),
                                  lambda i: self.pace.value_of(i)))
        self.speed.observe(lambda change: self._retime(change["new"]), "value")
        self.handler.observe(lambda _: self.show(), "value")
        self.servers.observe(lambda _: self.show(), "value")
        self.capture.observe(lambda change: self.pick(change["new"]), "value")
        self.stream.observe(lambda change: self.switch(change["new"]), "value")
        picker = [w.HBox([w.Label("capture"), self.capture])] if labels else []
        if self.relay is not None:
            picker.append(w.HBox([w.Label("stream"), self.stream]))
        self.widget = w.VBox([
            *picker,
            w.HBox([self.back, self.next, self.jump, self.slider]),
            w.HBox([w.Label("play"), self.play, w.Label("speed"), self.speed, self.timing,
                    w.Label("buffers of"), self.handler, self.servers]),
            self.status,
            self.output,
        ])
        # the controls stay put and the step scrolls under them: the whole viewer fits a
        # 1280x800 screen (the step alone is taller than one)
        self.output.layout = w.Layout(max_height="62vh", overflow="auto")
        self.widget.add_class("scl-stepper-view")
        self.show()

    @property
    def index(self) -> int:
        return int(self.slider.value)

    def go(self, i: int) -> None:
        """Move to step ``i`` (clamped to the turn)."""
        self.slider.value = min(max(i, 0), self.slider.max)

    def jump_to_divergence(self) -> int | None:
        """Go to the first divergence (of the variant 'buffers of' names, else of any);
        the step, or None (and a note saying so) when there is none on this turn."""
        target = divergence_step(self.stepper, self.handler.value)
        if target is None:
            who = "any variant" if self.handler.value == CORRECT else self.handler.value
            self.status.value = (f'<span class="scl-note">{escape(who)} never differs from '
                                 "the correct handler on this turn</span>")
            return None
        names = [n for n, (at, _) in first_divergence(self.stepper).items() if at == target]
        self.status.value = (f'<span class="scl-note">step {target}: where '
                             f"{escape(', '.join(names))} first went wrong</span>")
        self.go(target)
        return target

    def pick(self, n: int) -> None:
        """Step through the ``n``-th capture of the picker (from step 0, at the same speed)."""
        choice = self.choices[n]
        if choice is None:
            self.stepper, self.clock = self._given
        else:
            try:
                stepper = choice.stepper(**self._options)
            except (ValueError, OSError) as e:  # an unreadable entry, a turn with no events
                self.status.value = ""
                self.output.value = _problem(f"cannot step through {choice.label}: {e}").html
                return
            self.stepper = stepper
            self.clock = clock(stepper, choice.source if choice.turn is None else None)
        stepper = self.stepper
        self.status.value = ""
        with self.slider.hold_trait_notifications():
            self.slider.value = 0
            self.slider.max = max(len(stepper) - 1, 0)
        self._retime(self.speed.value)
        self.show()

    def switch(self, n: int) -> None:
        """Step through the relay's provider stream (0) or its browser-side stream (1),
        from the step matching the one shown."""
        if self.relay is None:
            return
        streams = (self.relay.provider, self.relay.browser)
        if streams[n] is self.stepper:
            return
        at = (self.relay.provider_step if n == 0 else self.relay.browser_step)(self.index)
        self.stepper = streams[n]
        self.clock = clock(self.stepper)
        self.status.value = ""
        with self.slider.hold_trait_notifications():
            self.slider.max = max(len(self.stepper) - 1, 0)
            self.slider.value = at
        self._retime(self.speed.value)
        self.show()

    def show(self) -> None:
        """Draw the current step (and keep the model's index in step with the slider)."""
        if len(self.stepper):
            self.stepper.go(self.index)
        self.output.value = self.static().html

    def static(self) -> SafeHTML:
        """The current step as escaped HTML, for where no kernel runs."""
        return self._drawn(self.index)

    def _drawn(self, i: int, note: str = "") -> SafeHTML:
        beside = "" if self.relay is None or not len(self.stepper) else (
            render_beside(self.relay, int(self.stream.value or 0), i))
        return render(self.stepper, i, self.handler.value, self.clock, note, beside,
                      self.servers.value)

    def still(self) -> SafeHTML:
        """What a page with no kernel shows: the current step once the view has moved; at
        step 0, the model's still (:func:`~streamcalls_lab.stepper.still_step`), a call
        half sent, which says it is a still."""
        at = still_step(self.stepper)
        if self.index != 0 or at == 0:
            return self.static()
        note = (f"A still of step {at}, part way through a call: run the notebook in "
                "JupyterLab to step, play or jump through the turn.")
        return self._drawn(at, note)

    def _retime(self, speed: Speed) -> None:
        """Put the play clock on ``speed``, at the step shown now."""
        i = self.index
        self.pace = pace(self.clock, speed, TICK_MS)
        with self.play.hold_sync():
            # widen first: the clock's value is clamped to its max as it is set
            self.play.max = max(self.play.max, self.pace.max)
            self.play.step, self.play.interval = self.pace.step, self.pace.interval
            self.play.value = self.pace.value_of(i)
            self.play.max = self.pace.max
        self.slider.value = i  # the clock's unit changed: the step it shows does not
        self.timing.value = _timing(speed, self.pace)


def _timing(speed: Speed, at: Pace) -> str:
    return f"{speed.label}: {at.seconds:.1f} s in all"


def _picker_choices(source: Source | Stepper,
                    given: Source | None) -> tuple[list[Choice | None], int]:
    """The picker's captures (``given``'s, or a folder source's) and which is shown now;
    None stands for the turn as given when it is none of them (bytes, a ready Stepper, a
    file outside the folder)."""
    path = Path(source) if isinstance(source, (str, PathLike)) else None
    folder = given if given is not None else path if path is not None and path.is_dir() else None
    if folder is None:
        return [], 0
    found: list[Choice | None] = list(choices(folder))
    if path is not None and path.is_dir():
        return found, 0
    for n, c in enumerate(found):
        if path is not None and c is not None and c.turn is None and isinstance(
                c.source, (str, PathLike)) and Path(c.source).resolve() == path.resolve():
            return found, n
    return [None, *found], 0
