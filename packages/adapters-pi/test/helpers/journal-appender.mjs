// Child for journal tests: appends `count` metadata snapshots (printing "ack <seq>" after each fsynced append),
// then, with "tear", writes half of one more line by hand and prints "torn", then waits to be SIGKILLed.
import { appendFileSync } from "node:fs";
import { openJournal } from "../../dist/store/journal.js";

const [file, countText, mode] = process.argv.slice(2);
const count = Number(countText);
const writer = await openJournal(file);
for (let i = 1; i <= count; i++) {
  const entry = await writer.append({
    generation: i,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    event: "metadata",
    data: {
      schemaVersion: 1, slug: "run-j", ownerTool: "t", currentTool: "t", status: "running",
      createdAt: "2026-01-01T00:00:00.000Z", updatedAt: "2026-01-01T00:00:00.000Z", generation: i, state: { i },
    },
  });
  process.stdout.write(`ack ${entry.seq}\n`);
}
if (mode === "tear") {
  appendFileSync(file, '{"at":"2026-01-01T00:00:00.000Z","data":{"schemaVer');
  process.stdout.write("torn\n");
}
setInterval(() => {}, 1000);
