import jwt from 'jsonwebtoken';
import type { JwtConfig } from '../config/config.js';

/** Issues an HS256 access token (local development, tests, the token command), valid 12 h or JWT_MAX_LIFETIME_SECONDS if shorter. */
export function issueAccessToken(
  config: JwtConfig,
  username: string,
  isAdmin: boolean,
  expiresInSeconds = Math.min(12 * 3600, config.maxLifetimeSeconds),
): string {
  if (!config.secret)
    throw new Error('Issuing tokens needs JWT_SECRET (HS256); with an external identity provider, get tokens from it.');
  const claims: Record<string, unknown> = {
    [config.usernameClaim]: username,
    [config.rolesClaim]: isAdmin ? [config.adminRole] : [],
  };
  return jwt.sign(claims, config.secret, {
    algorithm: 'HS256',
    subject: username,
    expiresIn: expiresInSeconds,
    ...(config.issuer ? { issuer: config.issuer } : {}),
    ...(config.audience ? { audience: config.audience } : {}),
  });
}
