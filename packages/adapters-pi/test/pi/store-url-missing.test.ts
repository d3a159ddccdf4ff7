/**
 * The pi extension given a `postgres://` store (PHASEKIT_STORE) where @phasekit/store-postgres is not installed:
 * the session keeps the run, and the user is told which package to install, naming the store, not a plan folder.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadExtension, tempProject } from "./helpers/setup.js";
import { lazyStore, openStoreUrl, parseStoreUrl } from "../../src/store/store-url.js";

let project: ReturnType<typeof tempProject>;
beforeEach(() => {
  project = tempProject();
});
afterEach(() => project.cleanup());

const missing = async (name: string): Promise<never> => {
  throw Object.assign(new Error(`Cannot find package '${name}' imported from /x.js`), { code: "ERR_MODULE_NOT_FOUND" });
};

describe("a postgres:// store without @phasekit/store-postgres installed", () => {
  it("the run goes on in the session; the notice names the package to install and the store", async () => {
    const url = parseStoreUrl("postgres://runner@db.internal/phasekit?namespace=team");
    const store = lazyStore(url, () => openStoreUrl(url, { importer: missing }));
    const { pi } = loadExtension(project, { options: { planRoot: "plans", store: () => store } });
    await pi.emit("session_start", {});
    await pi.command("workflow", "ship Add a flag");
    const said = [...pi.notices.map((n) => n.text), ...pi.sent.map((m) => JSON.stringify(m))].join("\n");
    expect(said).toContain("needs the package @phasekit/store-postgres, which is not installed");
    expect(said).toContain("npm install @phasekit/store-postgres");
    expect(said).toContain("the store postgres:team");
    expect(said).not.toContain("plan folder");
    await pi.emit("session_shutdown", {});
  });
});
