# syntax=docker/dockerfile:1
# One image definition for every Support Desk service; pick the service with the SERVICE build arg:
#   docker build --build-arg SERVICE=gateway -t support-desk/gateway .
# (docker-compose.yml builds all five.) The container runs services/${SERVICE}/dist/src/server.js.
#
# No credential enters the build context (.dockerignore leaves out every .env and .npmrc) or a
# layer: a private registry's token reaches `npm ci` only as a BuildKit secret, mounted for that
# one RUN:  docker build --secret id=npmrc,src=$HOME/.npmrc .

# The Node line .nvmrc pins (the image runs what `npm start` and CI run).
ARG NODE_IMAGE=node:26.12.1-bookworm-slim

# --- manifests: the root package.json + lockfile and every workspace's package.json ------------
# Copying only these before `npm ci` keeps the dependency layers cached while sources change.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN mkdir -p /out \
 && cp package.json package-lock.json /out/ \
 && find . -mindepth 2 -name package.json -not -path '*/node_modules/*' -exec cp --parents {} /out/ \;

# --- build: all dependencies, compile everything with tsc -b -----------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY --from=manifests /out/ ./
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc npm ci --no-audit --no-fund
COPY . .
RUN npx tsc -b \
 && mkdir -p /dist-out \
 && for d in libs/*/dist services/*/dist tools/*/dist; do \
      [ -d "$d" ] || continue; \
      mkdir -p "/dist-out/$d" && cp -r "$d/." "/dist-out/$d/" && rm -rf "/dist-out/$d/test" "/dist-out/$d/.tsbuildinfo"; \
    done

# --- runtime: production dependencies and compiled output only, non-root, tini as PID 1 --------
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
WORKDIR /app
COPY --from=manifests /out/ ./
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force
COPY --from=build /dist-out/ ./
# `deskctl` on PATH (the chart's bootstrap Job, `kubectl exec … deskctl`): node with the services'
# hardening flag, running the tool's compiled entry.
RUN printf '#!/bin/sh\nexec node --disable-proto=throw /app/tools/deskctl/dist/src/deskctl.js "$@"\n' \
      > /usr/local/bin/deskctl \
 && chmod 755 /usr/local/bin/deskctl
# A numeric non-root user above 10000 (never a host user's id), the one the Kubernetes chart
# runs as (deploy/helm/support-desk-service/values.yaml: securityContext). The one directory a
# service writes to (identity's development signing key file, IDENTITY_DATA_DIR, when
# OAUTH_SIGNING_KEYS is unset and NODE_ENV is not production) is owned by it; under Kubernetes
# the root filesystem is read-only and /tmp is an emptyDir. `npm run deploy:check` checks this.
RUN groupadd --gid 10001 app \
 && useradd --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin app \
 && mkdir -p /app/.data && chown 10001:10001 /app/.data
ARG SERVICE=gateway
ENV SERVICE=${SERVICE}
USER 10001:10001
EXPOSE 8080 8081 8082 8083
ENTRYPOINT ["/usr/bin/tini", "--"]
# Shell form through sh -c so ${SERVICE} is expanded at run time; exec keeps node as tini's child.
# Tracing is loaded first (--import; off unless OTEL_* variables turn it on, see the README).
CMD ["/bin/sh", "-c", "exec node --disable-proto=throw --import @support-desk/platform/telemetry services/${SERVICE}/dist/src/server.js"]
