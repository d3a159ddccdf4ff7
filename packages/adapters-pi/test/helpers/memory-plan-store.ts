// The memory store lives in the testing kit (`@phasekit/adapters-pi/testing`); this path stays for the tests.
export * from "../../src/testing/memory-plan-store.js";
