// The fake pi host lives in the testing kit (`@phasekit/adapters-pi/testing`); this path stays for the tests.
export * from "../../../src/testing/fake-pi.js";
