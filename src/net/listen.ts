import type { Server } from 'node:http';

/** Where to listen, and the setting that chose the port (named in the error when it cannot be taken). */
export interface ListenOptions {
  /** Address to bind to; all addresses when absent. */
  host?: string;
  /** The environment variable that set the port (`PORT`, `METRICS_PORT`, …). */
  variable?: string;
}

/** Why a port could not be taken, in one line that says what to do (start-up prints it and exits 1). */
function explainListenError(error: NodeJS.ErrnoException, port: number, variable: string, host?: string): Error {
  if (error.code === 'EADDRINUSE')
    return new Error(
      `Port ${port} is already in use: stop the process that holds it, or set ${variable} to a free port.`,
    );
  if (error.code === 'EACCES')
    return new Error(`Port ${port} needs privileges this process does not have: set ${variable} to a port above 1023.`);
  if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND')
    return new Error(
      `Cannot listen on ${host}:${port}: ${host} is not an address of this host (set HOST, or METRICS_HOST for the metrics listener, to one of its addresses).`,
    );
  return new Error(`Cannot listen on port ${port} (${error.code ?? error.message}): set ${variable} to a free port.`);
}

/** Starts listening; rejects with an actionable message (never a stack trace) when the port cannot be taken. */
export function listen(server: Server, port: number, options: ListenOptions = {}): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      reject(explainListenError(error, port, options.variable ?? 'PORT', options.host));
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    if (options.host === undefined) server.listen(port);
    else server.listen(port, options.host);
  });
}
