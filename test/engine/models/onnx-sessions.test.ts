import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * OnnxSessions (src/engine/pool/onnx-sessions.mjs), the engine hosts' ONNX sessions, in a node process of its own
 * (the module loads the native addon, as an engine host does): sessions stay within their bound of model-file
 * bytes, the least recently used closed first and reopened from its file when used again, and a file goes when
 * the last program holding it is forgotten.
 */

const MODULE = fileURLToPath(new URL('../../../src/engine/pool/onnx-sessions.mjs', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../../models/fixtures/onnx/', import.meta.url));

function inNode(script: string): unknown {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout);
}

describe('OnnxSessions', () => {
  it('keeps open sessions within the bound, least recently used closed first, and answers the same after reopening', () => {
    const result = inNode(`
      import { readFileSync } from 'node:fs';
      import { OnnxSessions } from ${JSON.stringify(MODULE)};
      const file = (name) => readFileSync(${JSON.stringify(FIXTURES)} + name).toString('base64');
      const linear = file('linear.onnx'), mlp = file('mlp.onnx');
      // room for the larger file alone: every switch of model closes the other's session
      const sessions = new OnnxSessions(Math.max(linear.length, mlp.length) * 3 / 4 + 1);
      sessions.add('linear', linear);
      sessions.add('mlp', mlp);
      const row = [[30, 50000, 0.5, 120]];
      const log = [];
      const score = (key) => { const out = sessions.run(key, 1, row.map((r) => r), [key === 'linear' ? 'limit' : 'p_default'])[0][0]; log.push([key, [...sessions.sessions.keys()], sessions.openBytes]); return out; };
      const first = [score('linear'), score('mlp')];
      const again = [score('linear'), score('mlp')];
      sessions.release('linear');
      let missing = null;
      try { sessions.run('linear', 1, row, ['limit']); } catch (error) { missing = error.message; }
      process.stdout.write(JSON.stringify({ first, again, log, missing, files: [...sessions.files.keys()] }));
    `) as { first: number[]; again: number[]; log: [string, string[], number][]; missing: string; files: string[] };
    expect(result.again).toEqual(result.first);
    expect(result.log.map(([, open]) => open)).toEqual([['linear'], ['mlp'], ['linear'], ['mlp']]);
    expect(result.missing).toBe('model linear was not sent to this host');
    expect(result.files).toEqual(['mlp']);
  });

  it('answers a failed run as an error, not an exception (what crosses into the sandbox)', () => {
    const result = inNode(`
      import { readFileSync } from 'node:fs';
      import { OnnxSessions } from ${JSON.stringify(MODULE)};
      const sessions = new OnnxSessions(1 << 20);
      sessions.add('linear', readFileSync(${JSON.stringify(FIXTURES)} + 'linear.onnx').toString('base64'));
      const ok = JSON.parse(sessions.runJson('linear', JSON.stringify({ rows: 1, feeds: [[1, 2, 3, 4]], fetch: ['limit'] })));
      const wrongOutput = JSON.parse(sessions.runJson('linear', JSON.stringify({ rows: 1, feeds: [[1, 2, 3, 4]], fetch: ['nope'] })));
      const unknown = JSON.parse(sessions.runJson('other', JSON.stringify({ rows: 1, feeds: [[1]], fetch: ['limit'] })));
      // a missing float crosses as null: NaN for the model (not 0), so the linear model answers NaN (null in JSON)
      const missing = JSON.parse(sessions.runJson('linear', JSON.stringify({ rows: 1, feeds: [[NaN, 2, 3, 4]], fetch: ['limit'] })));
      process.stdout.write(JSON.stringify({ ok, wrongOutput, unknown, missing }));
    `) as Record<string, { ok?: number[][]; error?: string }>;
    expect(result.ok.ok?.[0][0]).toBeCloseTo(1950 + 12.5 + 0.115 * 2 - 5800 * 3 + 24 * 4, 6);
    expect(result.wrongOutput.error).toEqual(expect.any(String));
    expect(result.unknown.error).toBe('model other was not sent to this host');
    expect(result.missing).toEqual({ ok: [[null]] });
  });
});
