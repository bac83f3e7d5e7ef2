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
    const random = () => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed / 0x7fffffff; };
    for (let sample = 0; sample < 200; sample += 1) {
      let value: unknown = random() < 0.5 ? 'x: [y]' : 1;
      const levels = 1 + Math.floor(random() * 40);
      for (let level = 0; level < levels; level += 1) {
        const r = random();
        value = r < 0.3 ? [value, 'a#b', '"q"'] : r < 0.6 ? { k: value, 'q: [': '[{' } : r < 0.8 ? [[value]] : { [`key ${level}`]: [value] };
      }
      const depth = depthOf(value);
      for (const text of [toYaml(value), toYaml(value, { collectionStyle: 'flow' }), JSON.stringify(value)]) {
        expect(depthOf(parseYaml(text))).toBe(depth);
        // Under the real depth, the bound has crossed it somewhere.
        expect(yamlNestingBeyond(text, depth - 1)).toBeDefined();
      }
    }
  });

  it('finds deep flow collections wherever a node starts, naming line and column', () => {
    expect(yamlNestingBeyond(`a: ${'['.repeat(100)}${']'.repeat(100)}`, 50)).toEqual({ line: 1, column: expect.any(Number) });
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

  it('ignores brackets in comments and in quoted scalars of flow collections', () => {
    const brackets = '['.repeat(200);
    expect(yamlNestingBeyond(`a: 1 # ${brackets}\n# ${brackets}\nb: ["${brackets}", '${brackets}', 2]`, 10)).toBeUndefined();
  });
});
