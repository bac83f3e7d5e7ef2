import type { RequestHandler } from 'express';

/**
 * The one reading of a query string, on both lanes: `application/x-www-form-urlencoded`, as node:querystring and
 * URLSearchParams read it. `+` is a space, `%XX` escapes are decoded once, and the reserved characters RFC 3986
 * allows in a query (`:`, `/`, `?`, `@`, `!`, `$`, `'`, `(`, `)`, `*`, `,`, `;`, `[`, `]`) may come raw: axios and
 * the clients generated on it leave `:` raw in date-times, and `name=credit+decision` is "credit decision".
 */

/** Form decoding, once: `+` is a space; a broken escape is kept as it came (node:querystring does the same). */
export function formDecode(text: string): string {
  const spaced = text.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/**
 * The same query with every value percent-encoded as encodeURIComponent writes it (names are kept as sent: they
 * carry deepObject brackets). Reading it gives the same values as reading the original.
 */
export function canonicalQueryString(query: string): string {
  return query
    .split('&')
    .map((pair) => {
      const separator = pair.indexOf('=');
      if (separator === -1) return pair;
      return `${pair.slice(0, separator + 1)}${encodeURIComponent(formDecode(pair.slice(separator + 1)))}`;
    })
    .join('&');
}

/**
 * Express lane, before anything reads the query: the URL's query in its canonical form, so the request validator
 * (which refuses raw reserved characters unless a parameter says `allowReserved`) reads the values the fast lane
 * reads, whichever way the client encoded them.
 */
export const canonicalQuery: RequestHandler = (request, _response, next) => {
  const at = request.url.indexOf('?');
  if (at !== -1) {
    const canonical = `${request.url.slice(0, at + 1)}${canonicalQueryString(request.url.slice(at + 1))}`;
    if (canonical !== request.url) {
      const originalAt = request.originalUrl.indexOf('?');
      request.originalUrl = `${request.originalUrl.slice(0, originalAt === -1 ? undefined : originalAt)}${canonical.slice(at)}`;
      request.url = canonical;
    }
  }
  next();
};
