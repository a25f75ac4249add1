/**
 * Each plugin and driver owns its configuration (issue 29): it ships the JSON Schema of its
 * section, defaults included (`default` on each property), and the application hands them to the
 * kernel. The config schema start-up validates with is the kernel's own schema
 * (schemas/json/kernel-config.schema.json) with those sections put in; the same assembly, written
 * at build time, is schemas/json/config.schema.json for editors and docs/configuration.md's table.
 */
import type { JsonSchema } from '@opco-proxy/schemas';

/** A plugin's top-level section (`jobs`, `hub`...). */
export interface ConfigSection {
  key: string;
  schema: JsonSchema;
}

/** A driver's variant of `store` or `queue`: the keys it reads besides `type`. */
export interface DriverConfig {
  port: 'store' | 'queue';
  type: string;
  schema: JsonSchema;
}

export interface ConfigParts {
  sections?: readonly ConfigSection[];
  drivers?: readonly DriverConfig[];
  /** The plugins enabled when the file names none: the application's default set. */
  defaultPlugins?: readonly string[];
}

type ObjectSchema = JsonSchema & { properties?: Record<string, JsonSchema>; required?: string[]; allOf?: JsonSchema[] };

/** The kernel's schema with the sections and driver variants put in; the inputs are not changed. */
export function assembleConfigSchema(kernel: JsonSchema, parts: ConfigParts): JsonSchema {
  const root = structuredClone(kernel) as ObjectSchema;
  const properties = root.properties ?? {};
  for (const section of parts.sections ?? []) {
    const { $schema: _draft, $id: _id, title: _title, ...schema } = section.schema;
    properties[section.key] = schema;
  }
  for (const driver of parts.drivers ?? []) addVariant(properties[driver.port], driver);
  if (parts.defaultPlugins) properties.plugins = { ...properties.plugins, default: [...parts.defaultPlugins] };
  root.properties = properties;
  return root;
}

/** `type` gains the driver's name, the section its keys, and `if type is it, then its required keys`. */
function addVariant(port: ObjectSchema, driver: DriverConfig): void {
  const variant = driver.schema as ObjectSchema;
  const type = port.properties!.type as { enum: string[] };
  type.enum = [...type.enum, driver.type];
  port.properties = { ...port.properties, ...variant.properties };
  port.allOf = [
    ...(port.allOf ?? []),
    { if: { properties: { type: { const: driver.type } } }, then: { required: ['type', ...(variant.required ?? [])] } },
  ];
}

/**
 * The value with the schema's defaults filled in: a missing key takes its `default`; an object
 * section absent from the file is made from its properties' defaults unless it has required keys
 * (then it is the operator's to give, like `hub`).
 */
export function withDefaults(schema: JsonSchema, value: unknown): unknown {
  const node = schema as ObjectSchema;
  if (value === undefined && node.default !== undefined) return structuredClone(node.default);
  if (!node.properties) return value;
  if (value === undefined && (node.required?.length ?? 0) > 0) return undefined;
  if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) return value;
  const filled: Record<string, unknown> = { ...(value as Record<string, unknown> | undefined) };
  for (const [key, child] of Object.entries(node.properties)) {
    const childValue = withDefaults(child, filled[key]);
    if (childValue !== undefined) filled[key] = childValue;
  }
  return value === undefined && Object.keys(filled).length === 0 ? undefined : filled;
}
