// Vercel AI SDK UI (`ai`'s own browser side, what `useChat` runs): the response body parsed
// as `DefaultChatTransport.processResponseStream` does (`parseJsonEventStream` with
// `uiMessageChunkSchema`, a chunk that fails the schema thrown), then `readUIMessageStream`,
// whose message snapshots hold one tool part per call. A call is finished once its part
// reaches `input-available` (or a state only an available input leads to); it is printed
// once, with its parsed `input`. A part ending in `output-error` with no input (the server's
// `tool-input-error`: input that did not parse, or an unknown tool) is never executed: said on
// stderr, not printed. Both of the harness's modes: a process per case (the case in the
// environment), or STREAMCALLS_LOOP=1 (one JSON line per case on stdin, `{"end": N}` after
// its calls).
import { run } from './modes.mjs';
import {
  getToolOrDynamicToolName,
  isToolOrDynamicToolUIPart,
  parseJsonEventStream,
  readUIMessageStream,
  uiMessageChunkSchema,
} from 'ai';

const FINISHED = new Set(['input-available', 'approval-requested', 'approval-responded',
  'output-available', 'output-denied']);

// One case; `say` writes to stderr. Resolves to whether it failed.
async function runCase(env, say) {
  let failed = false;
  const printed = new Set();
  const refused = new Set();
  try {
    const response = await fetch(env.STREAMCALLS_BASE_URL + env.STREAMCALLS_PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'torture', messages: [], trigger: 'submit-message' }),
    });
    if (!response.ok || response.body == null) {
      throw new Error(`HTTP ${response.status}`);
    }
    const chunks = parseJsonEventStream({ stream: response.body, schema: uiMessageChunkSchema })
      .pipeThrough(new TransformStream({
        transform(chunk, controller) {
          if (!chunk.success) throw chunk.error;
          controller.enqueue(chunk.value);
        },
      }));
    const messages = readUIMessageStream({
      stream: chunks,
      onError: (error) => { say(String(error?.stack ?? error)); failed = true; },
    });
    for await (const message of messages) {
      for (const part of message.parts) {
        if (!isToolOrDynamicToolUIPart(part) || printed.has(part.toolCallId)) continue;
        if (FINISHED.has(part.state)) {
          printed.add(part.toolCallId);
          console.log(JSON.stringify({ call_id: part.toolCallId, tool: getToolOrDynamicToolName(part), input: part.input ?? {} }));
        } else if (part.state === 'output-error' && !refused.has(part.toolCallId)) {
          refused.add(part.toolCallId);
          say(`invalid tool call ${part.toolCallId}: ${part.errorText}`);  // never executed
        }
      }
    }
  } catch (error) {
    say(String(error?.stack ?? error));
    failed = true;
  }
  return failed;
}

await run(runCase);
