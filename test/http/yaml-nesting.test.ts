import { parse as parseYaml, stringify as toYaml } from 'yaml';
import { yamlNestingBeyond } from '../../src/http/yaml-nesting.js';

/** The real nesting of a parsed value (the value itself is level 1), measured without recursion. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number];
    if (node === null || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

describe('yamlNestingBeyond', () => {
  it('bounds flow and block nesting from above on documents the YAML library writes', () => {
    // Random shapes, in block and flow style: the bound is never below the real depth.
    let seed = 11;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (let sample = 0; sample < 200; sample += 1) {
      let value: unknown = random() < 0.5 ? 'x: [y]' : 1;
      const levels = 1 + Math.floor(random() * 40);
      for (let level = 0; level < levels; level += 1) {
        const r = random();
        // Multi-line strings are written as block scalars (`|-`, `>-`) whose text looks like structure.
        value =
          r < 0.3
            ? [value, 'a#b', '"q"', 'x: [[[\n  - {a: {b:\n']
            : r < 0.6
              ? { k: value, 'q: [': '[{', s: '{ k0: 0, k1: 1 }\n[[[[' }
              : r < 0.8
                ? [[value]]
                : { [`key ${level}`]: [value] };
      }
      const depth = depthOf(value);
      for (const text of [
        toYaml(value),
        toYaml(value, { collectionStyle: 'flow', lineWidth: 0 }),
        JSON.stringify(value),
      ]) {
        expect(depthOf(parseYaml(text))).toBe(depth);
        // Under the real depth, the bound has crossed it somewhere.
        expect(yamlNestingBeyond(text, depth - 1)).toBeDefined();
      }
    }
  });

  it('finds deep flow collections wherever a node starts, naming line and column', () => {
    expect(yamlNestingBeyond(`a: ${'['.repeat(100)}${']'.repeat(100)}`, 50)).toEqual({
      line: 1,
      column: expect.any(Number),
    });
    expect(yamlNestingBeyond(`- - &anchor !!seq ${'['.repeat(60)}`, 50)).toBeDefined();
    expect(yamlNestingBeyond(`key:\n  ${'{a: '.repeat(60)}`, 50)).toEqual({ line: 2, column: expect.any(Number) });
  });

  it('is not fooled by quotes that are not quoted scalars to YAML', () => {
    const deep = `${'['.repeat(60)}${']'.repeat(60)}`;
    // A quote inside a plain scalar of a flow collection is a plain character.
    expect(yamlNestingBeyond(`{a:"b, ${deep} "}`, 50)).toBeDefined();
    // The continuation of a plain scalar in block context.
    expect(yamlNestingBeyond(`key: plain\n  "text\nother: ${deep}`, 50)).toBeDefined();
  });

  it('skips the text of block scalars of every style, and counts the structure after them', () => {
    const deep = '['.repeat(60);
    const keys = `{ ${Array.from({ length: 70 }, (_, k) => `k${k}: ${k}`).join(', ')} }`;
    for (const style of ['|', '|-', '|+', '>', '>-', '>+', '|2', '>1-', '|-2']) {
      const text = `a:\n  code: ${style}\n    out = ${keys};\n\n    ${deep}\n      - x: - y: ${deep}\n  other: 1\n`;
      expect(yamlNestingBeyond(text, 10)).toBeUndefined();
      expect(yamlNestingBeyond(`${text}b: ${deep}\n`, 50)).toEqual({ line: 8, column: expect.any(Number) });
      expect(yamlNestingBeyond(`- ${style}\n  ${deep}\n- - - ${deep}\n`, 50)).toEqual({
        line: 3,
        column: expect.any(Number),
      });
    }
  });

  it('follows a quoted scalar where a node surely starts, in block context too', () => {
    const deep = `${'['.repeat(60)}`;
    // The whole document one JSON-encoded string, as clients that JSON-encode every body send YAML text.
    expect(yamlNestingBeyond(JSON.stringify(`name: a\ncontent: ${deep}`), 10)).toBeUndefined();
    expect(yamlNestingBeyond(`a: "${deep}"\nb:\n  '${deep}\n  ${deep}'\n- "x"`, 10)).toBeUndefined();
    // After the quoted scalar ends, structure counts again.
    expect(yamlNestingBeyond(`a: "${deep}\n  text"\nb: ${deep}`, 50)).toEqual({ line: 3, column: expect.any(Number) });
  });

  it('ignores brackets in comments and in quoted scalars of flow collections', () => {
    const brackets = '['.repeat(200);
    expect(
      yamlNestingBeyond(`a: 1 # ${brackets}\n# ${brackets}\nb: ["${brackets}", '${brackets}', 2]`, 10),
    ).toBeUndefined();
  });
});
