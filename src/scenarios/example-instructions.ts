import type { SeedResult } from './example-seeder.js';

/** The settings of the service `make run` starts that the printed commands must share with it. */
export interface ServiceSettings {
  environment: string;
  databaseUrl: string;
  host: string | undefined;
  port: number;
}

/** `value` as one shell word, whatever it holds (single quotes; a quote inside is closed, escaped and reopened). */
export function shellQuoted(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The lines `make run` prints after seeding (scripts/seed-example.ts): how to score the example and get a
 * bearer token. Every `npm run token` command carries the APP_ENV and DATABASE_URL the service was started
 * with: in another terminal those are not set, and the token command would otherwise issue credentials into
 * the default database, which the running service never reads. (The URL is printed as given, password included:
 * it is the operator's own, on the operator's terminal, and the command must work when pasted.)
 */
export function exampleInstructions(seeded: SeedResult, service: ServiceSettings): string[] {
  const reachable =
    service.host === undefined || service.host === '0.0.0.0' || service.host === '::'
      ? 'localhost'
      : service.host.includes(':')
        ? `[${service.host}]`
        : service.host;
  const base = `http://${reachable}:${service.port}`;
  const token = `APP_ENV=${shellQuoted(service.environment)} DATABASE_URL=${shellQuoted(service.databaseUrl)} npm run --silent token --`;
  const inputs = JSON.stringify({ income: 52000, existingDebt: 4000, age: 34, employment: 'EMPLOYED' });
  // The score token is stored only as a hash: it can be shown when issued, and otherwise only replaced.
  const key = seeded.scoreToken
    ? [`Score it (${seeded.username}'s score token is shown only now; keep it):`, `  KEY=${seeded.scoreToken}`]
    : [
        `Score it (${seeded.username}'s score token was shown when it was issued; this gets a new one and retires the old):`,
        `  KEY=$(${token} ${seeded.username} --rotate | node -pe 'JSON.parse(require("fs").readFileSync(0)).scoreToken')`,
      ];
  return [
    `seed: user "${seeded.username}" has scenario "${seeded.scenarioName}" (id ${seeded.scenarioId}), deployed version ${seeded.version}${seeded.deployed ? ' (deployed now)' : ' (already deployed)'}.`,
    ...key,
    `  curl -s -X POST "${base}/api/scenario/code/remote/score?name=${encodeURIComponent(seeded.scenarioName)}&key=$KEY" -H 'Content-Type: application/json' -d '${inputs}'`,
    `Bearer token for the management API: ${token} ${seeded.username}   (prints JSON with "accessToken")`,
    `  e.g. curl -s "${base}/api/scenario/open/${seeded.scenarioId}?context=${encodeURIComponent(JSON.stringify({ actors: { requester: { username: seeded.username } } }))}" -H "Authorization: Bearer $(${token} ${seeded.username} | node -pe 'JSON.parse(require(\\"fs\\").readFileSync(0)).accessToken')"`,
  ];
}
