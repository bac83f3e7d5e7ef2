import { LRUCache } from 'lru-cache';
import type { AuthenticatedUser } from '../http/request-context.js';
import { timingSafeEqual } from 'node:crypto';
import { generateScoreToken, hashScoreToken } from './score-token.js';
import type { UserRecord, UserStore } from './user-store.js';

const USERNAME = /^[A-Za-z0-9._@-]{1,190}$/;

/**
 * Users are provisioned the first time a valid access token names them. Look-ups by score token
 * are cached briefly (keyed by the token's hash, never the token) because every score request needs one.
 */
export class UserService {
  private readonly byTokenHash = new LRUCache<string, { user: UserRecord; tokenHash: Buffer }>({ max: 10_000, ttl: 30_000 });

  constructor(private readonly store: UserStore) {}

  static isValidUsername(username: string): boolean {
    return USERNAME.test(username);
  }

  async ensureUser(username: string, isAdmin: boolean): Promise<UserRecord> {
    let user = await this.store.findByUsername(username);
    if (!user) {
      const scoreToken = generateScoreToken();
      await this.store.insertIfMissing({ username, isAdmin, scoreToken, scoreTokenHash: hashScoreToken(scoreToken) });
      user = await this.store.findByUsername(username);
      if (!user) throw new Error(`user ${username} vanished after insert`);
    } else if (user.isAdmin !== isAdmin) {
      await this.store.setAdmin(user.id, isAdmin);
      user = { ...user, isAdmin };
    }
    return user;
  }

  async findByUsername(username: string): Promise<UserRecord | undefined> {
    return this.store.findByUsername(username);
  }

  async findById(id: number): Promise<UserRecord | undefined> {
    return this.store.findById(id);
  }

  /** One SHA-256 per request: the hash finds the user (cached) and is compared in constant time with the stored token's. */
  async authenticateScoreToken(token: string): Promise<AuthenticatedUser | undefined> {
    const hash = hashScoreToken(token);
    const cacheKey = hash.toString('hex');
    let entry = this.byTokenHash.get(cacheKey);
    if (!entry) {
      const user = await this.store.findByScoreTokenHash(hash);
      if (!user) return undefined;
      entry = { user, tokenHash: hashScoreToken(user.scoreToken) };
      this.byTokenHash.set(cacheKey, entry);
    }
    const { user, tokenHash } = entry;
    if (!user.enabled || !timingSafeEqual(tokenHash, hash)) return undefined;
    return { id: user.id, username: user.username, isAdmin: user.isAdmin };
  }

}
