/**
 * Another pi extension that runs its own durable job with `runWorkflow`: `/release-notes <version>` drafts the
 * notes in three checkpointed steps (a crash resumes after the last finished one). Progress goes through pi's
 * UI with `piReporter(ctx)` (a widget above the editor, errors as notifications); the default reporter would
 * print `info: ✓ step` lines on stderr, over pi's screen. docs/pi.md quotes this file; a test runs it in the
 * real pi CLI under tmux and reads the screen.
 */
import { runWorkflow } from "@phasekit/adapters-pi";
import { piReporter, type PiApi } from "@phasekit/adapters-pi/pi";

export default function releaseNotes(pi: PiApi): void {
  pi.registerCommand("release-notes", {
    description: "Draft release notes as a durable job: /release-notes <version>",
    async handler(args, ctx) {
      const version = args.trim() || "next";
      const result = await runWorkflow(
        {
          repoRoot: ctx.cwd,
          toolName: "release-notes",
          target: `release-notes-${version.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}`,
          reenter: true,
          createReporter: piReporter(ctx, { key: "release-notes", title: `📝 release notes ${version}` }),
        },
        async (run) => {
          const changes = await run.step("collect", { version }, () => ["flag --version", "faster start"]);
          const text = await run.step("draft", { version, changes }, () => `## ${version}\n${changes.map((c) => `- ${c}`).join("\n")}`);
          await run.step("check", { text }, () => (text.length > 0 ? "ok" : "empty"));
          run.reporter.info(`release notes ${version} drafted (${changes.length} entries)`);
          return text;
        },
      );
      ctx.ui.notify(`release notes ${version}: ${result.status}`, result.status === "completed" ? "info" : "error");
    },
  });
}
