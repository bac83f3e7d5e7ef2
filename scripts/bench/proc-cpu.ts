import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time read from /proc (Linux) for the benchmarks: of a process, of one of its threads, of the
 * database server. Each answers NaN (or nothing) where /proc cannot be read.
 */

/** User + system CPU ms in a /proc `stat` file; NaN when it cannot be read. */
function statCpuMs(path: string): number {
  try {
    // fields after the command's closing parenthesis: utime is the 12th, stime the 13th (clock ticks of 10 ms)
    const fields = readFileSync(path, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

/** CPU ms of a process, all its threads together. */
export function processCpuMs(pid: number | undefined): number {
  return statCpuMs(`/proc/${pid}/stat`);
}

/** CPU ms of one thread of a process (its main thread, the event loop, has the process's id). */
export function threadCpuMs(pid: number | undefined, thread: number | undefined): number {
  return statCpuMs(`/proc/${pid}/task/${thread}/stat`);
}

/** CPU ms of the processes together; one that is gone (or unreadable) counts 0. */
export function totalCpuMs(pids: Array<number | undefined>): number {
  let total = 0;
  for (const pid of pids) {
    const ms = processCpuMs(pid);
    if (!Number.isNaN(ms)) total += ms;
  }
  return total;
}

/** The database server's processes on this machine (mariadbd, mysqld); none where /proc cannot be read. */
export function databaseServerPids(): number[] {
  try {
    return readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .map(Number)
      .filter((pid) => {
        try {
          return /^(mariadbd|mysqld)$/.test(readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
        } catch {
          return false;
        }
      });
  } catch {
    return [];
  }
}

/** The child processes of a process (an API's engine hosts); none where /proc cannot be read. */
export function childPids(pid: number | undefined): number[] {
  if (pid === undefined) return [];
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((thread) =>
      readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}
