/**
 * `npm run --silent token -- <username> [--admin] [--rotate]`: creates the user if missing and
 * prints one JSON line {"userId","username","accessToken"[,"scoreToken"]} (access token valid 12 h).
 * The score token is only stored as a hash, so it is printed once: when this command issues it (the
 * user had none) or, with `--rotate`, replaces it (the old one stops working at once; running API
 * processes may honour it for up to SCORE_TOKEN_CACHE_SECONDS).
 * `--callback-secret` also issues the user's callback signing secret when it has none, `--rotate-callback-secret`
 * replaces it: printed once as "callbackSecret" (stored sealed with CALLBACK_SECRETS_KEY; docs/execution.md). The
 * replaced secret still signs callbacks, beside the new one, for CALLBACK_SECRET_OVERLAP_SECONDS (24 h; 0 ends it
 * at once, for a leaked secret).
 * `npm run --silent token -- <username> --disable | --enable`: switches an existing user off or on
 * (access tokens at once; score tokens within SCORE_TOKEN_CACHE_SECONDS); prints {"userId","username","enabled"}.
 */
import { issueAccessToken } from '../src/auth/access-token.js';
import { UserService } from '../src/auth/user-service.js';
import { UserStore } from '../src/auth/user-store.js';
import { loadConfig } from '../src/config/config.js';
import { redactedUrl } from '../src/config/redacted-url.js';
import { createDatabase } from '../src/db/database.js';
import { isDatabaseUnavailable } from '../src/db/mysql-errors.js';

const USAGE =
  'usage: npm run --silent token -- <username> [--admin] [--rotate] [--callback-secret | --rotate-callback-secret]\n       npm run --silent token -- <username> --disable | --enable\n(username: letters, digits, . _ @ -)';
const FLAGS = ['--admin', '--rotate', '--disable', '--enable', '--callback-secret', '--rotate-callback-secret'];

const args = process.argv.slice(2);
const username = args.find((arg) => !arg.startsWith('--'));
const unknown = args.filter((arg) => arg.startsWith('--') && !FLAGS.includes(arg));
const has = (flag: string) => args.includes(flag);
const switching = has('--disable') || has('--enable');
if (
  !username ||
  !UserService.isValidUsername(username) ||
  unknown.length > 0 ||
  (has('--disable') && has('--enable')) ||
  (switching && (has('--admin') || has('--rotate') || has('--callback-secret') || has('--rotate-callback-secret')))
) {
  console.error(unknown.length > 0 ? `token: unknown option ${unknown.join(', ')}\n${USAGE}` : USAGE);
  process.exit(2);
}
const config = loadConfig();
// quiet: knex would print a failed connection with its stack on stdout, where callers read the JSON line.
const db = createDatabase(config.databaseUrl, { min: 0, max: 1 }, true);
const users = new UserService(new UserStore(db), {
  scoreTokenCacheMs: 0,
  callbackSecretsKey: config.callbackSecretsKey,
  callbackSecretOverlapSeconds: config.callbackSecretOverlapSeconds,
});
try {
  if (switching) {
    const user = await users.findByUsername(username);
    if (!user) throw new Error(`there is no user "${username}"`);
    const enabled = has('--enable');
    await users.setEnabled(user.id, enabled);
    process.stdout.write(`${JSON.stringify({ userId: user.id, username: user.username, enabled })}\n`);
  } else {
    const user = await users.ensureUser(username, has('--admin'));
    const scoreToken = await users.issueScoreToken(user.id, { rotate: has('--rotate') });
    if (!scoreToken)
      console.error(
        `token: ${user.username} already has a score token; it was shown once, when it was issued. Add --rotate to replace it with a new one.`,
      );
    if (!user.enabled)
      console.error(`token: ${user.username} is disabled; its credentials do not work until --enable.`);
    const wantsCallbackSecret = has('--callback-secret') || has('--rotate-callback-secret');
    const callbackSecret = wantsCallbackSecret
      ? await users.issueCallbackSecret(user.id, { rotate: has('--rotate-callback-secret') })
      : undefined;
    if (wantsCallbackSecret && !callbackSecret)
      console.error(
        `token: ${user.username} already has a callback secret; it was shown once, when it was issued. Use --rotate-callback-secret to replace it (callbacks are then signed with the new one, and with the old one for CALLBACK_SECRET_OVERLAP_SECONDS).`,
      );
    const accessToken = issueAccessToken(config.jwt, user.username, user.isAdmin);
    process.stdout.write(
      `${JSON.stringify({ userId: user.id, username: user.username, accessToken, ...(scoreToken ? { scoreToken } : {}), ...(callbackSecret ? { callbackSecret } : {}) })}\n`,
    );
  }
} catch (error) {
  const unreachable = isDatabaseUnavailable(error) || (error as { code?: string }).code === 'ER_BAD_DB_ERROR';
  console.error(
    `token: ${(error as Error).message}${unreachable ? ` (DATABASE_URL ${redactedUrl(config.databaseUrl)}: start MySQL with \`make services\` and create the schema with \`make migrate\`, or set DATABASE_URL)` : ''}`,
  );
  process.exitCode = 1;
} finally {
  await db.destroy();
}
