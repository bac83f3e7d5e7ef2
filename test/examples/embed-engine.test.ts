import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url);

/**
 * examples/embed-engine.ts is runnable as documented (`npm run --silent example:engine`), and prints what
 * docs/engine.md says it prints.
 */
describe('examples/embed-engine.ts', () => {
  it('runs as a program of its own and prints the output docs/engine.md documents', async () => {
    const { stdout } = await run('npm', ['run', '--silent', 'example:engine'], { cwd: root, timeout: 120_000 });
    const markdown = readFileSync(new URL('docs/engine.md', root), 'utf8');
    const documented = /It prints:\n\n```json\n([\s\S]*?)```/.exec(markdown);
    expect(documented).not.toBeNull();
    expect(JSON.parse(stdout)).toEqual(JSON.parse(documented![1]));
  }, 150_000);
});
