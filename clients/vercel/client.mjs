// Vercel AI SDK (`ai` streamText over @ai-sdk/openai or @ai-sdk/anthropic): each `tool-call`
// part of the full stream is a finished call. The SDK hands on parsed input, so `input` is
// printed; calls the SDK marks invalid (never executed) are not. Tools are declared with an
// open schema, so validation never rejects a call. Both of the harness's modes: a process per
// case (the case in the environment), or STREAMCALLS_LOOP=1 (one JSON line per case on stdin,
// `{"end": N}` after its calls).
import { run } from './modes.mjs';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { jsonSchema, streamText, tool } from 'ai';

globalThis.AI_SDK_LOG_WARNINGS = false;
const open = tool({ inputSchema: jsonSchema({}) });
const tools = { lookup: open, get_weather: open, get_time: open };

// One case; `say` writes to stderr. Resolves to whether it failed.
async function runCase(env, say) {
  let failed = false;
  const fmt = env.STREAMCALLS_FORMAT;
  let model;
  if (fmt === 'anthropic-messages') {
    model = createAnthropic({ baseURL: env.ANTHROPIC_BASE_URL + '/v1', apiKey: env.ANTHROPIC_API_KEY })('torture');
  } else {
    const openai = createOpenAI({ baseURL: env.OPENAI_BASE_URL, apiKey: env.OPENAI_API_KEY });
    model = fmt === 'openai-chat' ? openai.chat('torture') : openai.responses('torture');
  }
  try {
    const result = streamText({ model, prompt: 'go', tools, maxOutputTokens: 1024, maxRetries: 0, onError: () => {} });
    for await (const part of result.fullStream) {
      if (part.type === 'tool-call' && part.invalid) {
        say(`invalid tool call ${part.toolCallId}: ${part.error}`);  // never executed
      } else if (part.type === 'tool-call') {
        console.log(JSON.stringify({ call_id: part.toolCallId, tool: part.toolName, input: part.input }));
      } else if (part.type === 'error') {
        say(String(part.error?.stack ?? part.error));
        failed = true;
      }
    }
  } catch (error) {
    say(String(error?.stack ?? error));
    failed = true;
  }
  return failed;
}

await run(runCase);
