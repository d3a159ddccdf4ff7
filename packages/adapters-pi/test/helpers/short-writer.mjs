// Child for the short-write test, meant to run under `ulimit -f 8` with SIGXFSZ ignored: writes <bytes> bytes
// over <file> with our writeFileAtomic ("ours") or with write-file-atomic 7.0.1 ("wfa"), and prints the outcome.
import { createRequire } from "node:module";
import { writeFileAtomic } from "../../dist/io/atomic-write.js";

// Node resets inherited signal dispositions at start-up, so the shell's `trap '' XFSZ` is not enough.
process.on("SIGXFSZ", () => {});

const [file, which, bytesText] = process.argv.slice(2);
const data = "x".repeat(Number(bytesText)) + "\n";
try {
  if (which === "wfa") {
    const require = createRequire(new URL("../../package.json", import.meta.url));
    const wfa = require("write-file-atomic");
    await wfa(file, data);
  } else {
    await writeFileAtomic(file, data);
  }
  process.stdout.write(JSON.stringify({ ok: true }) + "\n");
} catch (error) {
  process.stdout.write(JSON.stringify({ ok: false, code: error.code, message: error.message, details: error.details }) + "\n");
}
