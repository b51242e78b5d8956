// AG-UI's own client (`@ag-ui/client`, what CopilotKit and every AG-UI frontend run): an
// `HttpAgent` POSTs its RunAgentInput to the harness and `runAgent` reads the reply as the SDK
// does: `transformHttpEventStream` (SSE through `parseSSEStream`), then `enforceEvents`,
// `transformChunks` (TOOL_CALL_CHUNK expanded to START/ARGS/END), `verifyEvents` and
// `defaultApplyEvents`, which assembles each call into the agent's messages
// (`toolCalls[].function.arguments`, the ARGS deltas joined). A call is finished when the SDK
// says so: `onNewToolCall`, fired by TOOL_CALL_END; it is printed once, its arguments the
// exact text the SDK assembled. A run that fails (`runAgent` rejects: a frame that is not
// JSON, an event out of order) fails the case. Both of the harness's modes (modes.mjs): a
// process per case (the case in the environment), or STREAMCALLS_LOOP=1.
import { run } from './modes.mjs';
import { HttpAgent } from '@ag-ui/client';

// The SDK's own `console.error("Agent execution failed:", error)` precedes the rejection;
// stderr is the harness's, and the last line said is the case's error.
async function runCase(env, say) {
  const printed = new Set();
  const agent = new HttpAgent({ url: env.STREAMCALLS_BASE_URL + env.STREAMCALLS_PATH });
  try {
    await agent.runAgent({ runId: 'torture' }, {
      onNewToolCall: ({ toolCall }) => {
        if (printed.has(toolCall.id)) return;
        printed.add(toolCall.id);
        console.log(JSON.stringify({ call_id: toolCall.id, tool: toolCall.function.name,
          args: toolCall.function.arguments }));
      },
    });
  } catch (error) {
    say(String(error));  // its stack is on stderr already, the SDK's own
    return true;
  }
  return false;
}

await run(runCase);
