"""The breaker on a stage: one scene per fault, in a scripted order, for ``make demo``.

:class:`StageView` is a :class:`~streamcalls_lab.widgets.BreakerView` laid out for one
1280×720 screen read from the back of a room: the scene's name and what it is about on
top, the controls that matter for that fault on the left, the correct handler's result and
the fault's beside them in large type, and previous / reset / next below. The Voila
template (``share/jupyter/voila/templates/streamcalls``) binds the keys the footer names.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs

import ipywidgets as w

from .. import breaker
from ..accumulate import CallKey
from ..breaker import CallDiff, Outcome, Result, char_diff
from ..display import SafeHTML, escape
from ..faults import SPECS
from . import render as r
from .breaker import DELAY, BreakerView, _verdict

SCRIPT = (
    # a fragment's own text: the join and the escape
    "trim", "decode_each", "markdown_bubble",
    # when a call is done
    "lenient_parse", "parse_to_finish", "eof_as_stop",
    # which call a fragment belongs to
    "key_by_name", "key_by_id", "key_by_last", "one_choice",
    # the bytes under the events
    "decode_chunks", "splitlines",
    # what servers send
    "announcement_args_dropped", "blank_id_new_call", "name_concatenated", "finish_gate",
    "empty_args_dropped", "one_call_per_chunk", "delta_only", "merged_calls",
    "index_as_position",
)
"""The scenes' order: a fragment's text, completion, keys, bytes, then server quirks."""

KEYS = "keys: n / → / PgDn next · p / ← / PgUp previous · r reset"
"""What the footer says (the template binds these keys to the buttons)."""


def scenes(script: Sequence[str] = SCRIPT) -> list[str]:
    """Every fault with a preset: those ``script`` names in its order, then any other (a
    class of your own, registered)."""
    named = [n for n in script if n in breaker.PRESETS]
    return named + [n for n in breaker.PRESETS if n not in named]


def _shown_ids(out: Outcome) -> bool:
    """Whether the labels carry call ids: when an id is what differs, or a call is extra
    (which id it came under is then the story)."""
    return any(d.reidentified or d.extra for d in out.diffs)


def _label_part(want: Any, have: Any, blank: str) -> str:
    """One field of a call's label (a tool name, an id) as the fault hands it on, what
    differs from the correct one's marked: a doubled name shows where the audience looks."""
    if want == have:
        return escape(blank if have in (None, "") else have)
    if have in (None, ""):
        return f'<mark class="scl-got">{escape(blank)}</mark>'
    return r.marked(char_diff("" if want is None else str(want), str(have)), "got")


def _args(text: str | None) -> str:
    """A call's argument text as code, or a note when it is empty (a call with no
    arguments is still a call: the row must not look blank)."""
    return r.code(text) if text else r.note("(no argument text)")


def _card(label: str, body: str, cls: str = "") -> str:
    return f'<div class="scl-stage-call {cls}"><span class="scl-note">{label}</span> {body}</div>'


def _correct_card(call: Mapping[str, Any], ids: bool) -> str:
    block = CallKey(call.get("choice"), call["block"])
    label = f"block {escape(block)} · {escape(call.get('tool') or '(no name)')}"
    if ids:
        label += f" · id {escape(call.get('call_id') or '(blank)')}"
    return _card(label, _args(str(call["args"])))


def _fault_card(d: CallDiff, ids: bool) -> str:
    """One call as the fault hands it on, drawn by what went wrong with it: missing (the
    correct call struck through), extra (outlined), renamed or re-identified (the label
    marked), other text (the text marked)."""
    if d.missing:
        label = f"missing · block {escape(d.block)} · {escape(d.tool or '(no name)')}"
        return _card(label, f"<del>{_args(d.sent)}</del>", "scl-stage-missing")
    tool = _label_part(None if d.extra else d.tool, d.got_tool, "(no name)")
    label = ("extra call · " if d.extra else "") + f"block {escape(d.block)} · {tool}"
    if ids:
        label += " · id " + _label_part(None if d.extra else d.sent_id, d.got_id, "(blank)")
    if d.got == d.sent:
        body = _args(d.got)
    elif not d.got:  # every character lost: the note itself is what is wrong
        body = f'<mark class="scl-gap">{r.note("(no argument text)")}</mark>'
    else:
        body = r.marked(d.spans, "got")
    cls = "scl-stage-extra" if d.extra else "scl-stage-same" if d.same else "scl-stage-differs"
    return _card(label, body, cls)


def _got(out: Outcome) -> str:
    """What the fault hands on, every call drawn with what differs marked, then the message
    when it differs and the error when it raised."""
    ids = _shown_ids(out)
    shown = [_fault_card(d, ids) for d in out.diffs]
    if any(s.op != "equal" for s in out.message_diff):
        shown.append(_card("message", r.marked(out.message_diff, "got"), "scl-stage-differs"))
    if out.error is not None:  # the verdict above quotes the message: the type is enough
        raised = out.error.split(":", 1)[0]
        shown.append(f'<div class="scl-stage-call scl-stage-raised">'
                     f'<span class="scl-bad">{escape(raised)}</span></div>')
    return "".join(shown) or r.note("nothing")


def scene_in(query: str, order: Sequence[str]) -> int:
    """The scene an address's query string names (``scene=`` a fault's name or its 1-based
    number), as an index into ``order``; 0 when it names none of them."""
    for value in parse_qs(query).get("scene", [])[-1:]:
        if value in order:
            return order.index(value)
        if value.isascii() and value.isdigit() and 1 <= int(value) <= len(order):
            return int(value) - 1
    return 0


def stage_html(result: Result, name: str) -> SafeHTML:
    """One scene's result, large: the fragments sent, the verdict, what the correct handler
    hands on and what the fault hands on, drawn so the difference is on the line itself."""
    correct = result.correct
    out = result.faults[name]
    ids = _shown_ids(out)
    handed = "".join(_correct_card(c, ids) for c in correct.calls) or r.note(
        "nothing: no call got its stop event")
    if any(s.op != "equal" for s in out.message_diff):
        handed += _card("message", r.code(correct.message) if correct.message
                        else r.note("(no text)"))
    got = _got(out) if out.broken else r.note("the same")
    n = len(result.fragments)
    sent = r.note(f"sent as {n} fragment{'s' * (n != 1)}")
    body = (
        f'<div class="scl-stage-sent">{sent} {r.pieces(result.fragments)}</div>'
        f'<div class="scl-stage-verdict">{_verdict(out)}</div>'
        f'<div class="scl-stage-row scl-stage-correct"><div class="scl-stage-who">'
        f"correct hands on</div><div>{handed}</div></div>"
        f'<div class="scl-stage-row scl-stage-fault"><div class="scl-stage-who">'
        f"{escape(name)} hands on</div><div>{got}</div></div>"
    )
    return SafeHTML(r.view(body, "scl-stage-result"))


STYLE = """<style>
.scl-stage{--u:min(1vw,1.78vh);font-size:calc(var(--u)*1.72);line-height:1.35;
--jp-widgets-font-size:calc(var(--u)*1.56);--jp-widgets-inline-height:calc(var(--u)*2.8);
--jp-widgets-inline-label-width:9em;--jp-ui-font-size1:calc(var(--u)*1.56);
--jp-content-font-size1:calc(var(--u)*1.56);width:100%;box-sizing:border-box;
padding:0 calc(var(--u)*.6)}
.scl-stage .scl-stage-head{font-size:calc(var(--u)*2.34);font-weight:600}
.scl-stage .scl-stage-count{color:#666;font-weight:400;margin-right:.6em}
.scl-stage .scl-stage-about{font-size:calc(var(--u)*1.56);color:#333;margin:.1em 0 .3em 0}
.scl-stage .widget-label,.scl-stage input,.scl-stage textarea,.scl-stage select,
.scl-stage button{font-size:calc(var(--u)*1.56)}
.scl-stage textarea{font-family:monospace}
.scl-stage .widget-toggle-buttons .widget-toggle-button{font-size:calc(var(--u)*1.25);
width:auto;height:auto;padding:.1em .5em}
.scl-stage .scl-stage-foot button{width:auto;height:auto;padding:.15em .8em}
.scl-stage .widget-select-multiple select{height:auto;min-height:calc(var(--u)*7)}
.scl-stage .widget-slider .noUi-target,.scl-stage .widget-slider .slider-container{
flex:1 1 auto;min-width:calc(var(--u)*8)}
.scl-stage .scl-stage-result{font-size:calc(var(--u)*2.03);line-height:1.4}
.scl-stage .scl-stage-result .scl-view,.scl-stage .scl-view{font-size:calc(var(--u)*2.03)}
.scl-stage .scl-stage-row{margin:.3em 0}
.scl-stage .scl-stage-call{margin:.15em 0;padding:.05em .3em;border-left:.25em solid #ccc}
.scl-stage .scl-stage-differs{border-left-color:#c00}
.scl-stage .scl-stage-missing{border:.12em dashed #c00;border-left-width:.25em}
.scl-stage .scl-stage-missing del{opacity:.6}
.scl-stage .scl-stage-extra{border:.12em solid #c60;border-left-width:.25em;background:#fff3d6}
.scl-stage .scl-stage-same{opacity:.6}
.scl-stage .scl-stage-raised{border-left-color:#c00}
.scl-stage .scl-stage-who{font-size:calc(var(--u)*1.56);font-weight:600;
overflow-wrap:anywhere}
.scl-stage .scl-stage-fault .scl-stage-who{color:#a00}
.scl-stage .scl-stage-verdict{font-size:calc(var(--u)*2.19);margin:.2em 0}
.scl-stage code,.scl-stage .scl-piece{font-size:calc(var(--u)*1.875);white-space:pre-wrap;
overflow-wrap:anywhere}
.scl-stage .scl-breaker-output{max-height:66vh;overflow:auto}
.scl-stage .scl-stage-keys{font-size:calc(var(--u)*1.4);color:#555;margin-left:1em;
align-self:center}
</style>"""


class StageView(BreakerView):
    """The stage app: ``next()``, ``previous()``, ``go(i)`` move through the scenes (each
    a preset, its fault alone beside the correct handler), ``reset()`` restores the scene.

    ``order`` is the fault names in scene order (:func:`scenes` by default).
    """

    def __init__(self, order: Sequence[str] | None = None, delay: float = DELAY,
                 start: int = 0) -> None:
        self.order = scenes() if order is None else list(order)
        if not self.order:
            raise ValueError("a stage needs at least one scene (a fault with a preset)")
        self.scene = start % len(self.order)
        self._shown = 0  # how many times a scene was drawn: the page's keys wait on it
        self.head = w.HTML()
        self.previous_button = w.Button(description="previous", icon="arrow-left",
                                        tooltip="previous scene (p, ←, PgUp)")
        self.next_button = w.Button(description="next", icon="arrow-right",
                                    tooltip="next scene (n, →, PgDn)")
        self.previous_button.add_class("scl-stage-previous")
        self.next_button.add_class("scl-stage-next")
        self.previous_button.on_click(lambda _: self.previous())
        self.next_button.on_click(lambda _: self.next())
        self.controls = w.VBox(layout=w.Layout(width="40%"))
        name = self.order[self.scene]
        super().__init__(name, show=[name], delay=delay)
        self.reset_button.add_class("scl-stage-reset")
        self.args.rows = 4
        # the column's width, not the widgets' fixed pixels: a slider a thumb long, a quirk
        # list that clips its options' names, are no use to a speaker
        for control in (self.place, self.every, self.read_size, self.quirks, self.boundary):
            control.layout = w.Layout(width="98%")
        self.quirks.rows = min(len(self.quirks.options), 6)
        self.reset_button.tooltip = "restore this scene (r)"
        self._arrange()

    def _layout(self) -> w.Box:
        style = w.HTML(STYLE)
        keys = w.HTML(f'<span class="scl-stage-keys">{escape(KEYS)}</span>')
        self.output.layout = w.Layout(width="60%")
        body = w.HBox([self.controls, self.output], layout=w.Layout(width="100%"))
        foot = w.HBox([self.previous_button, self.reset_button, self.next_button, keys])
        foot.add_class("scl-stage-foot")
        box = w.VBox([style, self.head, body, foot], layout=w.Layout(width="100%"))
        box.add_class("scl-stage")
        return box

    @classmethod
    def from_address(cls, query: str | None = None, order: Sequence[str] | None = None,
                     delay: float = DELAY) -> StageView:
        """The stage on the scene the page's address names (``?scene=key_by_id`` or
        ``?scene=12``): a reload or a second window lands where the speaker was. ``query``
        is the address's query string (Voila gives the kernel ``QUERY_STRING``)."""
        query = os.environ.get("QUERY_STRING", "") if query is None else query
        order = scenes() if order is None else list(order)
        return cls(order, delay=delay, start=scene_in(query, order))

    # -- moving -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The current scene's fault."""
        return self.order[self.scene]

    def go(self, index: int) -> None:
        """Show scene ``index`` (wrapping round) as its preset sets it."""
        self.scene = index % len(self.order)
        self.show = [self.name]
        self.load(self.name)
        self._arrange()

    def next(self) -> None:
        self.go(self.scene + 1)

    def previous(self) -> None:
        self.go(self.scene - 1)

    def reset(self) -> None:
        """The scene as it started."""
        self.go(self.scene)

    # -- showing ------------------------------------------------------------------------
    def html(self, result: Result) -> SafeHTML:
        return stage_html(result, self.name)

    def _arrange(self) -> None:
        """The head for this scene, and the controls its preset uses."""
        spec = SPECS[self.name]
        self._shown += 1
        # data-scene: what the page puts in its address; data-shown: that this drawing is new
        self.head.value = (
            f'<div class="scl-stage-head" data-scene="{escape(self.name)}" '
            f'data-shown="{self._shown}"><span class="scl-stage-count">{self.scene + 1} / '
            f"{len(self.order)}</span>{escape(self.name)}</div>"
            f'<div class="scl-stage-about">{escape(spec.summary)}</div>')
        used = set(spec.preset or ())
        shown: list[w.Widget] = [self.provider, self.args, self.split, self.boundary]
        extra = (("every", self.every), ("read_size", self.read_size),
                 ("cut_off", self.cut_off), ("earlier", self.earlier),
                 ("interleave", self.place), ("two_choices", self.place),
                 ("before", self.before), ("after", self.after), ("quirks", self.quirks))
        for key, control in extra:
            if key in used and control not in shown:
                shown.append(control)
        if "earlier" in used and self.place not in shown:
            shown.append(self.place)
        self.controls.children = (*shown, self.status)
