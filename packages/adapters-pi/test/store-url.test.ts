/** Store URLs (`--store`, PHASEKIT_STORE): parsing, the PostgreSQL package loaded only on demand, and a lazy store. */
import { describe, expect, it } from "vitest";
import { lazyStore, openStoreUrl, parseStoreUrl } from "../src/store/store-url.js";
import type { PlanStore } from "../src/store/plan-store-port.js";

const missing = async (name: string): Promise<never> => {
  throw Object.assign(new Error(`Cannot find package '${name}' imported from /x.js`), { code: "ERR_MODULE_NOT_FOUND" });
};

describe("store URLs", () => {
  it("postgres:// and postgresql:// parse; ?namespace= is taken out of the connection string", () => {
    expect(parseStoreUrl("postgres://u@h:5/db?namespace=team&sslmode=disable")).toEqual({ kind: "postgres", connectionString: "postgres://u@h:5/db?sslmode=disable", namespace: "team", label: "postgres:team" });
    expect(parseStoreUrl("postgresql://h/db").namespace).toBe("default");
  });

  it("anything else is INVALID_OPTIONS naming the field, with the password hidden", () => {
    for (const bad of ["mysql://u:pw@h/db", "not a url", "postgres://u:pw@h/db?namespace="]) {
      let error: { code?: string; message?: string; details?: Record<string, unknown> } = {};
      try {
        parseStoreUrl(bad, "PHASEKIT_STORE");
      } catch (e) {
        error = e as typeof error;
      }
      expect(error.code).toBe("INVALID_OPTIONS");
      expect(error.details?.["field"]).toBe("PHASEKIT_STORE");
      expect(error.message).not.toContain("pw@");
    }
  });

  it("a missing @phasekit/store-postgres is INVALID_CONFIG naming the package and the install command", async () => {
    await expect(openStoreUrl(parseStoreUrl("postgres://h/db"), { importer: missing })).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      details: { field: "store", value: "@phasekit/store-postgres", hint: expect.stringContaining("npm install @phasekit/store-postgres") },
    });
  });

  it("a package that is there but fails to load for another reason is reported as itself", async () => {
    const broken = async () => {
      throw Object.assign(new Error("Cannot find package 'pg' imported from store-postgres"), { code: "ERR_MODULE_NOT_FOUND" });
    };
    await expect(openStoreUrl(parseStoreUrl("postgres://h/db"), { importer: broken })).rejects.toThrow("Cannot find package 'pg'");
  });

  it("a lazy store opens on first use, once; a failed open is tried again at the next use", async () => {
    let opens = 0;
    let fail = true;
    const real = { list: async () => [], close: async () => undefined } as unknown as PlanStore;
    const s = lazyStore(parseStoreUrl("postgres://h/db?namespace=n"), async () => {
      opens++;
      if (fail) throw new Error("down");
      return real;
    });
    expect([s.planRoot, opens]).toEqual(["postgres:n", 0]);
    await expect(s.list()).rejects.toThrow("down");
    fail = false;
    expect(await s.list()).toEqual([]);
    await s.list();
    expect(opens).toBe(2);
    await s.close();
  });
});
