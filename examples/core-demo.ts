/**
 * `pnpm demo:core`: walks the release example (examples/release-workflow.ts) through the pure core and prints the
 * status line after each move. Nothing is written anywhere; `pnpm demo` runs the durable demo (examples/demo.ts).
 */
import { editDuringStaticAnalysis, walkRelease } from "./core-usage.js";

for (const line of walkRelease()) console.log(line);
console.log("\nTool policy — `edit` during Static Analysis:\n" + editDuringStaticAnalysis());
