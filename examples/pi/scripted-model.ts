// The scripted model lives in the testing kit; the examples and tests import it from here as before.
export * from "@phasekit/adapters-pi/testing";
