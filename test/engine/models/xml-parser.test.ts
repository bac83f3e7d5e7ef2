import { describe, expect, it } from '@jest/globals';
import { parseXml, XmlSyntaxError } from '../../../src/engine/models/xml-parser.js';

describe('parseXml', () => {
  it('reads elements, attributes (either quote), text, CDATA, and drops namespace prefixes, comments and declarations', () => {
    const root = parseXml(
      `<?xml version="1.0"?>\n<!-- a comment --><p:PMML xmlns:p="urn:x" version='4.4'><p:Array n="2">a &amp; b<![CDATA[<raw>]]></p:Array><Empty a="&lt;&#65;&#x42;&quot;"/></p:PMML>`,
    );
    expect(root).toEqual({
      name: 'PMML',
      attributes: { 'xmlns:p': 'urn:x', version: '4.4' },
      text: '',
      children: [
        { name: 'Array', attributes: { n: '2' }, text: 'a & b<raw>', children: [] },
        { name: 'Empty', attributes: { a: '<AB"' }, text: '', children: [] },
      ],
    });
  });

  it.each([
    ['a DOCTYPE', '<!DOCTYPE x [<!ENTITY e "e">]><x>&e;</x>', /DOCTYPE/],
    ['an unknown entity', '<x>&e;</x>', /unknown entity/],
    ['a bare ampersand', '<x>a & b</x>', /entity reference/],
    ['a mismatched closing tag', '<x><y></x></y>', /does not match/],
    ['an unclosed element', '<x><y></y>', /not closed/],
    ['two roots', '<x/><y/>', /second root/],
    ['text outside the root', 'hello<x/>', /outside the root/],
    ['an unquoted attribute', '<x a=1/>', /not quoted/],
    ['a repeated attribute', '<x a="1" a="2"/>', /twice/],
    ['no element at all', '<!-- only a comment -->', /no root element/],
  ])('refuses %s, with its line', (_label, source, message) => {
    expect(() => parseXml(source)).toThrow(XmlSyntaxError);
    expect(() => parseXml(source)).toThrow(message);
  });

  it('bounds depth and element count', () => {
    expect(() => parseXml(`${'<a>'.repeat(5)}${'</a>'.repeat(5)}`, { maxDepth: 4, maxElements: 100 })).toThrow(
      /deeper than 4/,
    );
    expect(() => parseXml(`<a>${'<b/>'.repeat(10)}</a>`, { maxDepth: 4, maxElements: 10 })).toThrow(
      /more than 10 elements/,
    );
    expect(parseXml(`<a>${'<b/>'.repeat(9)}</a>`, { maxDepth: 4, maxElements: 10 }).children).toHaveLength(9);
  });
});
