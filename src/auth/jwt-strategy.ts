import { ExtractJwt, Strategy as JwtStrategy, type StrategyOptionsWithoutRequest } from 'passport-jwt';
import type { JwtConfig } from '../config/config.js';
import type { AuthenticatedUser } from './authenticated-user.js';
import { UserService } from './user-service.js';

type JwtPayload = Record<string, unknown>;

/** Why a verified token is still refused; the 401's message says it (src/auth/authenticate.ts). */
export interface RefusalInfo {
  reason: string;
}

function usernameFrom(payload: JwtPayload, config: JwtConfig): string | undefined {
  const value = payload[config.usernameClaim] ?? payload.sub;
  return typeof value === 'string' && UserService.isValidUsername(value) ? value : undefined;
}

/** How far ahead of this server's clock a token's `iat` may lie (clocks of issuers and servers drift a little). */
const IAT_CLOCK_SKEW_SECONDS = 60;

/**
 * A token must expire, and not later than JWT_MAX_LIFETIME_SECONDS from now nor from its `iat`:
 * a stolen token without `exp` would work forever (the signature check alone accepts it). Its `iat`, when
 * present, must not lie more than IAT_CLOCK_SKEW_SECONDS in the future: a token "issued" later than now was
 * minted with a wrong clock or made to stretch `exp − iat` past the lifetime check.
 */
function lifetimeProblem(
  payload: JwtPayload,
  maxLifetimeSeconds: number,
  nowSeconds = Date.now() / 1000,
): string | undefined {
  const { exp, iat } = payload;
  if (typeof exp !== 'number' || !Number.isFinite(exp))
    return 'it has no `exp` (expiry) claim; access tokens must expire';
  if (iat !== undefined && (typeof iat !== 'number' || !Number.isFinite(iat)))
    return 'its `iat` (issued at) claim is not a number of seconds';
  if (typeof iat === 'number' && iat - nowSeconds > IAT_CLOCK_SKEW_SECONDS)
    return `it was issued in the future (\`iat\` more than ${IAT_CLOCK_SKEW_SECONDS} s after this server's clock)`;
  if (exp - nowSeconds > maxLifetimeSeconds)
    return `it expires more than ${maxLifetimeSeconds} s (JWT_MAX_LIFETIME_SECONDS) from now`;
  if (typeof iat === 'number' && exp - iat > maxLifetimeSeconds)
    return `its lifetime (exp − iat) is longer than ${maxLifetimeSeconds} s (JWT_MAX_LIFETIME_SECONDS)`;
  return undefined;
}

function isAdminFrom(payload: JwtPayload, config: JwtConfig): boolean {
  const roles = payload[config.rolesClaim];
  return Array.isArray(roles) && roles.includes(config.adminRole);
}

type KeyProvider = (request: unknown, rawJwt: string, done: (error: unknown, key?: string | Buffer) => void) => void;

/** Keys from the identity provider's JWKS endpoint (cached, rate limited); jwks-rsa is loaded only when configured. */
function jwksKeyProvider(jwksUri: string): KeyProvider {
  let provider: Promise<KeyProvider> | undefined;
  return (request, rawJwt, done) => {
    provider ??= import('jwks-rsa').then(
      (jwks) =>
        jwks.passportJwtSecret({ jwksUri, cache: true, rateLimit: true, jwksRequestsPerMinute: 10 }) as KeyProvider,
    );
    provider.then((provide) => provide(request, rawJwt, done), done);
  };
}

function keyOptions(config: JwtConfig): Partial<StrategyOptionsWithoutRequest> & Record<string, unknown> {
  if (config.jwksUri) return { secretOrKeyProvider: jwksKeyProvider(config.jwksUri), algorithms: ['RS256'] };
  if (config.publicKey) return { secretOrKey: config.publicKey, algorithms: ['RS256'] };
  return { secretOrKey: config.secret as string, algorithms: ['HS256'] };
}

/**
 * Bearer JWT: HS256 with JWT_SECRET locally, RS256 with JWT_PUBLIC_KEY or JWT_JWKS_URI for an
 * external identity provider. The token must expire within JWT_MAX_LIFETIME_SECONDS. A valid token
 * for an unknown user provisions the user; a disabled user's tokens are refused.
 *
 * Who decides the admin role: an external identity provider owns its users' roles, so its tokens set the
 * stored flag. Local tokens are issued by `npm run token`, which records the role in `users.is_admin` as it
 * issues them: there the stored flag is the truth and a token is admin only while its user still is (a
 * token issued before a demotion keeps no admin rights for the rest of its 12 h, and never sets the flag back).
 */
export function createJwtStrategy(config: JwtConfig, users: UserService): JwtStrategy {
  const options = {
    jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
    ...keyOptions(config),
    ...(config.issuer ? { issuer: config.issuer } : {}),
    ...(config.audience ? { audience: config.audience } : {}),
  } as StrategyOptionsWithoutRequest;
  const localTokens = !config.jwksUri && !config.publicKey;
  return new JwtStrategy(
    options,
    (payload: JwtPayload, done: (error: unknown, user?: AuthenticatedUser | false, info?: RefusalInfo) => void) => {
      const lifetime = lifetimeProblem(payload, config.maxLifetimeSeconds);
      if (lifetime) {
        done(null, false, { reason: lifetime });
        return;
      }
      const username = usernameFrom(payload, config);
      if (!username) {
        done(null, false, {
          reason: `its \`${config.usernameClaim}\` claim is not a username (letters, digits, . _ @ -; no whitespace)`,
        });
        return;
      }
      const tokenSaysAdmin = isAdminFrom(payload, config);
      (localTokens ? users.userForLocalToken(username, tokenSaysAdmin) : users.ensureUser(username, tokenSaysAdmin))
        .then((user) =>
          user.enabled
            ? done(null, { id: user.id, username: user.username, isAdmin: user.isAdmin })
            : done(null, false, { reason: 'its user is disabled' }),
        )
        .catch((error: unknown) => done(error));
    },
  );
}
