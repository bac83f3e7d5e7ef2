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
  const lines = api.output().split('\n').filter((line) => line.trim() !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(`Port ${port} is already in use`);
  expect(lines[0]).toContain('set PORT');
  expect(api.output()).not.toMatch(/^\s+at /m);
}, 40_000);
