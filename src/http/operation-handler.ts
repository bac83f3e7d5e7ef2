import type { OperationContracts } from '../../generated/operations.js';
import type { OperationId } from '../../generated/routes.js';
import type { AuthenticatedUser } from '../auth/authenticated-user.js';

/**
 * The shape of every handler: a typed request in, a typed reply out, both from the spec
 * (generated/operations.ts). Handlers never touch Express or Node's response: the adapters
 * (src/http/express-adapter.ts for Express, src/http/fast-lane.ts for the execution hot paths) build
 * the request from what the spec validated and send the reply (status, headers, media type, streams).
 * A spec change a handler no longer satisfies fails `tsc` in that handler; an operation without a
 * handler fails it in src/handler-map.ts. Error statuses are thrown as AppErrors (src/errors/).
 */

type Contract<K extends OperationId> = OperationContracts[K];

/** A file part of a multipart body, as received (in a temporary file, removed when the response ends). */
export interface UploadedFile {
  /** Where the upload is on disk. */
  path: string;
  /** The file name the client gave. */
  originalName: string;
  size: number;
}

/** The multipart body with its file fields as uploads (a text field sent under a file's name is left out). */
type WithUploads<Body, Files extends string> = [Files] extends [never]
  ? Body
  : Omit<Body, Files> & { [F in Files]?: UploadedFile };

/** The media types operation K answers in (its success replies' `contentType`s). */
type ReplyMediaTypeOf<K extends OperationId> = Contract<K>['replies'] extends infer Reply
  ? Reply extends { contentType?: infer MediaType extends string }
    ? MediaType
    : never
  : never;

/** What a handler of operation K is given: validated by the spec before it runs. */
interface OperationRequest<K extends OperationId> {
  /** The authenticated caller: every operation takes a credential (a bearer token or a score token). */
  user: AuthenticatedUser;
  /** This request's id (X-Request-Id as sent when sane, else a new one): logs, error bodies and decision records carry it. */
  requestId: string;
  params: Contract<K>['params'];
  query: Contract<K>['query'];
  /** The header parameters the operation declares, by lower-case name. */
  headers: Contract<K>['headers'];
  body: WithUploads<Contract<K>['body'], Contract<K>['uploads']>;
  /**
   * Which of `mediaTypes` the client's `Accept` prefers (the first when it accepts several equally),
   * or false when it accepts none. Operations that answer in several media types vary on Accept.
   */
  accepts<M extends ReplyMediaTypeOf<K>>(mediaTypes: readonly M[]): M | false;
}

/** What a handler of operation K answers: one of its success statuses, with its media type, body and headers. */
type OperationReply<K extends OperationId> = Contract<K>['replies'];

type OperationHandler<K extends OperationId> = (request: OperationRequest<K>) => Promise<OperationReply<K>>;

/** One handler per operation of the spec: a missing one is a type error. */
export type OperationHandlers = { [K in OperationId]: OperationHandler<K> };

/** A reply as the adapters send it, whatever the operation. */
export interface WireReply {
  status: number;
  contentType?: string;
  headers?: Record<string, string | number | undefined>;
  body?: unknown;
}

/** Any handler, as an adapter holds it: it builds the request from validated input and sends the reply. */
export type AnyOperationHandler = (request: never) => Promise<WireReply>;

/** A reply's headers as sent: declared values written as text, absent ones left out. */
export function replyHeaders(reply: WireReply): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.headers ?? {}))
    if (value !== undefined) headers[name] = String(value);
  return headers;
}
