import type { Response } from 'express';
import type { Logger } from 'pino';

/**
 * Writes `pieces` as the body of the response (its status already set), waiting for the socket to drain whenever its buffer
 * is full (a slow client slows the producer instead of filling memory), and stops reading them when
 * the client goes away. A failure after the headers went out cannot become an error response: the
 * connection is closed before the end, so the client sees a cut stream, and the failure is logged.
 */
export async function streamResponse(
  response: Response,
  contentType: string,
  pieces: AsyncIterable<string>,
  logger: Logger,
): Promise<void> {
  response.setHeader('Content-Type', contentType);
  let closed = false;
  response.on('close', () => {
    closed = true;
  });
  try {
    for await (const piece of pieces) {
      if (closed) return;
      if (piece.length > 0 && !response.write(piece)) await drained(response);
    }
    response.end();
  } catch (error) {
    logger.error({ err: error }, 'streamed response failed after it began; closing the connection');
    response.destroy();
  }
}

function drained(response: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}
