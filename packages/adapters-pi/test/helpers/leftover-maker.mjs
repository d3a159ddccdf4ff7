// Child of leftovers-other-host.int.test.ts: makes the leftovers a writer killed mid-way leaves, named as this
// process names them (a fork's hidden folder in <planRoot>, a temp file beside <target>), prints them and ends.
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { forkTempDir } from "../../dist/store/fork-leftovers.js";
import { tempPathFor } from "../../dist/io/atomic-write.js";

const [planRoot, target] = process.argv.slice(2);
const fork = forkTempDir(planRoot, "b1");
mkdirSync(fork);
const temp = tempPathFor(target);
writeFileSync(temp, "half");
process.stdout.write(`${JSON.stringify({ fork: path.basename(fork), temp: path.basename(temp) })}\n`);
