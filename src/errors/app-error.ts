import type { ErrorCode } from './error-codes.js';

/** One problem inside an error: which field/node/row, and what is wrong with it. */
export interface ErrorDetail {
  path?: string;
  message: string;
  [key: string]: unknown;
}

/** Base of every error the API turns into a response; `status` is the HTTP status. */
export abstract class AppError extends Error {
  abstract readonly status: number;
  readonly code: ErrorCode;
  readonly details?: ErrorDetail[];

  constructor(code: ErrorCode, message: string, details?: ErrorDetail[]) {
    super(message);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }
}
