/**
 * What `npm run test:consumer` reads in a tour's source: the casts it makes and the operations it calls. A plain
 * scan, not a parser: comments and string literals are blanked first, so prose and step titles do not count.
 */
import type { RouteDefinition } from '../../generated/routes.js';

/** The source with comments and the contents of string and template literals blanked (line numbers kept). */
export function codeOnly(source: string): string {
  return source.replace(
    /\/\*[\s\S]*?\*\/|\/\/[^\n]*|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`/g,
    (match) =>
      /^['"`]/.test(match)
        ? `${match[0]}${match.slice(1, -1).replace(/[^\n]/g, ' ')}${match.at(-1) ?? ''}`
        : match.replace(/[^\n]/g, ' '),
  );
}

export interface Cast {
  line: number;
  text: string;
}

/**
 * Type assertions: `x as T` (not `as const`), non-null assertions `x!`, and angle-bracket casts `<T>x`.
 * A `!` right after an identifier, `)` or `]` and not starting `!=` is a non-null assertion.
 */
export function castsIn(source: string): Cast[] {
  const casts: Cast[] = [];
  const original = source.split('\n');
  codeOnly(source)
    .split('\n')
    .forEach((line, index) => {
      const found = [
        ...line.matchAll(/\bas\s+(?!const\b)[\w{[(]/g),
        ...line.matchAll(/[\w)\]]!(?!=)/g),
        ...line.matchAll(/(?:[=(,:?]|\breturn)\s*<[A-Z][\w.]*(?:<[^<>]*>)?(?:\[\])?>\s*[\w[{]/g),
      ];
      for (const _ of found) casts.push({ line: index + 1, text: (original[index] ?? '').trim() });
    });
  return casts;
}

/**
 * The operationIds a tour calls: by name (SDK functions and methods named after the operationId) or, for
 * path-addressed clients (openapi-fetch), as `METHOD('<path>'`.
 */
export function operationsCalledBy(source: string, routes: readonly RouteDefinition[]): Set<string> {
  const code = codeOnly(source);
  const called = new Set<string>();
  for (const route of routes) {
    const byName = new RegExp(`\\b${route.operationId}\\s*\\(`).test(code);
    const byPath = source.includes(`${route.method.toUpperCase()}('${route.path}'`);
    if (byName || byPath) called.add(route.operationId);
  }
  return called;
}
