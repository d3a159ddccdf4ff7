/**
 * `@phasekit/adapters-pi/testing`: what this project's own tests run on, for extension authors to test their
 * workflows the same way. A memory store (the PlanStore contract, in one process, with leases and epochs), a
 * typed fake of pi's extension API (events, tools, commands, UI calls, session branch), and a scripted
 * OpenAI-compatible model on 127.0.0.1 for the real pi CLI. Nothing here is durable; none of it is for production.
 */
export { createMemoryPlanStore } from "./memory-plan-store.js";
export type { MemoryPlanStore, MemoryPlanStoreOptions } from "./memory-plan-store.js";
export type { MemoryClock } from "./memory-lease.js";
export { createFakePi, resultText } from "./fake-pi.js";
export type { FakePi, SentMessage } from "./fake-pi.js";
export { startScriptedModel, contentText } from "./scripted-model.js";
export type { ScriptedModel, ScriptedReply, SeenRequest } from "./scripted-model.js";
