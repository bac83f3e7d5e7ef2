import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { IDLE_SOCKET_TIMEOUT_MS, OutboundHttpClient } from '../../src/outbound/outbound-http-client.js';
import { TargetPolicy } from '../../src/outbound/target-policy.js';

/**
 * Issue 27, problem 9: callbacks failed with "socket hang up": the client kept idle connections for
 * ever, and a server closing one after its keep-alive time-out (Node's 5 s) raced the next request.
 */
const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function listen(server: http.Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

const client = () => new OutboundHttpClient(new TargetPolicy({ allowPrivate: ['127.0.0.1'] }));
const post = (outbound: OutboundHttpClient, url: string) =>
  outbound.request({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    body: '{"n":1}',
    timeoutMs: 5000,
  });

describe('outbound keep-alive connections', () => {
  it('closes an idle connection itself before a server with the common 5 s keep-alive time-out does', async () => {
    const server = http.createServer((_req, res) => res.end('{}'));
    server.keepAliveTimeout = 5000;
    const closed: number[] = [];
    server.on('connection', (socket: Socket) => socket.on('close', () => closed.push(Date.now())));
    const url = await listen(server);
    const outbound = client();
    expect((await post(outbound, url)).status).toBe(200);
    const answered = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 4700));
    expect(closed).toHaveLength(1);
    const idleMs = closed[0] - answered;
    expect(idleMs).toBeGreaterThanOrEqual(IDLE_SOCKET_TIMEOUT_MS - 200);
    expect(idleMs).toBeLessThan(4700);
    // The next call opens a new connection and succeeds.
    expect((await post(outbound, url)).status).toBe(200);
  });

  it('sends a request again at once, on a new connection, when the reused connection was closed under it', async () => {
    // A server that closes a kept-alive connection as the next request arrives on it (what a server
    // closing an idle connection at the wrong moment looks like from the client).
    const served = new WeakMap<Socket, number>();
    let requests = 0;
    let connections = 0;
    const server = http.createServer((req, res) => {
      requests += 1;
      const count = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, count);
      if (count > 1) req.socket.destroy();
      else res.end('{}');
    });
    server.on('connection', () => {
      connections += 1;
    });
    const url = await listen(server);
    const outbound = client();
    expect((await post(outbound, url)).status).toBe(200);
    expect((await post(outbound, url)).status).toBe(200);
    expect({ requests, connections }).toEqual({ requests: 3, connections: 2 });
  });

  it('does not send again a request whose new connection broke: that is the call’s outcome', async () => {
    let requests = 0;
    const server = http.createServer((req) => {
      requests += 1;
      req.socket.destroy();
    });
    const url = await listen(server);
    await expect(post(client(), url)).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(requests).toBe(1);
  });
});
