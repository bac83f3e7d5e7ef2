/**
 * A small, strict XML parser for model documents (PMML). Hand-written rather than a dependency because a
 * model file is hostile input and the rules we need are few: no DOCTYPE at all (so no entity expansion, no
 * external entities, no billion-laughs), only the five predefined entities and character references, a
 * bounded element depth and count, and an iterative parse (no recursion, so no stack overflow on nesting).
 */

export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

export interface XmlLimits {
  maxDepth: number;
  maxElements: number;
}

export const DEFAULT_XML_LIMITS: XmlLimits = { maxDepth: 128, maxElements: 500_000 };

export class XmlSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`${message} (line ${line})`);
    this.name = 'XmlSyntaxError';
  }
}

const NAME = /^[A-Za-z_:][A-Za-z0-9_:.-]*/;
const ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

/** Strips a namespace prefix: `pmml:Node` and `Node` are the same element to us. */
function localName(name: string): string {
  const colon = name.lastIndexOf(':');
  return colon >= 0 ? name.slice(colon + 1) : name;
}

export function parseXml(source: string, limits: XmlLimits = DEFAULT_XML_LIMITS): XmlElement {
  let at = 0;
  let elements = 0;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  const lineAt = (index: number): number => {
    let line = 1;
    for (let k = 0; k < index && k < source.length; k++) if (source.charCodeAt(k) === 10) line++;
    return line;
  };
  const fail = (message: string, index = at): never => {
    throw new XmlSyntaxError(message, lineAt(index));
  };
  const decode = (raw: string, start: number): string =>
    raw.indexOf('&') < 0
      ? raw
      : raw.replace(/&([^;&\s]{0,10});?/g, (match, ref: string) => {
          if (!match.endsWith(';')) fail('an "&" must start an entity reference ending in ";"', start);
          if (ref[0] === '#') {
            const code = ref[1] === 'x' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
            if (!Number.isInteger(code) || code <= 0 || code > 0x10ffff)
              fail(`invalid character reference "&${ref};"`, start);
            return String.fromCodePoint(code);
          }
          const value = ENTITIES[ref];
          if (value === undefined) fail(`unknown entity "&${ref};" (only the predefined entities are accepted)`, start);
          return value;
        });

  while (at < source.length) {
    const lt = source.indexOf('<', at);
    if (lt < 0) {
      if (source.slice(at).trim() !== '') {
        if (stack.length === 0) fail('text outside the root element');
        stack[stack.length - 1].text += decode(source.slice(at), at);
      }
      break;
    }
    if (lt > at) {
      const text = source.slice(at, lt);
      if (stack.length > 0) stack[stack.length - 1].text += decode(text, at);
      else if (text.trim() !== '' && !(at === 0 && text.trim() === '\uFEFF')) fail('text outside the root element', at);
    }
    at = lt;
    if (source.startsWith('<!--', at)) {
      const end = source.indexOf('-->', at + 4);
      if (end < 0) fail('unterminated comment');
      at = end + 3;
    } else if (source.startsWith('<?', at)) {
      const end = source.indexOf('?>', at + 2);
      if (end < 0) fail('unterminated processing instruction');
      at = end + 2;
    } else if (source.startsWith('<![CDATA[', at)) {
      const end = source.indexOf(']]>', at + 9);
      if (end < 0) fail('unterminated CDATA section');
      if (stack.length === 0) fail('CDATA outside the root element');
      stack[stack.length - 1].text += source.slice(at + 9, end);
      at = end + 3;
    } else if (source.startsWith('<!', at)) {
      // DOCTYPE and its entity declarations are where entity bombs and external entities live.
      fail('DOCTYPE and other declarations are not accepted in a model file');
    } else if (source.startsWith('</', at)) {
      const match = NAME.exec(source.slice(at + 2, at + 260));
      if (!match) fail('malformed closing tag');
      const name = localName(match![0]);
      const close = source.indexOf('>', at);
      if (close < 0 || source.slice(at + 2 + match![0].length, close).trim() !== '') fail('malformed closing tag');
      const open = stack.pop();
      if (!open || open.name !== name) fail(`closing tag </${name}> does not match <${open?.name ?? 'nothing'}>`);
      at = close + 1;
    } else {
      const match = NAME.exec(source.slice(at + 1, at + 260));
      if (!match) fail('malformed tag');
      if (stack.length === 0 && root) fail('a second root element');
      if (stack.length >= limits.maxDepth) fail(`elements are nested deeper than ${limits.maxDepth} levels`);
      if (++elements > limits.maxElements) fail(`more than ${limits.maxElements} elements`);
      const element: XmlElement = { name: localName(match![0]), attributes: {}, children: [], text: '' };
      at += 1 + match![0].length;
      for (;;) {
        while (at < source.length && /\s/.test(source[at])) at++;
        if (source.startsWith('/>', at)) {
          at += 2;
          break;
        }
        if (source[at] === '>') {
          at += 1;
          stack.push(element);
          break;
        }
        const attribute = NAME.exec(source.slice(at, at + 260));
        if (!attribute) fail(`malformed attribute in <${element.name}>`);
        at += attribute![0].length;
        while (/\s/.test(source[at] ?? '')) at++;
        if (source[at] !== '=') fail(`attribute "${attribute![0]}" of <${element.name}> has no value`);
        at++;
        while (/\s/.test(source[at] ?? '')) at++;
        const quote = source[at];
        if (quote !== '"' && quote !== "'") fail(`attribute "${attribute![0]}" of <${element.name}> is not quoted`);
        const end = source.indexOf(quote, at + 1);
        if (end < 0) fail(`unterminated attribute "${attribute![0]}"`);
        const raw = source.slice(at + 1, end);
        if (raw.includes('<')) fail(`"<" in attribute "${attribute![0]}"`);
        const key = attribute![0].startsWith('xmlns') ? attribute![0] : localName(attribute![0]);
        if (key in element.attributes) fail(`attribute "${key}" appears twice in <${element.name}>`);
        element.attributes[key] = decode(raw, at);
        at = end + 1;
      }
      if (stack.length > 0 && stack[stack.length - 1] !== element) stack[stack.length - 1].children.push(element);
      else if (stack.length > 1) stack[stack.length - 2].children.push(element);
      if (!root) root = element;
    }
  }
  if (stack.length > 0) fail(`<${stack[stack.length - 1].name}> is not closed`);
  if (!root) fail('no root element');
  return root!;
}
