import { AppError } from './app-error.js';

/** 405: the path is an operation's, the method is not; `allow` lists the methods it takes (the `Allow` header). */
export class MethodNotAllowedError extends AppError {
  readonly status = 405;

  constructor(
    message: string,
    readonly allow: string,
  ) {
    super('METHOD_NOT_ALLOWED', message);
  }
}
