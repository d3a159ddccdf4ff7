import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createFsPlanStore } from "../src/store/plan-store.js";
import { runHistoryContract } from "./contract/history-contract.js";
import { createMemoryPlanStore } from "./helpers/memory-plan-store.js";

runHistoryContract("fs", async () => createFsPlanStore({ repoRoot: await mkdtemp(path.join(tmpdir(), "phasekit-history-")) }));
runHistoryContract("memory", async () => createMemoryPlanStore());
