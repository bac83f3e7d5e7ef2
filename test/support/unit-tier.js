// Set up of every file of the unit tier (jest.config.js, project `unit`): no MariaDB, no Redis. The
// database and job store URLs point at a closed port, so a unit test that reaches either fails at once
// (ECONNREFUSED) instead of passing because the services happen to be running.
process.env.APP_ENV = 'test';
process.env.NODE_ENV = 'test';
process.env.DATABASE_URL = 'mysql://unit-tier@127.0.0.1:9/the_unit_tier_has_no_database';
process.env.JOBS_URL = 'redis://127.0.0.1:9/0';
process.env.LOG_LEVEL ??= 'silent';
