import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { reapOnExit } from './support/child-reaper.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Runs test/support/log-child.ts in `mode`; resolves with its stdout once `until` holds or it exits. */
function logChild(
  mode: 'stay' | 'exit' | 'throw',
  until: (stdout: string) => boolean,
  timeoutMs: number,
): Promise<{ stdout: string; ms: number; exited: boolean }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/log-child.ts', mode], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  reapOnExit(child);
  let stdout = '';
  let started = 0;
  return new Promise((resolve) => {
    const finish = (exited: boolean) => {
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGKILL');
      resolve({ stdout, ms: performance.now() - started, exited });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    child.stdout.on('data', (data: Buffer) => {
      stdout += data.toString('utf8');
      if (until(stdout)) finish(false);
    });
    child.once('spawn', () => {
      started = performance.now();
    });
    child.once('exit', () => setTimeout(() => finish(true), 50));
  });
}

describe('logger', () => {
  it('writes a lone short line while the process runs (within LOG_FLUSH_MS), though 4 KiB were not filled', async () => {
    // The child's start-up (tsx, imports) takes most of this; the line must not wait for more lines to come.
    const { stdout, exited } = await logChild('stay', (out) => out.includes('one short line'), 15_000);
    expect(exited).toBe(false);
    expect(stdout).toContain('"msg":"one short line"');
  }, 20_000);

  it.each(['exit', 'throw'] as const)(
    'writes what it holds when the process ends at once (%s)',
    async (mode) => {
      const { stdout, exited } = await logChild(mode, () => false, 15_000);
      expect(exited).toBe(true);
      expect(stdout).toContain(`"mode":"${mode}"`);
    },
    20_000,
  );
});
