/** The HTTP target policy refused a URL (private address, host not allowed, bad scheme). */
export class TargetRefusedError extends Error {
  readonly code = 'HTTP_TARGET_REFUSED';
  constructor(
    readonly url: string,
    reason: string,
  ) {
    super(`Refused HTTP target ${url}: ${reason}`);
    this.name = 'TargetRefusedError';
  }
}
