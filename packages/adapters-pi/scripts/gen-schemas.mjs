// Build step: writes schemas/*.schema.json from the zod schemas (run after tsc; see package.json "build").
import { mkdirSync, writeFileSync } from "node:fs";
import { generateJsonSchemas } from "../dist/definitions/json-schemas.js";

const dir = new URL("../schemas/", import.meta.url);
mkdirSync(dir, { recursive: true });
for (const [file, text] of Object.entries(generateJsonSchemas())) writeFileSync(new URL(file, dir), text);
