import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { exampleInstructions, shellQuoted } from '../../src/scenarios/example-instructions.js';
import { createDatabase } from '../../src/db/database.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const seeded = { username: 'demo', scenarioName: 'credit-decision', scenarioId: '7', version: '1', deployed: false };

describe('the commands make run prints', () => {
  it('give every npm run token command the APP_ENV and DATABASE_URL of the service', () => {
    const lines = exampleInstructions(seeded, {
      environment: 'local',
      databaseUrl: 'mysql://root@127.0.0.1:3306/elsewhere',
      host: '127.0.0.1',
      port: 8081,
    });
    const commands = lines.join('\n').match(/[^ ($]*npm run --silent token/g) ?? [];
    expect(commands.length).toBe(3);
    for (const line of lines.filter((text) => text.includes('npm run --silent token'))) {
      expect(line).toMatch(
        /APP_ENV='local' DATABASE_URL='mysql:\/\/root@127\.0\.0\.1:3306\/elsewhere' npm run --silent token -- demo/g,
      );
    }
    expect(lines.join('\n')).toContain('http://127.0.0.1:8081/api/');
  });

  it('quote any URL as one shell word', () => {
    expect(shellQuoted("mysql://u:it's@h/db")).toBe(`'mysql://u:it'\\''s@h/db'`);
  });

  it('issue a token into the database the service uses when pasted into a shell without its environment', async () => {
    const databaseUrl = process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/scoring_test';
    const username = `pasted-${randomUUID().slice(0, 8)}`;
    const lines = exampleInstructions(
      { ...seeded, username },
      { environment: 'test', databaseUrl, host: undefined, port: 8080 },
    );
    const bearer = lines.find((line) => line.startsWith('Bearer token'))!;
    const command = bearer.slice(bearer.indexOf('APP_ENV='), bearer.indexOf(username) + username.length);
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !['DATABASE_URL', 'APP_ENV', 'NODE_OPTIONS'].includes(name)),
    );
    const printed = JSON.parse(execFileSync('bash', ['-c', command], { cwd: ROOT, env, encoding: 'utf8' })) as {
      username: string;
    };
    expect(printed.username).toBe(username);
    const db = createDatabase(databaseUrl, { min: 0, max: 1 });
    try {
      expect(await db('users').where({ username }).first()).toBeDefined();
    } finally {
      await db.destroy();
    }
  }, 30_000);
});
