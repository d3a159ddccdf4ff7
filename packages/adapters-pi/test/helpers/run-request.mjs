// Child of run-workflow.control.int.test.ts: asks the run <slug> under <repoRoot> to pause or stop, from a
// process other than the runner, and prints the durable request it wrote.
import { requestPause, requestStop } from "../../dist/index.js";

const [repoRoot, slug, signal, reason] = process.argv.slice(2);
const request = signal === "stop" ? await requestStop({ repoRoot, target: slug, reason }) : await requestPause({ repoRoot, target: slug, reason });
process.stdout.write(`${JSON.stringify({ event: "requested", signal: request.signal, reason: request.reason, pid: request.requestedBy.pid })}\n`);
