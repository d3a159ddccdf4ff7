/**
 * One throwaway PostgreSQL cluster per test file (scripts/pg-cluster.sh). When it cannot start, the suites
 * using it are skipped with a loud message naming why; with PHASEKIT_REQUIRE_POSTGRES=1 (CI) that is a failure.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SCRIPT = fileURLToPath(new URL("../../scripts/pg-cluster.sh", import.meta.url));

/** A running cluster: its URL, and stop/start for connection-loss tests. */
export interface Cluster {
  url: string;
  port: number;
  stop(mode?: "fast" | "immediate"): void;
  start(): void;
  destroy(): void;
}

/**
 * Starts a cluster, or returns the reason it could not (then the caller skips loudly). Unless `migrated` is
 * false, the schema is applied from the package's sql/ files with psql, as an operator with their own
 * migration tool would (stores then open without migrating).
 */
export function startCluster(options: { migrated?: boolean } = {}): { ok: true; cluster: Cluster } | { ok: false; reason: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "phasekit-pg-"));
  const run = (...args: string[]): string => execFileSync("bash", [SCRIPT, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  let port: number;
  try {
    port = Number(run("start", dir));
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    const reason = `PostgreSQL could not be started: ${String((error as { stderr?: string }).stderr || (error as Error).message).trim()}`;
    if (process.env.PHASEKIT_REQUIRE_POSTGRES === "1") throw new Error(reason);
    console.warn(`\n!!!!!!!! SKIPPING the PostgreSQL store tests !!!!!!!!\n${reason}\nInstall it with: apt-get install -y postgresql\n`);
    return { ok: false, reason };
  }
  if (options.migrated !== false) applySqlFiles(port);
  let running = true;
  const cluster: Cluster = {
    url: `postgres://phasekit@127.0.0.1:${port}/phasekit`,
    port,
    stop(mode = "fast") {
      if (running) run("stop", dir, mode);
      running = false;
    },
    start() {
      if (!running) run("start", dir);
      running = true;
    },
    destroy() {
      try {
        cluster.stop("immediate");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  return { ok: true, cluster };
}

/** Applies sql/*.sql in order, each in one transaction, with the cluster's psql (the way docs/postgres.md shows). */
export function applySqlFiles(port: number, database = "phasekit"): void {
  const bin = execFileSync("bash", ["-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1"], { encoding: "utf8" }).trim();
  const dir = fileURLToPath(new URL("../../sql/", import.meta.url));
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".sql")).sort()) {
    execFileSync(path.join(bin, "psql"), ["-h", "127.0.0.1", "-p", String(port), "-U", "phasekit", "-d", database, "-q", "-1", "-v", "ON_ERROR_STOP=1", "-f", path.join(dir, file)], { stdio: ["ignore", "ignore", "pipe"] });
  }
}

/**
 * Runs `sql` with the cluster's psql, synchronously: the calling process's event loop stands still meanwhile, as
 * a paused (SIGSTOP) process's would, while the server goes on.
 */
export function psqlSync(port: number, sql: string, database = "phasekit"): string {
  const bin = execFileSync("bash", ["-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1"], { encoding: "utf8" }).trim();
  return execFileSync(path.join(bin, "psql"), ["-h", "127.0.0.1", "-p", String(port), "-U", "phasekit", "-d", database, "-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}
