/**
 * `npm run --silent token -- <username> [--admin]`: creates the user if missing and prints exactly
 * one JSON line {"userId","username","accessToken","scoreToken"} (access token valid 12 h).
 */
import { issueAccessToken } from '../src/auth/access-token.js';
import { UserService } from '../src/auth/user-service.js';
import { UserStore } from '../src/auth/user-store.js';
import { loadConfig } from '../src/config/config.js';
import { createDatabase } from '../src/db/database.js';

const args = process.argv.slice(2);
const username = args.find((arg) => !arg.startsWith('--'));
const isAdmin = args.includes('--admin');
if (!username || !UserService.isValidUsername(username)) {
  console.error('usage: npm run --silent token -- <username> [--admin]   (username: letters, digits, . _ @ -)');
  process.exit(2);
}
const config = loadConfig();
const db = createDatabase(config.databaseUrl, { min: 0, max: 1 });
try {
  const user = await new UserService(new UserStore(db)).ensureUser(username, isAdmin);
  const accessToken = issueAccessToken(config.jwt, user.username, user.isAdmin);
  process.stdout.write(`${JSON.stringify({ userId: user.id, username: user.username, accessToken, scoreToken: user.scoreToken })}\n`);
} catch (error) {
  console.error(`token: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  await db.destroy();
}
