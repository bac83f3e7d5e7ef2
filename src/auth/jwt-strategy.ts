import { ExtractJwt, Strategy as JwtStrategy, type StrategyOptionsWithoutRequest } from 'passport-jwt';
import type { JwtConfig } from '../config/config.js';
import type { AuthenticatedUser } from '../http/request-context.js';
import { UserService } from './user-service.js';

type JwtPayload = Record<string, unknown>;

function usernameFrom(payload: JwtPayload, config: JwtConfig): string | undefined {
  const value = payload[config.usernameClaim] ?? payload.sub;
  return typeof value === 'string' && UserService.isValidUsername(value) ? value : undefined;
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
    provider ??= import('jwks-rsa').then((jwks) => jwks.passportJwtSecret({ jwksUri, cache: true, rateLimit: true, jwksRequestsPerMinute: 10 }) as KeyProvider);
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
 * external identity provider. A valid token for an unknown user provisions the user.
 */
export function createJwtStrategy(config: JwtConfig, users: UserService): JwtStrategy {
  const options = {
    jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
    ...keyOptions(config),
    ...(config.issuer ? { issuer: config.issuer } : {}),
    ...(config.audience ? { audience: config.audience } : {}),
  } as StrategyOptionsWithoutRequest;
  return new JwtStrategy(options, (payload: JwtPayload, done: (error: unknown, user?: AuthenticatedUser | false) => void) => {
    const username = usernameFrom(payload, config);
    if (!username) {
      done(null, false);
      return;
    }
    users
      .ensureUser(username, isAdminFrom(payload, config))
      .then((user) => done(null, user.enabled ? { id: user.id, username: user.username, isAdmin: user.isAdmin } : false))
      .catch((error: unknown) => done(error));
  });
}
