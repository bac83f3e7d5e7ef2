/**
 * The one reading of a query string, on both lanes (Express's `query parser` and the fast lane call it):
 * `application/x-www-form-urlencoded` as URLSearchParams reads it. `+` is a space, `%XX` escapes are decoded
 * once, and the reserved characters RFC 3986 allows in a query (`:`, `/`, `?`, `@`, `!`, `$`, `'`, `(`, `)`, `*`,
 * `,`, `;`, `[`, `]`) may come raw: axios and the clients generated on it leave `:` raw in date-times, and
 * `name=credit+decision` is "credit decision". A name given twice holds the list of its values (which a
 * parameter's schema then refuses: no parameter of the spec is a list).
 *
 * Written with character codes, not regular expressions or split(): it runs on every request of the fast lane.
 */

const PLUS = 43;
const PERCENT = 37;
const AMPERSAND = 38;
const EQUALS = 61;

/** Form decoding, once: `+` is a space; a broken escape is kept as it came (as node:querystring keeps it). */
export function formDecode(text: string): string {
  let plain = true;
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === PLUS || code === PERCENT) {
      plain = false;
      break;
    }
  }
  if (plain) return text;
  const spaced = text.includes('+') ? text.replaceAll('+', ' ') : text;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/**
 * A query's values by name, in a prototype-less object (a name such as `__proto__` or `constructor` is a name like
 * any other). One class, so every parsed query starts from the same hidden class.
 */
export type QueryValues = Record<string, string | string[]>;
function ParsedQuery(): void {}
ParsedQuery.prototype = Object.create(null) as object;

/** The query string (without its `?`) as values by name; an empty pair (`a&&b`) is skipped, `a` alone is `a=`. */
export function parseQueryString(text: string): QueryValues {
  const values = new (ParsedQuery as unknown as new () => QueryValues)();
  let start = 0;
  const length = text.length;
  while (start < length) {
    let end = start;
    let equals = -1;
    while (end < length) {
      const code = text.charCodeAt(end);
      if (code === AMPERSAND) break;
      if (code === EQUALS && equals < 0) equals = end;
      end++;
    }
    if (end > start) {
      const name = formDecode(text.slice(start, equals < 0 ? end : equals));
      const value = equals < 0 ? '' : formDecode(text.slice(equals + 1, end));
      const previous = values[name];
      if (previous === undefined) values[name] = value;
      else if (typeof previous === 'string') values[name] = [previous, value];
      else previous.push(value);
    }
    start = end + 1;
  }
  return values;
}
