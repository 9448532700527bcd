# syntax=docker/dockerfile:1
# One image for every Support Desk service; the service is picked at run time (the SERVICE
# variable, or the chart's container args):
#   docker build -t support-desk .     (docker-compose.yml builds it once for all five)
#   npm run image                      the same Dockerfile with podman, no registry (docs/containers.md)
# The container runs services/${SERVICE}/dist/src/server.js; `deskctl` is on PATH.
#
# No credential enters the build context (.dockerignore leaves out every .env and .npmrc) or a
# layer: a private registry's token reaches `npm ci` only as a BuildKit secret, mounted for that
# one RUN:  docker build --secret id=npmrc,src=$HOME/.npmrc .

# The Node line .nvmrc pins (the image runs what `npm start` and CI run). NODE_IMAGE runs the
# build stages (it needs npm); RUNTIME_IMAGE is the final image's base and needs only node and
# /bin/sh (no RUN there). `npm run image` passes local bases made from Debian packages for both.
ARG NODE_IMAGE=node:26.12.1-bookworm-slim
ARG RUNTIME_IMAGE=node:26.12.1-bookworm-slim

# --- manifests: the root package.json + lockfile, every workspace's package.json, patches/ -----
# Copying only these before `npm ci` keeps the dependency layers cached while sources change.
# patches/ holds what `npm ci`'s postinstall (patch-package) changes in node_modules.
FROM ${NODE_IMAGE} AS manifests
WORKDIR /src
COPY . .
RUN mkdir -p /out \
 && cp -r package.json package-lock.json patches /out/ \
 && find . -mindepth 2 -name package.json -not -path '*/node_modules/*' -exec cp --parents {} /out/ \;

# --- build: all dependencies, compile the libraries, services and tools with tsc -b -------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY --from=manifests /out/ ./
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc npm ci --no-audit --no-fund
COPY . .
# Compiled output without tests, declarations or source maps (the image runs no debugger), the
# packages' committed bin entry points (deskctl's), the `deskctl` command on PATH, tini (Debian's static build; a local NODE_IMAGE already carries it) and the
# data directory's owner (below).
RUN npx tsc -b libs/* services/* tools/* \
 && mkdir -p /dist-out /bin-out /data-dir \
 && for d in libs/*/dist services/*/dist tools/*/dist services/*/bin tools/*/bin; do \
      [ -d "$d" ] || continue; \
      mkdir -p "/dist-out/$d" && cp -r "$d/." "/dist-out/$d/" && rm -rf "/dist-out/$d/test" "/dist-out/$d/.tsbuildinfo"; \
    done \
 && find /dist-out -type f \( -name '*.d.ts' -o -name '*.map' -o -name '*.tsbuildinfo' \) -delete \
 && install -m 0755 deploy/image/deskctl /bin-out/deskctl \
 && { [ -x /usr/bin/tini-static ] || { apt-get update && apt-get install -y --no-install-recommends tini; }; } \
 && cp /usr/bin/tini-static /bin-out/tini

# --- deps: production dependencies only, without npm's cache or what nothing loads -------------
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY --from=manifests /out/ ./
RUN --mount=type=secret,id=npmrc,target=/root/.npmrc npm ci --omit=dev --no-audit --no-fund \
 && npm cache clean --force \
 && find node_modules -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \
      -o -iname '*.md' -o -name '*.ts' -o -name '.eslintrc*' -o -name '.prettierrc*' -o -name 'tsconfig*.json' \) -delete

# --- runtime: production dependencies and compiled output only, non-root, tini as PID 1 --------
FROM ${RUNTIME_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/ ./
COPY --from=build /dist-out/ ./
COPY --from=build /bin-out/tini /usr/bin/tini
COPY --from=build /bin-out/deskctl /usr/local/bin/deskctl
# A numeric non-root user above 10000 (never a host user's id), the one the Kubernetes chart
# runs as (deploy/helm/support-desk-service/values.yaml: securityContext). The one directory a
# service writes to (identity's development signing key file, IDENTITY_DATA_DIR, when
# OAUTH_SIGNING_KEYS is unset and NODE_ENV is not production) is owned by it; the root
# filesystem is otherwise read-only (the chart, `npm run containers`) and /tmp a writable mount.
# The runtime base has no shell tools, so the directory is copied in with its owner rather than
# made by mkdir + chown. `npm run deploy:check` checks this.
COPY --from=build --chown=10001:10001 /data-dir/ /app/.data/
ARG SERVICE=gateway
ENV SERVICE=${SERVICE}
USER 10001:10001
EXPOSE 8080 8081 8082 8083 8084
ENTRYPOINT ["/usr/bin/tini", "--"]
# Shell form through sh -c so ${SERVICE} is expanded at run time; exec keeps node as tini's child.
# Tracing is loaded first (--import; off unless OTEL_* variables turn it on, see the README).
CMD ["/bin/sh", "-c", "exec node --disable-proto=throw --import @support-desk/platform/telemetry services/${SERVICE}/dist/src/server.js"]
