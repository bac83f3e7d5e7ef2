#!/usr/bin/env bash
# Makes sure MariaDB (127.0.0.1:3306, root without password), Redis (127.0.0.1:6379) and PostgreSQL
# (127.0.0.1:5432, user postgres without password: the job store contract's Postgres run) answer:
# starts them if installed but stopped, installs them from Debian's packages if missing.
set -euo pipefail

log() { echo "ensure-services: $*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
apt_ready=0
apt_install() {
  if [ "$apt_ready" = 0 ]; then as_root apt-get update -qq; apt_ready=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

mariadb_answers() { mariadb-admin --protocol=tcp -h 127.0.0.1 -P 3306 -u root --connect-timeout=2 ping >/dev/null 2>&1; }
redis_answers() { [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = PONG ]; }
postgres_answers() { psql -h 127.0.0.1 -p 5432 -U postgres -d postgres -tAc 'SELECT 1' >/dev/null 2>&1; }

wait_for() { # name check
  for _ in $(seq 1 60); do "$2" && return 0; sleep 0.5; done
  log "$1 did not come up"; return 1
}

if ! mariadb_answers; then
  if ! command -v mariadbd >/dev/null 2>&1 && [ ! -x /usr/sbin/mariadbd ]; then
    log "installing mariadb-server"; apt_install mariadb-server mariadb-client
  fi
  log "starting MariaDB"
  as_root mkdir -p /run/mysqld && as_root chown mysql:mysql /run/mysqld
  as_root start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- --user=mysql --bind-address=127.0.0.1
  for _ in $(seq 1 60); do mariadb-admin ping >/dev/null 2>&1 && break; sleep 0.5; done
  # A fresh Debian install lets root in over the socket only; the service connects over TCP.
  mariadb_answers || as_root mariadb -e "ALTER USER root@localhost IDENTIFIED VIA mysql_native_password USING PASSWORD('')" || true
  wait_for MariaDB mariadb_answers
fi

if ! redis_answers; then
  command -v redis-server >/dev/null 2>&1 || { log "installing redis-server"; apt_install redis-server; }
  log "starting Redis"
  as_root mkdir -p /var/lib/redis /var/log/redis
  as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log
  wait_for Redis redis_answers
fi
if ! postgres_answers; then
  if ! ls /etc/postgresql/*/main >/dev/null 2>&1; then
    log "installing postgresql"; apt_install postgresql
    # Debian asks for a password over TCP; the tests connect as postgres without one, on loopback only.
    as_root sed -i -E 's/^(host\s+all\s+all\s+(127\.0\.0\.1\/32|::1\/128)\s+)\S+/\1trust/' /etc/postgresql/*/main/pg_hba.conf
  fi
  log "starting PostgreSQL"
  as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start || as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main reload
  wait_for PostgreSQL postgres_answers
fi
log "MariaDB, Redis and PostgreSQL answer"
