/**
 * Reading environment variables, for every setting that comes from one (src/config/config.ts, the execution
 * settings): unset and empty both mean the default; a value that does not parse stops the process at start-up
 * with the variable's name in the message.
 */

/** An integer ≥ min (0 unless given). */
export function readInt(env: NodeJS.ProcessEnv, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be ${min === 0 ? 'a non-negative integer' : `an integer ≥ ${min}`}, got "${raw}"`);
  return value;
}

/** As readInt, with no value when the variable is unset or empty (the reader's own default applies). */
export function readOptionalInt(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  return raw === undefined || raw === '' ? undefined : readInt(env, name, 0);
}

/** A finite number. */
export function readNumber(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new Error(`${name} must be a number, got "${raw}"`);
  return value;
}

/** `true` or `false`. */
export function readBoolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new Error(`${name} must be true or false, got "${raw}"`);
}

/** Comma-separated items, trimmed, empty ones dropped. */
export function readList(env: NodeJS.ProcessEnv, name: string): string[] {
  return (env[name] ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}
