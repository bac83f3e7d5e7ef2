import { StaleWhileRevalidateCache } from '../db/stale-while-revalidate.js';
import type { AuthenticatedUser } from './authenticated-user.js';
import { generateScoreToken, hashScoreToken } from './score-token.js';
import type { UserRecord, UserStore } from './user-store.js';
import { CallbackSecretBox, generateCallbackSecret } from './callback-secrets.js';

const USERNAME = /^[A-Za-z0-9._@-]{1,190}$/;

export interface UserServiceOptions {
  /** CALLBACK_SECRETS_KEY: seals users' callback signing secrets (without it none can be issued or read). */
  callbackSecretsKey?: string;
  /** CALLBACK_SECRET_OVERLAP_SECONDS: how long a rotated-out callback secret still signs callbacks (0: not at all). */
  callbackSecretOverlapSeconds?: number;
  /**
   * How long a score-token look-up is reused (SCORE_TOKEN_CACHE_SECONDS; 0: never). It bounds how
   * long another process's change (a disabled user, a rotated token) takes to reach this one.
   */
  scoreTokenCacheMs: number;
  /**
   * How long past that a look-up is still used while it is read again in the background
   * (SCORE_TOKEN_STALE_SECONDS): the longest a disabled user or a rotated-out token keeps working in another
   * process while MySQL is down (when MySQL answers, one request past `scoreTokenCacheMs`).
   */
  scoreTokenStaleMs?: number;
  /** A background read failed (MySQL down). */
  onRefreshError?: (error: unknown) => void;
}

type TokenEntry = AuthenticatedUser & { enabled: boolean };

/**
 * Users are provisioned the first time a valid access token names them. Score tokens are stored
 * only as their SHA-256; a token is returned once, by the call that issues it. Look-ups by score
 * token are cached briefly (keyed by the token's hash, never the token) because every score
 * request needs one, stale-while-revalidate: a score waits for MySQL only for a token this process has not
 * seen lately, and scoring rides out a MySQL outage of up to `scoreTokenStaleMs`.
 */
export class UserService {
  private readonly byTokenHash: StaleWhileRevalidateCache<string, TokenEntry> | undefined;

  private readonly secretBox: CallbackSecretBox | undefined;

  private readonly secretOverlapSeconds: number;

  constructor(
    private readonly store: UserStore,
    options: UserServiceOptions,
  ) {
    this.secretOverlapSeconds = options.callbackSecretOverlapSeconds ?? 0;
    this.secretBox =
      options.callbackSecretsKey === undefined ? undefined : new CallbackSecretBox(options.callbackSecretsKey);
    this.byTokenHash =
      options.scoreTokenCacheMs > 0
        ? new StaleWhileRevalidateCache((hash) => this.tokenEntry(Buffer.from(hash, 'hex')), {
            max: 10_000,
            freshMs: options.scoreTokenCacheMs,
            maxStaleMs: options.scoreTokenStaleMs ?? 60_000,
            onRefreshError: options.onRefreshError,
          })
        : undefined;
  }

  static isValidUsername(username: string): boolean {
    return USERNAME.test(username);
  }

  /** The user named `username`, created (without a score token) when missing; its admin flag follows `isAdmin`. */
  async ensureUser(username: string, isAdmin: boolean): Promise<UserRecord> {
    let user = await this.store.findByUsername(username);
    if (!user) {
      await this.store.insertIfMissing({ username, isAdmin });
      user = await this.store.findByUsername(username);
      if (!user) throw new Error(`user ${username} vanished after insert`);
    } else if (user.isAdmin !== isAdmin) {
      await this.store.setAdmin(user.id, isAdmin);
      user = { ...user, isAdmin };
    }
    return user;
  }

  /**
   * The user of a local access token (HS256, issued by `npm run token`): the stored admin flag decides, and
   * the token can only narrow it (an admin's token without the role acts as a plain user). A user seen for the
   * first time is created without the admin flag; only `npm run token -- <user> --admin` grants it.
   */
  async userForLocalToken(username: string, tokenSaysAdmin: boolean): Promise<UserRecord> {
    let user = await this.store.findByUsername(username);
    if (!user) {
      await this.store.insertIfMissing({ username, isAdmin: false });
      user = await this.store.findByUsername(username);
      if (!user) throw new Error(`user ${username} vanished after insert`);
    }
    return tokenSaysAdmin ? user : { ...user, isAdmin: false };
  }

  /**
   * Issues a score token and returns it: the only time it is ever shown. Without `rotate` only a
   * user who has none gets one (undefined otherwise); with `rotate` the new token replaces the old,
   * which stops working at once in this process and, in others, within their cache time.
   */
  async issueScoreToken(userId: number, options: { rotate?: boolean } = {}): Promise<string | undefined> {
    const token = generateScoreToken();
    const stored = await this.store.setScoreTokenHash(userId, hashScoreToken(token), options.rotate === true);
    if (!stored) return undefined;
    this.forgetCachedUser(userId);
    return token;
  }

  /**
   * Issues a callback signing secret and returns it: the only time it is ever shown. Without `rotate` only a
   * user who has none gets one (undefined otherwise); with `rotate` the new secret replaces the old, and every
   * callback from then on (retries of earlier runs included) is signed with the new one, and also with the old
   * one for `callbackSecretOverlapSeconds` (read when rotating), so receivers can move over without refusing any.
   */
  async issueCallbackSecret(userId: number, options: { rotate?: boolean } = {}): Promise<string | undefined> {
    const secret = generateCallbackSecret();
    const stored = await this.store.setCallbackSecret(
      userId,
      this.box().seal(userId, secret),
      options.rotate === true,
      this.secretOverlapSeconds,
    );
    return stored ? secret : undefined;
  }

  /** The user's callback signing secret, or undefined when none was issued. */
  async callbackSecretOf(userId: number): Promise<string | undefined> {
    return (await this.callbackSecretsOf(userId))[0];
  }

  /**
   * The secrets that sign the user's callbacks (execution's CallbackSecrets): the current one, then the one a
   * rotation replaced while its overlap lasts; none when none was issued. Throws when the current one cannot be
   * opened; a previous one that cannot (sealed under an older CALLBACK_SECRETS_KEY) is left out.
   */
  async callbackSecretsOf(userId: number): Promise<string[]> {
    const sealed = await this.store.sealedCallbackSecrets(userId);
    if (!sealed) return [];
    const secrets = [this.box().open(userId, sealed.current)];
    if (sealed.previous) {
      try {
        secrets.push(this.box().open(userId, sealed.previous));
      } catch {
        // Only the current secret signs, as without an overlap.
      }
    }
    return secrets;
  }

  private box(): CallbackSecretBox {
    if (!this.secretBox)
      throw new Error('callback secrets need CALLBACK_SECRETS_KEY (UserServiceOptions.callbackSecretsKey)');
    return this.secretBox;
  }

  /** Enables or disables a user; a disabled user's credentials stop working (score tokens within the cache time in other processes). */
  async setEnabled(userId: number, enabled: boolean): Promise<void> {
    await this.store.setEnabled(userId, enabled);
    this.forgetCachedUser(userId);
  }

  async findByUsername(username: string): Promise<UserRecord | undefined> {
    return this.store.findByUsername(username);
  }

  async findById(id: number): Promise<UserRecord | undefined> {
    return this.store.findById(id);
  }

  /** One SHA-256 per request: the hash finds the user (cached for at most the configured time). */
  async authenticateScoreToken(token: string): Promise<AuthenticatedUser | undefined> {
    const key = hashScoreToken(token);
    const entry = this.byTokenHash ? await this.byTokenHash.get(key.toString('hex')) : await this.tokenEntry(key);
    if (!entry?.enabled) return undefined;
    return { id: entry.id, username: entry.username, isAdmin: entry.isAdmin };
  }

  private async tokenEntry(hash: Buffer): Promise<TokenEntry | undefined> {
    const user = await this.store.findByScoreTokenHash(hash);
    return user ? { id: user.id, username: user.username, isAdmin: user.isAdmin, enabled: user.enabled } : undefined;
  }

  private forgetCachedUser(userId: number): void {
    this.byTokenHash?.deleteWhere((entry) => entry.id === userId);
  }
}
