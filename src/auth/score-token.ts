import { createHash, randomBytes } from 'node:crypto';

/** 32 random bytes (256 bits), URL-safe. */
export function generateScoreToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * What is stored and looked up: the token's SHA-256. A fast hash is enough here (unlike for
 * passwords) because the token is 256 random bits: nothing can be guessed from the hash.
 */
export function hashScoreToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
