/**
 * How a success reply of each media type the spec may declare goes on the wire. The generator
 * (scripts/generate/operation-contracts.ts) types reply bodies from this table and the reply writer
 * (src/http/send-reply.ts) sends them by it; a media type missing here fails `npm run generate`.
 *
 * - `json`, `yaml`: the body is one value, serialised whole.
 * - `ndjson`: the body is an async iterable of pages of lines (each line one value), streamed.
 * - `text`: the body is a string, or an async iterable of strings streamed as they come.
 * - `binary`: the body is bytes (a Uint8Array), sent whole.
 */
const REPLY_ENCODINGS = {
  'application/json': 'json',
  'application/yaml': 'yaml',
  'application/x-ndjson': 'ndjson',
  'text/csv': 'text',
  // a model's file, sent as it was uploaded (PMML)
  'application/xml': 'text',
  // a model's file, sent as it was uploaded (ONNX)
  'application/octet-stream': 'binary',
} as const;

type ReplyMediaType = keyof typeof REPLY_ENCODINGS;
export type ReplyEncoding = (typeof REPLY_ENCODINGS)[ReplyMediaType];

export function replyEncoding(mediaType: string): ReplyEncoding | undefined {
  return Object.hasOwn(REPLY_ENCODINGS, mediaType) ? REPLY_ENCODINGS[mediaType as ReplyMediaType] : undefined;
}
