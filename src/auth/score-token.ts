import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** 32 random bytes (256 bits), URL-safe. */
export function generateScoreToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashScoreToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Constant-time equality of two tokens (compares their SHA-256 digests, so lengths never leak). */
export function scoreTokensEqual(a: string, b: string): boolean {
  return timingSafeEqual(hashScoreToken(a), hashScoreToken(b));
}
