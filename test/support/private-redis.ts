import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reapOnExit } from './child-reaper.js';

/** A port nothing listens on right now (the OS picks it; a race with other processes is unlikely and retried by callers). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(500);
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * A redis-server of a test's own on a free port, so a test can kill it and start it again
 * without touching the machine's shared Redis. It keeps an append-only file (fsync on every
 * write) in a temporary folder, as a production job store would: a restart brings back the
 * jobs that were stored before the kill.
 */
export class PrivateRedis {
  private process?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'scoring-redis-'));
  port = 0;

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  /** Starts the server (on the same port as before when restarted) and waits until it answers PING; does nothing while it runs. */
  async start(): Promise<void> {
    if (this.process && this.process.exitCode === null && this.process.signalCode === null) return;
    if (this.port === 0) this.port = await freePort();
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--daemonize',
        'no',
      ],
      { stdio: 'ignore' },
    );
    reapOnExit(child);
    this.process = child;
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(this.port))) {
      if (child.exitCode !== null)
        throw new Error(`redis-server on port ${this.port} exited with code ${child.exitCode}`);
      if (Date.now() > deadline) throw new Error(`redis-server on port ${this.port} did not answer within 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** SIGKILL: the job store disappears at once, as in a crash (no shutdown, no final save). */
  async kill(): Promise<void> {
    const child = this.process;
    this.process = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }

  /**
   * SIGKILL, and its data files removed: started again, the server comes back empty, as a job store
   * without persistence (or one whose disk was lost) does.
   */
  async killAndWipe(): Promise<void> {
    await this.kill();
    for (const entry of readdirSync(this.dir)) rmSync(join(this.dir, entry), { recursive: true, force: true });
  }

  /** Kills the server and removes its files. */
  async destroy(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
