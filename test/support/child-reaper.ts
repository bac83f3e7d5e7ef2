import type { ChildProcess } from 'node:child_process';

const live = new Set<ChildProcess>();
let installed = false;

/**
 * Kills `child` when this process exits, whatever ends it (afterAll does the orderly stop; this is
 * the safety net when the test process itself ends first, so no service or redis-server is left
 * running on the shared machine).
 */
export function reapOnExit(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (installed) return;
  installed = true;
  process.once('exit', () => {
    for (const orphan of live) orphan.kill('SIGKILL');
  });
}
