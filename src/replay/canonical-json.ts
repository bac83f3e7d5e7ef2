/**
 * JSON text with object keys sorted at every level, so values that are equal as JSON data have equal
 * texts whatever their key order (`undefined` reads as `null`, as an absent output does). Replay
 * compares outputs, and recorded with candidate requests, by it.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  if (typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}
