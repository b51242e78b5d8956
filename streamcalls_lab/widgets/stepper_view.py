"""Step through an accumulator: buttons, a slider and a play clock over a pure Stepper.

:func:`render` draws one step of a :class:`~streamcalls_lab.Stepper` as escaped HTML: the
raw frame, the event, every buffer as its handler keys it, the message surface, what is handed on,
and how each fault variant has fared so far. :class:`StepperView` only moves the index.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import ipywidgets as w
import pandas as pd
import traitlets

from ..accumulate import CallKey, present
from ..display import SafeHTML, escape, visible
from ..sources import Source
from ..stepper import CORRECT, Clock, Step, Stepper, clock, history, ms_of, play_range, step_of
from . import render as r

TICK_MS = 50
FRAME_CHARS = 1500
SPEEDS = (("½× recorded", 0.5), ("recorded pace", 1.0), ("2×", 2.0), ("5×", 5.0),
          ("20×", 20.0))


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
    return f'<pre class="scl-code scl-frame">{escape(text[:FRAME_CHARS])}{more}</pre>'


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


def _variants(stepper: Stepper, i: int) -> str:
    rows = []
    for row in history(stepper, i).itertuples(index=False):
        if pd.isna(row.first_step):
            now, first = '<span class="scl-ok">✓ same as correct</span>', ""
        else:
            now = (f'<span class="scl-bad">✗ {escape(row.now)}</span>' if row.now
                   else '<span class="scl-note">agrees again now</span>')
            first = f"step {int(row.first_step)}: {escape(row.first_reason)}"
        rows.append(r.row([f"<b>{escape(row.variant)}</b>", now, first], "scl-variant"))
    return ("<h4>Fault variants so far</h4>"
            + r.table(["variant", "now", "first went wrong at"], rows, "scl-variants"))


def render(stepper: Stepper, i: int, handler: str = CORRECT,
           times: Clock | None = None) -> SafeHTML:
    """Step ``i`` of ``stepper`` as escaped HTML, buffers of ``handler`` (a variant name)."""
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
    body = (head + "<h4>Raw frame</h4>" + _frame(step) + "<h4>Event</h4>" + _event(step)
            + _state(stepper, step, handler) + _variants(stepper, i))
    return SafeHTML(r.view(body, "scl-stepper"))


class StepperView(r.View):
    """Next, back, a slider and play-at-recorded-pace over one turn of ``source``.

    ``source`` is anything :class:`~streamcalls_lab.Stepper` takes (a capture path, by
    default the first turn in it) or a ready ``Stepper``; the rest goes to the Stepper.
    """

    def __init__(self, source: Source | Stepper, *, turn: str | None = None,
                 read_size: int | None = None,
                 faults: Mapping[str, type] | None = None) -> None:
        self.stepper = source if isinstance(source, Stepper) else Stepper(
            source, turn=turn, read_size=read_size, faults=faults)
        self.clock = clock(self.stepper, None if isinstance(source, Stepper) else source)
        last = max(len(self.stepper) - 1, 0)
        self.back = w.Button(description="◀ back", tooltip="one event back")
        self.next = w.Button(description="next ▶", tooltip="one event on")
        self.slider = w.IntSlider(0, min=0, max=last, description="step",
                                  layout=w.Layout(width="60%"))
        step, end = play_range(self.clock, 1.0, TICK_MS)
        self.play = w.Play(0, min=0, max=end, step=step, interval=TICK_MS, description="play")
        self.speed = w.Dropdown(options=SPEEDS, value=1.0, layout=w.Layout(width="11em"))
        self.handler = w.Dropdown(options=[CORRECT, *self.stepper.faults],
                                  description="buffers of", layout=w.Layout(width="18em"))
        self.output = w.HTML()
        self.back.add_class("scl-back")
        self.next.add_class("scl-next")
        self.slider.add_class("scl-step-slider")
        self.output.add_class("scl-stepper-output")
        self.back.on_click(lambda _: self.go(self.slider.value - 1))
        self.next.on_click(lambda _: self.go(self.slider.value + 1))
        self.slider.observe(lambda _: self.show(), "value")
        # the link guards against its own echo: a moved slider sets the clock, not back
        traitlets.link((self.play, "value"), (self.slider, "value"),
                       transform=(lambda ms: step_of(self.clock, ms),
                                  lambda i: ms_of(self.clock, i)))
        self.speed.observe(self._speed_changed, "value")
        self.handler.observe(lambda _: self.show(), "value")
        self.widget = w.VBox([
            w.HBox([self.back, self.next, self.slider]),
            w.HBox([self.play, self.speed, self.handler]),
            self.output,
        ])
        self.widget.add_class("scl-stepper-view")
        self.show()

    @property
    def index(self) -> int:
        return int(self.slider.value)

    def go(self, i: int) -> None:
        """Move to step ``i`` (clamped to the turn)."""
        self.slider.value = min(max(i, 0), self.slider.max)

    def show(self) -> None:
        """Draw the current step (and keep the model's index in step with the slider)."""
        if len(self.stepper):
            self.stepper.go(self.index)
        self.output.value = self.static().html

    def static(self) -> SafeHTML:
        """The current step as escaped HTML, for where no kernel runs."""
        return render(self.stepper, self.index, self.handler.value, self.clock)

    def _speed_changed(self, change: dict[str, Any]) -> None:
        self.play.step, self.play.max = play_range(self.clock, change["new"], TICK_MS)
