// Child for the crash test: continues from the version in <file>, writing successive versions (~20 KB each)
// and printing "ack <g>" after each acknowledged write. Mode "meta" goes through writeWorkflowMetadata (CAS,
// zod); mode "raw" writes the same kind of JSON with writeFileAtomic and starts faster (no zod to load).
import { readFileSync } from "node:fs";

const [file, mode, paddingText] = process.argv.slice(2);
const padding = Number(paddingText ?? "20000");

function version(g) {
  return {
    slug: "crash-run", ownerTool: "crash", currentTool: "crash", status: "running",
    createdAt: "2026-01-01T00:00:00.000Z", updatedAt: new Date(Date.UTC(2026, 0, 1) + g * 1000).toISOString(),
    currentStepId: `step-${g}`, state: { g, fill: String(g % 10).repeat(padding) },
  };
}

if (mode === "meta") {
  const { readWorkflowMetadata, writeWorkflowMetadata } = await import("../../dist/store/metadata.js");
  const current = await readWorkflowMetadata(file);
  if (!current.ok) throw current.error;
  let gen = current.metadata?.generation ?? null;
  process.stdout.write(`ready ${gen ?? 0}\n`);
  for (;;) {
    const w = await writeWorkflowMetadata(file, version((gen ?? 0) + 1), { expectedGeneration: gen });
    if (!w.ok) throw w.error;
    gen = w.metadata.generation;
    process.stdout.write(`ack ${gen}\n`);
  }
} else {
  const { writeFileAtomic } = await import("../../dist/io/atomic-write.js");
  let g = 0;
  try {
    g = JSON.parse(readFileSync(file, "utf8")).generation;
  } catch (error) {
    if (error.code !== "ENOENT") throw error;
  }
  process.stdout.write(`ready ${g}\n`);
  for (;;) {
    g++;
    await writeFileAtomic(file, JSON.stringify({ ...version(g), generation: g }, null, 2));
    process.stdout.write(`ack ${g}\n`);
  }
}
