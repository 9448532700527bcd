/* global db */
// Runs once, on the first start of an empty MongoDB (docker-entrypoint-initdb.d): one user per
// service, with readWrite on that service's own database only. Passwords come from the
// environment (docker-compose.yml), never from this file.
for (const service of ['identity', 'requests', 'audit']) {
  const password = process.env[`MONGO_${service.toUpperCase()}_PASSWORD`];
  if (!password) throw new Error(`MONGO_${service.toUpperCase()}_PASSWORD is not set`);
  db.getSiblingDB(service).createUser({
    user: service,
    pwd: password,
    roles: [{ role: 'readWrite', db: service }],
  });
}
