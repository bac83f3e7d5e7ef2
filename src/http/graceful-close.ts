import net, { type Socket } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export interface GracefulCloseOptions {
  /** A connection with no request in flight for this long is closed by the server (a FIN, never a reset). */
  idleCloseMs: number;
  /** Connections still open after this long are destroyed (requests still running then are cut). */
  timeoutMs: number;
}

export interface GracefulCloseReport {
  /** Connections open when the close began. */
  connections: number;
  /** Requests in flight when the close began. */
  inFlight: number;
  /** Connections destroyed at the time-out (0 in a clean close). */
  destroyed: number;
  durationMs: number;
}

interface ConnectionState {
  /** Responses in flight on the connection. */
  responses: Set<ServerResponse>;
  /** When its last response ended (or it opened), on performance.now()'s clock. */
  idleSince: number;
  closing: boolean;
}

/** After the server's FIN, how long a connection the client does not close itself stays before it is destroyed. */
const HALF_CLOSED_MS = 1000;
const SWEEP_EVERY_MS = 50;

/**
 * The API server's graceful close (SIGTERM). Node's own `server.close()` stops listening and at once
 * destroys every keep-alive connection that is idle at that instant, while the connections busy at
 * that instant go on serving new requests for as long as their clients send them:
 * under keep-alive load the API kept answering for 30 s and was forced out with exit 1 (its buffered
 * decision records lost), and a request a client had just written on a connection idle for a moment
 * was reset (issue 27, problem 7). Here, once `close` is called:
 *
 * - the listener stops (new connections are refused), without Node's immediate destruction of idle
 *   connections;
 * - every response whose headers are not yet sent carries `Connection: close`, those in flight
 *   included, and Node closes its connection once it is sent: each connection answers the request
 *   it has, or the next one it receives, and no more;
 * - a connection with no request for `idleCloseMs` is closed with a FIN (a request a client wrote
 *   before that is answered, as above: under load a connection is idle for microseconds between a
 *   response and its client's next request, and destroying it then is what reset those requests);
 * - at `timeoutMs` whatever is still open is destroyed.
 *
 * Resolves once every connection has closed.
 */
export function gracefulClose(server: Server): (options: GracefulCloseOptions) => Promise<GracefulCloseReport> {
  const connections = new Map<Socket, ConnectionState>();
  let draining = false;

  server.on('connection', (socket: Socket) => {
    connections.set(socket, { responses: new Set(), idleSince: performance.now(), closing: false });
    socket.once('close', () => connections.delete(socket));
  });
  // Before the application's listener, so the header is set before anything can be written.
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = connections.get(req.socket);
    if (draining) closeAfter(res);
    if (!state) return;
    state.responses.add(res);
    res.once('close', () => {
      state.responses.delete(res);
      state.idleSince = performance.now();
    });
  });

  return async ({ idleCloseMs, timeoutMs }) => {
    const started = performance.now();
    draining = true;
    let inFlight = 0;
    for (const state of connections.values()) {
      inFlight += state.responses.size;
      for (const res of state.responses) closeAfter(res);
    }
    const report: GracefulCloseReport = { connections: connections.size, inFlight, destroyed: 0, durationMs: 0 };
    // net.Server's close: stop listening, but leave the connections to the rules above (http.Server's
    // close would destroy the idle ones at once).
    net.Server.prototype.close.call(server);
    await new Promise<void>((resolve) => {
      const sweep = setInterval(() => {
        const now = performance.now();
        if (now - started >= timeoutMs) {
          for (const socket of connections.keys()) socket.destroy();
          report.destroyed += connections.size;
          connections.clear();
        }
        for (const [socket, state] of connections) {
          if (state.closing || state.responses.size > 0 || now - state.idleSince < idleCloseMs) continue;
          state.closing = true;
          socket.end();
          setTimeout(() => socket.destroy(), HALF_CLOSED_MS).unref();
        }
        if (connections.size === 0) {
          clearInterval(sweep);
          resolve();
        }
      }, SWEEP_EVERY_MS);
    });
    report.durationMs = Math.round(performance.now() - started);
    return report;
  };
}

/** The response closes its connection once sent (when its headers are still to be written). */
function closeAfter(res: ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
}
