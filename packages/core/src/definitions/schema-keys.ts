/** The key pattern shared by the definition schemas (its own module so schema files can import it without a cycle). */

/**
 * Workflow keys, phase ids and references: the user's own spelling, as pi-workflows 1.0.0 accepts it (any text
 * with a visible character: `1-research`, `research.v2`, `Review Flow`, `_private`, non-Latin). phasekit never
 * parses them out of a string: state paths hold them as JSON values, field paths quote them (`a["x.y"]`).
 */
export const KEY_PATTERN = /\S/u;
