/**
 * Finds the free-standing identifiers a JavaScript snippet mentions (not property names after `.`),
 * skipping strings, comments and regular expressions. Used to bind only the variables a snippet reads,
 * and to report variables nothing upstream defines. Never evaluates anything.
 */
const KEYWORDS = new Set(
  (
    'break case catch class const continue debugger default delete do else export extends false finally for function if ' +
    'import in instanceof let new null return super switch this throw true try typeof var void while with yield await ' +
    'async of static get set enum implements interface package private protected public arguments eval undefined NaN Infinity'
  ).split(' '),
);

/** Globals of the sandbox context: never bound as scenario variables. */
export const SANDBOX_GLOBALS = new Set(
  (
    'Object Function Array Number parseFloat parseInt Boolean String Symbol Date Promise RegExp Error AggregateError EvalError ' +
    'RangeError ReferenceError SyntaxError TypeError URIError globalThis JSON Math Intl ArrayBuffer Uint8Array Int8Array ' +
    'Uint16Array Int16Array Uint32Array Int32Array Float32Array Float64Array Uint8ClampedArray BigUint64Array BigInt64Array ' +
    'DataView Map BigInt Set WeakMap WeakSet Proxy Reflect decodeURI decodeURIComponent encodeURI encodeURIComponent escape ' +
    'unescape isFinite isNaN'
  ).split(' '),
);

/** Names inherited by every object: variables hold plain objects, so these cannot be variable names. */
const OBJECT_PROTOTYPE_NAMES = new Set(Object.getOwnPropertyNames(Object.prototype));

export function isReservedName(name: string): boolean {
  return (
    KEYWORDS.has(name) ||
    SANDBOX_GLOBALS.has(name) ||
    OBJECT_PROTOTYPE_NAMES.has(name) ||
    name === 'value' ||
    name === 'result'
  );
}

const REGEX_PRECEDERS = new Set([
  '(',
  ',',
  '=',
  ':',
  '[',
  '!',
  '&',
  '|',
  '?',
  '{',
  '}',
  ';',
  '+',
  '-',
  '*',
  '%',
  '<',
  '>',
  '~',
  '^',
]);
const REGEX_KEYWORDS = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
]);

export function referencedIdentifiers(code: string): Set<string> {
  const found = new Set<string>();
  let i = 0;
  let lastSignificant = ''; // last token: punctuation char or 'id:<word>'
  const templateDepth: number[] = []; // brace depth at which each open template's `${` started
  let braceDepth = 0;
  const n = code.length;
  while (i < n) {
    const ch = code[i];
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') {
      i++;
      continue;
    }
    if (ch === '/' && code[i + 1] === '/') {
      while (i < n && code[i] !== '\n') i++;
      continue;
    }
    if (ch === '/' && code[i + 1] === '*') {
      const end = code.indexOf('*/', i + 2);
      i = end < 0 ? n : end + 2;
      continue;
    }
    if (ch === '"' || ch === "'") {
      i = skipString(code, i, ch);
      lastSignificant = 'str';
      continue;
    }
    if (ch === '`') {
      i = skipTemplate(code, i + 1, templateDepth, braceDepth);
      lastSignificant = 'str';
      continue;
    }
    if (ch === '}' && templateDepth.length > 0 && templateDepth[templateDepth.length - 1] === braceDepth) {
      templateDepth.pop();
      i = skipTemplate(code, i + 1, templateDepth, braceDepth);
      lastSignificant = 'str';
      continue;
    }
    if (ch === '/') {
      const prev = lastSignificant;
      const regexAllowed =
        prev === '' || REGEX_PRECEDERS.has(prev) || (prev.startsWith('id:') && REGEX_KEYWORDS.has(prev.slice(3)));
      if (regexAllowed) {
        i = skipRegex(code, i);
        lastSignificant = 'str';
        continue;
      }
      i++;
      lastSignificant = '/';
      continue;
    }
    if (/[A-Za-z_$]/.test(ch)) {
      let j = i + 1;
      while (j < n && /[A-Za-z0-9_$]/.test(code[j])) j++;
      const word = code.slice(i, j);
      const afterDot = lastSignificant === '.';
      if (!afterDot && !KEYWORDS.has(word)) found.add(word);
      lastSignificant = afterDot ? 'prop' : `id:${word}`;
      i = j;
      continue;
    }
    if (/[0-9]/.test(ch)) {
      let j = i + 1;
      while (j < n && /[0-9A-Za-z_.]/.test(code[j])) j++;
      i = j;
      lastSignificant = 'num';
      continue;
    }
    if (ch === '.' && code[i + 1] === '.' && code[i + 2] === '.') {
      i += 3;
      lastSignificant = ',';
      continue;
    }
    if (ch === '{') braceDepth++;
    if (ch === '}') braceDepth--;
    lastSignificant = ch;
    i++;
  }
  return found;
}

function skipString(code: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < code.length && code[i] !== quote) {
    if (code[i] === '\\') i++;
    if (code[i] === '\n') break;
    i++;
  }
  return i + 1;
}

/** Skips template text from `start` up to the closing backtick or to a `${` (then records the brace depth and returns). */
function skipTemplate(code: string, start: number, templateDepth: number[], braceDepth: number): number {
  let i = start;
  while (i < code.length) {
    if (code[i] === '\\') {
      i += 2;
      continue;
    }
    if (code[i] === '`') return i + 1;
    if (code[i] === '$' && code[i + 1] === '{') {
      templateDepth.push(braceDepth);
      return i + 2;
    }
    i++;
  }
  return i;
}

function skipRegex(code: string, start: number): number {
  let i = start + 1;
  let inClass = false;
  while (i < code.length && code[i] !== '\n') {
    const c = code[i];
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (c === '[') inClass = true;
    else if (c === ']') inClass = false;
    else if (c === '/' && !inClass) {
      i++;
      break;
    }
    i++;
  }
  while (i < code.length && /[a-z]/.test(code[i])) i++;
  return i;
}
