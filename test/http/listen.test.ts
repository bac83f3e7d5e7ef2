import net from 'node:net';
import { afterAll, expect, it } from '@jest/globals';
import { exitWithin, startServiceProcess, stopAll, type ServiceProcess } from '../support/service-process.js';

const processes: ServiceProcess[] = [];
let blocker: net.Server | undefined;

afterAll(async () => {
  await stopAll(processes);
  await new Promise((resolve) => (blocker ? blocker.close(resolve) : resolve(undefined)));
});

it('ends start-up with one actionable line naming the port and PORT, and exit code 1, when the port is taken', async () => {
  blocker = net.createServer();
  await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
  const { port } = blocker.address() as net.AddressInfo;

  const api = startServiceProcess('src/main.ts', { PORT: String(port), RUN_WORKER: 'false' });
  processes.push(api);
  expect(await exitWithin(api, 30_000)).toBe(1);
  const lines = api
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`Port ${port} is already in use`);
  expect(lines[0]).toContain('set PORT');
  expect(api.output()).not.toMatch(/^\s+at /m);
}, 40_000);

/** Whether a TCP connection to host:port is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A port nobody listens on now. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

it('listens on HOST only (here 127.0.0.2: 127.0.0.1 is refused)', async () => {
  const port = await freePort();
  const api = startServiceProcess('src/main.ts', {
    PORT: String(port),
    HOST: '127.0.0.2',
    RUN_WORKER: 'false',
    LOG_LEVEL: 'info',
  });
  processes.push(api);
  const deadline = Date.now() + 30_000;
  while (!api.output().includes('"msg":"listening"') && api.alive() && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  expect(api.output()).toContain('"host":"127.0.0.2"');
  expect(await accepts('127.0.0.2', port)).toBe(true);
  expect(await accepts('127.0.0.1', port)).toBe(false);
}, 40_000);

it('ends start-up with one line naming HOST when HOST is not an address of this host', async () => {
  const api = startServiceProcess('src/main.ts', {
    PORT: String(await freePort()),
    HOST: '192.0.2.1',
    RUN_WORKER: 'false',
  });
  processes.push(api);
  expect(await exitWithin(api, 30_000)).toBe(1);
  const lines = api
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '');
  expect(lines).toEqual([expect.stringMatching(/192\.0\.2\.1 is not an address of this host \(set HOST/)]);
}, 40_000);
