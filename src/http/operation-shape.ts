import { declaredHeaders, findOperation, resolve, type OpenApiDocument } from './operation-validator.js';

/** What the adapters need to know of one operation, read from the spec when the app is built. */
export interface OperationShape {
  /** The header parameters it declares, by lower-case name: what handlers are given in `headers`. */
  headerNames: string[];
  /** It declares a request body (bodies are parsed only then). */
  takesBody: boolean;
  /** Its request body is required (`requestBody.required`). */
  requiresBody: boolean;
  /** The media types its request body may have. */
  bodyMediaTypes: string[];
  /** It takes a multipart/form-data body. */
  takesMultipart: boolean;
  /** The multipart body's file fields (`format: binary` or a `contentMediaType`): handed over as uploads. */
  uploadFields: string[];
  /** The media types of its success replies. */
  replyMediaTypes: string[];
  /** A success status of it has several media types, chosen by `Accept`: its responses vary on Accept. */
  variesOnAccept: boolean;
}

type PropertySchema = { format?: string; contentMediaType?: string };
type ObjectSchema = { properties?: Record<string, PropertySchema> };

/** Whether a multipart body's property is a file: `format: binary` or a `contentMediaType` (the generator types it so too). */
export function isFileSchema(schema: PropertySchema): boolean {
  return schema.format === 'binary' || schema.contentMediaType !== undefined;
}

export function operationShape(spec: OpenApiDocument, operationId: string): OperationShape {
  const operation = findOperation(spec, operationId);
  const multipart = operation.requestBody?.content['multipart/form-data'];
  const properties = multipart
    ? (resolve(spec, multipart.schema as ObjectSchema | { $ref: string }).properties ?? {})
    : {};
  const successes = Object.entries(operation.responses)
    .filter(([status]) => status.startsWith('2'))
    .map(([, response]) => resolve(spec, response));
  return {
    headerNames: declaredHeaders(spec, operationId),
    takesBody: operation.requestBody !== undefined,
    requiresBody: operation.requestBody?.required === true,
    bodyMediaTypes: Object.keys(operation.requestBody?.content ?? {}),
    takesMultipart: multipart !== undefined,
    uploadFields: Object.entries(properties)
      .filter(([, schema]) => isFileSchema(resolve(spec, schema)))
      .map(([name]) => name),
    replyMediaTypes: [...new Set(successes.flatMap((response) => Object.keys(response.content ?? {})))],
    variesOnAccept: successes.some((response) => Object.keys(response.content ?? {}).length > 1),
  };
}
