import { loadConfig } from '../../src/config/config.js';
import { checkDependencies } from '../../src/startup-checks.js';
import { createDatabase } from '../../src/db/database.js';
import { StaticMigrationSource } from '../../src/db/migration-source.js';

describe('configuration', () => {
  it('has working defaults for local development', () => {
    const config = loadConfig({ APP_ENV: 'local' });
    expect(config).toMatchObject({
      environment: 'local',
      port: 8080,
      databaseUrl: 'mysql://root@127.0.0.1:3306/scoring',
      jobsUrl: 'redis://127.0.0.1:6379/0',
    });
    expect(config.limits.runTimeoutMs).toBe(1000);
  });

  it('refuses to start production without URLs and secrets, naming each', () => {
    expect(() => loadConfig({ APP_ENV: 'production' })).toThrow(
      /DATABASE_URL is required.*JOBS_URL is required.*JWT_SECRET, JWT_PUBLIC_KEY or JWT_JWKS_URI.*CALLBACK_SIGNING_SECRET.*CALLBACK_SECRETS_KEY.*RECORDS_MASKING_SECRET/,
    );
  });

  it('needs CALLBACK_SIGNING_SECRET in production only while the legacy callback signature is on', () => {
    const production = {
      APP_ENV: 'production',
      DATABASE_URL: 'mysql://svc@db:3306/scoring',
      JOBS_URL: 'redis://jobs:6379/0',
      JWT_SECRET: 's',
      CALLBACK_SECRETS_KEY: 'k',
      RECORDS_MASKING_SECRET: 'm',
    };
    expect(() => loadConfig(production)).toThrow(
      /CALLBACK_SIGNING_SECRET is required while CALLBACK_LEGACY_SIGNATURE is true/,
    );
    expect(loadConfig({ ...production, CALLBACK_LEGACY_SIGNATURE: 'false' }).callbackLegacySignature).toBe(false);
  });

  it('accepts production with an external identity provider', () => {
    const config = loadConfig({
      APP_ENV: 'production',
      DATABASE_URL: 'mysql://svc@db:3306/scoring',
      JOBS_URL: 'mongodb://jobs:27017/agenda',
      JWT_JWKS_URI: 'https://idp.example.com/jwks',
      CALLBACK_SIGNING_SECRET: 's',
      CALLBACK_SECRETS_KEY: 'k',
      RECORDS_MASKING_SECRET: 'm',
    });
    expect(config.jwt.secret).toBeUndefined();
    expect(config.jobsUrl).toBe('mongodb://jobs:27017/agenda');
  });

  it('names a job store URL of an unknown kind', () => {
    expect(() => loadConfig({ APP_ENV: 'local', JOBS_URL: 'amqp://x' })).toThrow(
      /JOBS_URL must start with mongodb:\/\/, redis:\/\/ or postgres:\/\//,
    );
  });

  it('names a limit that is not a whole number', () => {
    expect(() => loadConfig({ APP_ENV: 'local', LIMIT_RUN_TIMEOUT_MS: 'soon' })).toThrow(
      /LIMIT_RUN_TIMEOUT_MS must be a non-negative integer/,
    );
  });

  it("leaves the engine hosts to the engine's defaults unless ENGINE_HOSTS or ENGINE_HOSTS_PER_TENANT is set", () => {
    const config = loadConfig({ APP_ENV: 'local' });
    expect(config.engine.hosts).toBeUndefined();
    expect(config.engine.hostsPerTenant).toBeUndefined();
    expect(loadConfig({ APP_ENV: 'local', ENGINE_HOSTS: '12' }).engine).toMatchObject({
      hosts: 12,
      hostsPerTenant: undefined,
    });
    expect(loadConfig({ APP_ENV: 'local', ENGINE_HOSTS: '12', ENGINE_HOSTS_PER_TENANT: '5' }).engine).toMatchObject({
      hosts: 12,
      hostsPerTenant: 5,
    });
    expect(() => loadConfig({ APP_ENV: 'local', ENGINE_HOSTS: '0' })).toThrow(/ENGINE_HOSTS must be at least 1/);
    expect(loadConfig({ APP_ENV: 'local', ENGINE_QUARANTINE_MINUTES: '3' }).engine.quarantineWindowMs).toBe(180_000);
  });

  it('refuses an engine without hosts', () => {
    expect(() => loadConfig({ APP_ENV: 'local', ENGINE_HOSTS: '0' })).toThrow(/ENGINE_HOSTS must be at least 1/);
  });

  it('validates responses everywhere but in production unless VALIDATE_RESPONSES says otherwise', () => {
    const production = {
      APP_ENV: 'production',
      DATABASE_URL: 'mysql://svc@db:3306/scoring',
      JOBS_URL: 'redis://jobs:6379/0',
      JWT_SECRET: 's',
      CALLBACK_SIGNING_SECRET: 's',
      CALLBACK_SECRETS_KEY: 'k',
      RECORDS_MASKING_SECRET: 'm',
    };
    expect(loadConfig(production).validateResponses).toBe(false);
    expect(loadConfig({ ...production, APP_ENV: 'staging' }).validateResponses).toBe(true);
    expect(loadConfig({ APP_ENV: 'local' }).validateResponses).toBe(true);
    expect(loadConfig({ APP_ENV: 'test' }).validateResponses).toBe(true);
    expect(loadConfig({ ...production, VALIDATE_RESPONSES: 'true' }).validateResponses).toBe(true);
    expect(loadConfig({ ...production, APP_ENV: 'staging', VALIDATE_RESPONSES: 'false' }).validateResponses).toBe(
      false,
    );
  });

  it('names a switch that is not true or false', () => {
    expect(() => loadConfig({ APP_ENV: 'local', VALIDATE_RESPONSES: 'yes' })).toThrow(
      /VALIDATE_RESPONSES must be true or false, got "yes"/,
    );
  });

  it('limits body nesting to 64 levels and headers to 16 KB by default, and refuses a nesting limit the parsers could not honour', () => {
    const config = loadConfig({ APP_ENV: 'local' });
    expect(config.limits).toMatchObject({ bodyDepth: 64, headerBytes: 16_384 });
    expect(loadConfig({ APP_ENV: 'local', LIMIT_BODY_DEPTH: '200' }).limits.bodyDepth).toBe(200);
    expect(() => loadConfig({ APP_ENV: 'local', LIMIT_BODY_DEPTH: '100000' })).toThrow(
      /LIMIT_BODY_DEPTH must be between 1 and 256/,
    );
    expect(() => loadConfig({ APP_ENV: 'local', LIMIT_BODY_DEPTH: '0' })).toThrow(
      /LIMIT_BODY_DEPTH must be between 1 and 256/,
    );
  });

  it('keeps metrics off by default, on 127.0.0.1 (API 9464, worker 9465) when switched on', () => {
    expect(loadConfig({ APP_ENV: 'local' }).metrics).toMatchObject({
      enabled: false,
      host: '127.0.0.1',
      port: 9464,
      workerPort: 9465,
      token: undefined,
    });
    expect(
      loadConfig({ APP_ENV: 'local', METRICS_ENABLED: 'true', METRICS_PORT: '9100', WORKER_METRICS_PORT: '9101' })
        .metrics,
    ).toMatchObject({ enabled: true, port: 9100, workerPort: 9101 });
    expect(loadConfig({ APP_ENV: 'local' }).statistics).toEqual({ flushMs: 2000, retentionDays: 30 });
  });

  it('refuses metrics bound beyond loopback without METRICS_TOKEN: they name every tenant’s scenarios', () => {
    expect(() => loadConfig({ APP_ENV: 'local', METRICS_ENABLED: 'true', METRICS_HOST: '0.0.0.0' })).toThrow(
      /METRICS_TOKEN is required when METRICS_HOST is not a loopback address/,
    );
    expect(
      loadConfig({ APP_ENV: 'local', METRICS_ENABLED: 'true', METRICS_HOST: '0.0.0.0', METRICS_TOKEN: 't' }).metrics
        .token,
    ).toBe('t');
    expect(loadConfig({ APP_ENV: 'local', METRICS_ENABLED: 'true', METRICS_HOST: '::1' }).metrics.host).toBe('::1');
    // Loopback is an address, not a name that starts like one.
    for (const host of ['127.evil.example.com', '127.0.0.0.0.0.0.0.nip.io', '::', '::ffff:10.0.0.1']) {
      expect(() => loadConfig({ APP_ENV: 'local', METRICS_ENABLED: 'true', METRICS_HOST: host })).toThrow(
        /METRICS_TOKEN is required/,
      );
    }
    for (const host of ['127.0.0.2', '::ffff:127.0.0.1', 'localhost']) {
      expect(loadConfig({ APP_ENV: 'local', METRICS_ENABLED: 'true', METRICS_HOST: host }).metrics.host).toBe(host);
    }
    expect(() => loadConfig({ APP_ENV: 'local', METRICS_ENABLED: 'yes' })).toThrow(
      /METRICS_ENABLED must be true or false/,
    );
  });

  it('names an unknown environment', () => {
    expect(() => loadConfig({ APP_ENV: 'qa' })).toThrow(/APP_ENV must be one of/);
  });
});

describe('start-up checks', () => {
  it('report an unreachable MySQL and job store in one actionable line each', async () => {
    const config = loadConfig({
      APP_ENV: 'local',
      DATABASE_URL: 'mysql://root:secret@127.0.0.1:1/scoring',
      JOBS_URL: 'redis://127.0.0.1:1/0',
    });
    const problems = await checkDependencies(config);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      /^MySQL at mysql:\/\/root:\*\*\*@127\.0\.0\.1:1\/scoring is unreachable .*set DATABASE_URL\.$/,
    );
    expect(problems[1]).toMatch(/^Job store at redis:\/\/127\.0\.0\.1:1\/0 is unreachable .*set JOBS_URL\.$/);
    expect(problems.join('')).not.toContain('secret');
  });

  it('report nothing when both answer and the database is migrated', async () => {
    expect(
      await checkDependencies(
        loadConfig({ APP_ENV: 'test', DATABASE_URL: process.env.DATABASE_URL, JOBS_URL: process.env.JOBS_URL }),
      ),
    ).toEqual([]);
  });

  it('report a missing database as missing, not unreachable, naming npm run migrate', async () => {
    const url = new URL(process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/scoring_test');
    url.pathname = `/${url.pathname.slice(1)}_never_created`;
    const problems = await checkDependencies(
      loadConfig({ APP_ENV: 'test', DATABASE_URL: url.toString(), JOBS_URL: process.env.JOBS_URL }),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /answers, but the database \w+_never_created does not exist: create and migrate it with npm run migrate/,
    );
    expect(problems[0]).not.toContain('unreachable');
  });

  it('report an unmigrated database (empty, or missing migrations) naming npm run migrate', async () => {
    const url = new URL(process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/scoring_test');
    url.pathname = `/${url.pathname.slice(1)}_unmigrated`;
    const admin = createDatabase(process.env.DATABASE_URL ?? 'mysql://root@127.0.0.1:3306/scoring_test', {
      min: 0,
      max: 1,
    });
    const empty = url.pathname.slice(1);
    try {
      await admin.raw('DROP DATABASE IF EXISTS ??', [empty]);
      await admin.raw('CREATE DATABASE ??', [empty]);
      const config = loadConfig({ APP_ENV: 'test', DATABASE_URL: url.toString(), JOBS_URL: process.env.JOBS_URL });
      const [problem] = await checkDependencies(config);
      expect(problem).toMatch(
        new RegExp(
          `^The database ${empty} at .* is not migrated \\(\\d+ migrations not applied, from 20\\d+_\\w+\\): run npm run migrate`,
        ),
      );
      // One migration missing (a database left behind by older code) is caught too.
      await admin.raw(
        'CREATE TABLE ??.knex_migrations (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(255), batch INT, migration_time TIMESTAMP NULL)',
        [empty],
      );
      const names = await new StaticMigrationSource().getMigrations();
      for (const name of names.slice(0, -1))
        await admin.raw('INSERT INTO ??.knex_migrations (name, batch) VALUES (?, 1)', [empty, name]);
      expect(await checkDependencies(config)).toEqual([
        expect.stringContaining(`1 migration not applied, from ${names.at(-1)}): run npm run migrate`),
      ]);
    } finally {
      await admin.raw('DROP DATABASE IF EXISTS ??', [empty]);
      await admin.destroy();
    }
  });
});
