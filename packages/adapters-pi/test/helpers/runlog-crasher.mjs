// Child of run-log.crash.int.test.ts: claims the run log and runs steps s0..s<n-1> (every third one with an
// artifact-sized output, two in parallel each time), a state per step and a compaction half-way, printing
// `ok <key> <output digest>` once a step is acknowledged. With <killAt> > 0 it SIGKILLs itself right before
// file-system boundary number <killAt> of the log (counted from the start, claim included). With <killAt> 0 it
// ends printing `boundaries <n>` and `names <JSON list>` (each boundary's name once, in first-seen order).
import { createHash } from "node:crypto";
import { openRunLog } from "../../dist/store/run-log/run-log.js";

const [runDir, killAtText, stepsText] = process.argv.slice(2);
const killAt = Number(killAtText);
const steps = Number(stepsText);
let n = 0;
const names = new Set();
const beforeFsCall = (name) => {
  n++;
  names.add(name);
  if (n === killAt) process.kill(process.pid, "SIGKILL");
};
const digest = (v) => createHash("sha256").update(JSON.stringify(v)).digest("hex").slice(0, 16);
const outputOf = (i) => ({ i, pad: (i % 3 === 0 ? "A" : "b").repeat(i % 3 === 0 ? 300 : 20) });
const log = await openRunLog({ runDir, inlineMax: 200, beforeFsCall });
for (let i = 0; i < steps; i += 2) {
  const pair = [i, i + 1].filter((j) => j < steps);
  const outs = await Promise.all(pair.map((j) => log.step(`s${j}`, { j }, () => outputOf(j))));
  outs.forEach((o, k) => process.stdout.write(`ok s${pair[k]} ${digest(o.output)}\n`));
  await log.putState({ done: i + pair.length });
  if (i === 4) await log.compact();
}
await log.close();
process.stdout.write(`boundaries ${n}\n`);
process.stdout.write(`names ${JSON.stringify([...names])}\n`);
