/**
 * Every optional field of the public options types takes an explicit `undefined` (as in
 * `connectionString: process.env.DATABASE_URL`) under `exactOptionalPropertyTypes`: run by public-types.test.ts with
 * that flag on. `UndefinedRefused<T>` lists the paths of optional fields that refuse it; it must be `never`.
 */
import { expectTypeOf } from "vitest";
import type * as adapters from "@phasekit/adapters-pi";
import type * as pi from "@phasekit/adapters-pi/pi";
import type * as core from "@phasekit/core";
import type * as pg from "@phasekit/store-postgres";

type OptionalKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? K : never }[keyof T];
// Functions, arrays and objects with methods (a signal, a pool, a store) are leaves; plain option objects are
// walked (e.g. `lock.staleMs`).
type HasMethod<V> = { [K in keyof V]-?: NonNullable<V[K]> extends (...args: never[]) => unknown ? true : never }[keyof V];
type Walkable<V> = V extends (...args: never[]) => unknown ? false : V extends readonly unknown[] ? false : V extends object ? ([HasMethod<V>] extends [never] ? true : false) : false;
type UndefinedRefused<T, P extends string = ""> = {
  [K in keyof T & string]-?:
    | (K extends OptionalKeys<T> ? ({ [Q in K]: undefined } extends Pick<T, K> ? never : `${P}${K}`) : never)
    | (Walkable<NonNullable<T[K]>> extends true ? UndefinedRefused<NonNullable<T[K]>, `${P}${K}.`> : never);
}[keyof T & string];

expectTypeOf<UndefinedRefused<adapters.RunWorkflowOptions<void>>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<adapters.AnalyzeResumeOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<adapters.ControlTargetOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<adapters.FsPlanStoreOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<adapters.GcOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<adapters.StoreGcOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<adapters.StoreLockOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<adapters.ReporterOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<adapters.ReportOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<adapters.StepOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<adapters.WaitForApprovalOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<pi.WorkflowExtensionOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<pi.DurableOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<pi.PiReporterOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<pg.PostgresPlanStoreOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<pg.MigrateOptions>>().toEqualTypeOf<never>();
expectTypeOf<UndefinedRefused<core.CompileOptions>>().toEqualTypeOf<never>();

// The case from the issue, written as a user would.
export const fromEnv: pg.PostgresPlanStoreOptions = { connectionString: process.env["DATABASE_URL"] };
export const withTarget: Pick<adapters.RunWorkflowOptions<void>, "repoRoot" | "toolName" | "target"> = {
  repoRoot: process.cwd(),
  toolName: "my-tool",
  target: process.env["RUN_ID"],
};
