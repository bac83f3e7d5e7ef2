import { pathBeyondDepth } from '../../src/engine/index.js';

/** `levels` arrays nested in one another, built without recursion. */
function nestedArrays(levels: number): unknown {
  let value: unknown = 1;
  for (let level = 0; level < levels; level += 1) value = [value];
  return value;
}

describe('pathBeyondDepth', () => {
  it('walks a value nested a million levels deep without overflowing its own stack', () => {
    const path = pathBeyondDepth(nestedArrays(1_000_000), 64);
    expect(path).toBe(`body${'[0]'.repeat(64)}`);
  });

  it('answers nothing at the limit and the path one level past it', () => {
    expect(pathBeyondDepth({ a: nestedArrays(63) }, 64)).toBeUndefined();
    expect(pathBeyondDepth({ a: nestedArrays(64) }, 64)).toBe(`body.a${'[0]'.repeat(63)}`);
    expect(pathBeyondDepth('text', 1)).toBeUndefined();
    expect(pathBeyondDepth({ flat: 1, list: [1, 2, 3] }, 2)).toBeUndefined();
  });

  it('names keys that are not identifiers in quotes, shortened', () => {
    expect(pathBeyondDepth({ 'a key': { [`${'k'.repeat(100)}`]: {} } }, 2)).toBe(`body["a key"]["${'k'.repeat(32)}…"]`);
  });

  it('reports a cycle as nesting past the limit', () => {
    const loop: unknown[] = [];
    loop.push(loop);
    expect(pathBeyondDepth({ loop }, 5)).toBe('body.loop[0][0][0][0]');
  });
});
