import fc from 'fast-check';

/**
 * Values a careless or hostile client sends: strings that break quoting, encodings and parsers,
 * numbers out of every range, path segments that try to escape routing, bodies that are broken,
 * huge or deep. Large payloads are described (`FuzzBody`) and only built when sent, so a failing
 * request prints in a few lines.
 */

/** A request body as generated: literal text or bytes, or a large text described by repetition. */
export type FuzzBody =
  | { text: string }
  | { bytes: string /* base64 */ }
  | { repeat: { head: string; unit: string; count: number; tail: string; closing?: string; end?: string } };

export function renderBody(body: FuzzBody): Buffer {
  if ('text' in body) return Buffer.from(body.text, 'utf8');
  if ('bytes' in body) return Buffer.from(body.bytes, 'base64');
  const { head, unit, count, tail, closing, end } = body.repeat;
  return Buffer.from(head + unit.repeat(count) + tail + (closing ?? '').repeat(count) + (end ?? ''), 'utf8');
}

export function describeBody(body: FuzzBody | undefined): string {
  if (!body) return '(no body)';
  if ('text' in body)
    return body.text.length > 600
      ? `${JSON.stringify(body.text.slice(0, 600))}… (${body.text.length} characters)`
      : JSON.stringify(body.text);
  if ('bytes' in body) return `bytes (base64) ${body.bytes.length > 600 ? `${body.bytes.slice(0, 600)}…` : body.bytes}`;
  const { head, unit, count, tail, closing, end } = body.repeat;
  return `${JSON.stringify(head)} + ${JSON.stringify(unit)} × ${count} + ${JSON.stringify(tail)}${closing ? ` + ${JSON.stringify(closing)} × ${count}` : ''}${end ? ` + ${JSON.stringify(end)}` : ''}`;
}

export const hostileStrings: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '  padded  ',
      '\t',
      '\n',
      '\r\n',
      '\u0000',
      'a\u0000b',
      '\u001b[31m',
      "' OR '1'='1",
      '"; DROP TABLE users; --',
      "\\'; SELECT SLEEP(5); --",
      '`id`',
      '$(id)',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent as plain text
      '${7*7}',
      '{{7*7}}',
      '#{7*7}',
      '<script>alert(1)</script>',
      '../../etc/passwd',
      '..\\..\\windows\\win.ini',
      '/',
      '\\',
      '.',
      '..',
      '...',
      '%',
      '%00',
      '%zz',
      '%2e%2e',
      '%2F',
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      'hasOwnProperty',
      'valueOf',
      'null',
      'undefined',
      'NaN',
      'Infinity',
      '-Infinity',
      'true',
      'false',
      '[]',
      '{}',
      '0',
      '-0',
      '1e309',
      '0x1F',
      '99999999999999999999',
      '\uFEFFbom',
      '\u202Eevil',
      'é',
      'É',
      'ß',
      'İ',
      'ǅ',
      'ﬀ',
      '𝕏',
      '😀',
      'a\u0301',
      '\uD800',
      '\uDFFF',
      '\u2028',
      '\uFFFF',
      'CON',
      'NUL',
      'aux.csv',
      'a'.repeat(191),
      'a'.repeat(256),
      'x'.repeat(4096),
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 24 }) },
);

/** Numbers, as text in paths and query strings, that break integer parsing or SQL literals. */
export const hostileNumberTexts: fc.Arbitrary<string> = fc.constantFrom(
  '0',
  '-1',
  '-0',
  '1.5',
  '1e3',
  '1e400',
  '01',
  '+1',
  ' 1',
  '1 ',
  '0x10',
  '0b1',
  '1_000',
  'Infinity',
  'NaN',
  '',
  'true',
  'null',
  '2147483647',
  '2147483648',
  '4294967296',
  '9007199254740991',
  '9007199254740993',
  '18446744073709551616',
  '99999999999999999999',
  '-99999999999999999999',
  '9'.repeat(400),
  '1;DROP TABLE users',
  '1 OR 1=1',
  '[1]',
  '{"a":1}',
);

/** JSON values of the wrong type for wherever they land. */
export const wrongTypeValues: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    -0,
    1e308,
    -1e308,
    2 ** 53 + 2,
    '',
    'text',
    [],
    [null],
    {},
    { '': null },
    { __proto__: null },
    [[[]]],
    { constructor: { prototype: {} } },
  ),
  fc.jsonValue({ maxDepth: 3 }),
);

/** Raw path segments (already as they go on the wire) that try to escape or confuse routing. */
export const hostileSegments: fc.Arbitrary<string> = fc.constantFrom(
  '',
  '.',
  '..',
  '%2e',
  '%2E%2E',
  '..%2F',
  '%2F',
  'a%2Fb',
  '%2F..%2F..%2F',
  '%5C',
  'a%5Cb',
  '%00',
  '%',
  '%zz',
  '%E0%A4%A',
  '%C0%AE%C0%AE',
  '%25',
  '%252F',
  ';',
  'a;b=c',
  '%3B',
  '%3F',
  '%23',
  '*',
  '~',
  '@',
  ':',
  '%20',
  '+',
  'x'.repeat(5000),
  '%F0%9F%98%80',
  '%EF%BB%BF',
  '%D8%00',
  'CON',
  '1%20OR%201=1',
);

/** Texts that break JSON parsing (the fuzzer also cuts valid documents short). */
export const brokenJsonTexts: fc.Arbitrary<string> = fc.constantFrom(
  '',
  ' ',
  '{',
  '}',
  '[',
  '{"a":}',
  '{"a":1,}',
  '[1,]',
  "{'a':1}",
  '{a:1}',
  'NaN',
  'undefined',
  '{"a":NaN}',
  '{"a":Infinity}',
  '{"a":1}{"b":2}',
  '{"a":"\\x"}',
  '{"a":"\\ud800"}',
  '"\u0000"',
  '{"a":"line\nbreak"}',
  '\uFEFF{"a":1}',
  '{"a":1e999999}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  `[${'1,'.repeat(10)}]`,
  '{"a":1,"a":2}',
  '123',
  '"string"',
  'true',
  'null',
  '{"a":01}',
  '{"a":.5}',
  '{"a":-}',
  '{"a":+1}',
  '/* c */{}',
  '{"a":1}//',
);

/** Texts that break YAML parsing or expand badly. */
export const brokenYamlTexts: fc.Arbitrary<string> = fc.constantFrom(
  'a: [1, 2',
  'a: {b: 1',
  'a:\n\t- tab',
  'a: b: c',
  '- a\nb: 1',
  '"unclosed',
  "'unclosed",
  'a: *nosuchalias',
  'a: &x 1\nb: &x 2\nc: *x',
  'a: 1\na: 2',
  '? [a]\n: 1',
  '!!js/function "function(){}"',
  'a: !!binary "####"',
  'a: !custom 1',
  '%YAML 9.9\n---\na: 1',
  '---\na: 1\n---\nb: 2',
  '...',
  '---',
  '',
  '@reserved',
  '`reserved',
  'a: |\n  text\n b: 1',
  '{a: 1}}',
  '- - - - -',
  'x: &a [*a]',
  'a: 0x1G',
  'a: .inf',
  'a: .nan',
  'a: 2001-12-14t21:59:43.10-05:00',
  'a: !!timestamp nope',
  // The billion laughs: aliases that expand exponentially.
  'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: [*f,*f,*f,*f,*f,*f,*f,*f,*f]',
);

const NESTING_DEPTHS = [32, 257, 1_000, 5_000, 20_000, 100_000] as const;

/** How to nest a JSON value `depth` levels deep: `open` × depth, a leaf, `close` × depth. */
export const jsonNestings: fc.Arbitrary<{ depth: number; open: string; leaf: string; close: string }> = fc
  .record({
    depth: fc.constantFrom(...NESTING_DEPTHS),
    shape: fc.constantFrom('array', 'object'),
  })
  .map(({ depth, shape }) =>
    shape === 'array' ? { depth, open: '[', leaf: '1', close: ']' } : { depth, open: '{"a":', leaf: '1', close: '}' },
  );

/** JSON nested `depth` levels deep (arrays, objects, or both), as text built at send time. */
export const deepJsonBodies: fc.Arbitrary<FuzzBody> = fc
  .record({
    depth: fc.constantFrom(...NESTING_DEPTHS),
    shape: fc.constantFrom('array', 'object', 'object-in-key', 'mixed'),
  })
  .map(({ depth, shape }): FuzzBody => {
    if (shape === 'array') return { repeat: { head: '', unit: '[', count: depth, tail: '1', closing: ']' } };
    if (shape === 'object') return { repeat: { head: '', unit: '{"a":', count: depth, tail: '1', closing: '}' } };
    if (shape === 'object-in-key')
      return { repeat: { head: '{"inputs":', unit: '{"a":', count: depth, tail: '1', closing: '}', end: '}' } };
    return { repeat: { head: '{"x":1,"deep":', unit: '[{"a":', count: depth, tail: '1', closing: '}]', end: '}' } };
  });

/** YAML nested `depth` levels deep. */
export const deepYamlBodies: fc.Arbitrary<FuzzBody> = fc
  .record({
    depth: fc.constantFrom(...NESTING_DEPTHS),
    shape: fc.constantFrom('flow-sequence', 'flow-map', 'block'),
  })
  .map(({ depth, shape }): FuzzBody => {
    if (shape === 'flow-sequence')
      return { repeat: { head: 'name: deep\ncontent: ', unit: '[', count: depth, tail: 'x', closing: ']' } };
    if (shape === 'flow-map')
      return { repeat: { head: 'name: deep\ncontent: ', unit: '{a: ', count: depth, tail: 'x', closing: '}' } };
    return { repeat: { head: 'name: deep\ncontent:\n', unit: '- ', count: Math.min(depth, 20_000), tail: 'x\n' } };
  });

/** Bodies far over any limit, and large but legal-looking ones. */
export const hugeJsonBodies: fc.Arbitrary<FuzzBody> = fc.constantFrom<FuzzBody>(
  { repeat: { head: '{"pad":"', unit: 'x', count: 2_000_000, tail: '"}' } },
  { repeat: { head: '{"pad":"', unit: 'x', count: 900_000, tail: '"}' } },
  { repeat: { head: '[', unit: '{"a":1},', count: 100_000, tail: '{"a":1}]' } },
  { repeat: { head: '{', unit: '"k":1,', count: 150_000, tail: '"z":1}' } },
  { repeat: { head: '{"n":', unit: '9', count: 500_000, tail: '}' } },
  { repeat: { head: '{"s":"', unit: '\\u0000', count: 100_000, tail: '"}' } },
);

/** Path literals with their letters' case changed (`/API/Scenario/…`). */
export function caseVariant(text: string, flips: number[]): string {
  const chars = [...text];
  const letters = chars.map((char, index) => (/[a-z]/i.test(char) ? index : -1)).filter((index) => index >= 0);
  if (letters.length === 0) return text;
  for (const flip of flips) {
    const index = letters[flip % letters.length];
    const char = chars[index];
    chars[index] = char === char.toLowerCase() ? char.toUpperCase() : char.toLowerCase();
  }
  return chars.join('');
}

/**
 * encodeURIComponent, except that lone surrogates (which it refuses) go on the wire as the bytes
 * WTF-8 gives them (`%ED%A0%80`): not valid UTF-8, which is the point.
 */
export function encodeWire(value: string): string {
  let wire = '';
  for (const char of value) {
    const code = char.codePointAt(0) as number;
    wire +=
      code >= 0xd800 && code <= 0xdfff
        ? [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)]
            .map((byte) => `%${byte.toString(16).toUpperCase()}`)
            .join('')
        : encodeURIComponent(char);
  }
  return wire;
}

/** Header values stay within what HTTP allows on the wire (Node's client refuses the rest). */
export function headerSafe(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}
