/** Moved to store/control-signals.ts (the PlanStore port files and reads control requests); kept for imports. */
export * from "../store/control-signals.js";
