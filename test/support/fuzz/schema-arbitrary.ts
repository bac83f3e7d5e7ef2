import fc from 'fast-check';

/**
 * fast-check arbitraries for the JSON Schemas (2020-12, as OpenAPI 3.1 uses them) of spec/openapi.json:
 * values that satisfy a schema, so the fuzzer reaches past validation into the handlers. Covers the
 * keywords the spec uses ($ref, type lists, const, enum, oneOf/anyOf/allOf, string length, pattern
 * and format, contentMediaType with contentSchema, numeric bounds, arrays, objects with required and
 * additional properties). Recursive schemas stay finite: past `maxDepth` objects keep only their
 * required properties and arrays their minimum length.
 */

type Schema = boolean | Record<string, unknown>;

export interface SchemaArbitraryOptions {
  /** The document `$ref`s point into (`#/components/schemas/X`). */
  root: unknown;
  /** Nesting depth after which values shrink to what the schema requires (default 4). */
  maxDepth?: number;
  /** Arbitraries for string formats (`uuid`, `uri`, …); unknown formats get plain strings. */
  formats?: Record<string, fc.Arbitrary<string>>;
  /** Arbitraries for properties of this name wherever they appear (e.g. `url`, to keep outbound targets safe). */
  properties?: Record<string, fc.Arbitrary<unknown>>;
}

const HARD_DEPTH_MARGIN = 4;

export class SchemaArbitraries {
  private readonly cache = new Map<unknown, Map<number, fc.Arbitrary<unknown>>>();
  private readonly maxDepth: number;

  constructor(private readonly options: SchemaArbitraryOptions) {
    this.maxDepth = options.maxDepth ?? 4;
  }

  /** Values valid against `schema` (a schema object or a `#/…` reference). */
  of(schema: Schema | string, depth = 0): fc.Arbitrary<unknown> {
    const resolved = typeof schema === 'string' ? this.resolve(schema) : schema;
    let byDepth = this.cache.get(resolved);
    if (!byDepth) {
      byDepth = new Map();
      this.cache.set(resolved, byDepth);
    }
    const cached = byDepth.get(depth);
    if (cached) return cached;
    const built = this.build(resolved, depth);
    byDepth.set(depth, built);
    return built;
  }

  resolve(ref: string): Schema {
    if (!ref.startsWith('#/')) throw new Error(`only local references are supported: ${ref}`);
    return ref
      .slice(2)
      .split('/')
      .reduce<unknown>(
        (node, key) => (node as Record<string, unknown>)[key.replace(/~1/g, '/').replace(/~0/g, '~')],
        this.options.root,
      ) as Schema;
  }

  private build(schema: Schema, depth: number): fc.Arbitrary<unknown> {
    if (
      schema === true ||
      (typeof schema === 'object' && Object.keys(schema).every((key) => key === 'description' || key === 'examples'))
    ) {
      return fc.jsonValue({ maxDepth: 2 });
    }
    if (schema === false) return fc.constant(undefined);
    if (depth > this.maxDepth + HARD_DEPTH_MARGIN) return fc.constant(null);
    const s = schema;
    if (typeof s.$ref === 'string') return this.of(s.$ref, depth);
    if ('const' in s) return fc.constant(s.const);
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    const branches = (s.oneOf ?? s.anyOf) as Schema[] | undefined;
    if (branches) {
      // Past the depth limit, prefer branches that do not recurse (the first ones in this spec's unions are the leaves).
      const chosen = depth > this.maxDepth ? branches.slice(0, 1) : branches;
      return fc.oneof(...chosen.map((branch) => this.of(branch, depth + 1)));
    }
    if (Array.isArray(s.allOf)) {
      return fc
        .tuple(...(s.allOf as Schema[]).map((part) => this.of(part, depth)))
        .map((parts) => Object.assign({}, ...parts.filter((part) => part && typeof part === 'object')) as unknown);
    }
    const types = Array.isArray(s.type)
      ? (s.type as string[])
      : typeof s.type === 'string'
        ? [s.type]
        : [this.inferType(s)];
    if (types.length > 1) return fc.oneof(...types.map((type) => this.ofType(type, s, depth)));
    return this.ofType(types[0], s, depth);
  }

  private inferType(s: Record<string, unknown>): string {
    if (s.properties || s.additionalProperties !== undefined || s.required) return 'object';
    if (s.items) return 'array';
    if (s.pattern || s.minLength !== undefined || s.format) return 'string';
    if (s.minimum !== undefined || s.maximum !== undefined) return 'number';
    return 'any';
  }

  private ofType(type: string, s: Record<string, unknown>, depth: number): fc.Arbitrary<unknown> {
    switch (type) {
      case 'string':
        return this.string(s, depth);
      case 'integer':
        return fc.integer({
          min: bound(s.minimum, s.exclusiveMinimum, 1, -(2 ** 31)),
          max: bound(s.maximum, s.exclusiveMaximum, -1, 2 ** 31 - 1),
        });
      case 'number':
        return fc.double({
          min: bound(s.minimum, s.exclusiveMinimum, 0, -1e12),
          max: bound(s.maximum, s.exclusiveMaximum, 0, 1e12),
          noNaN: true,
          noDefaultInfinity: true,
        });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return this.array(s, depth);
      case 'object':
        return this.object(s, depth);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  private string(s: Record<string, unknown>, depth: number): fc.Arbitrary<string> {
    const minLength = (s.minLength as number | undefined) ?? 0;
    const maxLength = (s.maxLength as number | undefined) ?? 10_000;
    const fits = (value: string) => value.length >= minLength && value.length <= maxLength;
    if (typeof s.format === 'string') {
      const format =
        this.options.formats?.[s.format] ??
        (s.format === 'uuid'
          ? fc.uuid()
          : s.format === 'date-time'
            ? fc.date({ noInvalidDate: true }).map((date) => date.toISOString())
            : undefined);
      if (format) return format.filter(fits);
    }
    if (typeof s.pattern === 'string') {
      return fc.stringMatching(new RegExp(s.pattern as string), { size: 'small' }).filter(fits);
    }
    if (s.contentMediaType === 'application/json' && s.contentSchema && depth <= this.maxDepth) {
      return fc
        .oneof(
          {
            arbitrary: this.of(s.contentSchema as Schema, depth + 1).map((value) => JSON.stringify(value) ?? 'null'),
            weight: 3,
          },
          { arbitrary: fc.string({ minLength, maxLength: Math.min(maxLength, 40) }), weight: 1 },
        )
        .filter(fits);
    }
    return fc
      .string({ unit: 'grapheme', minLength, maxLength: Math.max(minLength, Math.min(maxLength, 40)) })
      .filter(fits);
  }

  private array(s: Record<string, unknown>, depth: number): fc.Arbitrary<unknown[]> {
    const minLength = (s.minItems as number | undefined) ?? 0;
    const limit = depth >= this.maxDepth ? minLength : 4;
    const maxLength = Math.max(minLength, Math.min((s.maxItems as number | undefined) ?? limit, limit));
    const items = this.of((s.items as Schema | undefined) ?? true, depth + 1);
    if (s.uniqueItems)
      return fc.uniqueArray(items, { minLength, maxLength, selector: (value) => JSON.stringify(value) });
    return fc.array(items, { minLength, maxLength });
  }

  private object(s: Record<string, unknown>, depth: number): fc.Arbitrary<Record<string, unknown>> {
    const properties = (s.properties ?? {}) as Record<string, Schema>;
    const required = new Set((s.required ?? []) as string[]);
    const deep = depth >= this.maxDepth;
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, schema] of Object.entries(properties)) {
      if (deep && !required.has(name)) continue;
      record[name] = this.options.properties?.[name] ?? this.of(schema, depth + 1);
    }
    for (const name of required) record[name] ??= fc.jsonValue({ maxDepth: 1 });
    const known = fc.record(record, { requiredKeys: [...required].filter((name) => name in record) });
    const extra = s.additionalProperties ?? s.unevaluatedProperties;
    const withExtras =
      extra === undefined || extra === false || deep
        ? known
        : fc
            .tuple(
              known,
              fc.dictionary(
                fc.string({ minLength: 1, maxLength: 12 }).filter((key) => !(key in properties)),
                this.of(extra as Schema, depth + 1),
                { maxKeys: 3 },
              ),
            )
            .map(([fixed, more]) => Object.assign(more, fixed));
    const minProperties = (s.minProperties as number | undefined) ?? 0;
    return minProperties > 0 ? withExtras.filter((value) => Object.keys(value).length >= minProperties) : withExtras;
  }
}

/** A numeric bound from `minimum`/`maximum` or their exclusive forms (`step` steps inside), else `fallback`. */
function bound(inclusive: unknown, exclusive: unknown, step: number, fallback: number): number {
  if (typeof inclusive === 'number') return inclusive;
  if (typeof exclusive === 'number') return exclusive + step;
  return fallback;
}
