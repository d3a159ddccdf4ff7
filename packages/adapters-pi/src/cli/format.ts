/** Text layout shared by the commands: aligned tables, ages and durations a person reads at a glance. */

/** Columns padded to their widest cell; the last column is not padded. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n") + "\n";
}

/** `42s`, `5m`, `3h`, `12d`: the largest whole unit. */
export function age(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86_400)}d`;
}

/** `850ms`, `2.4s`, `3m12s`, `2h05m`: rounded once, so a carry never prints as `1m60s`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 59_950) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  const m = Math.round(ms / 60_000);
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" });

/** `text` cut to at most `max` characters as a person counts them (never half an emoji), with `...` when cut. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let out = "";
  for (const { segment } of graphemes.segment(text)) {
    if (out.length + segment.length > max - 3) break;
    out += segment;
  }
  return `${out}...`;
}

/** Parses `30d`, `12h`, `90m`, `45s`, `500ms` (or bare milliseconds) into milliseconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)?$/.exec(text.trim());
  if (m === null) return undefined;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[(m[2] ?? "ms") as "ms"];
  return Math.round(Number(m[1]) * unit);
}
