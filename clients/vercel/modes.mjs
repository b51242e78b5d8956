// The harness's two modes, for every client here: a process per case (the case in the
// environment; exit 1 when it failed), or STREAMCALLS_LOOP=1 (one JSON line per case on
// stdin, `{"end": N}` after its calls, with `error` when it failed). `runCase(env)` resolves
// to the error line to report, or null.
import { createInterface } from 'node:readline';

export async function run(runCase) {
  if (process.env.STREAMCALLS_LOOP === '1') {
    for await (const line of createInterface({ input: process.stdin })) {
      if (!line.trim()) continue;
      const { case: n, env } = JSON.parse(line);
      const failed = await runCase({ ...process.env, ...env });
      console.log(JSON.stringify(failed === null ? { end: n } : { end: n, error: failed }));
    }
  } else if (await runCase(process.env) !== null) {
    process.exitCode = 1;
  }
}
