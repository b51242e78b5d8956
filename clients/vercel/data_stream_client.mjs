// The AI SDK 4 data stream reader (`@ai-sdk/ui-utils`, pinned to the version ai@4's last
// release depends on): what `useChat` of ai@4 ran. `callChatApi` POSTs the chat request and,
// with the default `streamProtocol: 'data'`, hands the body to `processChatResponse`, whose
// `processDataStream` splits it into `0:`/`9:`/`b:`/`c:`... lines (`parseDataStreamPart`, a
// line that fails it thrown) and assembles the assistant message: a `b:` part opens a
// `partial-call` tool invocation, its `c:` deltas are joined and parsed as partial JSON, and
// the `9:` part (the whole call, its `args` an object) makes it a `call`. A call is finished
// when its `tool-invocation` part in the message the UI renders reaches `call` (or
// `result`); it is printed once, with its `args` as parsed input. A `3:` error part throws.
// Both of the harness's modes (modes.mjs): a process per case, or STREAMCALLS_LOOP=1.
import { run } from './modes.mjs';
import { callChatApi } from '@ai-sdk/ui-utils';

const FINISHED = new Set(['call', 'result']);

async function runCase(env, say) {
  const printed = new Set();
  const show = (message) => {
    for (const part of message?.parts ?? []) {
      if (part.type !== 'tool-invocation') continue;
      const call = part.toolInvocation;
      if (!FINISHED.has(call.state) || printed.has(call.toolCallId)) continue;
      printed.add(call.toolCallId);
      console.log(JSON.stringify({ call_id: call.toolCallId, tool: call.toolName,
        input: call.args }));
    }
  };
  try {
    await callChatApi({
      api: env.STREAMCALLS_BASE_URL + env.STREAMCALLS_PATH,
      body: { id: 'torture', messages: [] },
      streamProtocol: 'data',
      restoreMessagesOnFailure: () => {},
      onUpdate: ({ message }) => show(message),
      onFinish: (message) => show(message),
      generateId: () => 'torture',
    });
  } catch (error) {
    say(String(error?.stack ?? error));
    say(String(error));  // the last line said is the case's error
    return true;
  }
  return false;
}

await run(runCase);
