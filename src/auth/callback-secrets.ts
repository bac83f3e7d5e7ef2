import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

/** Prefix of a callback signing secret, so one found in a log or a file is recognised as such. */
const PREFIX = 'whsec_';
/** First byte of a sealed secret: the sealing format. */
const SEALED_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A new callback signing secret: 32 random bytes (256 bits), base64url, with a recognisable prefix. */
export function generateCallbackSecret(): string {
  return `${PREFIX}${randomBytes(32).toString('base64url')}`;
}

/**
 * Seals users' callback signing secrets for storage (AES-256-GCM under a key derived from CALLBACK_SECRETS_KEY,
 * the user's id as associated data, so a sealed secret copied to another user's row does not open there).
 *
 * Why encrypted and not hashed like the score token: a score token is only ever compared with what a client
 * presents, so its hash suffices; a callback secret is a signing key the service itself must use for every
 * callback, so the service must be able to recover it. Encryption under a key that lives in the
 * configuration, not in the database, keeps a database dump (or a read-only SQL hole) from yielding every
 * tenant's signing key. A new CALLBACK_SECRETS_KEY makes the stored secrets unreadable: deliveries then fail
 * (logged) until secrets are issued again (docs/execution.md, "Callback secrets").
 */
export class CallbackSecretBox {
  private readonly key: Buffer;

  constructor(serverKey: string) {
    this.key = createHmac('sha256', serverKey).update('callback signing secrets, sealing format 1').digest();
  }

  seal(userId: number, secret: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(associatedData(userId));
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.of(SEALED_VERSION), iv, sealed, cipher.getAuthTag()]);
  }

  /** The secret, or an error when it was sealed under another key or for another user. */
  open(userId: number, sealed: Buffer): string {
    if (sealed.length < 1 + IV_BYTES + TAG_BYTES || sealed[0] !== SEALED_VERSION)
      throw new Error('the stored callback secret is not in a known format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, sealed.subarray(1, 1 + IV_BYTES));
    decipher.setAAD(associatedData(userId));
    decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(sealed.subarray(1 + IV_BYTES, sealed.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new Error(
        'the stored callback secret cannot be opened with CALLBACK_SECRETS_KEY (sealed under another key?)',
      );
    }
  }
}

function associatedData(userId: number): Buffer {
  return Buffer.from(`user:${userId}`, 'utf8');
}
