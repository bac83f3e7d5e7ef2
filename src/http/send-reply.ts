import type { Response } from 'express';
import type { Logger } from 'pino';
import { stringify as toYaml } from 'yaml';
import { replyHeaders, type WireReply } from './operation-handler.js';
import { replyEncoding } from './reply-encodings.js';
import { streamResponse } from './stream-response.js';

async function* ndjsonPieces(pages: AsyncIterable<readonly unknown[]>): AsyncGenerator<string> {
  for await (const page of pages) {
    let text = '';
    for (const line of page) text += `${JSON.stringify(line)}\n`;
    yield text;
  }
}

async function* textPieces(body: unknown): AsyncGenerator<string> {
  if (typeof body === 'string') yield body;
  else yield* body as AsyncIterable<string>;
}

/**
 * Sends a handler's reply on an Express response: status, declared headers, then the body encoded as
 * its media type says (src/http/reply-encodings.ts). JSON (the default media type) and YAML go whole;
 * NDJSON and text stream as the handler produces them. A reply without a body (204) ends at once.
 */
export async function sendReply(response: Response, reply: WireReply, logger: Logger): Promise<void> {
  response.status(reply.status).set(replyHeaders(reply));
  if (reply.body === undefined) {
    response.end();
    return;
  }
  const mediaType = reply.contentType ?? 'application/json';
  const encoding = replyEncoding(mediaType);
  switch (encoding) {
    case 'json':
      response.json(reply.body);
      return;
    case 'yaml':
      response.type(mediaType).send(toYaml(reply.body, { lineWidth: 0 }));
      return;
    case 'ndjson':
      await streamResponse(
        response,
        `${mediaType}; charset=utf-8`,
        ndjsonPieces(reply.body as AsyncIterable<readonly unknown[]>),
        logger,
      );
      return;
    case 'text':
      await streamResponse(response, `${mediaType}; charset=utf-8`, textPieces(reply.body), logger);
      return;
    case 'binary':
      response.type(mediaType).send(Buffer.from(reply.body as Uint8Array));
      return;
    case undefined:
      throw new Error(`a reply of media type ${mediaType}: src/http/reply-encodings.ts does not know how to send it`);
  }
}
