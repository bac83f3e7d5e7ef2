import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Callback bodies are signed so receivers can check they come from this service and were not
 * replayed: `X-SCE-Signature: sha256=<hex HMAC-SHA256 of "<X-SCE-Timestamp>.<raw body>">`.
 */
export function signCallback(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')}`;
}

/** The receiver's side (also used by tests): constant-time comparison of the expected signature. */
export function verifyCallbackSignature(secret: string, timestamp: string | number, body: string, signature: string): boolean {
  const expected = Buffer.from(signCallback(secret, Number(timestamp), body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
