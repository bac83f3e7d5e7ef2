/**
 * The Content-Type express-openapi-validator is shown: the media type with its charset and boundary, every other
 * parameter left out, the charset value trimmed, unquoted and lower-cased.
 *
 * Why: the validator compiles a request validator per method, path and content type *with all its parameters*
 * (its ContentType.normalize) and caches it for ever. So `application/json; x=1`, `x=2`, … each compiled one more
 * on the event loop: 113–145 ms of the loop's own work and about 1.6 MB that is never freed, per request, at will
 * for anyone with a token (measured on importScenarios; test/http/validator-content-type.test.ts). Parameters mean
 * nothing to the validator, which matches an operation's content by media type; the body parsers before it have
 * read the charset (refusing unknown ones with 415) and multer the boundary. What is left is a handful of keys per
 * operation (its media types, the charsets the parsers accept).
 */
export function validatorContentType(header: string): string {
  const [type, ...parameters] = splitParameters(header);
  const kept: string[] = [type.trim().toLowerCase()];
  for (const parameter of parameters) {
    const equals = parameter.indexOf('=');
    if (equals < 0) continue;
    const name = parameter.slice(0, equals).trim().toLowerCase();
    const value = parameter
      .slice(equals + 1)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    if (name === 'charset' && !kept.some((entry) => entry.startsWith('charset=')))
      kept.push(`charset=${value.toLowerCase()}`);
    else if (name === 'boundary' && !kept.some((entry) => entry.startsWith('boundary=')))
      kept.push(`boundary=${value}`);
  }
  return kept.join('; ');
}

/** `type; a=1; b="x;y"` → [`type`, `a=1`, `b="x;y"`]: a quoted value may hold `;`. */
function splitParameters(header: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (const char of header) {
    if (char === '"') quoted = !quoted;
    if (char === ';' && !quoted) {
      parts.push(current);
      current = '';
    } else {
      current += char;
    }
  }
  parts.push(current);
  return parts;
}
