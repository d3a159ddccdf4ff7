// Child of time-travel.int.test.ts: forks run <slug> at step <at> into <id>, printing "copied <key>" after each
// step it copied and then waiting for a line on stdin before going on, so the parent can SIGKILL it there.
import { createInterface } from "node:readline";
import { forkRun } from "../../dist/index.js";

const [repoRoot, slug, at, id] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const r = await forkRun({
  repoRoot,
  target: slug,
  at,
  id,
  onCopied: async (key) => {
    process.stdout.write(`copied ${key}\n`);
    await lines.next();
  },
});
process.stdout.write(`forked ${JSON.stringify(r)}\n`);
process.exit(0);
