/* global db */
// One user per service, with readWrite on that service's own database only. Passwords come from
// the environment, never from this file. Runs once on the first start of an empty MongoDB under
// Docker Compose (docker-entrypoint-initdb.d), and on Kubernetes as the Job of
// ../helm/examples/mongo-users-job.yaml; run again, it sets the passwords anew (rotation).
for (const service of ['identity', 'requests', 'audit', 'webhooks']) {
  const password = process.env[`MONGO_${service.toUpperCase()}_PASSWORD`];
  if (!password) throw new Error(`MONGO_${service.toUpperCase()}_PASSWORD is not set`);
  const database = db.getSiblingDB(service);
  const roles = [{ role: 'readWrite', db: service }];
  if (database.getUser(service)) database.updateUser(service, { pwd: password, roles });
  else database.createUser({ user: service, pwd: password, roles });
}
