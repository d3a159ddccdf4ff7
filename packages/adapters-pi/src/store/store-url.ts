/**
 * A store named by URL (`--store postgres://…`, `PHASEKIT_STORE`): how the CLI, the inspector and the pi
 * extension reach runs kept somewhere other than the plan folder. The PostgreSQL store lives in its own package,
 * which this one must not depend on (most users never need `pg`): it is imported only when such a URL is given,
 * and its absence is a typed error naming the package to install.
 */
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { workflowError } from "@phasekit/core";
import type { PlanStore } from "./plan-store-port.js";

/** The environment variable naming the store when no `--store` is given. */
export const STORE_ENV = "PHASEKIT_STORE";

/** The package that implements `postgres://` stores. */
export const POSTGRES_STORE_PACKAGE = "@phasekit/store-postgres";

/** A store URL taken apart: the connection string for the driver and the namespace of runs within it. */
export interface StoreUrl {
  kind: "postgres";
  connectionString: string;
  /** `?namespace=…` (removed from the connection string); default "default", as openPostgresPlanStore's. */
  namespace: string;
  /** `postgres:<namespace>`: the store's label, known before it is opened. */
  label: string;
}

/** Parses `text` (`postgres://` or `postgresql://`); INVALID_OPTIONS naming the field and the accepted forms otherwise. */
export function parseStoreUrl(text: string, field = "--store"): StoreUrl {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw bad(field, text, "it is not a URL");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") throw bad(field, text, `the scheme ${url.protocol} is not one phasekit knows`);
  const namespace = url.searchParams.get("namespace") ?? "default";
  if (namespace === "" || namespace.length > 200) throw bad(field, text, "namespace must be 1 to 200 characters");
  url.searchParams.delete("namespace");
  return { kind: "postgres", connectionString: url.toString(), namespace, label: `postgres:${namespace}` };
}

function bad(field: string, text: string, why: string) {
  // The password is the user's secret: never echoed back in an error.
  const shown = text.replace(/\/\/([^:/@]*):[^@/]*@/, "//$1:***@");
  return workflowError("adapters-pi", "INVALID_OPTIONS", `${field} ${shown}: ${why}.`, {
    field,
    value: shown,
    hint: "give postgres://user:password@host:port/database (add ?namespace=NAME for runs kept under another namespace), or leave it out for the plan folder",
  });
}

/** Loads a module by name; tests pass their own to stand for a missing package. */
export type ModuleImporter = (name: string) => Promise<unknown>;

interface PostgresModule {
  openPostgresPlanStore(options: { connectionString: string; namespace: string }): Promise<PlanStore>;
}

/**
 * Opens the store `url` names. The PostgreSQL package is looked up beside this package, then from `cwd` (a
 * project that installed it while the CLI came from elsewhere); missing, it is INVALID_CONFIG with the install
 * command. Opening checks the schema and the role's rights (typed errors with hints, from the store).
 */
export async function openStoreUrl(url: StoreUrl, options: { cwd?: string; importer?: ModuleImporter } = {}): Promise<PlanStore> {
  const mod = (await loadPackage(POSTGRES_STORE_PACKAGE, options)) as Partial<PostgresModule>;
  if (typeof mod.openPostgresPlanStore !== "function") {
    throw workflowError("adapters-pi", "INVALID_CONFIG", `${POSTGRES_STORE_PACKAGE} was found but has no openPostgresPlanStore.`, {
      field: "store",
      value: POSTGRES_STORE_PACKAGE,
      hint: `install a version of ${POSTGRES_STORE_PACKAGE} that matches @phasekit/adapters-pi`,
    });
  }
  return mod.openPostgresPlanStore({ connectionString: url.connectionString, namespace: url.namespace });
}

async function loadPackage(name: string, options: { cwd?: string; importer?: ModuleImporter }): Promise<unknown> {
  const importer: ModuleImporter = options.importer ?? ((n) => import(n));
  try {
    return await importer(name);
  } catch (error) {
    if (!isMissing(error, name)) throw error;
  }
  if (options.importer === undefined) {
    try {
      const resolved = createRequire(path.join(path.resolve(options.cwd ?? process.cwd()), "noop.js")).resolve(name);
      return await import(pathToFileURL(resolved).href);
    } catch (error) {
      if (!isMissing(error, name)) throw error;
    }
  }
  throw workflowError("adapters-pi", "INVALID_CONFIG", `a postgres:// store needs the package ${name}, which is not installed.`, {
    field: "store",
    value: name,
    hint: `install it beside @phasekit/adapters-pi: npm install ${name} (or pnpm add ${name})`,
  });
}

function isMissing(error: unknown, name: string): boolean {
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e.code === "string" ? e.code : "";
  // ERR_MODULE_NOT_FOUND from import(), MODULE_NOT_FOUND from require.resolve; a module that is there but fails
  // to load for another reason (one of its own imports missing) is reported as itself.
  return (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND" || /Cannot find (package|module)/.test(String(e.message))) && String(e.message).includes(name);
}

/**
 * A store that opens itself on first use: for callers that need a PlanStore at once but may never touch it (the
 * pi extension's factory is synchronous). A failed open is retried at the next use, not remembered.
 */
export function lazyStore(url: StoreUrl, open: () => Promise<PlanStore> = () => openStoreUrl(url)): PlanStore {
  let opening: Promise<PlanStore> | null = null;
  const get = (): Promise<PlanStore> => {
    opening ??= open().catch((error: unknown) => {
      opening = null;
      throw error;
    });
    return opening;
  };
  const call =
    <K extends keyof PlanStore>(k: K) =>
    async (...args: unknown[]): Promise<unknown> => {
      const s = await get();
      const m = s[k] as unknown as ((...a: unknown[]) => Promise<unknown>) | undefined;
      if (typeof m !== "function") throw workflowError("adapters-pi", "INVALID_CONFIG", `the store ${url.label} has no ${String(k)}.`, { field: "store", value: url.label });
      return m.apply(s, args);
    };
  const methods = ["runDir", "readMetadata", "writeMetadata", "readJournal", "appendJournal", "lock", "list", "reserveRun", "readLease", "readStepOutput", "listRunFacts", "listForks", "runSignature", "checkpoints", "gc", "requestControl", "readControl", "clearControl", "withdrawControl"] as const;
  const store = Object.fromEntries(methods.map((k) => [k, call(k)])) as unknown as PlanStore;
  return Object.assign(store, {
    planRoot: url.label,
    async close() {
      if (opening === null) return;
      const s = await opening.catch(() => null);
      opening = null;
      await s?.close();
    },
  });
}
