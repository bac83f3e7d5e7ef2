# Two commands: `make run` (set up everything, serve on :8080) and `make test` (set up everything, run every test:
# both tiers of jest.config.js, the unit tier included, the integration tier in three shards). `make test-unit`: the fast tier alone, no services.
SHELL := /bin/bash
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)

.PHONY: run test test-unit install services migrate generate check-generated lint-spec typecheck worker clean

run: install services migrate
	@APP_ENV=local tsx scripts/seed-example.ts
	@APP_ENV=local tsx src/main.ts

# The integration tier runs in three jest processes, one after another: jest runs files in band on two cores, and
# the heap its ESM module registries keep grew past 3.5 GB over ~190 files (GC pauses of seconds, then out of memory).
test: install services
	@npm run --silent typecheck
	@APP_ENV=test npm test -- --selectProjects=unit
	@for shard in 1/3 2/3 3/3; do APP_ENV=test npm test -- --selectProjects=integration --shard=$$shard || exit 1; done

test-unit: install
	@time npm run --silent test:unit

install: node_modules/.installed

# `npm ci`: exactly the committed lockfile (scripts/check-lockfile.sh proves it is accepted on every
# platform). isolated-vm compiles from source here (about a minute, once); its install script is allowed
# in package.json.
node_modules/.installed: package.json package-lock.json
	ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund
	@touch $@

services:
	@bash scripts/ensure-services.sh

migrate: install services
	@APP_ENV=local tsx scripts/migrate.ts

generate: install
	@npm run --silent generate

check-generated: install
	@npm run --silent generate:check

lint-spec: install
	@npm run --silent lint:spec

typecheck: install
	@npm run --silent typecheck

worker: install services migrate
	@APP_ENV=local tsx src/worker.ts

clean:
	rm -rf node_modules
