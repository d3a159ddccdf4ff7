/**
 * What a consumer's compiler says about `ctx.step` outputs and optional options (run by public-types.test.ts with
 * `strict` and `exactOptionalPropertyTypes`, and by the workspace typecheck). A `@ts-expect-error ✗ …` line must
 * fail, and the test checks the compiler's message contains the text after the directive.
 */
import { expectTypeOf } from "vitest";
import type { RunContext, JsonValue } from "@phasekit/adapters-pi";
import type { WorkflowState } from "@phasekit/core";

interface Review {
  title: string;
  scores: readonly number[];
  note?: string;
  pair: readonly [number, string];
}
interface Tree {
  name: string;
  children: Tree[];
}
class Person {
  name = "p";
  greet(): string {
    return this.name;
  }
}

export async function accepted(ctx: RunContext, state: WorkflowState): Promise<void> {
  expectTypeOf(await ctx.step("review", {}, async (): Promise<Review> => ({ title: "t", scores: [1], pair: [1, "a"] }))).toEqualTypeOf<Review>();
  expectTypeOf(await ctx.step("state", {}, () => state)).toEqualTypeOf<WorkflowState>();
  expectTypeOf(await ctx.step("tree", {}, (): Tree => ({ name: "root", children: [] }))).toEqualTypeOf<Tree>();
  expectTypeOf(await ctx.step("inline", {}, () => ({ ok: true, files: ["a.ts"] }))).toEqualTypeOf<{ ok: boolean; files: string[] }>();
  expectTypeOf(await ctx.step("json", {}, (): JsonValue => null)).toEqualTypeOf<JsonValue>();
  // Nothing is stored and given back as null, whole or in part.
  expectTypeOf(await ctx.step("nothing", {}, async () => {})).toEqualTypeOf<null>();
  expectTypeOf(await ctx.step("maybe", {}, (): string | undefined => undefined)).toEqualTypeOf<string | null>();
  // The signal and attempt are typed without annotations.
  await ctx.step("args", {}, (signal, attempt) => ({ aborted: signal.aborted, attempt }));
}

export async function refused(ctx: RunContext): Promise<void> {
  // @ts-expect-error ✗ output.when is a Date, not plain JSON: return date.toISOString()
  await ctx.step("date", {}, async () => ({ ok: true, when: new Date() }));
  // @ts-expect-error ✗ output.owner.greet is a function
  await ctx.step("instance", {}, () => ({ owner: new Person() }));
  // @ts-expect-error ✗ output.onDone is a function
  await ctx.step("callback", {}, () => ({ onDone: (): number => 1 }));
  // @ts-expect-error ✗ output.items[i].seen is a Set
  await ctx.step("set", {}, () => ({ items: [{ seen: new Set<string>() }] }));
  // @ts-expect-error ✗ output[1] is a Map
  await ctx.step("tuple", {}, (): [number, Map<string, number>] => [1, new Map()]);
  // @ts-expect-error ✗ output is a Date
  await ctx.step("bare-date", {}, () => new Date());
  // @ts-expect-error ✗ output.big is a bigint
  await ctx.step("bigint", {}, () => ({ big: 1n }));
  // @ts-expect-error ✗ output is unknown
  await ctx.step("unknown", {}, (): unknown => 1);
  // A required field that may hold undefined: JSON would drop the key (make it optional, or use null).
  // @ts-expect-error Types of property 'note' are incompatible
  await ctx.step("undefined-field", {}, (): { note: string | undefined } => ({ note: undefined }));
}
