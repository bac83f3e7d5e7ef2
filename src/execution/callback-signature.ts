import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a v2 callback signature covers: the moment, where it was sent, which run, and what was sent. */
export interface SignedCallback {
  /** X-SCE-Timestamp: Unix seconds when the attempt was signed. */
  timestamp: number;
  /** The callback URL exactly as it was submitted (X-SCE-CallbackUrl): where this callback was meant to go. */
  url: string;
  /** X-SCE-RequestId of the run. */
  requestId: string;
  /** The raw body bytes, as text. */
  body: string;
}

/**
 * The text a v2 signature is computed over: `v2`, timestamp, URL, request id, each on a line of its own, then
 * the body. None of the first four can hold a line break (digits; a URL and a request id sent as HTTP header
 * values), so the text reads back one way only.
 */
function v2SignedText(callback: SignedCallback): string {
  return `v2\n${callback.timestamp}\n${callback.url}\n${callback.requestId}\n${callback.body}`;
}

/**
 * The v2 signature, keyed with the run owner's own callback secret: `X-SCE-Signature-V2: v2=<hex HMAC-SHA256>`.
 * The secret is the tenant's alone, so another tenant cannot produce it; the URL and request id inside it keep a
 * captured callback from being passed off as one for another receiver or run, and the timestamp bounds replays
 * to the receiver's window (docs/execution.md, "Verifying callbacks").
 */
export function signCallbackV2(secret: string, callback: SignedCallback): string {
  return `v2=${createHmac('sha256', secret).update(v2SignedText(callback), 'utf8').digest('hex')}`;
}

/**
 * The receiver's side of v2 (also used by tests): `header` is X-SCE-Signature-V2 as received, one signature or,
 * during a rotation's overlap, a comma-separated list (the new secret's first); it verifies when any entry is this
 * secret's signature. Constant-time comparison; the replay window is the caller's.
 */
export function verifyCallbackSignatureV2(secret: string, callback: SignedCallback, header: string): boolean {
  const expected = signCallbackV2(secret, callback);
  return header.split(',').some((signature) => sameText(expected, signature.trim()));
}

/**
 * The legacy signature, sent during the transition only (CALLBACK_LEGACY_SIGNATURE):
 * `X-SCE-Signature: sha256=<hex HMAC-SHA256 of "<X-SCE-Timestamp>.<raw body>">` keyed with the deployment-wide
 * CALLBACK_SIGNING_SECRET. Every tenant that verifies it knows that secret, so it proves only "some tenant of
 * this service", not "this tenant's run": receivers move to v2.
 */
export function signCallback(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')}`;
}

/** The receiver's side of the legacy signature (also used by tests): constant-time comparison. */
export function verifyCallbackSignature(
  secret: string,
  timestamp: string | number,
  body: string,
  signature: string,
): boolean {
  return sameText(signCallback(secret, Number(timestamp), body), signature);
}

function sameText(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
