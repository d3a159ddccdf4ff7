#!/usr/bin/env node
// The `phasekit` bin. It runs main() unconditionally: a "was I executed directly?" check against
// import.meta.url fails under npm, pnpm and yarn, whose bins are symlinks (argv[1] is the link, not this file).
// It is a committed file, not build output, so installing the workspace links it without an ENOENT warning.
import("../dist/cli/main.js").then(
  (cli) => cli.main(process.argv.slice(2)).then((code) => { process.exitCode = code; }),
  (error) => {
    const missing = error && error.code === "ERR_MODULE_NOT_FOUND";
    process.stderr.write(missing ? "phasekit: the package is not built (dist/ is missing); run `pnpm build` first\n" : `phasekit: ${error && error.stack || error}\n`);
    process.exitCode = 1;
  },
);
