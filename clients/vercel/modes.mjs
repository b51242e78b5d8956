// The harness's two modes, for every client here: a process per case (the case in the
// environment; exit 1 when it failed), or STREAMCALLS_LOOP=1 (one JSON line per case on
// stdin, `{"end": N}` after its calls, with `error` when it failed). `runCase(env, say)`
// resolves to whether the case failed; `say` writes to stderr, and the last line said is
// the error a failed case reports (what a process per case shows as its error).
import { createInterface } from 'node:readline';

async function one(runCase, env) {
  let last = '';
  const say = (text) => {
    console.error(text);
    last = text.trim().split('\n').pop();
  };
  return (await runCase(env, say)) ? last : null;
}

export async function run(runCase) {
  if (process.env.STREAMCALLS_LOOP === '1') {
    for await (const line of createInterface({ input: process.stdin })) {
      if (!line.trim()) continue;
      const { case: n, env } = JSON.parse(line);
      const failed = await one(runCase, { ...process.env, ...env });
      console.log(JSON.stringify(failed === null ? { end: n } : { end: n, error: failed }));
    }
  } else if (await one(runCase, process.env) !== null) {
    process.exitCode = 1;
  }
}
