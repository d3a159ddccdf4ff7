// A payload form from the JSON Schema a wait asks for, for the schema subset gates use: an object whose
// properties are strings, numbers, integers, booleans or enums (`required` marks fields). Anything else answers
// null and the page falls back to a JSON text box. The form only gathers values: the run checks the payload
// against the schema and refuses a bad one (journal `approval-refused`), so no rule is copied here.

const SCALARS = ["string", "number", "integer", "boolean"];

/** A field for each property, or null when the schema is outside the subset. `el` is the page's element maker. */
export function schemaForm(schema, el) {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return null;
  if (schema.type !== "object" || schema.properties === null || typeof schema.properties !== "object") return null;
  const required = Array.isArray(schema.required) ? schema.required : [];
  const fields = [];
  // Required fields first, in `required`'s order (a journalled schema has its keys sorted), then the others.
  const names = [...required.filter((r) => Object.hasOwn(schema.properties, r)), ...Object.keys(schema.properties).filter((n) => !required.includes(n))];
  for (const name of names) {
    const prop = schema.properties[name];
    const field = fieldOf(name, prop, required.includes(name), el);
    if (field === null) return null;
    fields.push(field);
  }
  if (required.some((r) => !fields.some((f) => f.name === r))) return null;
  const node = el("fieldset", { id: "approve-fields" }, el("legend", {}, "Payload"), ...fields.map((f) => f.row));
  /** The payload the fields hold (empty optional fields left out). */
  const value = () => {
    const out = {};
    for (const f of fields) {
      const v = f.read();
      if (v !== undefined) out[f.name] = v;
    }
    return out;
  };
  return { node, value };
}

function fieldOf(name, prop, required, el) {
  if (prop === null || typeof prop !== "object" || Array.isArray(prop)) return null;
  const id = `approve-field-${name}`;
  const label = (control) => el("label", { class: "field" }, `${name}${required ? " *" : ""} `, control, prop.description ? el("span", { class: "muted" }, ` ${prop.description}`) : "");
  if (Array.isArray(prop.enum)) {
    if (!prop.enum.every((v) => v === null || ["string", "number", "boolean"].includes(typeof v))) return null;
    const select = el("select", { id, name }, required ? "" : el("option", { value: "" }, "—"), ...prop.enum.map((v, i) => el("option", { value: String(i) }, JSON.stringify(v))));
    return { name, row: label(select), read: () => (select.value === "" ? undefined : prop.enum[Number(select.value)]) };
  }
  if (!SCALARS.includes(prop.type)) return null;
  if (prop.type === "boolean") {
    const box = el("input", { id, name, type: "checkbox" });
    if (prop.default === true) box.checked = true;
    return { name, row: label(box), read: () => box.checked };
  }
  const numeric = prop.type !== "string";
  const input = el("input", { id, name, type: numeric ? "number" : "text", ...(prop.type === "integer" ? { step: "1" } : numeric ? { step: "any" } : {}) });
  if (prop.default !== undefined) input.value = String(prop.default);
  // An empty optional field is left out; an empty required one is sent as it is, for the run to name it.
  const read = () => {
    if (input.value === "") return required && !numeric ? "" : undefined;
    return numeric ? Number(input.value) : input.value;
  };
  return { name, row: label(input), read };
}
