import type { Server } from 'node:http';

/** Why a port could not be taken, in one line that says what to do (start-up prints it and exits 1). */
function explainListenError(error: NodeJS.ErrnoException, port: number): Error {
  if (error.code === 'EADDRINUSE') return new Error(`Port ${port} is already in use: stop the process that holds it, or set PORT to a free port.`);
  if (error.code === 'EACCES') return new Error(`Port ${port} needs privileges this process does not have: set PORT to a port above 1023.`);
  return new Error(`Cannot listen on port ${port} (${error.code ?? error.message}): set PORT to a free port.`);
}

/** Starts listening; rejects with an actionable message (never a stack trace) when the port cannot be taken. */
export function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      server.off('listening', onListening);
      reject(explainListenError(error, port));
    };
    const onListening = (): void => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port);
  });
}
