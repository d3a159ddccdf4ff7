/** piReporter: runWorkflow progress through pi's UI (widget, notify), never stderr under a UI; a stale ctx falls silent. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { piReporter } from "../../src/pi/index.js";
import { createFakePi } from "./helpers/fake-pi.js";

afterEach(() => vi.restoreAllMocks());

describe("piReporter", () => {
  it("shows messages in its widget, errors also as a notification, and clears the widget on dispose; nothing on stderr", () => {
    const stderr = vi.spyOn(process.stderr, "write");
    const pi = createFakePi({ hasUI: true });
    const r = piReporter(pi.ctx(), { key: "job", title: "job 1" })({ slug: "job-1" });
    r.info("✓ collect");
    r.error("draft failed");
    expect(pi.widgets.get("job")).toEqual(["job 1", "  · ✓ collect", "  ✗ draft failed"]);
    expect(pi.notices).toEqual([{ text: "draft failed", level: "error" }]);
    r.dispose();
    expect(pi.widgets.get("job")).toBeUndefined();
    expect(stderr).not.toHaveBeenCalled();
  });

  it("a ctx gone stale (session replaced) makes it silent instead of throwing", () => {
    const pi = createFakePi({ hasUI: true });
    const r = piReporter(pi.ctx())({ slug: "job-1" });
    pi.staleAll();
    expect(() => r.info("✓ step")).not.toThrow();
    expect(() => r.info("✓ next")).not.toThrow();
    expect(pi.staleUses).toHaveLength(1);
  });

  it("without a UI (print mode) it writes lines to stderr, as pi's own warnings go", () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const pi = createFakePi({ hasUI: false });
    piReporter(pi.ctx())({ slug: "job-1" }).info("✓ step");
    expect(stderr).toHaveBeenCalledWith("info: ✓ step\n");
  });
});
