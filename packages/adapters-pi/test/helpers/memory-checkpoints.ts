// The memory store's history lives in the testing kit (src/testing); this path stays for the tests.
export * from "../../src/testing/memory-checkpoints.js";
